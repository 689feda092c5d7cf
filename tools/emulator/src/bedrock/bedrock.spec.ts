import { EventStreamCodec } from '@smithy/eventstream-codec';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { startEmulator, type RunningEmulator } from '../emulator';

// The emulated Bedrock as a client that signs its own calls sees it: SigV4 verified from the
// secret (a wrong one, an unknown key, an expired session refused with AWS's error types), an STS
// issuing the sessions, Anthropic's answers on InvokeModel and Converse, and real event-stream frames.

const ACCESS_KEY = 'AKIAEMULATORSPEC0001';
const SECRET = 'emulator-spec-secret-0001';
const ROLE = 'arn:aws:iam::123456789012:role/bedrock-caller';
const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const codec = new EventStreamCodec(toUtf8, fromUtf8);

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({
    bedrock: { accessKeys: { [ACCESS_KEY]: SECRET }, apiKeys: ['bedrock-key'], webIdentityToken: 'pod-token', roles: { [ROLE]: { externalId: 'ext-1' } }, sessionSeconds: 1 },
  });
});

afterAll(() => emulator.close());

interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** POSTs `body` to `path`, signed for `service` with `credentials` (or with `authorization` as given). */
async function post(path: string, body: string, options: { credentials?: Credentials; service?: string; contentType?: string; authorization?: string } = {}): Promise<Response> {
  const url = new URL(path, emulator.url);
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json', host: url.host };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  let sent = headers;
  if (options.credentials !== undefined) {
    const signer = new SignatureV4({ service: options.service ?? 'bedrock', region: 'us-east-1', credentials: options.credentials, sha256: Hash.bind(null, 'sha256') });
    sent = (await signer.sign({ method: 'POST', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {}, headers, body })).headers;
  }
  const { host: _host, ...rest } = sent;
  return fetch(url, { method: 'POST', headers: rest, body });
}

const messages = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 50, messages: [{ role: 'user', content: 'Hello there' }] });
const invokePath = (model: string, action = 'invoke') => `/model/${encodeURIComponent(model)}/${action}`;
const staticKeys = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET };

function frames(bytes: Buffer): Array<{ headers: Record<string, string>; payload: string }> {
  const decoded: Array<{ headers: Record<string, string>; payload: string }> = [];
  for (let at = 0; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    const message = codec.decode(bytes.subarray(at, at + length));
    decoded.push({ headers: Object.fromEntries(Object.entries(message.headers).map(([name, header]) => [name, String(header.value)])), payload: toUtf8(message.body) });
    at += length;
  }
  return decoded;
}

describe('emulated Bedrock', () => {
  it('answers a signed InvokeModel with the Anthropic message', async () => {
    const response = await post(invokePath(CLAUDE), messages, { credentials: staticKeys });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ type: 'message', model: CLAUDE, content: [{ type: 'text', text: 'Hello from the emulator. You said: Hello there' }] });
  });

  it.each([
    ['a wrong secret', { credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: 'wrong' } }, 'InvalidSignatureException'],
    ['an unknown key', { credentials: { accessKeyId: 'AKIAUNKNOWN', secretAccessKey: SECRET } }, 'UnrecognizedClientException'],
    ['no signature', {}, 'MissingAuthenticationTokenException'],
    ['an unknown API key', { authorization: 'Bearer not-a-key' }, 'UnrecognizedClientException'],
  ])('refuses %s with a 403 and the error type in x-amzn-ErrorType', async (_case, options, type) => {
    const response = await post(invokePath(CLAUDE), messages, options);
    expect(response.status).toBe(403);
    expect(response.headers.get('x-amzn-errortype')).toMatch(new RegExp(`^${type}:`));
    expect(await response.json()).toEqual({ message: expect.any(String) });
  });

  it('takes a Bedrock API key as a bearer token', async () => {
    expect((await post(invokePath(CLAUDE), messages, { authorization: 'Bearer bedrock-key' })).status).toBe(200);
  });

  it('refuses a Messages body that keeps model, or names another version', async () => {
    const withModel = await post(invokePath(CLAUDE), JSON.stringify({ ...JSON.parse(messages), model: CLAUDE }), { credentials: staticKeys });
    expect([withModel.status, withModel.headers.get('x-amzn-errortype')?.split(':')[0]]).toEqual([400, 'ValidationException']);
    const otherVersion = await post(invokePath(CLAUDE), JSON.stringify({ ...JSON.parse(messages), anthropic_version: '2023-06-01' }), { credentials: staticKeys });
    expect(otherVersion.status).toBe(400);
  });

  it('streams InvokeModel as chunk frames carrying the Anthropic events, and a throttling frame first on demand', async () => {
    const response = await post(invokePath(CLAUDE, 'invoke-with-response-stream'), messages, { credentials: staticKeys });
    expect(response.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const events = frames(Buffer.from(await response.arrayBuffer())).map((frame) => {
      expect(frame.headers[':event-type']).toBe('chunk');
      return JSON.parse(Buffer.from(JSON.parse(frame.payload).bytes, 'base64').toString('utf8')).type;
    });
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');

    const throttled = await post(invokePath(`${CLAUDE}@stream-exception=throttlingException`, 'invoke-with-response-stream'), messages, { credentials: staticKeys });
    expect(throttled.status).toBe(200);
    expect(frames(Buffer.from(await throttled.arrayBuffer()))).toEqual([
      { headers: { ':message-type': 'exception', ':exception-type': 'throttlingException', ':content-type': 'application/json' }, payload: JSON.stringify({ message: 'Too many requests, please wait before trying again.' }) },
    ]);
    const whole = await post(invokePath(`${CLAUDE}@stream-exception=throttlingException`), messages, { credentials: staticKeys });
    expect([whole.status, whole.headers.get('x-amzn-errortype')?.split(':')[0]]).toEqual([429, 'ThrottlingException']);
  });

  it("answers Converse and ConverseStream in Converse's shape", async () => {
    const request = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'Hello there' }] }], inferenceConfig: { maxTokens: 3 } });
    const answer = await post(invokePath('amazon.nova-pro-v1:0', 'converse'), request, { credentials: staticKeys });
    expect(await answer.json()).toMatchObject({ output: { message: { role: 'assistant', content: [{ text: 'Hello from the' }] } }, stopReason: 'max_tokens', usage: { outputTokens: 3 } });
    const stream = await post(invokePath('amazon.nova-pro-v1:0', 'converse-stream'), request, { credentials: staticKeys });
    const types = frames(Buffer.from(await stream.arrayBuffer())).map((frame) => frame.headers[':event-type']);
    expect(types[0]).toBe('messageStart');
    expect(types.slice(-3)).toEqual(['contentBlockStop', 'messageStop', 'metadata']);
  });

  it('issues sessions for a web identity token and for AssumeRole with its ExternalId, and refuses them once expired', async () => {
    const form = (fields: Record<string, string>) => new URLSearchParams({ Version: '2011-06-15', ...fields }).toString();
    const formType = 'application/x-www-form-urlencoded';
    const badToken = await post('/sts', form({ Action: 'AssumeRoleWithWebIdentity', RoleArn: ROLE, RoleSessionName: 's', WebIdentityToken: 'other' }), { contentType: formType });
    expect([badToken.status, await badToken.text()]).toEqual([400, expect.stringContaining('<Code>InvalidIdentityToken</Code>')]);
    const wrongExternalId = await post('/sts', form({ Action: 'AssumeRole', RoleArn: ROLE, RoleSessionName: 's', ExternalId: 'nope' }), { contentType: formType, credentials: staticKeys, service: 'sts' });
    expect(wrongExternalId.status).toBe(403);

    const sessions: Array<Record<string, string>> = [
      { Action: 'AssumeRoleWithWebIdentity', RoleArn: ROLE, RoleSessionName: 's', WebIdentityToken: 'pod-token' },
      { Action: 'AssumeRole', RoleArn: ROLE, RoleSessionName: 's', ExternalId: 'ext-1' },
    ];
    for (const fields of sessions) {
      const issued = await post('/sts', form(fields), { contentType: formType, ...(fields.Action === 'AssumeRole' && { credentials: staticKeys, service: 'sts' }) });
      const xml = await issued.text();
      expect(issued.status).toBe(200);
      const field = (name: string) => new RegExp(`<${name}>([^<]+)</${name}>`).exec(xml)![1];
      const session = { accessKeyId: field('AccessKeyId'), secretAccessKey: field('SecretAccessKey'), sessionToken: field('SessionToken') };
      expect(Date.parse(field('Expiration')) - Date.now()).toBeLessThanOrEqual(1000);
      expect((await post(invokePath(CLAUDE), messages, { credentials: session })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const expired = await post(invokePath(CLAUDE), messages, { credentials: session });
      expect([expired.status, expired.headers.get('x-amzn-errortype')?.split(':')[0]]).toEqual([403, 'ExpiredTokenException']);
    }
  });
});
