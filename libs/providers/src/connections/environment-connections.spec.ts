import { environmentConnections } from './connections';

const names = (variables: Record<string, string>) => environmentConnections(variables).map((connection) => connection.name);

describe('environmentConnections', () => {
  it('is empty when no provider variable is set, even for Ollama with its default address', () => {
    expect(names({})).toEqual([]);
  });

  it('lists a provider with a key (its default address) or a key and an address', () => {
    expect(names({ OPENAI_API_KEY: 'sk-1', ANTHROPIC_API_KEY: 'a', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' })).toEqual(['openai', 'anthropic']);
  });

  it('needs an address where there is no default, and a key unless keyless', () => {
    expect(names({ AZURE_OPENAI_API_KEY: 'k' })).toEqual([]);
    expect(names({ AZURE_OPENAI_API_KEY: 'k', AZURE_OPENAI_ENDPOINT: 'https://x.openai.azure.com' })).toEqual(['azure']);
    expect(names({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' })).toEqual([]);
    expect(names({ VLLM_BASE_URL: 'http://127.0.0.1:8000/v1', OLLAMA_BASE_URL: 'http://127.0.0.1:11434/v1' })).toEqual(['vllm', 'ollama']);
  });
});
