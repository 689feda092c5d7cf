import { answersDecisions, modelApis } from './model-apis';

const entry = (type: string, more: { capabilities?: string[]; tags?: string[]; native?: string[] } = {}) => ({
  type,
  tags: more.tags ?? [],
  capabilities: more.capabilities,
  routing: { sources: [{ native: more.native }] },
});

describe('modelApis: the APIs a catalogue entry can be called through', () => {
  it.each<[string, ReturnType<typeof entry>, string[]]>([
    ['an OpenAI chat model', entry('openai/chat-completions'), ['chat.completions', 'responses', 'messages', 'generateContent']],
    ['an Anthropic chat model', entry('anthropic/chat-completions'), ['chat.completions', 'responses', 'messages', 'generateContent']],
    ['a Gemini chat model', entry('google/chat-completions'), ['chat.completions', 'responses', 'messages', 'generateContent']],
    ['an embedding model', entry('openai/embeddings'), ['embeddings', 'embedContent']],
    ['an image model', entry('openai/image-generations'), ['images.generations']],
    ['a speech-to-text model', entry('openai/speech-to-text'), ['stt']],
    ['a text-to-speech model', entry('openai/text-to-speech'), ['tts']],
    ['a decision model', entry('acme/decisions', { capabilities: ['decisions', 'box'] }), ['decisions']],
    ['a chat model answering decisions through its log probabilities', entry('openai/chat-completions', { tags: ['decisions:logprobs'] }), ['chat.completions', 'responses', 'messages', 'generateContent', 'decisions']],
    ['a chat model declaring the decisions capability', entry('acme/chat-completions', { capabilities: ['decisions'] }), ['chat.completions', 'responses', 'messages', 'generateContent', 'decisions']],
    ['a moderation model', entry('openai/moderations'), ['moderations']],
    ['a legacy completions model', entry('openai/completions'), ['completions']],
    ['a chat model with a source serving legacy completions', entry('acme/chat-completions', { native: ['completions'] }), ['chat.completions', 'responses', 'messages', 'generateContent', 'completions']],
    ['an embedding model whose source is marked for completions (no such API for it)', entry('openai/embeddings', { native: ['completions'] }), ['embeddings', 'embedContent']],
    ['a type of no known kind', entry('vendor/videos'), []],
  ])('%s', (_name, model, apis) => {
    expect(modelApis(model)).toEqual(apis);
  });

  it('says decisions exactly where POST /v1/decisions answers (the same predicate)', () => {
    expect([answersDecisions(entry('acme/decisions')), answersDecisions(entry('openai/chat-completions')), answersDecisions(entry('openai/embeddings', { tags: ['decisions:logprobs'] }))]).toEqual([true, false, true]);
  });
});
