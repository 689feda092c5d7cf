// The gateway's checks and counts that hand a long text to the token counting worker threads.
// Integration tier: each worker loads its own tokenizer, and from the TypeScript sources it
// compiles them as it starts, seconds the unit tier does not spend; the short cases of the same
// functions stay in their unit specs.
import type { CatalogueModel, ChatCompletionRequestDto } from '@igw/contracts';
import { countTokens, estimateChatPromptTokens, estimatePromptTokens, tokenCountPool } from '@igw/tokenizer';
import { assertPromptFitsContext } from '../chat/chat-request';
import { chatStreamEvents, type StreamSettlement } from '../chat/chat-stream';
import { assertWithinContext } from '../embeddings/embeddings-request';

afterAll(() => tokenCountPool.close());

const chatModel = (contextLength: number): CatalogueModel => ({
  id: 'test/mini',
  aliases: [],
  type: 'openai/chat-completions',
  info: { name: 'Mini', developer: 'Test', description: '', contextLength, outputMax: 4_000 },
  tags: [],
  pricing: {
    kind: 'fixed',
    currency: 'USD',
    units: [
      { unit: 'input_tokens', price: 1, per: 1_000_000 },
      { unit: 'output_tokens', price: 4, per: 1_000_000 },
    ],
  },
  routing: { sources: [{ provider: 'openai', model: 'mini' }] },
});

describe('assertPromptFitsContext', () => {
  const prompt = (content: string) => ({ model: 'mini', messages: [{ role: 'system', content }, { role: 'user', content: 'Summarize.' }] }) as ChatCompletionRequestDto;
  const bytesOf = (request: ChatCompletionRequestDto) => Buffer.byteLength(JSON.stringify(request));
  const sentences = (count: number) => 'The gateway reads the prompt and sends it on. '.repeat(count);

  it('counts a long prompt in the worker pool, returning a Promise only then', async () => {
    const request = prompt(sentences(2_000));
    const tokens = estimatePromptTokens(request.messages);
    const fits = assertPromptFitsContext(chatModel(tokens), request, bytesOf(request));
    expect(fits).toBeInstanceOf(Promise);
    await expect(fits).resolves.toBeUndefined();
    // Far over the context: refused once the part counted says so, with the tokens known by then.
    await expect(assertPromptFitsContext(chatModel(1_000), request, bytesOf(request))).rejects.toThrow(
      /^Body validation error! messages: the prompt is at least \d+ tokens, more than the 1000-token context of test\/mini\.$/,
    );
  });
});

describe('chatStreamEvents settlement', () => {
  it('counts a long prompt in the token counting workers when no usage comes, and settles before [DONE]', async () => {
    const settlements: StreamSettlement[] = [];
    const longPrompt = { messages: [{ role: 'user', content: 'a long question about the order '.repeat(2_000) }] };
    const written: string[] = [];
    const events = chatStreamEvents(
      (async function* () {
        yield [{ chunk: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream', choices: [{ index: 0, delta: { content: 'Short answer.' }, finish_reason: null }] } }];
      })(),
      { modelId: 'm', includeUsage: false, prompt: longPrompt, settle: (s) => (settlements.push(s), written.push('settled'), { credits_used: 0, usd_spent: 0 }), describeError: () => 'x' },
    );
    for await (const piece of events) written.push(piece);
    expect(written.slice(1)).toEqual(['settled', 'data: [DONE]\n\n']);
    expect(settlements[0]).toMatchObject({ reported: false, usage: { prompt_tokens: estimateChatPromptTokens(longPrompt), completion_tokens: countTokens('Short answer.') } });
  });
});

describe('embeddings request rules', () => {
  it('counts long inputs in the worker pool, still naming the first input over the context', async () => {
    const wide: CatalogueModel = {
      id: 'openai/text-embedding-3-small',
      aliases: ['text-embedding-3-small'],
      type: 'openai/embeddings',
      info: { name: 'n', developer: 'd', description: '', contextLength: 6_000 },
      tags: ['playground:embeddings', 'dimensions:1536'],
      routing: { sources: [{ provider: 'openai', model: 'text-embedding-3-small' }] },
    };
    const long = 'lorem ipsum dolor sit amet '.repeat(1_000);
    const fits = assertWithinContext(wide, ['short', long]);
    expect(fits).toBeInstanceOf(Promise);
    await expect(fits).resolves.toBeUndefined();
    // Input 1 is too long (a text, counted) and so is input 2 (a token array, known at once): input 1 is named.
    await expect(assertWithinContext(wide, ['short', long.repeat(3), Array.from({ length: 6_001 }, () => 1)])).rejects.toThrow(
      /^Body validation error! input\[1\]: Expected at most 6000 tokens per input \(the context of openai\/text-embedding-3-small\)\. Received (at least|about) \d+ tokens$/,
    );
  });
});
