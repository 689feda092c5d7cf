import type { DecisionQuestion } from '@igw/contracts';
import { UpstreamProtocolError } from '../upstream.errors';
import { decisionsAdapterFor, fromJevAnswer, fromLunaAnswer } from './decisions.adapters';

const choice: DecisionQuestion = { name: 'topic', type: 'choice', instructions: 'x', options: [{ key: 'a', description: 'A' }, { key: 'b', description: 'B' }] };
const score: DecisionQuestion = { name: 'level', type: 'score', instructions: 'x', levels: ['low', 'high'], labels: ['low', 'high'] };
const box: DecisionQuestion = { name: 'where', type: 'box', instructions: 'x' };

describe('decision answers read from upstreams', () => {
  it('renormalises rounded probabilities and fills options the upstream left out with 0', () => {
    expect(fromJevAnswer('typesafe', choice, { type: 'choice', probabilities: { a: 0.375, b: 0.125 } })).toEqual({ name: 'topic', type: 'choice', probabilities: [0.75, 0.25] });
    expect(fromJevAnswer('typesafe', choice, { type: 'choice', probabilities: { a: 0.5 } })).toEqual({ name: 'topic', type: 'choice', probabilities: [1, 0] });
    expect(fromLunaAnswer('openai', score, { type: 'score', probabilities: [{ label: 'high', probability: 0.5 }, { label: 'low', probability: 0.5 }] })).toEqual({ name: 'level', type: 'score', probabilities: [0.5, 0.5] });
  });

  it.each([
    ['a missing answer', choice, undefined],
    ['an answer of another type', choice, { type: 'noul', noul: 0.5 }],
    ['a probability above 1', choice, { type: 'choice', probabilities: { a: 1.5, b: 0 } }],
    ['probabilities summing to 0', choice, { type: 'choice', probabilities: { a: 0, b: 0 } }],
    ['a box with crossed edges', box, { type: 'box', top: 0.8, bottom: 0.2, left: 0, right: 1, confidence: 1 }],
  ])('refuses %s as a protocol error (the next source is tried)', (_, question, answer) => {
    expect(() => fromJevAnswer('typesafe', question, answer)).toThrow(UpstreamProtocolError);
  });

  it('keeps a Luna refusal as the answer', () => {
    expect(fromLunaAnswer('openai', choice, { type: 'refusal', name: 'topic' })).toEqual({ name: 'topic', type: 'refusal' });
  });

  it('routes each shape to the providers that serve it', () => {
    expect(decisionsAdapterFor('typesafe', 'jev')?.shape).toBe('jev');
    expect(decisionsAdapterFor('vllm', 'jev')?.shape).toBe('jev');
    expect(decisionsAdapterFor('openai', 'luna')?.shape).toBe('luna');
    expect(decisionsAdapterFor('azure', 'luna')).toBeUndefined();
    expect(decisionsAdapterFor('openai', 'jev')).toBeUndefined();
  });
});
