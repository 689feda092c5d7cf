import { formatValidationErrors } from '@igw/validation';
import { catalogueEntryErrors } from './catalogue-file.dto';

// The catalogue file's own cases are in apps/catalogue (catalogue-file.spec.ts); these cover the
// admin API's use of the same DTOs, whose refusals read like every other request body's.

const entry = (): Record<string, unknown> => ({
  id: 'acme/model',
  aliases: [],
  type: 'openai/chat-completions',
  info: { name: 'Model', developer: 'Acme', description: 'an entry' },
  tags: [],
  routing: { sources: [{ provider: 'openai', model: 'gpt-4o-mini' }] },
});

const refusal = (body: unknown) => formatValidationErrors(catalogueEntryErrors(body));

describe('a catalogue entry sent to the admin API', () => {
  it('passes when valid', () => {
    expect(catalogueEntryErrors(entry())).toEqual([]);
  });

  it('is refused with every fault at once, by path, in the request bodies\' words', () => {
    expect(refusal({ ...entry(), type: 'chat', info: { name: 'Model' }, routing: { sources: [] } })).toBe(
      [
        "Body validation error! type: Expected <family>/<endpoint-kind>, the endpoint kind one of chat-completions, embeddings, image-generations, speech-to-text, text-to-speech, decisions, moderations, completions. Received 'chat'",
        'info.developer: Expected a non-empty string. Received nothing',
        'info.description: Expected a non-empty string. Received nothing',
        'routing.sources: Expected a non-empty array of upstream sources. Received an empty array',
      ].join('; '),
    );
  });

  it('takes weights, tiers, an Azure deployment and a strategy, and refuses what they cannot be', () => {
    expect(catalogueEntryErrors({ ...entry(), routing: { strategy: 'weighted', sources: [{ provider: 'azure-eastus', model: 'gpt-4o', deployment: 'gpt-4o-prod', weight: 3, tier: 0 }] } })).toEqual([]);
    expect(refusal({ ...entry(), routing: { sources: [{ provider: 'openai', model: 'm', weight: 0 }] } })).toMatch(/^Body validation error! routing\.sources\[0\]\.weight: /);
    expect(refusal({ ...entry(), routing: { sources: [{ provider: 'openai', model: 'm', tier: -1 }] } })).toMatch(/^Body validation error! routing\.sources\[0\]\.tier: /);
    expect(refusal({ ...entry(), routing: { strategy: 'random', sources: [{ provider: 'openai', model: 'm' }] } })).toMatch(/^Body validation error! routing\.strategy: /);
  });

  it('refuses an unknown field rather than dropping it, naming the known ones', () => {
    expect(refusal({ ...entry(), routing: { sources: [{ provider: 'openai', model: 'm', wieght: 2 }] } })).toBe(
      "Body validation error! routing.sources[0].wieght: Expected one of the fields 'provider', 'model', 'native', 'deployment', 'weight', 'tier'. Received an unknown field",
    );
  });

  it("takes a source's native APIs from the known ones, each once", () => {
    expect(catalogueEntryErrors({ ...entry(), routing: { sources: [{ provider: 'openai', model: 'm', native: ['responses', 'web_search'] }] } })).toEqual([]);
    expect(refusal({ ...entry(), routing: { sources: [{ provider: 'openai', model: 'm', native: ['assistants'] }] } })).toMatch(/^Body validation error! routing\.sources\[0\]\.native\[0\]: Expected one of 'responses', 'web_search'/);
    expect(refusal({ ...entry(), routing: { sources: [{ provider: 'openai', model: 'm', native: ['responses', 'responses'] }] } })).toMatch(/routing\.sources\[0\]\.native/);
    expect(refusal({ ...entry(), routing: { sources: [{ provider: 'openai', model: 'm', native: 'responses' }] } })).toMatch(/routing\.sources\[0\]\.native/);
  });

  it.each([
    ['constructor', { ...entry(), type: JSON.parse('{"constructor": ["x"]}') as unknown }, "type.constructor: Expected no field named like a JavaScript object member. Received 'constructor'"],
    ['toString', { ...entry(), info: { name: 'M', developer: 'A', description: 'd', toString: 'x' } }, "info.toString: Expected no field named like a JavaScript object member. Received 'toString'"],
    ['__proto__', JSON.parse('{"routing": {"sources": [{"__proto__": {}}]}}') as unknown, "routing.sources[0].__proto__: Expected no field named like a JavaScript object member. Received '__proto__'"],
  ])('refuses a key named %s, which class-transformer cannot copy, instead of failing', (_key, body, issue) => {
    expect(refusal(body)).toBe(`Body validation error! ${issue}`);
  });

  it('refuses nesting deeper than any entry has, instead of recursing without end', () => {
    let deep: unknown = 'x';
    for (let level = 0; level < 10_000; level++) deep = [deep];
    expect(refusal({ ...entry(), tags: deep })).toBe('Body validation error! tags[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: Expected at most 16 levels of nesting. Received more');
  });

  it('refuses null for a field that may only be left out', () => {
    expect(refusal({ ...entry(), resolvesTo: null })).toBe('Body validation error! resolvesTo: Expected a non-empty string. Received null');
  });

  it('refuses a body that is no object', () => {
    expect(refusal('acme/model')).toBe("Body validation error! Expected a catalogue entry object. Received string 'acme/model'");
  });
});
