import { planRoute } from './routing';

describe('planRoute', () => {
  const sources = [
    { provider: 'openai', model: 'gpt-4o-mini' },
    { provider: 'OpenRouter', model: 'openai/gpt-4o-mini' },
    { provider: 'ollama', model: 'llama3' },
  ];

  it('keeps the catalogue order and only sources with credentials', () => {
    const plan = planRoute(sources, { OPENROUTER_API_KEY: 'or-key' });
    expect(plan.targets.map((target) => [target.provider, target.model, target.baseUrl])).toEqual([
      ['openrouter', 'openai/gpt-4o-mini', 'https://openrouter.ai/api/v1'],
      // Ollama needs no key; its default address is used.
      ['ollama', 'llama3', 'http://127.0.0.1:11434/v1'],
    ]);
    expect(plan.missing).toEqual(['OPENAI_API_KEY']);
  });

  it('takes a configured base URL over the default', () => {
    const plan = planRoute([sources[0]], { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1/' });
    expect(plan.targets[0]).toMatchObject({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k' });
  });

  it('reads Azure from AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY under the source key azure', () => {
    const missing = planRoute([{ provider: 'azure', model: 'my-deployment' }], {});
    expect(missing.missing).toEqual(['AZURE_OPENAI_ENDPOINT']);
    const plan = planRoute([{ provider: 'Azure', model: 'my-deployment' }], { AZURE_OPENAI_ENDPOINT: 'https://x.openai.azure.com', AZURE_OPENAI_API_KEY: 'az' });
    expect(plan.targets[0]).toMatchObject({ provider: 'azure', model: 'my-deployment', baseUrl: 'https://x.openai.azure.com', apiKey: 'az' });
  });

  it('names what is missing for keyless providers without an address and for unknown providers', () => {
    const plan = planRoute([{ provider: 'vllm', model: 'x' }, { provider: 'nope', model: 'y' }], {});
    expect(plan.targets).toEqual([]);
    expect(plan.missing).toEqual(['VLLM_BASE_URL', 'a provider named "nope" (unknown to this gateway)']);
  });
});
