import { CatalogueIndex } from './catalogue-index';
import {
  CATALOGUE_SECTIONS,
  type CatalogueSection,
  applyCatalogueQuery,
  identityProjection,
  lookupCatalogueModel,
  matchesCatalogueFilters,
  normalizeQueryValues,
  parseCatalogueQuery,
  parseInclude,
  modelCreatedSeconds,
  modelOwner,
  projectModel,
  queryCatalogue,
} from './catalogue-query';

const routing = { sources: [{ provider: 'upstream', model: 'secret-upstream-name' }] };
const price = (amount: number) => ({ kind: 'fixed', currency: 'USD', units: [{ unit: 'input_tokens', price: amount, per: 1_000_000 }] });

// Six small entries. Some data is deliberately mixed-case (B's tag, B's alias, D's id,
// capability and output modality) so case-insensitivity is tested on both sides.
const A = {
  id: 'openai/gpt-4o-mini',
  aliases: ['gpt-4o-mini'],
  type: 'openai/chat-completions',
  info: { name: 'GPT-4o mini', developer: 'OpenAI', description: 'small', releasedAt: '2024-07-18', contextLength: 128000 },
  tags: ['playground:chat', 'tier:standard'],
  modalities: { input: ['text', 'image'], output: ['text'] },
  capabilities: ['streaming', 'tools', 'vision'],
  pricing: price(0.15),
  routing,
};
const B = {
  id: 'anthropic/claude-sonnet',
  aliases: ['claude-sonnet', 'Sonnet-Latest'],
  type: 'anthropic/chat-completions',
  info: { name: 'Claude Sonnet', developer: 'Anthropic', description: 'mid' },
  tags: ['playground:chat', 'Tier:Premium'],
  modalities: { input: ['text'], output: ['text'] },
  capabilities: ['streaming', 'structured_output'],
  pricing: price(3),
  routing,
};
const C = {
  id: 'openai/text-embedding-3-small',
  aliases: [],
  type: 'openai/embeddings',
  info: { name: 'Embedding small', developer: 'OpenAI', description: 'vectors' },
  tags: ['tier:standard'],
  modalities: { input: ['text'], output: ['embedding'] },
  pricing: price(0.02),
  routing,
};
const D = {
  id: 'Vendor/Image-Gen',
  aliases: ['imagegen'],
  type: 'vendor/images',
  info: { name: 'Image Gen', developer: 'Vendor', description: 'pictures' },
  tags: ['playground:image'],
  modalities: { input: ['text'], output: ['Image'] },
  capabilities: ['Image_Generation'],
  routing,
};
const E = {
  id: 'vendor/video-1',
  aliases: ['video'],
  type: 'vendor/videos',
  info: { name: 'Video 1', developer: 'Vendor', description: 'moving pictures' },
  tags: ['playground:video', 'tier:premium'],
  // An extra field inside a section must not leak either.
  modalities: { input: ['text', 'image'], output: ['video', 'audio'], internalNote: 'do not show' },
  capabilities: ['text_to_video', 'image_to_video', 'audio_generation'],
  pricing: price(0.5),
  routing,
  resolvesTo: 'vendor/video-1-2025-01-01',
};
const F = { id: 'bare/model', aliases: [], type: 'bare/chat-completions', info: {}, tags: [], routing };

const models = [A, B, C, D, E, F];
const ALL_IDS = models.map((model) => model.id);
const ids = (query: Record<string, unknown>, catalogue: typeof models = models) => queryCatalogue(catalogue, query).map((entry) => entry.id);

const IDENTITY = ['id', 'object', 'created', 'owned_by', 'aliases', 'type', 'info', 'tags', 'apis'];
const ALL_KEYS = [...IDENTITY, 'modalities', 'capabilities', 'pricing'];

describe('normalizeQueryValues', () => {
  it.each<[string, unknown, string[]]>([
    ['undefined', undefined, []],
    ['a single value, lower-cased and trimmed', '  Playground:Chat ', ['playground:chat']],
    ['a comma-separated value', 'a,B,c', ['a', 'b', 'c']],
    ['a repeated parameter (array)', ['a', 'B'], ['a', 'b']],
    ['mixed comma and repeated forms', ['a,b', 'c', 'B'], ['a', 'b', 'c']],
    ['duplicates dropped, first occurrence keeps its place', 'b,a,B,a', ['b', 'a']],
    ['empty string', '', []],
    ['only commas and blanks', ' , ,, ', []],
    ['empty pieces between values', 'a,,b,', ['a', 'b']],
    ['nested object (qs p[x]=1) ignored', { x: 'a' }, []],
    ['non-string array elements ignored', ['a', { x: 'b' }, ['c'], 3], ['a']],
    ['a number (not something Express produces) ignored', 7, []],
    ['null ignored', null, []],
  ])('%s', (_name, value, expected) => {
    expect(normalizeQueryValues(value)).toEqual(expected);
  });
});

describe('GET /v1/models filters', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    // nothing to filter
    ['no parameters: every entry', {}, ALL_IDS],
    ['unknown parameter ignored', { foo: 'bar' }, ALL_IDS],
    ['parameter names are case-sensitive: TAGS is unknown', { TAGS: 'playground:chat' }, ALL_IDS],
    // id
    ['id: canonical id', { id: 'openai/gpt-4o-mini' }, ['openai/gpt-4o-mini']],
    ['id: canonical id, upper-cased value', { id: 'OPENAI/GPT-4O-MINI' }, ['openai/gpt-4o-mini']],
    ['id: canonical id stored mixed-case', { id: 'vendor/image-gen' }, ['Vendor/Image-Gen']],
    ['id: alias', { id: 'gpt-4o-mini' }, ['openai/gpt-4o-mini']],
    ['id: alias stored mixed-case, value lower-case', { id: 'sonnet-latest' }, ['anthropic/claude-sonnet']],
    ['id: alias, value mixed-case', { id: 'CLAUDE-Sonnet' }, ['anthropic/claude-sonnet']],
    ['id: a substring does not match', { id: 'gpt-4o' }, []],
    ['id: unknown name', { id: 'nope' }, []],
    ['id: OR of alias and canonical id, catalogue order kept', { id: 'video,Vendor/Image-Gen' }, ['Vendor/Image-Gen', 'vendor/video-1']],
    // tags
    ['tags: one tag', { tags: 'playground:chat' }, ['openai/gpt-4o-mini', 'anthropic/claude-sonnet']],
    ['tags: matches a tag stored mixed-case', { tags: 'tier:premium' }, ['anthropic/claude-sonnet', 'vendor/video-1']],
    ['tags: upper-cased value', { tags: 'TIER:PREMIUM' }, ['anthropic/claude-sonnet', 'vendor/video-1']],
    ['tags: a prefix does not match', { tags: 'tier' }, []],
    ['tags: no entry carries it', { tags: 'playground:audio' }, []],
    ['tags: OR within the parameter', { tags: 'playground:image,playground:video' }, ['Vendor/Image-Gen', 'vendor/video-1']],
    ['tags: values trimmed', { tags: ' playground:image , tier:premium ' }, ['anthropic/claude-sonnet', 'Vendor/Image-Gen', 'vendor/video-1']],
    // capabilities
    ['capabilities: streaming', { capabilities: 'streaming' }, ['openai/gpt-4o-mini', 'anthropic/claude-sonnet']],
    ['capabilities: value mixed-case', { capabilities: 'Vision' }, ['openai/gpt-4o-mini']],
    ['capabilities: stored mixed-case', { capabilities: 'image_generation' }, ['Vendor/Image-Gen']],
    ['capabilities: no entry declares it', { capabilities: 'web_search' }, []],
    ['capabilities: OR', { capabilities: 'tools,text_to_video' }, ['openai/gpt-4o-mini', 'vendor/video-1']],
    // output_modalities
    ['output_modalities: text', { output_modalities: 'text' }, ['openai/gpt-4o-mini', 'anthropic/claude-sonnet']],
    ['output_modalities: stored mixed-case', { output_modalities: 'image' }, ['Vendor/Image-Gen']],
    ['output_modalities: embedding', { output_modalities: 'EMBEDDING' }, ['openai/text-embedding-3-small']],
    ['output_modalities: second output of an entry', { output_modalities: 'audio' }, ['vendor/video-1']],
    ['output_modalities: input-only modality does not match', { output_modalities: 'speech' }, []],
    // input_modalities
    ['input_modalities: image', { input_modalities: 'image' }, ['openai/gpt-4o-mini', 'vendor/video-1']],
    ['input_modalities: text (entries without modalities excluded)', { input_modalities: 'text' }, ALL_IDS.filter((id) => id !== 'bare/model')],
    ['input_modalities: an output-only modality does not match', { input_modalities: 'video' }, []],
    // modalities (input or output)
    ['modalities: image as input or output', { modalities: 'image' }, ['openai/gpt-4o-mini', 'Vendor/Image-Gen', 'vendor/video-1']],
    ['modalities: video (output only)', { modalities: 'Video' }, ['vendor/video-1']],
    ['modalities: no entry has it', { modalities: 'speech' }, []],
    // type
    ['type: full type', { type: 'openai/chat-completions' }, ['openai/gpt-4o-mini']],
    ['type: full type, mixed-case value', { type: 'OpenAI/Chat-Completions' }, ['openai/gpt-4o-mini']],
    ['type: endpoint kind', { type: 'chat-completions' }, ['openai/gpt-4o-mini', 'anthropic/claude-sonnet', 'bare/model']],
    ['type: endpoint kind, upper-cased', { type: 'EMBEDDINGS' }, ['openai/text-embedding-3-small']],
    ['type: family alone does not match', { type: 'openai' }, []],
    ['type: part of a kind does not match', { type: 'chat' }, []],
    ['type: OR of two full types', { type: 'openai/embeddings,vendor/images' }, ['openai/text-embedding-3-small', 'Vendor/Image-Gen']],
    ['type: OR of full type and kind', { type: ['vendor/videos', 'embeddings'] }, ['openai/text-embedding-3-small', 'vendor/video-1']],
    // AND across parameters
    ['AND: tags and capabilities', { tags: 'playground:chat', capabilities: 'tools' }, ['openai/gpt-4o-mini']],
    ['AND: type kind and tags', { type: 'chat-completions', tags: 'tier:premium' }, ['anthropic/claude-sonnet']],
    ['AND: each matches something, nothing matches both', { capabilities: 'streaming', output_modalities: 'image' }, []],
    ['AND: three parameters', { modalities: 'image', tags: 'tier:premium', capabilities: 'image_to_video' }, ['vendor/video-1']],
    ['AND: id and type', { id: 'gpt-4o-mini,imagegen', type: 'images' }, ['Vendor/Image-Gen']],
    ['AND with OR inside', { tags: 'playground:chat,playground:video', capabilities: 'structured_output,audio_generation' }, ['anthropic/claude-sonnet', 'vendor/video-1']],
    // empty and malformed parameters filter nothing
    ['empty parameter (?tags=)', { tags: '' }, ALL_IDS],
    ['parameter of commas and blanks (?tags=,, ,)', { tags: ',, ,' }, ALL_IDS],
    ['repeated empty parameter (?tags=&tags=)', { tags: ['', ''] }, ALL_IDS],
    ['empty piece next to a real one', { tags: ['', 'playground:image'] }, ['Vendor/Image-Gen']],
    ['empty parameter next to a real filter', { tags: '', capabilities: 'streaming' }, ['openai/gpt-4o-mini', 'anthropic/claude-sonnet']],
    ['nested object (?tags[x]=...) ignored', { tags: { x: 'playground:chat' } }, ALL_IDS],
    ['nested object inside an array ignored, strings kept', { tags: ['playground:image', { x: 'playground:chat' }] }, ['Vendor/Image-Gen']],
    // filters are independent of include
    ['capabilities filter without include', { capabilities: 'vision' }, ['openai/gpt-4o-mini']],
    ['modalities filter with include=pricing only', { output_modalities: 'video', include: 'pricing' }, ['vendor/video-1']],
    ['details does not filter', { details: 'true' }, ALL_IDS],
  ])('%s', (_name, query, expected) => {
    expect(ids(query)).toEqual(expected);
  });

  it.each<[string, Record<string, unknown>]>([
    ['comma-separated', { tags: 'playground:image,playground:video' }],
    ['repeated', { tags: ['playground:image', 'playground:video'] }],
    ['mixed comma and repeated, with a duplicate', { tags: ['playground:image,playground:video', 'playground:video'] }],
    ['mixed case and blanks', { tags: 'PLAYGROUND:IMAGE , Playground:Video' }],
  ])('comma, repeated and mixed forms are the same filter: %s', (_name, query) => {
    expect(parseCatalogueQuery(query).filters).toEqual({ tags: ['playground:image', 'playground:video'] });
    expect(ids(query)).toEqual(['Vendor/Image-Gen', 'vendor/video-1']);
  });

  it('maps every filter parameter name and leaves absent ones out', () => {
    const parsed = parseCatalogueQuery({
      id: 'A',
      tags: 'B',
      capabilities: 'C',
      input_modalities: 'D',
      output_modalities: 'E',
      modalities: 'F',
      type: 'G',
      include: 'pricing',
    });
    expect(parsed.filters).toEqual({
      id: ['a'],
      tags: ['b'],
      capabilities: ['c'],
      inputModalities: ['d'],
      outputModalities: ['e'],
      modalities: ['f'],
      type: ['g'],
    });
    expect(parseCatalogueQuery({ tags: '', type: ' , ' }).filters).toEqual({});
  });

  it('keeps the catalogue order', () => {
    expect(ids({ tags: 'playground:chat' }, [...models].reverse())).toEqual(['anthropic/claude-sonnet', 'openai/gpt-4o-mini']);
    expect(ids({}, [F, C, A])).toEqual(['bare/model', 'openai/text-embedding-3-small', 'openai/gpt-4o-mini']);
  });

  it('an empty catalogue gives an empty list', () => {
    expect(queryCatalogue([], { tags: 'x' })).toEqual([]);
  });
});

describe('matchesCatalogueFilters (normalised filters)', () => {
  it.each<[string, Parameters<typeof matchesCatalogueFilters>[1], boolean]>([
    ['no filters', {}, true],
    ['empty lists filter nothing', { tags: [], id: [], type: [], modalities: [] }, true],
    ['id by alias and type by kind', { id: ['gpt-4o-mini'], type: ['chat-completions'] }, true],
    ['one failing filter is enough', { id: ['gpt-4o-mini'], type: ['embeddings'] }, false],
    ['values must be normalised: an upper-case value does not match', { tags: ['PLAYGROUND:CHAT'] }, false],
    ['input modality', { inputModalities: ['image'] }, true],
    ['output modality', { outputModalities: ['image'] }, false],
    ['any modality', { modalities: ['image'] }, true],
  ])('%s', (_name, filters, expected) => {
    expect(matchesCatalogueFilters(A, filters)).toBe(expected);
  });

  it('an entry without capabilities or modalities matches no value of those filters', () => {
    expect([{ capabilities: ['streaming'] }, { modalities: ['text'] }, { inputModalities: ['text'] }, { outputModalities: ['text'] }].map((f) => matchesCatalogueFilters(F, f))).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('include and details', () => {
  it.each<[string, Record<string, unknown>, CatalogueSection[]]>([
    ['nothing', {}, []],
    ['include=pricing', { include: 'pricing' }, ['pricing']],
    ['include=Pricing (case-insensitive)', { include: 'Pricing' }, ['pricing']],
    ['include=modalities,capabilities', { include: 'modalities,capabilities' }, ['modalities', 'capabilities']],
    ['include=capabilities,modalities (output order is fixed)', { include: 'capabilities,modalities' }, ['modalities', 'capabilities']],
    ['include repeated', { include: ['pricing', 'modalities'] }, ['modalities', 'pricing']],
    ['include repeated and comma-separated', { include: ['pricing,capabilities', 'modalities'] }, ['modalities', 'capabilities', 'pricing']],
    ['include=all', { include: 'all' }, ['modalities', 'capabilities', 'pricing']],
    ['include=ALL', { include: 'ALL' }, ['modalities', 'capabilities', 'pricing']],
    ['include=all next to an unknown value', { include: 'bogus,all' }, ['modalities', 'capabilities', 'pricing']],
    ['unknown value pricng ignored', { include: 'pricng' }, []],
    ['unknown value ignored, known kept', { include: 'pricng,capabilities' }, ['capabilities']],
    ['include= (empty)', { include: '' }, []],
    ['include as a nested object ignored', { include: { pricing: '1' } }, []],
    ['details=true', { details: 'true' }, ['modalities', 'capabilities', 'pricing']],
    ['details=TRUE', { details: 'TRUE' }, ['modalities', 'capabilities', 'pricing']],
    ['details=1', { details: '1' }, ['modalities', 'capabilities', 'pricing']],
    ['details=false', { details: 'false' }, []],
    ['details=0', { details: '0' }, []],
    ['details=yes is not true', { details: 'yes' }, []],
    ['bare ?details (empty value)', { details: '' }, []],
    ['details repeated, one true', { details: ['false', 'true'] }, ['modalities', 'capabilities', 'pricing']],
    ['details=false does not cancel include', { details: 'false', include: 'pricing' }, ['pricing']],
    ['details=true wins over a narrower include', { details: 'true', include: 'pricing' }, ['modalities', 'capabilities', 'pricing']],
  ])('%s', (_name, query, sections) => {
    expect(CATALOGUE_SECTIONS.filter((section) => parseInclude(query).has(section))).toEqual(sections);
    expect(parseCatalogueQuery(query).include).toEqual(new Set(sections));
    // Entry A has every section, so its keys are exactly identity + the asked sections, in order.
    expect(Object.keys(queryCatalogue(models, query)[0])).toEqual([...IDENTITY, ...sections]);
  });
});

describe('projection', () => {
  const allSections = new Set<CatalogueSection>(CATALOGUE_SECTIONS);

  it('shows exactly the public fields with their values', () => {
    expect(projectModel(A, allSections)).toEqual({
      id: 'openai/gpt-4o-mini',
      object: 'model',
      created: 1721260800, // 2024-07-18T00:00:00Z
      owned_by: 'openai',
      aliases: ['gpt-4o-mini'],
      type: 'openai/chat-completions',
      info: A.info,
      tags: ['playground:chat', 'tier:standard'],
      apis: ['chat.completions', 'responses', 'messages', 'generateContent'],
      modalities: { input: ['text', 'image'], output: ['text'] },
      capabilities: ['streaming', 'tools', 'vision'],
      pricing: A.pricing,
    });
    expect(projectModel(A, allSections).pricing).toBe(A.pricing);
  });

  it.each<[string, Set<CatalogueSection>]>([
    ['identity', new Set()],
    ['all sections', allSections],
    ['pricing only', new Set<CatalogueSection>(['pricing'])],
  ])('never leaks internal fields (%s)', (_name, include) => {
    for (const model of models) {
      const projection = projectModel(model, include);
      const keys = Object.keys(projection);
      expect(keys.filter((key) => !ALL_KEYS.includes(key))).toEqual([]);
      const json = JSON.stringify(projection);
      expect([json.includes('routing'), json.includes('secret-upstream-name'), json.includes('resolvesTo'), json.includes('internalNote')]).toEqual([
        false,
        false,
        false,
        false,
      ]);
    }
  });

  it('keeps section order id, object, created, owned_by, aliases, type, info, tags, apis, modalities, capabilities, pricing', () => {
    expect(Object.keys(projectModel(E, allSections))).toEqual(ALL_KEYS);
    expect(Object.keys(projectModel(E, new Set<CatalogueSection>(['pricing', 'capabilities', 'modalities'])))).toEqual(ALL_KEYS);
    expect(Object.keys(projectModel(E, allSections).modalities ?? {})).toEqual(['input', 'output']);
  });

  it('fills missing sections: empty modalities and capabilities, no pricing', () => {
    const bare = projectModel(F, allSections);
    expect(Object.keys(bare)).toEqual([...IDENTITY, 'modalities', 'capabilities']);
    expect(bare.modalities).toEqual({ input: [], output: [] });
    expect(bare.capabilities).toEqual([]);
    expect('pricing' in bare).toBe(false);
    expect(Object.keys(projectModel(D, allSections))).toEqual([...IDENTITY, 'modalities', 'capabilities']);
    expect(Object.keys(projectModel(C, allSections))).toEqual([...IDENTITY, 'modalities', 'capabilities', 'pricing']);
    expect(projectModel(C, allSections).capabilities).toEqual([]);
    expect(Object.keys(projectModel(F, new Set<CatalogueSection>(['pricing'])))).toEqual(IDENTITY);
  });

  it.each<[string, { id: string; info: object }, number, string]>([
    ['a bare release date is midnight UTC, the namespace owns it', { id: 'openai/gpt-4o-mini', info: { releasedAt: '2024-07-18', developer: 'OpenAI' } }, 1721260800, 'openai'],
    ['a full timestamp keeps its time', { id: 'acme/x', info: { releasedAt: '2024-07-18T12:00:00Z' } }, 1721304000, 'acme'],
    ['no release date gives 0', { id: 'Vendor/Image-Gen', info: { developer: 'Vendor' } }, 0, 'Vendor'],
    ['an unreadable release date gives 0', { id: 'acme/x', info: { releasedAt: 'soon' } }, 0, 'acme'],
    ['a release date before 1970 gives 0', { id: 'acme/x', info: { releasedAt: '1969-12-31' } }, 0, 'acme'],
    ['a release date that is not a string gives 0', { id: 'acme/x', info: { releasedAt: 20240718 } }, 0, 'acme'],
    ['an id without a slash is owned by its developer', { id: 'mini', info: { developer: ' Test Lab ' } }, 0, 'Test Lab'],
    ['an id without a slash and without a developer', { id: 'mini', info: {} }, 0, 'unknown'],
    ['a leading slash is no namespace', { id: '/odd', info: { developer: 'Odd' } }, 0, 'Odd'],
  ])("OpenAI's created and owned_by: %s", (_name, entry, created, owner) => {
    const model = { ...entry, aliases: [], type: 'acme/chat-completions', tags: [] };
    expect([modelCreatedSeconds(model), modelOwner(model)]).toEqual([created, owner]);
    expect(identityProjection(model)).toMatchObject({ id: entry.id, object: 'model', created, owned_by: owner });
  });

  it('caches one frozen projection per entry and section set', () => {
    const first = projectModel(A, new Set<CatalogueSection>(['pricing']));
    expect(projectModel(A, new Set<CatalogueSection>(['pricing']))).toBe(first);
    expect(projectModel(A, allSections)).not.toBe(first);
    expect(identityProjection(A)).toBe(projectModel(A, new Set()));
    expect(Object.keys(identityProjection(A))).toEqual(IDENTITY);
    expect([Object.isFrozen(first), Object.isFrozen(projectModel(A, allSections).modalities)]).toEqual([true, true]);
  });

  it('a new entry object is read afresh (the cache is keyed by object, not id)', () => {
    expect(ids({ tags: 'playground:chat' }, [A])).toEqual(['openai/gpt-4o-mini']);
    const changed = { ...A, tags: ['playground:image'] };
    expect(ids({ tags: 'playground:chat' }, [changed])).toEqual([]);
    expect(queryCatalogue([changed], {})[0].tags).toEqual(['playground:image']);
  });

  it('available=true keeps only the entries the caller says can answer; any other value, or none, keeps all', () => {
    const onlyA = (model: { id: string }) => model.id === A.id;
    const listed = (query: Record<string, unknown>) => queryCatalogue(models, query, onlyA).map((entry) => entry.id);
    expect(listed({ available: 'true' })).toEqual([A.id]);
    expect(listed({ available: ['1'] })).toEqual([A.id]);
    expect(listed({ available: 'TRUE', tags: 'playground:image' })).toEqual([]);
    for (const query of [{}, { available: 'false' }, { available: '' }, { available: 'yes' }, { AVAILABLE: 'true' }]) {
      expect(listed(query)).toEqual(models.map((model) => model.id));
    }
    expect(parseCatalogueQuery({ available: 'true' }).availableOnly).toBe(true);
    // Without a judge of availability there is nothing to filter on.
    expect(queryCatalogue(models, { available: 'true' }).length).toBe(models.length);
  });

  it('applyCatalogueQuery takes a parsed query', () => {
    const result = applyCatalogueQuery(models, parseCatalogueQuery({ type: 'images', include: 'pricing,modalities' }));
    expect(result.map((entry) => [entry.id, Object.keys(entry)])).toEqual([['Vendor/Image-Gen', [...IDENTITY, 'modalities']]]);
  });
});

describe('GET /v1/models/{id} and GET /model/{id}', () => {
  const index = new CatalogueIndex(1, models);

  it.each<[string, string, Record<string, unknown>, string | undefined, string[]]>([
    ['canonical id with a slash', 'openai/gpt-4o-mini', {}, 'openai/gpt-4o-mini', IDENTITY],
    ['canonical id, other case', 'OPENAI/GPT-4O-MINI', {}, 'openai/gpt-4o-mini', IDENTITY],
    ['alias', 'gpt-4o-mini', {}, 'openai/gpt-4o-mini', IDENTITY],
    ['alias stored mixed-case', 'sonnet-latest', {}, 'anthropic/claude-sonnet', IDENTITY],
    ['canonical id stored mixed-case', 'vendor/image-gen', {}, 'Vendor/Image-Gen', IDENTITY],
    ['include=pricing', 'video', { include: 'pricing' }, 'vendor/video-1', [...IDENTITY, 'pricing']],
    ['details=true', 'video', { details: 'true' }, 'vendor/video-1', ALL_KEYS],
    ['details=true on an entry without pricing', 'bare/model', { details: 'TRUE' }, 'bare/model', [...IDENTITY, 'modalities', 'capabilities']],
    ['filters are ignored', 'gpt-4o-mini', { tags: 'playground:image', type: 'images' }, 'openai/gpt-4o-mini', IDENTITY],
  ])('%s', (_name, name, query, expectedId, expectedKeys) => {
    const entry = lookupCatalogueModel(index, name, query);
    expect(entry?.id).toBe(expectedId);
    expect(Object.keys(entry ?? {})).toEqual(expectedKeys);
  });

  it.each(['gpt-4o', 'openai', 'openai/gpt-4o-mini/extra', ''])('no match (404): %j', (name) => {
    expect(lookupCatalogueModel(index, name, { details: 'true' })).toBeUndefined();
  });
});
