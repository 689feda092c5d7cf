import { speaksGemini, speaksMessages, wireApiOf } from './registry';

describe('wireApiOf: the API a source is called through', () => {
  it.each([
    ['anthropic', 'claude-sonnet-5-5', 'anthropic-messages'],
    ['google', 'gemini-2.5-flash', 'gemini'],
    ['openai', 'gpt-4o', 'openai'],
    ['azure-openai', 'claude-lookalike', 'openai'],
    ['bedrock', 'anthropic.claude-sonnet-4-5-20250929-v1:0', 'anthropic-messages'],
    ['bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'anthropic-messages'],
    ['bedrock', 'global.anthropic.claude-opus-5-5-v1', 'anthropic-messages'],
    ['bedrock', 'apac.anthropic.claude-haiku-5-5-v1', 'anthropic-messages'],
    ['bedrock', 'us.amazon.nova-pro-v1:0', 'bedrock-converse'],
    ['bedrock', 'meta.llama3-3-70b-instruct-v1:0', 'bedrock-converse'],
    ['bedrock', 'mistral.anthropic-lookalike', 'bedrock-converse'],
    ['vertex', 'claude-sonnet-4-5@20250929', 'anthropic-messages'],
    ['vertex', 'publishers/anthropic/models/claude-opus-5-5', 'anthropic-messages'],
    ['vertex', 'gemini-2.5-flash', 'gemini'],
    ['vertex', 'meta/llama-3.3-70b-instruct-maas', 'openai'],
  ] as const)('%s %s → %s', (kind, model, api) => {
    expect(wireApiOf(kind, model)).toBe(api);
  });

  it('lets the native Messages and Gemini paths take the cloud sources of Claude and Gemini', () => {
    expect(speaksMessages({ definition: { kind: 'bedrock' }, model: 'eu.anthropic.claude-sonnet-5-5-v1' })).toBe(true);
    expect(speaksMessages({ definition: { kind: 'bedrock' }, model: 'amazon.nova-lite-v1:0' })).toBe(false);
    expect(speaksGemini({ definition: { kind: 'vertex' }, model: 'gemini-3.8-flash' })).toBe(true);
    expect(speaksGemini({ definition: { kind: 'vertex' }, model: 'claude-haiku-5-5' })).toBe(false);
  });
});
