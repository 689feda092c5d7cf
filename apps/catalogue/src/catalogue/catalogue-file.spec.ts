import { readdirSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { CatalogueFileError, DEFAULT_CATALOGUE_FILE, readCatalogueFile, type CatalogueFileEntry } from './catalogue-file';

async function fileWith(yaml: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'igw-catalogue-')), 'catalogue.yaml');
  await writeFile(file, yaml);
  return file;
}

type Raw = Record<string, unknown>;

/** A valid chat entry `a/b`; each case breaks one thing in a copy of it. */
function chat(): Raw {
  return {
    id: 'a/b',
    aliases: ['b'],
    type: 'openai/chat-completions',
    info: { name: 'B', developer: 'A', description: 'test entry', releasedAt: '2026-01-02', contextLength: 1000, outputMax: 100 },
    tags: ['playground:chat'],
    modalities: { input: ['text'], output: ['text'] },
    capabilities: ['streaming'],
    pricing: { kind: 'fixed', currency: 'USD', units: [{ unit: 'input_tokens', price: 1, per: 1000000 }] },
    routing: { sources: [{ provider: 'openai', model: 'b' }] },
  };
}

function image(): Raw {
  return {
    ...chat(),
    type: 'openai/image-generations',
    info: { name: 'B', developer: 'A', description: 'test entry' },
    pricing: {
      kind: 'fixed',
      currency: 'USD',
      units: [{ unit: 'images', price: 0.04, per: 1 }],
      dimensions: ['size', 'quality'],
      variants: [{ dimensions: { size: '1024x1024', quality: 'hd' }, units: [{ unit: 'images', price: 0.08, per: 1 }] }],
    },
  };
}

/**
 * A copy of `base` with some fields replaced: keys are dot-separated paths (numbers index
 * lists), and `undefined` removes the field.
 */
function edit(base: Raw, changes: Record<string, unknown>): Raw {
  const entry = structuredClone(base);
  for (const [fieldPath, value] of Object.entries(changes)) {
    const keys = fieldPath.split('.');
    let target = entry;
    for (const key of keys.slice(0, -1)) target = target[key] as Raw;
    const last = keys[keys.length - 1];
    if (value === undefined) delete target[last];
    else target[last] = value;
  }
  return entry;
}

const yamlOf = (...models: Raw[]) => stringify({ models });
/** An issue line naming entry a/b and the field, worded like a request body's (`Expected ... Received ...`). */
const named = (field: string) => new RegExp(`models\\[\\d+\\] \\(a/b\\): ${field.replace(/[.[\]]/g, '\\$&')}: Expected .+\\. Received `);

describe('the catalogue file', () => {
  it('accepts a well-formed entry and returns it field for field', async () => {
    const models = await readCatalogueFile(await fileWith(yamlOf(chat(), { ...image(), id: 'c/d', aliases: ['d'] })));
    // Strictly equal: the entry as written, with no field added (the service compares stored entries with it).
    expect(models[0]).toStrictEqual(chat());
    expect(models[1].pricing?.variants).toHaveLength(1);
  });

  it.each<[string, Raw[], RegExp]>([
    ['a missing id', [edit(chat(), { id: '' })], /models\[0\]: id: Expected a non-empty string\. Received ''/],
    ['an id with spaces', [edit(chat(), { id: 'a b' })], /models\[0\] \(a b\): id: Expected a name without whitespace\. Received 'a b'/],
    ['aliases that are not a list', [edit(chat(), { aliases: 'b' })], named('aliases')],
    ['an empty alias', [edit(chat(), { aliases: [''] })], named('aliases[0]')],
    ['a type without endpoint kind', [edit(chat(), { type: 'chat' })], named('type')],
    ['an unknown endpoint kind', [edit(chat(), { type: 'openai/fine-tuning' })], named('type')],
    ['an unknown top-level field', [edit(chat(), { price: 1 })], named('price')],
    ['no info', [edit(chat(), { info: undefined })], named('info')],
    ['info without description', [edit(chat(), { 'info.description': undefined })], named('info.description')],
    [
      'a misspelt info field',
      [edit(chat(), { 'info.contextLenght': 1000 })],
      /\(a\/b\): info\.contextLenght: Expected one of the fields 'name', .*'contextLength'.*\. Received an unknown field/,
    ],
    ['a release date that is no date', [edit(chat(), { 'info.releasedAt': '2026-02-30' })], named('info.releasedAt')],
    ['a cutoff written another way', [edit(chat(), { 'info.cutoffAt': '01/02/2026' })], named('info.cutoffAt')],
    ['a fractional context length', [edit(chat(), { 'info.contextLength': 1000.5 })], named('info.contextLength')],
    ['a zero output size', [edit(chat(), { 'info.outputMax': 0 })], named('info.outputMax')],
    ['an output size above the context', [edit(chat(), { 'info.outputMax': 2000 })], named('info.outputMax')],
    ['a docs link that is no URL', [edit(chat(), { 'info.docsUrl': 'see the docs' })], named('info.docsUrl')],
    ['a context length on an image model', [edit(image(), { 'info.contextLength': 1000 })], named('info.contextLength')],
    [
      'an output size on a speech model',
      [edit(image(), { type: 'openai/text-to-speech', 'info.outputMax': 10 })],
      named('info.outputMax'),
    ],
    [
      'a context length on a transcription model',
      [edit(image(), { type: 'openai/speech-to-text', 'info.contextLength': 10 })],
      named('info.contextLength'),
    ],
    [
      'an output size on an embedding model',
      [edit(chat(), { type: 'openai/embeddings' })],
      /\(a\/b\): info\.outputMax: Expected no outputMax for embeddings models, which produce no text\. Received 100/,
    ],
    ['tags that are not a list', [edit(chat(), { tags: 'playground:chat' })], named('tags')],
    ['a tag that is not a string', [edit(chat(), { tags: [1] })], named('tags[0]')],
    ['modalities without output', [edit(chat(), { 'modalities.output': undefined })], named('modalities.output')],
    ['an unknown modality', [edit(chat(), { 'modalities.input': ['text', 'smell'] })], named('modalities.input[1]')],
    ['capabilities that are not a list', [edit(chat(), { capabilities: 'tools' })], named('capabilities')],
    ['another pricing kind', [edit(chat(), { 'pricing.kind': 'tiered' })], named('pricing.kind')],
    ['another currency', [edit(chat(), { 'pricing.currency': 'EUR' })], named('pricing.currency')],
    ['pricing without units', [edit(chat(), { 'pricing.units': [] })], named('pricing.units')],
    ['a price without per', [edit(chat(), { 'pricing.units.0.per': undefined })], named('pricing.units[0].per')],
    ['a fractional per', [edit(chat(), { 'pricing.units.0.per': 0.5 })], named('pricing.units[0].per')],
    ['a negative price', [edit(chat(), { 'pricing.units.0.price': -1 })], named('pricing.units[0].price')],
    ['a price past the sanity bound (1e10 USD a million tokens)', [edit(chat(), { 'pricing.units.0.price': 1e10 })], named('pricing.units[0].price')],
    ['a price written as text', [edit(chat(), { 'pricing.units.0.price': '1' })], named('pricing.units[0].price')],
    ['a unit without a name', [edit(chat(), { 'pricing.units.0.unit': '' })], named('pricing.units[0].unit')],
    [
      'a unit priced twice',
      [edit(chat(), { 'pricing.units.1': { unit: 'input_tokens', price: 2, per: 1000000 } })],
      named('pricing.units[1].unit'),
    ],
    ['dimensions that are not names', [edit(image(), { 'pricing.dimensions': [3] })], named('pricing.dimensions[0]')],
    ['variants without dimensions', [edit(image(), { 'pricing.dimensions': undefined })], named('pricing.variants')],
    [
      'a variant on an undeclared dimension',
      [edit(image(), { 'pricing.variants.0.dimensions.style': 'vivid' })],
      named('pricing.variants[0].dimensions.style'),
    ],
    [
      'a variant dimension that is not a string',
      [edit(image(), { 'pricing.variants.0.dimensions.size': 1024 })],
      named('pricing.variants[0].dimensions.size'),
    ],
    ['a variant without units', [edit(image(), { 'pricing.variants.0.units': undefined })], named('pricing.variants[0].units')],
    [
      'a variant unit without per',
      [edit(image(), { 'pricing.variants.0.units.0.per': undefined })],
      named('pricing.variants[0].units[0].per'),
    ],
    [
      'a per-second price per minute',
      [edit(image(), { type: 'openai/speech-to-text', 'pricing.units.0': { unit: 'audio_seconds', price: 0.006, per: 60 } })],
      /models\[0\] \(a\/b\): pricing\.units\[0\]\.per: Expected 1 for audio_seconds, which is priced per single unit .*\. Received 60/,
    ],
    [
      'an image price per thousand images in a variant',
      [edit(image(), { 'pricing.variants.0.units.0.per': 1000 })],
      /\(a\/b\): pricing\.variants\[0\]\.units\[0\]\.per: Expected 1 for images, .*\. Received 1000/,
    ],
    ['a megapixel price per 1000', [edit(image(), { 'pricing.units.0': { unit: 'megapixels', price: 0.05, per: 1000 } })], named('pricing.units[0].per')],
    [
      'a token price per single token',
      [edit(chat(), { 'pricing.units.0.per': 1 })],
      /\(a\/b\): pricing\.units\[0\]\.per: Expected 1000000 or 1000 for input_tokens, a token-like rate .*\. Received 1$/,
    ],
    ['a character price per single character', [edit(chat(), { 'pricing.units.0': { unit: 'characters', price: 15, per: 1 } })], named('pricing.units[0].per')],
    [
      'a call price per 100 calls',
      [edit(chat(), { 'pricing.units.1': { unit: 'web_search_calls', price: 10, per: 100 } })],
      /\(a\/b\): pricing\.units\[1\]\.per: Expected 1 or 1000 for web_search_calls, .*\. Received 100/,
    ],
    [
      'a prompt-size price without the unit\'s base price',
      [edit(chat(), { 'pricing.units.0.promptTokensAbove': 200000 })],
      /\(a\/b\): pricing\.units\[0\]\.promptTokensAbove: Expected beside an entry of 'input_tokens' without promptTokensAbove/,
    ],
    [
      'a longer prompt priced lower',
      [edit(chat(), { 'pricing.units.1': { unit: 'input_tokens', price: 0.5, per: 1000000, promptTokensAbove: 200000 } })],
      /\(a\/b\): pricing\.units\[1\]\.price: Expected at least the price of 'input_tokens' for shorter prompts .*\. Received 0\.5/,
    ],
    [
      'one threshold priced twice',
      [edit(chat(), { 'pricing.units.1': { unit: 'input_tokens', price: 2, per: 1000000, promptTokensAbove: 9 }, 'pricing.units.2': { unit: 'input_tokens', price: 3, per: 1000000, promptTokensAbove: 9 } })],
      /\(a\/b\): pricing\.units\[2\]\.unit: Expected one price per unit and prompt size\. Received a second price of 'input_tokens' above 9 prompt tokens/,
    ],
    ['a fractional threshold', [edit(chat(), { 'pricing.units.1': { unit: 'input_tokens', price: 2, per: 1000000, promptTokensAbove: 1.5 } })], named('pricing.units[1].promptTokensAbove')],
    [
      'a chat model priced by another dimension',
      [edit(chat(), { 'pricing.dimensions': ['region'], 'pricing.variants': [{ dimensions: { region: 'eu' }, units: [{ unit: 'input_tokens', price: 2, per: 1000000 }] }] })],
      /\(a\/b\): pricing\.dimensions: Expected \['service_tier'\] for a chat model, .*\. Received \['region'\]/,
    ],
    [
      'a chat variant for the standard tier',
      [edit(chat(), { 'pricing.dimensions': ['service_tier'], 'pricing.variants': [{ dimensions: { service_tier: 'default' }, units: [{ unit: 'input_tokens', price: 2, per: 1000000 }] }] })],
      /\(a\/b\): pricing\.variants\[0\]\.dimensions\.service_tier: Expected a tier other than 'auto', 'default' .*\. Received 'default'/,
    ],
    [
      'a service tier that leaves a unit unpriced',
      [
        edit(chat(), {
          'pricing.units.1': { unit: 'output_tokens', price: 4, per: 1000000 },
          'pricing.dimensions': ['service_tier'],
          'pricing.variants': [{ dimensions: { service_tier: 'priority' }, units: [{ unit: 'input_tokens', price: 2, per: 1000000 }] }],
        }),
      ],
      /\(a\/b\): pricing\.variants\[0\]\.units: Expected a price for every unit the top-level units price\. Received none for 'output_tokens'/,
    ],
    ['no routing source', [edit(chat(), { 'routing.sources': [] })], named('routing.sources')],
    ['a source without model', [edit(chat(), { 'routing.sources.0.model': undefined })], named('routing.sources[0].model')],
    ['an unknown refused role', [edit(chat(), { 'routing.refusedRoles': ['robot'] })], named('routing.refusedRoles[0]')],
    ['refused roles that are not a list', [edit(chat(), { 'routing.refusedRoles': 'system' })], named('routing.refusedRoles')],
    ['a role refused twice', [edit(chat(), { 'routing.refusedRoles': ['system', 'system'] })], named('routing.refusedRoles')],
    ['a stream duration of zero', [edit(chat(), { 'routing.maxStreamSeconds': 0 })], /\(a\/b\): routing\.maxStreamSeconds: Expected an integer from 1 to 86400\. Received 0/],
    ['a fractional stream duration', [edit(chat(), { 'routing.maxStreamSeconds': 1.5 })], named('routing.maxStreamSeconds')],
    ['a stream duration written as text', [edit(chat(), { 'routing.maxStreamSeconds': '30' })], named('routing.maxStreamSeconds')],
    ['a stream duration over a day', [edit(chat(), { 'routing.maxStreamSeconds': 86401 })], named('routing.maxStreamSeconds')],
    ['a call timeout of zero', [edit(chat(), { 'routing.timeoutSeconds': 0 })], /\(a\/b\): routing\.timeoutSeconds: Expected an integer from 1 to 3600\. Received 0/],
    ['a call timeout written as text', [edit(chat(), { 'routing.timeoutSeconds': '600' })], named('routing.timeoutSeconds')],
    ['a call timeout over an hour', [edit(chat(), { 'routing.timeoutSeconds': 3601 })], named('routing.timeoutSeconds')],
    ['an optional field set to null', [edit(chat(), { 'routing.timeoutSeconds': null })], named('routing.timeoutSeconds')],
    ['an optional list set to null', [edit(chat(), { capabilities: null })], named('capabilities')],
    [
      'a floating id naming no entry',
      [edit(chat(), { resolvesTo: 'a/b-1' })],
      /models\[0\] \(a\/b\): resolvesTo: Expected the id of an entry in this file\. Received 'a\/b-1'/,
    ],
    ['a floating id naming itself', [edit(chat(), { resolvesTo: 'a/b' })], named('resolvesTo')],
    [
      'a floating id naming another floating id',
      [
        edit(chat(), { resolvesTo: 'a/c' }),
        edit(chat(), { id: 'a/c', aliases: [], resolvesTo: 'a/d' }),
        edit(chat(), { id: 'a/d', aliases: [] }),
      ],
      /models\[0\] \(a\/b\): resolvesTo: Expected the id of a pinned release .*\. Received 'a\/c', which itself resolves to 'a\/d'/,
    ],
    [
      'a floating id naming a model of another type',
      [edit(chat(), { resolvesTo: 'a/c' }), edit(chat(), { id: 'a/c', aliases: [], type: 'x/decisions' })],
      /models\[0\] \(a\/b\): resolvesTo: Expected an entry of this entry's type \(openai\/chat-completions\)\. Received 'a\/c', of type x\/decisions/,
    ],
    [
      'a name used twice',
      [chat(), edit(chat(), { id: 'c/d', aliases: ['B'] })],
      /models\[1\] \(c\/d\): aliases\[0\]: Expected a name used once in the file .*\. Received 'B', already a name of a\/b/,
    ],
    [
      'an alias equal to another id',
      [chat(), edit(chat(), { id: 'c/d', aliases: ['A/B'] })],
      /models\[1\] \(c\/d\): aliases\[0\]: Expected a name used once in the file .*\. Received 'A\/B', already a name of a\/b/,
    ],
  ])('stops on %s, naming the entry and field', async (_label, models, message) => {
    const file = await fileWith(yamlOf(...models));
    const error = await readCatalogueFile(file).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(CatalogueFileError);
    // One fault, one line: no rule repeats what another already said about the same field.
    expect((error as Error).message.split('\n')).toEqual([expect.stringMatching(message)]);
  });

  it.each<[string, Raw]>([
    ['tokens per thousand', edit(chat(), { 'pricing.units.0.per': 1000 })],
    ['characters per million', edit(chat(), { type: 'openai/text-to-speech', info: { name: 'B', developer: 'A', description: 'tts' }, 'pricing.units.0': { unit: 'characters', price: 15, per: 1000000 } })],
    ['calls per thousand', edit(chat(), { 'pricing.units.1': { unit: 'web_search_calls', price: 10, per: 1000 } })],
    ['calls one by one', edit(chat(), { 'pricing.units.1': { unit: 'web_search_calls', price: 0.01, per: 1 } })],
    ['seconds one by one', edit(image(), { type: 'openai/speech-to-text', 'pricing.units.0': { unit: 'audio_seconds', price: 0.0001, per: 1 } })],
    [
      'service tiers and prompt-size prices on a chat model',
      edit(chat(), {
        'pricing.units.1': { unit: 'input_tokens', price: 2, per: 1000000, promptTokensAbove: 200000 },
        'pricing.units.2': { unit: 'cache_write_1h_input_tokens', price: 2, per: 1000000 },
        'pricing.dimensions': ['service_tier'],
        'pricing.variants': [
          {
            dimensions: { service_tier: 'priority' },
            units: [
              { unit: 'input_tokens', price: 2, per: 1000000 },
              { unit: 'input_tokens', price: 4, per: 1000000, promptTokensAbove: 200000 },
              { unit: 'cache_write_1h_input_tokens', price: 4, per: 1000000 },
            ],
          },
        ],
      }),
    ],
  ])('accepts %s', async (_label, entry) => {
    const [model] = await readCatalogueFile(await fileWith(yamlOf(entry)));
    expect(model.pricing).toEqual(entry.pricing);
  });

  it("keeps a model's own stream duration", async () => {
    const [model] = await readCatalogueFile(await fileWith(yamlOf(edit(chat(), { 'routing.maxStreamSeconds': 120 }))));
    expect(model.routing.maxStreamSeconds).toBe(120);
  });

  it("keeps a model's own call timeout", async () => {
    const [model] = await readCatalogueFile(await fileWith(yamlOf(edit(chat(), { 'routing.timeoutSeconds': 900 }))));
    expect(model.routing.timeoutSeconds).toBe(900);
  });

  it('lists every fault of the file at once, each under its entry', async () => {
    const file = await fileWith(yamlOf(edit(chat(), { 'routing.sources': [] }), edit(chat(), { id: 'c/d', aliases: ['d'], 'info.releasedAt': '2026-13-01' })));
    const error = (await readCatalogueFile(file).catch((thrown: unknown) => thrown)) as Error;
    expect(error.message.split('\n')).toEqual([
      `${file}: models[0] (a/b): routing.sources: Expected a non-empty array of upstream sources. Received an empty array`,
      `${file}: models[1] (c/d): info.releasedAt: Expected a calendar date. Received '2026-13-01'`,
    ]);
  });

  it('reads no top-level key but models, so others may hold YAML anchors the entries share', async () => {
    const file = await fileWith(
      [
        'x-routing: &routing',
        '  sources: [{ provider: openai, model: b }]',
        'models:',
        '  - { id: a/b, aliases: [], type: openai/chat-completions, info: { name: B, developer: A, description: d }, tags: [], routing: *routing }',
        '  - { id: c/d, aliases: [], type: openai/chat-completions, info: { name: D, developer: C, description: d }, tags: [], routing: *routing }',
      ].join('\n'),
    );
    const models = await readCatalogueFile(file);
    expect(models.map((model) => model.routing)).toEqual([chat().routing, chat().routing]);
  });

  it('stops on a file without a models list', async () => {
    await expect(readCatalogueFile(await fileWith('model: []\n'))).rejects.toThrow(/models: Expected an array of model entries\. Received nothing/);
  });
});

describe('the shipped catalogue', () => {
  let models: CatalogueFileEntry[];
  const byId = (id: string): CatalogueFileEntry => {
    const model = models.find((entry) => entry.id === id);
    if (!model) throw new Error(`${id} is not in the shipped catalogue`);
    return model;
  };
  const kind = (model: CatalogueFileEntry) => model.type.slice(model.type.indexOf('/') + 1);

  beforeAll(async () => {
    models = await readCatalogueFile(DEFAULT_CATALOGUE_FILE);
  });

  it('is valid and has at least 40 entries, each routed, dated and tagged', () => {
    expect(models.length).toBeGreaterThanOrEqual(40);
    for (const model of models) {
      expect(model.routing.sources.length).toBeGreaterThan(0);
      expect(model.info.releasedAt).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(model.tags.some((tag) => tag.startsWith('playground:'))).toBe(true);
      expect(model.tags.some((tag) => tag.startsWith('tier:'))).toBe(true);
      expect(model.modalities).toBeDefined();
      expect(model.pricing).toBeDefined();
    }
  });

  it('gives every name to one model only', () => {
    const names = models.flatMap((model) => [model.id, ...model.aliases].map((name) => name.toLowerCase()));
    expect(new Set(names).size).toBe(names.length);
  });

  it('keeps the prices the gateway tests rely on', () => {
    expect(byId('openai/gpt-4o-mini').aliases).toContain('gpt-4o-mini');
    expect(byId('openai/gpt-4o-mini').pricing?.units).toEqual([
      { unit: 'input_tokens', price: 0.15, per: 1000000 },
      { unit: 'output_tokens', price: 0.6, per: 1000000 },
    ]);
    expect(byId('openai/gpt-4o').pricing?.units.map((unit) => unit.price)).toEqual([2.5, 10]);
    expect(byId('openai/gpt-4.1-nano').pricing?.units.map((unit) => unit.price)).toEqual([0.1, 0.4]);
  });

  it('lists the decision models with their context sizes', () => {
    const current = byId('typesafe/jev-1.14');
    expect(current.type).toBe('typesafe/decisions');
    expect(current.info.contextLength).toBe(262144);
    expect(current.modalities?.input).toEqual(['text', 'image']);
    expect(current.capabilities).toEqual(expect.arrayContaining(['decisions', 'vision', 'box']));
    expect(current.tags).toContain('release:current');

    const previous = byId('typesafe/jev-1.13');
    expect(previous.info.contextLength).toBe(262144);
    expect(previous.modalities?.input).toEqual(['text']);
    expect(previous.capabilities).not.toContain('box');
    expect(previous.tags).toContain('release:previous');

    const d1 = byId('liquid/d1');
    expect(d1.type).toBe('liquid/decisions');
    expect(d1.info.contextLength).toBe(32768);
    expect(d1.info.outputMax).toBeUndefined();
    expect(d1.modalities?.input).toContain('image');
    expect(d1.capabilities).toContain('no_output_tokens');

    const luna = byId('openai/gpt-6-luna');
    expect(luna.type).toBe('openai/chat-completions');
    expect(luna.info.contextLength).toBe(1050000);
    expect(luna.capabilities).toContain('decisions');
    expect(luna.tags).toContain('decisions:shape-v2');

    for (const model of [current, previous, d1, luna]) {
      expect(model.pricing?.units.map((unit) => unit.unit)).toEqual(['input_tokens']);
    }

    // The fallback on chat log probabilities needs a chat API that returns them: OpenAI's and Azure OpenAI's do.
    const logprobs = models.filter((model) => model.tags.includes('decisions:logprobs'));
    expect(logprobs.map((model) => model.id).sort()).toEqual(['openai/gpt-4o-mini']);
    for (const model of logprobs) {
      expect(model.type).toBe('openai/chat-completions');
      expect(model.capabilities).toContain('decisions');
      expect(model.routing.sources.every((source) => ['openai', 'azure'].includes(source.provider))).toBe(true);
    }
  });

  it('resolves the floating jev id to the current pinned release', () => {
    const floating = byId('typesafe/jev');
    const current = byId('typesafe/jev-1.14');
    expect(floating.resolvesTo).toBe('typesafe/jev-1.14');
    expect(current.resolvesTo).toBeUndefined();
    expect(floating.type).toBe(current.type);
    expect(floating.info.contextLength).toBe(262144);
    expect(floating.modalities).toEqual(current.modalities);
    expect(floating.capabilities).toEqual(current.capabilities);
    expect(floating.pricing).toEqual(current.pricing);
    expect(models.filter((model) => model.resolvesTo !== undefined).map((model) => model.id)).toEqual(['typesafe/jev']);
  });

  it('lists both embedding models with their vector length', () => {
    for (const [id, dimensions, price] of [
      ['openai/text-embedding-3-small', 1536, 0.02],
      ['openai/text-embedding-3-large', 3072, 0.13],
    ] as const) {
      const model = byId(id);
      expect(model.type).toBe('openai/embeddings');
      expect(model.aliases).toContain(id.slice('openai/'.length));
      expect(model.tags).toContain(`dimensions:${dimensions}`);
      expect(model.info.description).toContain(String(dimensions));
      expect(model.info.contextLength).toBe(8191);
      expect(model.info.outputMax).toBeUndefined();
      expect(model.pricing?.units).toEqual([{ unit: 'input_tokens', price, per: 1000000 }]);
    }
  });

  it('gives image and audio models no token window, and image models a price per image', () => {
    const media = models.filter((model) => ['image-generations', 'speech-to-text', 'text-to-speech'].includes(kind(model)));
    expect(media.map(kind)).toEqual(expect.arrayContaining(['image-generations', 'speech-to-text', 'text-to-speech']));
    for (const model of media) {
      expect(model.info.contextLength).toBeUndefined();
      expect(model.info.outputMax).toBeUndefined();
    }
    for (const model of media.filter((entry) => kind(entry) === 'image-generations')) {
      expect(model.pricing?.units.map((unit) => unit.unit)).toEqual(['images']);
      // OpenAI prices vary by size and quality; Stability's are one price per image.
      if (model.id.startsWith('openai/')) expect(model.pricing?.variants?.length).toBeGreaterThan(0);
    }
  });

  it('prices every unit as the spec reads prices: tokens and characters per million or thousand, calls per one or thousand, all else per one', () => {
    const units = models.flatMap((model) =>
      [...(model.pricing?.units ?? []), ...(model.pricing?.variants ?? []).flatMap((variant) => variant.units)].map((unit) => ({ id: model.id, ...unit })),
    );
    const tokenLike = units.filter((unit) => unit.unit.endsWith('_tokens') || unit.unit === 'characters');
    const calls = units.filter((unit) => unit.unit.endsWith('_calls'));
    const perUnit = units.filter((unit) => !tokenLike.includes(unit) && !calls.includes(unit));
    expect(tokenLike.length).toBeGreaterThan(50);
    expect(new Set(perUnit.map((unit) => unit.unit))).toEqual(new Set(['images', 'audio_seconds']));
    expect(tokenLike.filter((unit) => ![1_000_000, 1_000].includes(unit.per))).toEqual([]);
    expect(calls.filter((unit) => ![1, 1_000].includes(unit.per))).toEqual([]);
    expect(perUnit.filter((unit) => unit.per !== 1)).toEqual([]);
  });

  it('prices speech-to-text per second of audio', () => {
    expect(byId('openai/whisper-1').pricing?.units).toEqual([{ unit: 'audio_seconds', price: 0.0001, per: 1 }]);
    expect(byId('openai/gpt-4o-transcribe').pricing?.units).toEqual([{ unit: 'audio_seconds', price: 0.0001, per: 1 }]);
    expect(byId('openai/gpt-4o-mini-transcribe').pricing?.units).toEqual([{ unit: 'audio_seconds', price: 0.00005, per: 1 }]);
  });

  it('has fallback chains and a model that refuses system messages', () => {
    expect(models.filter((model) => model.routing.sources.length >= 2).length).toBeGreaterThan(5);
    expect(models.some((model) => model.routing.refusedRoles?.includes('system'))).toBe(true);
  });

  it('keeps a republished model reachable under its old name', () => {
    expect(byId('google/gemini-2.5-flash').aliases).toEqual(expect.arrayContaining(['gemini-2.5-flash', 'google/gemini-2.5-flash-preview']));
  });
});

describe('every catalogue the repository ships', () => {
  const root = path.resolve(__dirname, '../../../..');
  const BROKEN = 'e2e/fixtures/broken-catalogue.yaml';
  const files = ['apps/catalogue/data', 'deploy/helm/inference-gateway/files', 'e2e/fixtures'].flatMap((folder) =>
    readdirSync(path.join(root, folder))
      .filter((name) => /catalogue.*\.ya?ml$/.test(name))
      .map((name) => `${folder}/${name}`),
  );

  it("finds the service's, the chart's and the end-to-end tests' catalogues", () => {
    expect(files).toEqual(expect.arrayContaining(['apps/catalogue/data/catalogue.yaml', 'deploy/helm/inference-gateway/files/catalogue.yaml', 'e2e/fixtures/chat-catalogue.yaml', BROKEN]));
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.filter((file) => file !== BROKEN))('loads %s', async (file) => {
    expect((await readCatalogueFile(path.join(root, file))).length).toBeGreaterThan(0);
  });

  it('refuses the one that is broken on purpose, naming its entry and field', async () => {
    await expect(readCatalogueFile(path.join(root, BROKEN))).rejects.toThrow(/models\[0\] \(acme\/broken\): pricing\.units\[0\]\.per: Expected an integer\. Received nothing$/);
  });
});

describe("the catalogue file: a model's response cache rules", () => {
  it('accepts them, whole or in part, and keeps them as written', async () => {
    const entries = [edit(chat(), { responseCache: { allowed: true, hitPriceShare: 0.123456 } }), { ...edit(chat(), { responseCache: { allowed: false } }), id: 'c/d', aliases: ['d'] }, { ...edit(chat(), { responseCache: { hitPriceShare: 1 } }), id: 'e/f', aliases: ['f'] }];
    const models = await readCatalogueFile(await fileWith(yamlOf(...entries)));
    expect(models.map((model) => model.responseCache)).toStrictEqual([{ allowed: true, hitPriceShare: 0.123456 }, { allowed: false }, { hitPriceShare: 1 }]);
  });

  it.each<[string, unknown, RegExp]>([
    ['a list', [true], /\(a\/b\): responseCache: Expected an object \{allowed, hitPriceShare\}\. Received array/],
    ['null', null, /\(a\/b\): responseCache: Expected an object \{allowed, hitPriceShare\}\. Received null/],
    ['allowed as text', { allowed: 'yes' }, /\(a\/b\): responseCache\.allowed: Expected a boolean\. Received string 'yes'/],
    ['a share above 1', { hitPriceShare: 1.5 }, /\(a\/b\): responseCache\.hitPriceShare: Expected a number from 0 to 1\. Received 1\.5/],
    ['a negative share', { hitPriceShare: -0.1 }, /\(a\/b\): responseCache\.hitPriceShare: Expected a number from 0 to 1\. Received -0\.1/],
    ['a share finer than a millionth', { hitPriceShare: 0.1234567 }, /\(a\/b\): responseCache\.hitPriceShare: Expected a number with at most 6 decimal places\. Received 0\.1234567/],
    ['a share written as text', { hitPriceShare: '0.5' }, /\(a\/b\): responseCache\.hitPriceShare: Expected a number\. Received string '0\.5'/],
    ['an unknown field', { allowed: true, ttlSeconds: 60 }, /\(a\/b\): responseCache\.ttlSeconds: Expected one of the fields 'allowed', 'hitPriceShare'\. Received an unknown field/],
  ])('refuses %s with a line naming the field', async (_label, responseCache, message) => {
    await expect(readCatalogueFile(await fileWith(yamlOf(edit(chat(), { responseCache }))))).rejects.toThrow(message);
  });
});
