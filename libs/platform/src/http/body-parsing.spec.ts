import { Readable } from 'node:stream';
import express from 'express';
import { bodyLimitBytes, readJsonBody } from './body-parsing';
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

async function ourVerdict(text: string): Promise<{ value?: unknown; message?: string }> {
  const request = Object.assign(Readable.from([Buffer.from(text)]), { headers: {} }) as unknown as ServedRequest;
  try {
    return { value: await readJsonBody(request) };
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
    await expect(readJsonBody(Object.assign(request, { headers: {} }) as unknown as ServedRequest)).rejects.toMatchObject({
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
