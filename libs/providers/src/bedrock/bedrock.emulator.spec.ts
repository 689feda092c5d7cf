// eslint-disable-next-line @nx/enforce-module-boundaries
import { startEmulator, type RunningEmulator } from '../../../../tools/emulator/src/emulator';
import type { ChatTool } from '@igw/contracts';
import type { ProviderTarget, UpstreamChatChunk, UpstreamChatRequest } from '../provider.types';
import { UpstreamHttpError } from '../upstream.errors';
import { BedrockChatAdapter } from './bedrock.chat';
import { bedrockAuthorizer, type BedrockSettings } from './bedrock.settings';

// The gateway's Bedrock calls against the emulator, which recomputes every SigV4 signature:
// a call signed with the wrong secret, or an unknown key, fails as AWS would make it fail.

const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const NOVA = 'amazon.nova-pro-v1:0';
const ACCESS_KEY = 'AKIAEMULATORTEST0001';
const SECRET = 'emulator/secret/key/for/tests/only0000001';

let emulator: RunningEmulator;
const adapter = new BedrockChatAdapter();
const options = { timeoutMs: 10_000 };

beforeAll(async () => {
  emulator = await startEmulator({
    bedrock: {
      accessKeys: { [ACCESS_KEY]: SECRET },
      apiKeys: ['bedrock-api-key-0001'],
      roles: { 'arn:aws:iam::123456789012:role/bedrock-caller': { externalId: 'ext-42' } },
      sessionSeconds: 3,
    },
  });
});

afterAll(() => emulator.close());

function target(model: string, settings: Partial<BedrockSettings> = {}, apiKey?: string): ProviderTarget {
  const cloud: BedrockSettings = { kind: 'bedrock', region: 'us-east-1', connection: 'bedrock-test', credentials: { kind: 'static', accessKeyId: ACCESS_KEY, secretAccessKey: SECRET }, ...settings };
  return { provider: 'bedrock-test', model, baseUrl: emulator.url, cloud, authorize: bedrockAuthorizer(cloud, apiKey) };
}

async function collect(stream: AsyncIterable<readonly { chunk: UpstreamChatChunk }[]>): Promise<UpstreamChatChunk[]> {
  const chunks: UpstreamChatChunk[] = [];
  for await (const batch of stream) for (const { chunk } of batch) chunks.push(chunk);
  return chunks;
}

const hello: UpstreamChatRequest = { model: 'x', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 50 };

describe('Bedrock through the emulator', () => {
  it('answers a Claude chat through InvokeModel, signed, with Anthropic usage', async () => {
    const answer = await adapter.chat(target(CLAUDE), hello, options);
    expect(answer.choices[0].message.content).toBe('Hello from the emulator. You said: Hello there');
    expect(answer.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 8 });
    const sent = emulator.requests[emulator.requests.length - 1];
    expect(sent.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke`);
    expect(sent.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31' });
    expect(sent.body).not.toHaveProperty('model');
    expect(String(sent.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAEMULATORTEST0001\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
  });

  it('streams a Claude chat from event-stream chunk frames, the last chunk carrying usage', async () => {
    const chunks = await collect(await adapter.stream(target(CLAUDE), hello, options));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Hello from the emulator. You said: Hello there');
    expect(chunks[chunks.length - 1].usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 8 });
  });

  it('answers Nova through Converse, streamed and not, with a tool call', async () => {
    const tools: ChatTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } } }];
    const request: UpstreamChatRequest = { model: 'x', messages: [{ role: 'user', content: 'What is the weather?' }], tools };
    const answer = await adapter.chat(target(NOVA), request, options);
    expect(answer.choices[0].finish_reason).toBe('tool_calls');
    const call = (answer.choices[0].message.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }>)[0];
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"location":"Paris"}' });
    const chunks = await collect(await adapter.stream(target(NOVA), request, options));
    const args = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []).map((piece) => piece.function?.arguments ?? '').join('');
    expect(args).toBe('{"location":"Paris"}');
    expect(chunks[chunks.length - 1]).toMatchObject({ choices: [{ finish_reason: 'tool_calls' }], usage: { prompt_tokens: answer.usage!.prompt_tokens } });
    const followUp: UpstreamChatRequest = {
      model: 'x',
      tools,
      messages: [...request.messages, { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: call.function }] }, { role: 'tool', tool_call_id: call.id, content: 'Sunny' }],
    };
    const final = await adapter.chat(target(NOVA), followUp, options);
    expect(final.choices[0].message.content).toBe('Tool said: Sunny');
  });

  it('is refused with the wrong secret, or a key the account does not know', async () => {
    await expect(adapter.chat(target(CLAUDE, { credentials: { kind: 'static', accessKeyId: ACCESS_KEY, secretAccessKey: 'wrong' } }), hello, options)).rejects.toMatchObject({
      status: 403,
      upstreamMessage: expect.stringContaining('signature we calculated does not match'),
    });
    await expect(adapter.chat(target(CLAUDE, { credentials: { kind: 'static', accessKeyId: 'AKIAUNKNOWN000000000', secretAccessKey: SECRET } }), hello, options)).rejects.toMatchObject({
      status: 403,
      upstreamMessage: 'The security token included in the request is invalid.',
    });
  });

  it('sends a Bedrock API key as a bearer token, unsigned', async () => {
    const answer = await adapter.chat(target(NOVA, {}, 'bedrock-api-key-0001'), hello, options);
    expect(answer.choices[0].message.content).toContain('Hello there');
    expect(emulator.requests[emulator.requests.length - 1].headers.authorization).toBe('Bearer bedrock-api-key-0001');
  });

  it('rejects a stream whose first frame is a throttling exception as a 429, before any chunk', async () => {
    for (const model of [`${CLAUDE}@stream-exception=throttlingException`, `${NOVA}@stream-exception=throttlingException`]) {
      const failure = await adapter.stream(target(model), hello, options).then(() => undefined, (error: unknown) => error);
      expect(failure).toBeInstanceOf(UpstreamHttpError);
      expect(failure).toMatchObject({ status: 429, upstreamMessage: 'throttlingException: Too many requests, please wait before trying again.' });
    }
  });

  it('maps ThrottlingException, ValidationException and AccessDeniedException answers to their statuses', async () => {
    await expect(adapter.chat(target(`${NOVA}@status=429`), hello, options)).rejects.toMatchObject({ status: 429 });
    await expect(adapter.chat(target(`${NOVA}@status=403`), hello, options)).rejects.toMatchObject({ status: 403, refusedOperatorAccount: true });
    await expect(adapter.chat(target(`${NOVA}@status=400`), hello, options)).rejects.toMatchObject({ status: 400, upstreamMessage: 'The input request is invalid.' });
  });

  it('assumes a role with its ExternalId through the emulated STS, and renews the session before it expires', async () => {
    process.env.AWS_ENDPOINT_URL_STS = `${emulator.url}/sts`;
    try {
      const role = { roleArn: 'arn:aws:iam::123456789012:role/bedrock-caller', externalId: 'ext-42' };
      const assumed = target(NOVA, { assumeRole: role });
      const before = emulator.bedrock.issued.AssumeRole;
      await adapter.chat(assumed, hello, options);
      await adapter.chat(assumed, hello, options);
      expect(emulator.bedrock.issued.AssumeRole).toBe(before + 1);
      // Sessions last 3 s: renewed at half their life, so no call ever carries an expired one.
      for (let round = 0; round < 4; round++) {
        await new Promise((resolve) => setTimeout(resolve, 800));
        await adapter.chat(assumed, hello, options);
      }
      expect(emulator.bedrock.issued.AssumeRole).toBeGreaterThanOrEqual(before + 2);
      await expect(adapter.chat(target(NOVA, { assumeRole: { ...role, externalId: 'wrong' } }), hello, options)).rejects.toMatchObject({
        name: 'UpstreamUnavailableError',
        message: expect.stringContaining('to assume arn:aws:iam::123456789012:role/bedrock-caller'),
      });
    } finally {
      delete process.env.AWS_ENDPOINT_URL_STS;
    }
  });

  it('closes the upstream stream when its reader stops early', async () => {
    for (const model of [`${CLAUDE}@chunk-delay=40`, `${NOVA}@chunk-delay=40`]) {
      const stream = await adapter.stream(target(model), hello, options);
      const reader = stream[Symbol.asyncIterator]();
      await reader.next();
      await reader.return?.();
      const sent = emulator.requests[emulator.requests.length - 1];
      for (let wait = 0; wait < 100 && !sent.ended; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(sent).toMatchObject({ ended: true, closedEarly: true });
    }
  });
});
