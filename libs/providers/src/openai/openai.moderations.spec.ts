import { UpstreamProtocolError } from '../upstream.errors';
import { fromOpenAiModerationResponse, moderationInputCount } from './openai.moderations';

const result = { flagged: true, categories: { violence: true }, category_scores: { violence: 0.9 }, category_applied_input_types: { violence: ['text'] } };

describe("OpenAI's moderation answer", () => {
  it('keeps one result per input as it came', () => {
    expect(fromOpenAiModerationResponse('openai', { id: 'modr-1', model: 'x', results: [result, result] }, 2)).toEqual({ id: 'modr-1', results: [result, result] });
  });

  it('refuses an answer with another number of results, or one lacking what a client reads', () => {
    expect(() => fromOpenAiModerationResponse('openai', { results: [result] }, 2)).toThrow(UpstreamProtocolError);
    expect(() => fromOpenAiModerationResponse('openai', { results: [{ flagged: 'yes', categories: {}, category_scores: {} }] }, 1)).toThrow(UpstreamProtocolError);
    expect(() => fromOpenAiModerationResponse('openai', {}, 1)).toThrow(UpstreamProtocolError);
  });

  it('asks one result of a string or of the parts of one input, one per string of a list', () => {
    expect(moderationInputCount('x')).toBe(1);
    expect(moderationInputCount(['a', 'b', 'c'])).toBe(3);
    expect(moderationInputCount([{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }])).toBe(1);
  });
});
