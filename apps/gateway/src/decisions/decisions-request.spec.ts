import type { CatalogueModel, DecisionRequestDto } from '@igw/contracts';
import { jevQuestions } from '@igw/contracts';
import { NON_TEXT_PART_TOKENS } from '@igw/tokenizer';
import { assertShape, decisionQuestions, decisionShapeOf, inputTokensOf, utf8Bytes } from './decisions-request';

const model = (overrides: Partial<CatalogueModel>): CatalogueModel => ({
  id: 'test/jev-1.14',
  aliases: [],
  type: 'typesafe/decisions',
  info: { name: 'Jev', developer: 'Test', description: 'test', contextLength: 262144 },
  tags: [],
  capabilities: ['decisions', 'vision', 'box'],
  modalities: { input: ['text', 'image'], output: ['text'] },
  routing: { sources: [] },
  ...overrides,
});
const body = (fields: Record<string, unknown>) => ({ model: 'm', ...fields }) as DecisionRequestDto;
const options = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`o${i}`, 'd']));

describe('decision requests at the gateway', () => {
  it('reads the shape from the catalogue and refuses the other one, naming the field', () => {
    const luna = model({ id: 'test/luna', type: 'openai/chat-completions', tags: ['decisions:shape-v2'] });
    expect(decisionShapeOf(model({}))).toBe('jev');
    expect(decisionShapeOf(luna)).toBe('luna');
    expect(() => assertShape(luna, 'luna', body({ input: 'x', questions: {} }))).toThrow(/^Body validation error! questions: test\/luna takes the Luna shape/);
    expect(() => assertShape(model({}), 'jev', body({ questions: {} }))).toThrow(/^Body validation error! state: test\/jev-1\.14 takes the Jev shape/);
  });

  it('holds the content once per upstream call: once for a decision API, per question and round for the fallback', () => {
    const state = 'x'.repeat(1000);
    const request = body({ state, questions: { a: { type: 'noul', instructions: 'q' }, b: { type: 'choice', instructions: 'q', criteria: options(45) } }, assets: { img: {} } });
    const questions = jevQuestions(request.questions as never);
    const api = inputTokensOf('jev', 'decisions-api', request, questions, utf8Bytes);
    const fallback = inputTokensOf('jev', 'chat-logprobs', request, questions, utf8Bytes);
    const content = 1000 + NON_TEXT_PART_TOKENS;
    expect(api).toBeGreaterThan(content);
    expect(api).toBeLessThan(content + 200);
    // noul: 1 call; 45 options: rounds of 20, 20 and 5, then the final: 4 calls.
    expect(fallback).toBeGreaterThan(5 * content);
    expect(fallback).toBeLessThan(6 * content);
  });

  it('takes box only on a model with the box capability', () => {
    const request = body({ state: 's', questions: { where: { type: 'box', instructions: 'find it' } } });
    expect(decisionQuestions(model({}), 'jev', request)).toEqual([{ name: 'where', type: 'box', instructions: 'find it' }]);
    expect(() => decisionQuestions(model({ id: 'test/jev-1.13', capabilities: ['decisions'] }), 'jev', request)).toThrow(/questions\.where\.type: .*'box' \(experimental\)/);
  });
});
