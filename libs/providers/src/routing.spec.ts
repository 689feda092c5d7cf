import { planRoute } from './routing';

describe('planRoute', () => {
  const sources = [
    { provider: 'openai', model: 'gpt-4o-mini' },
    { provider: 'OpenRouter', model: 'openai/gpt-4o-mini' },
    { provider: 'ollama', model: 'llama3' },
  ];

  it('keeps the catalogue order and only sources with credentials', () => {
    const plan = planRoute(sources, { openrouter: { apiKey: 'or-key' } });
    expect(plan.targets.map((target) => [target.provider, target.model, target.baseUrl])).toEqual([
      ['openrouter', 'openai/gpt-4o-mini', 'https://openrouter.ai/api/v1'],
      // Ollama needs no key; its default address is used.
      ['ollama', 'llama3', 'http://127.0.0.1:11434/v1'],
    ]);
    expect(plan.missing).toEqual(['OPENAI_API_KEY']);
  });

  it('takes a configured base URL over the default', () => {
    const plan = planRoute([sources[0]], { openai: { apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1' } });
    expect(plan.targets[0]).toMatchObject({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k' });
  });

  it('names what is missing for keyless providers without an address and for unknown providers', () => {
    const plan = planRoute([{ provider: 'vllm', model: 'x' }, { provider: 'nope', model: 'y' }], {});
    expect(plan.targets).toEqual([]);
    expect(plan.missing).toEqual(['VLLM_BASE_URL', 'a provider named "nope" (unknown to this gateway)']);
  });
});
