import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletionContentPart } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** A minimal valid one-page PDF showing `text`: objects, a cross-reference table with their byte offsets, a trailer. */
function onePagePdf(text: string): Buffer {
  const content = `BT /F1 18 Tf 20 50 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets = objects.map((object, index) => {
    const offset = pdf.length;
    pdf += `${index + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

const PDF = onePagePdf('Quarterly revenue rose 12 percent').toString('base64');
const PDF_URL = `data:application/pdf;base64,${PDF}`;
const QUESTION = 'Summarise the attached report';
const REPLY = `Hello from the emulator. You said: ${QUESTION}`;

type Recorded = RunningEmulator['requests'][number];
// Reads of the recorded upstream bodies, without a schema of their own.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

/** What each source of the catalogue got for the document: Anthropic a document block, Gemini inline data, OpenAI the part as sent. */
const SOURCES = {
  claude: {
    isCall: (request: Recorded) => request.path.startsWith('/v1/messages'),
    document: (body: Body) => body.messages[0].content.find((block: Body) => block.type === 'document'),
    expected: { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'report.pdf' },
  },
  gemini: {
    isCall: (request: Recorded) => request.path.includes(':generateContent'),
    document: (body: Body) => body.contents[0].parts.find((part: Body) => part.inlineData !== undefined),
    expected: { inlineData: { mimeType: 'application/pdf', data: PDF } },
  },
  mini: {
    isCall: (request: Recorded) => request.path === '/v1/chat/completions',
    document: (body: Body) => body.messages[0].content.find((part: Body) => part.type === 'file'),
    expected: { type: 'file', file: { file_data: PDF_URL, filename: 'report.pdf' } },
  },
} as const;

/**
 * Documents sent as file inputs (a real one-page PDF) through the official `openai` SDK, on
 * chat completions (`file` parts) and the Responses API (`input_file` parts), reach every chat
 * source: Anthropic as a document block, Gemini as inline data, OpenAI as sent, each with the
 * same bytes; one ledger row per request. What cannot be sent is a 400 in the spec's error body
 * before any upstream call, and costs nothing.
 */
describe('file inputs on every chat source, end to end with the official openai SDK', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/responses-catalogue.yaml'), ...emulatedProviders(emulator.url) });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  const lastCall = (model: keyof typeof SOURCES): Body => {
    const request = emulator.requests.filter(SOURCES[model].isCall).at(-1);
    expect(request).toBeDefined();
    return request!.body as Body;
  };

  it.each(['claude', 'gemini', 'mini'] as const)('sends a PDF to %s from chat.completions and responses.create, the same bytes, one ledger row per request', async (model) => {
    const { key, accountId } = await harness.paidKey(1_000_000);
    const client = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });

    const filePart = { type: 'file', file: { file_data: PDF_URL, filename: 'report.pdf' } } as ChatCompletionContentPart;
    const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, filePart] }] });
    expect(completion.choices[0].message.content).toBe(REPLY);
    expect(SOURCES[model].document(lastCall(model))).toEqual(SOURCES[model].expected);

    const input: ResponseInputItem[] = [{ role: 'user', content: [{ type: 'input_text', text: QUESTION }, { type: 'input_file', file_data: PDF_URL, filename: 'report.pdf' }] }];
    const response = await client.responses.create({ model, input });
    expect([response.status, response.output_text]).toEqual(['completed', REPLY]);
    expect(SOURCES[model].document(lastCall(model))).toEqual(SOURCES[model].expected);
    expect(Buffer.from(PDF, 'base64').subarray(0, 8).toString('latin1')).toBe('%PDF-1.4');

    await eventually(async () => (await harness.usageEntries(accountId, 10)).length >= 2, 15_000, 100);
    const rows = await harness.usageEntries(accountId, 10);
    expect(rows.map((row) => row.endpoint).sort()).toEqual(['chat.completions', 'responses']);
  });

  it.each(['gemini', 'mini'] as const)('sends a PDF document block of the Messages API (the Anthropic SDK) to %s as its own file input, billed once', async (model) => {
    const { key, accountId } = await harness.paidKey(1_000_000);
    const client = new Anthropic({ baseURL: harness.gateway, apiKey: key, maxRetries: 0 });
    const message = await client.messages.create({
      model,
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'document', title: 'report.pdf', source: { type: 'base64', media_type: 'application/pdf', data: PDF } }, { type: 'text', text: QUESTION }] }],
    });
    expect(message.content).toEqual([{ type: 'text', text: REPLY }]);
    const received = lastCall(model);
    expect(SOURCES[model].document(received)).toEqual(SOURCES[model].expected);
    await eventually(async () => (await harness.usageEntries(accountId, 10)).length === 1, 15_000, 100);
    expect((await harness.usageEntries(accountId, 10)).map((row) => row.endpoint)).toEqual(['messages']);
  });

  it('sends a plain-text file to Anthropic as a text document of its decoded text, and to Gemini as text/plain inline data', async () => {
    const { key } = await harness.paidKey(1_000_000);
    const client = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
    const notes = 'Naïve notes: revenue rose.';
    const data = Buffer.from(notes, 'utf8').toString('base64');
    const filePart = { type: 'file', file: { file_data: `data:text/plain;base64,${data}`, filename: 'notes.txt' } } as ChatCompletionContentPart;
    for (const model of ['claude', 'gemini'] as const) {
      const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, filePart] }] });
      expect(completion.choices[0].message.content).toBe(REPLY);
    }
    expect(emulator.requests.filter(SOURCES.claude.isCall).at(-1)!.body).toMatchObject({
      messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: notes }, title: 'notes.txt' }] }],
    });
    expect(SOURCES.gemini.document(lastCall('gemini'))).toEqual({ inlineData: { mimeType: 'text/plain', data } });
  });

  it("holds the model's whole context window as input for a document, whose pages its bytes do not bound: 403 when that does not fit", async () => {
    // claude: a 200,000-token window at $0.15/M is 60,000 credits; 10,000 credits hold a text question, not a document.
    const { key } = await harness.paidKey(10_000);
    const ask = (content: unknown[]) => call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model: 'claude', max_tokens: 100, messages: [{ role: 'user', content }] } });
    const sent = emulator.requests.length;
    expectErrorBody(await ask([{ type: 'text', text: QUESTION }, { type: 'file', file: { file_data: PDF_URL } }]), 403, '/v1/chat/completions', /credits/i);
    expect(emulator.requests.length).toBe(sent);
    expect((await ask([{ type: 'text', text: QUESTION }])).status).toBe(200);

    // The same on the Messages API's native path to Anthropic, for a document by URL that Anthropic would fetch itself.
    const anthropic = new Anthropic({ baseURL: harness.gateway, apiKey: key, maxRetries: 0 });
    const byUrl = await anthropic.messages
      .create({ model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/report.pdf' } }, { type: 'text', text: QUESTION }] }] })
      .catch((caught: unknown) => caught);
    expect(byUrl).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(emulator.requests.length).toBe(sent + 1);
  });

  it('refuses what cannot be sent with a 400 in the spec error body, before any upstream call and at no cost', async () => {
    const { key } = await harness.paidKey(1_000_000);
    const sent = emulator.requests.length;
    const chat = (model: string, file: Record<string, unknown>) =>
      call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model, messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, { type: 'file', file }] }] } });
    const responses = (model: string, part: Record<string, unknown>) =>
      call(`${harness.gateway}/v1/responses`, { token: key, body: { model, input: [{ role: 'user', content: [{ type: 'input_text', text: QUESTION }, { type: 'input_file', ...part }] }] } });
    const zip = `data:application/zip;base64,${Buffer.from('PK\u0003\u0004').toString('base64')}`;
    const refusals: Array<[Promise<Parameters<typeof expectErrorBody>[0]>, string, RegExp]> = [
      [chat('claude', { file_id: 'file-abc' }), '/v1/chat/completions', /^Body validation error! messages\[0\]\.content\[1\]\.file\.file_id: not accepted by this gateway: .*ALLOW_UPSTREAM_FILE_IDS=true\); send the file itself as file_data\.$/],
      [chat('claude', { file_data: zip }), '/v1/chat/completions', /^Body validation error! messages\[0\]\.content\[1\]\.file\.file_data: media type "application\/zip" cannot be sent to Anthropic; it takes application\/pdf and text\/plain$/],
      [chat('gemini', { file_data: zip }), '/v1/chat/completions', /^Body validation error! messages\[0\]\.content\[1\]\.file\.file_data: media type "application\/zip" cannot be sent to Gemini; it takes application\/pdf and text\/plain$/],
      [chat('gemini', { file_data: 'https://example.com/report.pdf' }), '/v1/chat/completions', /^Body validation error! messages\[0\]\.content\[1\]\.file\.file_data: Expected a base64 data URL of a PDF or plain text/],
      [responses('claude', { file_id: 'file-abc' }), '/v1/responses', /^Body validation error! input\[0\]\.content\[1\]\.file_id: a file id names a file in the operator's own provider account, which this gateway does not send: send the file itself as file_data/],
      [responses('mini', { file_url: 'https://example.com/report.pdf' }), '/v1/responses', /^Body validation error! input\[0\]\.content\[1\]\.file_url: a file by URL cannot be sent by this gateway: send the file itself as file_data/],
      [responses('gemini', { file_data: zip }), '/v1/responses', /^Body validation error! messages\[0\]\.content\[1\]\.file\.file_data: media type "application\/zip" cannot be sent to Gemini/],
    ];
    for (const [answer, route, message] of refusals) expectErrorBody(await answer, 400, route, message);
    expect(emulator.requests.length).toBe(sent);
    expect(await harness.balance(key)).toBe(1_000_000);
  });
});
