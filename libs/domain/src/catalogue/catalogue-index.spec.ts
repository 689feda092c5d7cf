import { CatalogueIndex } from './catalogue-index';

const models = [
  { id: 'openai/gpt-4o-mini', aliases: ['gpt-4o-mini'], type: 'openai/chat-completions', info: { name: 'mini' }, tags: ['a'], pricing: { units: [] } },
  { id: 'Vendor/Model', aliases: [], type: 'x/y', info: {}, tags: [] },
];

describe('CatalogueIndex', () => {
  it('resolves ids and aliases case-insensitively to the one canonical entry', () => {
    const index = new CatalogueIndex(3, models);
    expect(index.resolve('gpt-4o-mini')?.id).toBe('openai/gpt-4o-mini');
    expect(index.resolve('GPT-4O-MINI')?.id).toBe('openai/gpt-4o-mini');
    expect(index.resolve('openai/GPT-4o-mini')).toBe(index.resolve('gpt-4o-mini'));
    expect(index.resolve('vendor/model')?.id).toBe('Vendor/Model');
    expect(index.resolve('gpt-4o')).toBeUndefined();
    expect(index.revision).toBe(3);
  });

  it('refuses two models claiming one name', () => {
    expect(() => new CatalogueIndex(1, [...models, { id: 'other', aliases: ['GPT-4o-mini'] }])).toThrow(/claimed by both/);
  });

});
