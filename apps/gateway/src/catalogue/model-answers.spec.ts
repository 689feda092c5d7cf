import type { CatalogueModel } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { assertModelAnswers } from './model-answers';

const model = (type: string, extra: Partial<CatalogueModel> = {}): CatalogueModel => ({
  id: `test/${type.split('/')[1]}`,
  aliases: [],
  type,
  info: { name: 'm', developer: 'Test', description: '', contextLength: 1_000 },
  tags: [],
  routing: { sources: [{ provider: 'openai', model: 'm' }] },
  ...extra,
});

const refusal = (run: () => void) => {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayException) return { status: error.getStatus(), message: error.message };
    throw error;
  }
  return undefined;
};

describe('assertModelAnswers', () => {
  it('lets each API take the models GET /v1/models lists it for, decisions by capability or tag too', () => {
    const chat = model('openai/chat-completions');
    for (const api of ['chat.completions', 'responses', 'messages', 'generateContent'] as const) expect(refusal(() => assertModelAnswers(chat, api))).toBeUndefined();
    expect(refusal(() => assertModelAnswers(model('openai/embeddings'), 'embeddings'))).toBeUndefined();
    expect(refusal(() => assertModelAnswers(model('openai/image-generations'), 'images.generations'))).toBeUndefined();
    expect(refusal(() => assertModelAnswers(model('openai/speech-to-text'), 'stt'))).toBeUndefined();
    expect(refusal(() => assertModelAnswers(model('openai/text-to-speech'), 'tts'))).toBeUndefined();
    expect(refusal(() => assertModelAnswers(model('acme/decisions'), 'decisions'))).toBeUndefined();
    expect(refusal(() => assertModelAnswers(model('openai/chat-completions', { tags: ['decisions:logprobs'] }), 'decisions'))).toBeUndefined();
  });

  it('refuses any other model with a 400 naming it, its type (with its article) and what the API takes', () => {
    expect(refusal(() => assertModelAnswers(model('openai/chat-completions'), 'embeddings'))).toEqual({
      status: 400,
      message: "Body validation error! model: 'test/chat-completions' is an openai/chat-completions model, not an embeddings model.",
    });
    expect(refusal(() => assertModelAnswers(model('google/embeddings'), 'messages'))?.message).toBe("Body validation error! model: 'test/embeddings' is a google/embeddings model, not a chat model.");
    expect(refusal(() => assertModelAnswers(model('openai/chat-completions'), 'decisions'))?.message).toMatch(/not a decision model\.$/);
    expect(refusal(() => assertModelAnswers(model('openai/embeddings'), 'tts'))?.message).toMatch(/not a text-to-speech model\.$/);
    expect(refusal(() => assertModelAnswers(model('acme/decisions'), 'chat.completions'))?.message).toMatch(/is an acme\/decisions model, not a chat model\.$/);
  });
});
