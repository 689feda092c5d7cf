import type { CatalogueModel, CompletionRequestDto } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { loadEnvironment, type ServiceSettings } from '@igw/config';
import type { NativeEvent } from '@igw/providers';
import { assertModelAnswers } from '../catalogue/model-answers';
import { assertCompletionBounds, assertPromptsFitContext, completionTargets, generatedChoices, promptList } from './completions-request';
import { CompletionsStreamWriter } from './completions.service';

const settings = (variables: NodeJS.ProcessEnv = { OPENAI_API_KEY: 'k', GROQ_API_KEY: 'k' }): ServiceSettings => {
  const { env, providers } = loadEnvironment(variables);
  return { env, providers, queue: { kind: 'redis', url: 'redis://unused', prefix: 'igw' } };
};

const model = (overrides: Partial<CatalogueModel> = {}): CatalogueModel => ({
  id: 'openai/gpt-3.5-turbo-instruct',
  aliases: [],
  type: 'openai/completions',
  info: { name: 'Instruct', developer: 'OpenAI', description: '', contextLength: 40, outputMax: 20 },
  tags: [],
  routing: { sources: [{ provider: 'openai', model: 'gpt-3.5-turbo-instruct' }] },
  ...overrides,
});
const coder = model({ id: 'acme/coder', type: 'acme/chat-completions', routing: { sources: [{ provider: 'groq', model: 'coder', native: ['completions'] }, { provider: 'openai', model: 'coder' }] } });
const body = (fields: Partial<CompletionRequestDto> = {}): CompletionRequestDto => ({ model: 'm', prompt: 'hello', ...fields }) as CompletionRequestDto;

function failure(run: () => unknown): { status: number; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayException);
    return { status: (error as GatewayException).getStatus(), message: (error as GatewayException).message };
  }
  throw new Error('expected a GatewayException');
}

describe('legacy completions request rules', () => {
  it('lists the prompts: a string, strings, one token array, token arrays', () => {
    expect(promptList('a')).toEqual(['a']);
    expect(promptList(['a', 'b'])).toEqual(['a', 'b']);
    expect(promptList([1, 2, 3])).toEqual([[1, 2, 3]]);
    expect(promptList([[1], [2, 3]])).toEqual([[1], [2, 3]]);
  });

  it('counts every completion generated, best_of of them when it is larger than n', () => {
    expect(generatedChoices(body(), 1)).toBe(1);
    expect(generatedChoices(body({ n: 2 }), 3)).toBe(6);
    expect(generatedChoices(body({ n: 2, best_of: 5 }), 3)).toBe(15);
  });

  it('refuses max_tokens past the output limit, too many completions in all, and stream_options without a stream', () => {
    expect(failure(() => assertCompletionBounds(model(), body({ max_tokens: 21 }), 1)).message).toBe(
      'Body validation error! max_tokens: Expected at most 20 for openai/gpt-3.5-turbo-instruct (its output limit). Received 21',
    );
    expect(failure(() => assertCompletionBounds(model(), body({ n: 2, best_of: 20 }), 200)).message).toContain('best_of: Expected at most 2048 completions in all');
    expect(failure(() => assertCompletionBounds(model(), body({ stream_options: { include_usage: true } }), 1)).message).toContain('stream_options: Expected stream: true alongside stream_options. Received no stream');
    expect(() => assertCompletionBounds(model(), body({ max_tokens: 20, n: 128 }), 16)).not.toThrow();
  });

  it('refuses a prompt that cannot fit the context with the tokens asked for, naming it', () => {
    expect(() => assertPromptsFitContext(model(), body({ max_tokens: 10 }), ['short'], 30)).not.toThrow();
    const long = 'word '.repeat(60);
    expect(failure(() => assertPromptsFitContext(model(), body({ prompt: ['ok', long], max_tokens: 10 }), ['ok', long], 400)).message).toMatch(
      /^Body validation error! prompt\[1\]: the prompt is (about|at least) \d+ tokens plus the 10 tokens asked for, more than the 40-token context of openai\/gpt-3.5-turbo-instruct\.$/,
    );
    expect(failure(() => assertPromptsFitContext(model(), body({ prompt: [Array.from({ length: 35 }, () => 1)], max_tokens: 10 }), [Array.from({ length: 35 }, () => 1)], 200)).message).toContain('prompt[0]: the prompt is about 35 tokens');
  });

  it('sends to the sources that serve completions: every source of a completions model, the native ones of a chat model', () => {
    expect(completionTargets(model(), undefined, settings()).map((target) => target.provider)).toEqual(['openai']);
    expect(completionTargets(coder, undefined, settings()).map((target) => target.provider)).toEqual(['groq']);
    expect(failure(() => completionTargets(coder, 'openai', settings()))).toEqual({
      status: 400,
      message: 'Body validation error! provider: openai serves no legacy completions for acme/coder; pick another source of it, or leave provider out.',
    });
    const anthropicOnly = model({ routing: { sources: [{ provider: 'anthropic', model: 'x' }] } });
    expect(failure(() => completionTargets(anthropicOnly, undefined, settings())).status).toBe(503);
  });

  it('answers a chat model without such a source with a 400 that names the route to use', () => {
    const chat = model({ id: 'openai/gpt-4o-mini', type: 'openai/chat-completions' });
    expect(failure(() => assertModelAnswers(chat, 'completions')).message).toBe(
      "Body validation error! model: 'openai/gpt-4o-mini' is not served by POST /v1/completions: none of its sources serves the legacy completions API. Send it to POST /v1/chat/completions (or /v1/responses) with the prompt as a user message.",
    );
    expect(() => assertModelAnswers(coder, 'completions')).not.toThrow();
    expect(failure(() => assertModelAnswers(model(), 'chat.completions')).message).toContain("'openai/gpt-3.5-turbo-instruct' is an openai/completions model, not a chat model.");
  });
});

describe('the stream of legacy completions, as the client reads it', () => {
  const event = (parsed: Record<string, unknown>, usage?: NativeEvent['usage']): NativeEvent => ({ data: JSON.stringify(parsed), parsed, chunks: [], ...(usage ? { usage } : {}) });
  const usage = { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 };
  const charged = { credits_used: 1.5, usd_spent: 0.00000075 };

  it('renames the model, and passes the usage chunk with meta.usage to a client that asked for it', () => {
    const writer = new CompletionsStreamWriter('openai/instruct', true);
    expect(writer.event(event({ model: 'gpt-3.5-turbo-instruct', choices: [{ text: ' Hi', index: 0 }] }), () => undefined)).toBe(`data: ${JSON.stringify({ model: 'openai/instruct', choices: [{ text: ' Hi', index: 0 }] })}\n\n`);
    const settle = jest.fn(() => charged);
    expect(JSON.parse(writer.event(event({ model: 'x', choices: [], usage }, usage), settle).slice(6))).toEqual({ model: 'openai/instruct', choices: [], usage, meta: { usage: charged } });
    expect(settle).toHaveBeenCalledTimes(1);
    expect(writer.event({ data: '[DONE]', parsed: {}, chunks: [] }, () => undefined)).toBe('data: [DONE]\n\n');
  });

  it('settles the usage chunk it keeps from a client that did not ask for it', () => {
    const writer = new CompletionsStreamWriter('openai/instruct', false);
    const settle = jest.fn(() => charged);
    expect(writer.event(event({ choices: [], usage }, usage), settle)).toBe('');
    expect(settle).toHaveBeenCalledTimes(1);
    // vLLM's usage on a chunk with text (continuous usage stats) leaves with the text only.
    expect(JSON.parse(writer.event(event({ choices: [{ text: 'a' }], usage }, usage), settle).slice(6))).toEqual({ model: 'openai/instruct', choices: [{ text: 'a' }] });
  });
});
