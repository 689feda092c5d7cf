import type { ProviderKind } from './provider-definition';
import { findProvider, PROVIDERS, providerKind } from './registry';

const KINDS: readonly ProviderKind[] = ['openai', 'azure-openai', 'anthropic', 'google', 'deepgram', 'stability', 'bedrock', 'vertex'];

describe('the provider kinds and their built-in providers', () => {
  it.each(KINDS)('%s has one definition, whose providers are of its kind', (kind) => {
    const definition = providerKind(kind);
    expect(definition.kind).toBe(kind);
    expect(definition.providers.length).toBeGreaterThan(0);
    for (const provider of definition.providers) expect({ name: provider.name, kind: provider.kind }).toEqual({ name: provider.name, kind });
  });

  it('names every built-in provider once, so a name finds one definition', () => {
    const names = PROVIDERS.map((provider) => provider.name);
    expect(new Set(names).size).toBe(names.length);
    expect(findProvider('OpenRouter')).toMatchObject({ name: 'openrouter', kind: 'openai', variables: { apiKey: 'OPENROUTER_API_KEY', baseUrl: 'OPENROUTER_BASE_URL' } });
  });

  it('gives each capability to the kinds whose API has it', () => {
    const having = (capability: 'embeddings' | 'images' | 'transcription' | 'speech' | 'moderations') => KINDS.filter((kind) => providerKind(kind)[capability] !== undefined);
    expect(having('embeddings')).toEqual(['openai', 'azure-openai', 'google', 'vertex']);
    expect(having('images')).toEqual(['openai', 'azure-openai', 'stability']);
    expect(having('transcription')).toEqual(['openai', 'azure-openai', 'deepgram']);
    expect(having('speech')).toEqual(['openai', 'azure-openai', 'deepgram']);
    expect(having('moderations')).toEqual(['openai']);
  });
});
