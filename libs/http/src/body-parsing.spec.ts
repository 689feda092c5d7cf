import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import express from 'express';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '@igw/json';
import { sendErrorResponse } from './errors/all-exceptions.filter';
import { bodyLimitBytes, readJsonBody, takeJsonBody } from './body-parsing';
import type { ServedRequest } from './request-context';

/** What body-parser itself makes of a body: the parsed value, or its error message. */
function bodyParserVerdict(text: string): Promise<{ value?: unknown; message?: string }> {
  const parser = express.json({ limit: 1 << 20 });
  const request = Object.assign(Readable.from([Buffer.from(text)]), {
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) },
    method: 'POST',
    url: '/',
    // on-finished's signs of a request whose body is still to be read.
    complete: false,
    socket: { readable: true },
  }) as unknown as express.Request;
  return new Promise((resolve) => {
    parser(request, {} as express.Response, (error?: unknown) => resolve(error ? { message: (error as Error).message } : { value: request.body }));
  });
}

function jsonRequest(bytes: Buffer): ServedRequest {
  return Object.assign(Readable.from([bytes]), { headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) } }) as unknown as ServedRequest;
}

async function ourVerdict(text: string): Promise<{ value?: unknown; message?: string }> {
  const request = jsonRequest(Buffer.from(text));
  try {
    return { value: (await readJsonBody(request, 1 << 20))!.parsed };
  } catch (error) {
    return { message: (error as Error).message.replace(/^Body validation error! Malformed JSON body: /, '') };
  }
}

describe('readJsonBody parses as body-parser does', () => {
  it.each([
    '{"model":"mini"}',
    '[1,2]',
    '',
    '   ',
    '"text"',
    '  42',
    'true',
    'null',
    '{"a":',
    '{"a":1,}',
    "{'a':1}",
    '\uFEFF{"bom":true}',
    '\uFEFF"x"',
    '{"emoji":"\u{1F600}","accents":"éè"}',
    '  \n\t{"spaced": [ ] }  ',
    'nul',
    '{"a":1} trailing',
  ])('%j', async (text) => {
    expect(await ourVerdict(text)).toEqual(await bodyParserVerdict(text));
  });
});

describe('readJsonBody when the client goes away mid-body', () => {
  it('answers 400 request aborted, as body-parser does, instead of an internal error', async () => {
    const request = new Readable({ read() {} });
    request.push(Buffer.from('{"model":'));
    setImmediate(() => request.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
    await expect(readJsonBody(Object.assign(request, { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }) as unknown as ServedRequest, 1024)).rejects.toMatchObject({
      status: 400,
      message: 'Body validation error! request aborted',
    });
  });
});

describe('bodyLimitBytes', () => {
  it('reads BODY_LIMIT as body-parser does', () => {
    expect(bodyLimitBytes('64kb')).toBe(65_536);
    expect(bodyLimitBytes('10MB')).toBe(10_485_760);
    expect(bodyLimitBytes('1000')).toBe(1000);
    expect(() => bodyLimitBytes('ten')).toThrow();
  });
});

describe('the JSON depth limit', () => {
  const nestedArrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
  const nestedSchema = (levels: number) => `{"model":"mini","tools":[{"type":"function","function":{"name":"f","parameters":${'{"type":"object","properties":{"x":'.repeat(levels)}{"type":"string"}${'}}'.repeat(levels)}}}]}`;

  it.each([
    ['arrays at the limit', nestedArrays(MAX_JSON_DEPTH), false],
    ['arrays one past the limit', nestedArrays(MAX_JSON_DEPTH + 1), true],
    ['brackets inside strings', `{"text":"${'['.repeat(1000)}"}`, false],
    ['escaped quotes before brackets', `{"text":"\\"${'{'.repeat(1000)}\\\\"}`, false],
    ['a string ending in an escaped backslash, then deep arrays', `["\\\\",${nestedArrays(200)}]`, true],
    ['siblings that each stay under the limit', `[${Array.from({ length: 500 }, () => nestedArrays(100)).join(',')}]`, false],
    ['an unterminated string', '{"a":"[[[[', false],
    ['a long string of escapes, then deep objects', `["${'a\\n\\"'.repeat(1_000_000)}",${'{"a":'.repeat(200)}1${'}'.repeat(200)}]`, true],
    ['an unterminated string of escaped quotes and brackets', `["${'\\"['.repeat(1_000_000)}`, false],
  ])('%s', (_case, text, tooDeep) => {
    expect(exceedsJsonDepth(text)).toBe(tooDeep);
  });

  it('refuses 50,000 levels on the direct route with a 400 that states the limit', async () => {
    await expect(readJsonBody(jsonRequest(Buffer.from(nestedSchema(50_000))), 1 << 24)).rejects.toMatchObject({
      status: 400,
      message: `Body validation error! JSON body nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays are accepted.`,
    });
  });

  it('parses a tool schema nested up to the limit', async () => {
    const text = nestedSchema((MAX_JSON_DEPTH - 6) / 2);
    expect(exceedsJsonDepth(text)).toBe(false);
    expect((await readJsonBody(jsonRequest(Buffer.from(text)), 1 << 24))!.parsed).toEqual(JSON.parse(text));
  });

  it.each([
    ['utf-8', (text: string) => Buffer.from(text, 'utf8')],
    ['utf-16le', (text: string) => Buffer.from(text, 'utf16le')],
    ['utf-32be', utf32be],
    ['utf-16', (text: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()])],
  ])('refuses it through Express too, in %s', async (charset, encode) => {
    const verdict = await expressParserVerdict(encode(nestedSchema(50_000)), `application/json; charset=${charset}`);
    expect(verdict).toEqual({ status: 400, message: `Body validation error! JSON body nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays are accepted.` });
    expect(await expressParserVerdict(encode('{"a":[[["é"]]]}'), `application/json; charset=${charset}`)).toEqual({ status: 200, body: { a: [[['é']]] } });
  });
});

describe('the size and encoding rules', () => {
  const chat = Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}');

  it('refuses a body over the limit with a 413 naming it, announced or streamed in chunks', async () => {
    const tooLarge = { status: 413, message: 'Request body too large: the limit is 16 bytes.' };
    expect(await expressParserVerdict(chat, 'application/json', 16)).toEqual(tooLarge);
    expect(await expressParserVerdict(Readable.from([chat.subarray(0, 10), chat.subarray(10)]), 'application/json', 16)).toEqual(tooLarge);
  });

  it('reads a chunked body', async () => {
    expect(await expressParserVerdict(Readable.from([chat.subarray(0, 10), chat.subarray(10)]), 'application/json')).toEqual({ status: 200, body: JSON.parse(chat.toString()) });
  });

  it.each([
    ['a charset other than a Unicode one', 'application/json; charset=latin1', 'Unsupported body encoding: unsupported charset "LATIN1"'],
    ['a Unicode charset nobody decodes', 'application/json; charset=utf-7', 'Unsupported body encoding: unsupported charset "UTF-7"'],
  ])('refuses %s with a 415 naming it', async (_case, type, message) => {
    expect(await expressParserVerdict(chat, type)).toEqual({ status: 415, message });
  });
});

describe('a body that is not sent as JSON', () => {
  const chat = Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}');

  it.each([
    // curl -d without a Content-Type header sends this.
    ['a form', 'application/x-www-form-urlencoded', 'it was application/x-www-form-urlencoded'],
    // fetch with a string body and no headers sends this.
    ['text', 'text/plain;charset=UTF-8', 'it was text/plain;charset=UTF-8'],
    ['no type at all', undefined, 'none was sent'],
  ])('%s gets a 415 naming the header to send, not a list of missing fields', async (_case, contentType, received) => {
    expect(await expressParserVerdict(chat, contentType)).toEqual({
      status: 415,
      message: `Unsupported Media Type: the body must be JSON sent with the header Content-Type: application/json (${received}).`,
    });
  });

  it('still reads JSON types with parameters or a +json suffix, and an empty body of any type', async () => {
    for (const type of ['application/json', 'Application/JSON; charset=utf-8', 'application/merge-patch+json']) {
      expect(await expressParserVerdict(chat, type)).toEqual({ status: 200, body: JSON.parse(chat.toString()) });
    }
    expect((await expressParserVerdict(Buffer.alloc(0), 'text/plain')).status).toBe(200);
  });

  it('cuts a long type short in the message', async () => {
    const verdict = await expressParserVerdict(chat, `text/plain; x=${'y'.repeat(5000)}`);
    expect(verdict.status).toBe(415);
    expect(verdict.message!.length).toBeLessThan(200);
  });
});

function utf32be(text: string): Buffer {
  const bytes = Buffer.alloc(text.length * 4);
  for (let index = 0; index < text.length; index++) bytes.writeUInt32BE(text.charCodeAt(index), index * 4);
  return bytes;
}

/** Sends one body to an Express app that reads it as the apps' routes do, answering errors with the spec's body. */
async function expressParserVerdict(body: Buffer | Readable, contentType: string | undefined, limitBytes = 1 << 24): Promise<{ status: number; message?: string; body?: unknown }> {
  const app = express();
  app.post('/', (request, response) => {
    takeJsonBody(request, limitBytes).then(
      () => response.json(request.body),
      (error: unknown) => sendErrorResponse(request, response, error),
    );
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const chunked = body instanceof Readable;
    const response = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: contentType === undefined ? {} : { 'content-type': contentType },
      body: chunked ? (Readable.toWeb(body) as ReadableStream) : body,
      ...(chunked ? { duplex: 'half' } : {}),
    } as RequestInit);
    // An empty body parses to nothing, which Express sends as an empty answer.
    const text = await response.text();
    const answer = (text ? JSON.parse(text) : undefined) as { message?: string };
    return response.status === 200 ? { status: 200, body: answer } : { status: response.status, message: answer?.message };
  } finally {
    server.close();
  }
}
