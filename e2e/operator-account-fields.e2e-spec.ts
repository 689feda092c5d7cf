import path from 'node:path';
import { call, expectErrorBody } from './support/http';
import { startScriptedUpstream, type ScriptedUpstream } from './support/scripted-upstream';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** The chat direct route takes `application/json`; this JSON type goes through Express and Nest. */
const DIRECT = 'application/json';
const THROUGH_EXPRESS = 'application/vnd.igw+json';

const filePart = { type: 'file', file: { file_id: 'file-operator-upload' } };
/** Each field that acts in the operator's own provider account, with the setting that lets it through. */
const FIELDS: Array<[string, Record<string, unknown>, RegExp]> = [
  ['store: true', { store: true }, /^Body validation error! store: not accepted by this gateway: .* \(the operator allows it with ALLOW_UPSTREAM_STORE=true\)\.$/],
  ['metadata', { metadata: { team: 'search' } }, /^Body validation error! metadata: not accepted by this gateway: .* \(the operator allows it with ALLOW_UPSTREAM_METADATA=true\)\.$/],
  [
    'a file_id',
    { messages: [{ role: 'user', content: [{ type: 'text', text: 'summarize' }, filePart] }] },
    /^Body validation error! messages\[0\]\.content\[1\]\.file\.file_id: not accepted by this gateway: .* \(the operator allows it with ALLOW_UPSTREAM_FILE_IDS=true\); send the file itself as file_data\.$/,
  ],
];

/**
 * `file_id`, `store: true` and `metadata` reach the operator's own provider account (its files,
 * its stored completions): refused unless the operator's setting allows each, on both chat routes.
 */
describe('fields that reach the operator\'s provider account', () => {
  let upstream: ScriptedUpstream;
  const started: StandaloneHarness[] = [];

  const start = async (settings: Record<string, string>) => {
    const harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/priced-fields-catalogue.yaml'),
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: `${upstream.url}/v1`,
      ...settings,
    });
    started.push(harness);
    return { harness, key: (await harness.paidKey(1_000_000)).key };
  };
  const chat = (harness: StandaloneHarness, key: string, fields: Record<string, unknown>, contentType: string) =>
    call(`${harness.gateway}/v1/chat/completions`, {
      token: key,
      rawBody: JSON.stringify({ model: 'tiered', messages: [{ role: 'user', content: 'hello' }], ...fields }),
      headers: { 'content-type': contentType },
    });

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
  });

  afterAll(async () => {
    for (const harness of started) await harness.stop();
    await upstream?.close();
  });

  it('refuses each by default, on the direct route and through Express, with nothing sent upstream', async () => {
    const { harness, key } = await start({});
    for (const [, fields, message] of FIELDS) {
      for (const contentType of [DIRECT, THROUGH_EXPRESS]) {
        const sent = upstream.received.length;
        expectErrorBody(await chat(harness, key, fields, contentType), 400, '/v1/chat/completions', message);
        expect(upstream.received.length).toBe(sent);
      }
    }
    // What stays out of the account is forwarded as before.
    expect((await chat(harness, key, { store: false, messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE' } }] }] }, DIRECT)).status).toBe(200);
  }, 120_000);

  it('forwards each when its setting is on', async () => {
    const { harness, key } = await start({ ALLOW_UPSTREAM_FILE_IDS: 'true', ALLOW_UPSTREAM_STORE: 'true', ALLOW_UPSTREAM_METADATA: 'true' });
    for (const contentType of [DIRECT, THROUGH_EXPRESS]) {
      const fields = { store: true, metadata: { team: 'search' }, messages: [{ role: 'user', content: [{ type: 'text', text: 'summarize' }, filePart] }] };
      const answer = await chat(harness, key, fields, contentType);
      expect([answer.status, answer.body]).toEqual([200, expect.anything()]);
      expect(upstream.received.at(-1)?.body).toMatchObject(fields);
    }
  }, 120_000);
});
