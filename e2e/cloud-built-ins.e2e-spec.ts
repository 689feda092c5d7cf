import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { podRoleEnvironment } from './support/cloud-identity';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

const PROMPT = 'Count the words in this sentence';
const REPLY = `Hello from the emulator. You said: ${PROMPT}`;
const WEB_IDENTITY_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.emulated-pod-token.signature';
const PROJECT = 'emulated-project';
const LOCATION = 'us-central1';
const CREDITS_PER_USD = 2_000_000;

/**
 * A newcomer's install on a cloud: the shipped catalogue, no providers file and no key in any
 * variable. The pod has a role (EKS IRSA: a web identity token file the emulator's STS takes) and
 * a Google credential (Application Default Credentials' file); `BEDROCK_REGION` and
 * `VERTEX_LOCATION` turn on the built-in `bedrock` and `vertex` connections the catalogue's
 * cloud sources name. Claude answers from Bedrock through every chat API, Gemini from Vertex AI,
 * Nova through Converse, each billed at the shipped catalogue's prices.
 */
describe('The shipped catalogue on the built-in Bedrock and Vertex AI connections, with only the pod’s identity', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let folder: string;
  let key: string;
  let accountId: string;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    emulator = await startEmulator({ bedrock: { webIdentityToken: WEB_IDENTITY_TOKEN }, vertex: { project: PROJECT } });
    folder = await mkdtemp(path.join(tmpdir(), 'igw-clouds-'));
    const googleCredentials = path.join(folder, 'adc.json');
    await writeFile(googleCredentials, JSON.stringify(emulator.vertex.serviceAccount()));
    harness = await startStandaloneHarness({
      BEDROCK_REGION: 'us-east-1',
      BEDROCK_BASE_URL: emulator.url,
      ...(await podRoleEnvironment(folder, emulator.url, WEB_IDENTITY_TOKEN)),
      VERTEX_LOCATION: LOCATION,
      VERTEX_PROJECT: PROJECT,
      VERTEX_BASE_URL: emulator.url,
      GOOGLE_APPLICATION_CREDENTIALS: googleCredentials,
      GCE_METADATA_HOST: '127.0.0.1:9',
      METADATA_SERVER_DETECTION: 'none',
    });
    ({ key, accountId } = await harness.paidKey(50_000_000));
    openai = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: harness.gateway, apiKey: key, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  const upstreamPaths = (from: number) => emulator.requests.slice(from).map((request) => request.path).filter((pathname) => !pathname.startsWith('/sts') && pathname !== '/token');

  it('answers Claude Sonnet 5.5 from Bedrock through chat completions, Responses and Messages, whole and streamed', async () => {
    const from = emulator.requests.length;
    const chat = await openai.chat.completions.create({ model: 'claude-sonnet-5-5', messages: [{ role: 'user', content: PROMPT }], max_tokens: 100 });
    expect(chat.choices[0].message.content).toBe(REPLY);
    const response = await openai.responses.create({ model: 'claude-sonnet-5-5', input: PROMPT, max_output_tokens: 100 });
    expect(response.output_text).toBe(REPLY);
    const message = await anthropic.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] });
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: REPLY })]);
    const streamed = await anthropic.messages.stream({ model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] }).finalMessage();
    expect(streamed.content).toEqual([expect.objectContaining({ type: 'text', text: REPLY })]);
    const profile = encodeURIComponent('global.anthropic.claude-sonnet-5-5-v1');
    expect(upstreamPaths(from)).toEqual([`/model/${profile}/invoke`, `/model/${profile}/invoke`, `/model/${profile}/invoke`, `/model/${profile}/invoke-with-response-stream`]);
    // Every call was signed with the session the pod's web identity token was exchanged for.
    expect(emulator.bedrock.issued.AssumeRoleWithWebIdentity).toBeGreaterThanOrEqual(1);
    expect(emulator.requests.slice(from).filter((request) => request.path.startsWith('/model/')).every((request) => String(request.headers.authorization).startsWith('AWS4-HMAC-SHA256 '))).toBe(true);
  });

  it('answers Nova Lite through Converse, and Gemini 2.5 Flash from Vertex AI through chat and the Gemini API', async () => {
    const from = emulator.requests.length;
    const nova = await openai.chat.completions.create({ model: 'amazon/nova-lite', messages: [{ role: 'user', content: PROMPT }] });
    expect(nova.choices[0].message.content).toBe(REPLY);
    const gemini = await openai.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: PROMPT }] });
    expect(gemini.choices[0].message.content).toBe(REPLY);
    const genai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: harness.gateway, fetch: (input, init) => fetch(input, init) } });
    const native = await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: PROMPT });
    expect(native.text).toBe(REPLY);
    const vertexGemini = `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/gemini-2.5-flash:generateContent`;
    expect(upstreamPaths(from)).toEqual([`/model/${encodeURIComponent('us.amazon.nova-lite-v1:0')}/converse`, vertexGemini, vertexGemini]);
    expect(emulator.requests.slice(from).filter((request) => request.path.startsWith('/v1/projects/')).every((request) => String(request.headers.authorization).startsWith('Bearer '))).toBe(true);
  });

  it("bills each answer at the shipped catalogue's prices", async () => {
    await eventually(async () => (await harness.usageEntries(accountId, 50)).length >= 7, 15_000, 100);
    const entries = await harness.usageEntries(accountId, 50);
    expect(entries.map((entry) => entry.model).sort()).toEqual(['amazon/nova-lite', ...Array(4).fill('anthropic/claude-sonnet-5-5'), 'google/gemini-2.5-flash', 'google/gemini-2.5-flash']);
    const listPrices: Record<string, Record<string, number>> = {
      'anthropic/claude-sonnet-5-5': { input_tokens: 2, output_tokens: 10 },
      'amazon/nova-lite': { input_tokens: 0.06, output_tokens: 0.24 },
      'google/gemini-2.5-flash': { input_tokens: 0.3, output_tokens: 2.5 },
    };
    for (const entry of entries) {
      const prices = listPrices[entry.model!];
      const usd = Object.entries(entry.units ?? {}).reduce((sum, [unit, count]) => sum + (count * (prices[unit] ?? NaN)) / 1e6, 0);
      expect(Number(entry.credits)).toBeCloseTo(usd * CREDITS_PER_USD, 6);
      expect(Number(entry.credits)).toBeGreaterThan(0);
      expect(entry.deployment).toMatch(entry.model === 'google/gemini-2.5-flash' ? /^vertex\// : /^bedrock\//);
    }
  });
});
