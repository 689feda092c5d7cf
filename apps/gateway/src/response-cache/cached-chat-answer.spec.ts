import type { StreamedChunk, UpstreamChatChunk } from '@igw/providers';
import { cachedCompletion, completionOfCached, isCachedChatAnswer, StreamRecorder, streamOfCached, type CachedChatAnswer } from './cached-chat-answer';

const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
const chunk = (choices: UpstreamChatChunk['choices'], extra: Partial<UpstreamChatChunk> = {}): StreamedChunk => ({ chunk: { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices, ...extra } });

async function batchesOf(answer: CachedChatAnswer): Promise<UpstreamChatChunk[][]> {
  const batches: UpstreamChatChunk[][] = [];
  for await (const batch of streamOfCached(answer, 'test/mini')) batches.push(batch.map((item) => item.chunk));
  return batches;
}

describe('a cached chat answer', () => {
  it('assembles a stream into the whole answer: texts joined, tool calls joined by index, finish reasons kept', () => {
    const recorder = new StreamRecorder(10_000);
    recorder.read([chunk([{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }]), chunk([{ index: 0, delta: { content: 'lo' }, finish_reason: null }])]);
    recorder.read([chunk([], { hiddenText: 'thinking' }), chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"q":' } }] }, finish_reason: null }])]);
    recorder.read([chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }, finish_reason: 'tool_calls' }]), chunk([], { usage })]);
    const answer = recorder.answer(usage)!;
    expect(answer.choices).toEqual([
      { index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'Hello', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"q":"x"}' } }] } },
    ]);
    expect(answer.batches).toHaveLength(3);
    expect(isCachedChatAnswer(JSON.parse(JSON.stringify(answer)))).toBe(true);
  });

  it('keeps nothing of a stream that grows past its limit', () => {
    const recorder = new StreamRecorder(100);
    recorder.read([chunk([{ index: 0, delta: { content: 'x'.repeat(200) }, finish_reason: null }])]);
    recorder.read([chunk([{ index: 0, delta: { content: 'y' }, finish_reason: 'stop' }])]);
    expect(recorder.answer(usage)).toBeUndefined();
  });

  it('replays a stored stream batch by batch with one fresh id, then the usage chunk', async () => {
    const recorder = new StreamRecorder(10_000);
    recorder.read([chunk([{ index: 0, delta: { role: 'assistant', content: 'A' }, finish_reason: null }])]);
    recorder.read([chunk([{ index: 0, delta: { content: 'B' }, finish_reason: 'stop' }])]);
    const batches = await batchesOf(JSON.parse(JSON.stringify(recorder.answer(usage))) as CachedChatAnswer);
    expect(batches.map((batch) => batch.map((item) => item.choices))).toEqual([[[{ index: 0, delta: { role: 'assistant', content: 'A' }, finish_reason: null }]], [[{ index: 0, delta: { content: 'B' }, finish_reason: 'stop' }]], [[]]]);
    expect(batches.at(-1)![0].usage).toEqual(usage);
    // The upstream's chunks said nothing of usage before the last: neither do the replayed ones.
    expect(batches[0][0]).not.toHaveProperty('usage');
    const ids = new Set(batches.flat().map((item) => item.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).not.toBe('chatcmpl-up');
    expect(batches.flat().every((item) => item.model === 'test/mini')).toBe(true);
  });

  it('streams a whole answer as its message and its finish, and gives each whole hit its own id and time', async () => {
    const answer = cachedCompletion(
      { id: 'chatcmpl-up', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Paris' }, finish_reason: 'stop' }], system_fingerprint: 'fp_1' },
      usage,
    );
    const [messages, usageBatch] = await batchesOf(answer);
    expect(messages.map((item) => item.choices)).toEqual([[{ index: 0, delta: { role: 'assistant', content: 'Paris' }, finish_reason: null }], [{ index: 0, delta: {}, finish_reason: 'stop' }]]);
    expect(messages[0].system_fingerprint).toBe('fp_1');
    // As OpenAI streams with include_usage: `usage: null` until the last chunk.
    expect(messages[0].usage).toBeNull();
    expect(usageBatch[0].usage).toEqual(usage);
    const whole = completionOfCached(answer, 'test/mini');
    expect(whole).toMatchObject({ object: 'chat.completion', model: 'test/mini', choices: answer.choices, usage, system_fingerprint: 'fp_1' });
    expect(whole.id).not.toBe('chatcmpl-up');
    expect(whole.created).toBeGreaterThan(1_700_000_000);
  });

  it('refuses a stored value it cannot serve', () => {
    expect(isCachedChatAnswer({ version: 2, choices: [], usage })).toBe(false);
    expect(isCachedChatAnswer({ version: 1, choices: 'x', usage })).toBe(false);
    expect(isCachedChatAnswer(null)).toBe(false);
  });
});
