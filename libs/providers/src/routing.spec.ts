import { ConnectionSet, connectionsOfEnvironment, type Connection } from './connections/connections';
import { findProvider } from './registry';
import { planRoute } from './routing';

describe('planRoute', () => {
  const sources = [
    { provider: 'openai', model: 'gpt-4o-mini' },
    { provider: 'OpenRouter', model: 'openai/gpt-4o-mini' },
    { provider: 'ollama', model: 'llama3' },
  ];

  it('keeps the catalogue order and only sources with a connection; without weights or tiers each source is a tier of its own', () => {
    const plan = planRoute(sources, connectionsOfEnvironment({ OPENROUTER_API_KEY: 'or-key' }));
    expect(plan.targets.map((target) => [target.provider, target.model, target.baseUrl, target.tier, target.deployment])).toEqual([
      ['openrouter', 'openai/gpt-4o-mini', 'https://openrouter.ai/api/v1', 1, 'openrouter/openai/gpt-4o-mini'],
      // Ollama needs no key; its default address is used.
      ['ollama', 'llama3', 'http://127.0.0.1:11434/v1', 2, 'ollama/llama3'],
    ]);
    expect(plan.missing).toEqual(['OPENAI_API_KEY']);
  });

  it('takes a configured base URL over the default', () => {
    const plan = planRoute([sources[0]], connectionsOfEnvironment({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1/' }));
    expect(plan.targets[0]).toMatchObject({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k' });
  });

  it('reads Azure from AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY under the source key azure', () => {
    const missing = planRoute([{ provider: 'azure', model: 'my-deployment' }], connectionsOfEnvironment({}));
    expect(missing.missing).toEqual(['AZURE_OPENAI_ENDPOINT']);
    const plan = planRoute([{ provider: 'Azure', model: 'my-deployment' }], connectionsOfEnvironment({ AZURE_OPENAI_ENDPOINT: 'https://x.openai.azure.com', AZURE_OPENAI_API_KEY: 'az' }));
    expect(plan.targets[0]).toMatchObject({ provider: 'azure', model: 'my-deployment', baseUrl: 'https://x.openai.azure.com', apiKey: 'az' });
  });

  it('names what is missing for keyless providers without an address and for unknown connections', () => {
    const plan = planRoute([{ provider: 'vllm', model: 'x' }, { provider: 'nope', model: 'y' }], connectionsOfEnvironment({}));
    expect(plan.targets).toEqual([]);
    expect(plan.missing).toEqual(['VLLM_BASE_URL', 'a connection named "nope" (unknown to this gateway: declare it in PROVIDERS_FILE)']);
  });

  it('groups sources by tier and weight, calls an Azure source by its deployment, and carries the connection\'s quotas and headers', () => {
    const eastus: Connection = {
      name: 'azure-eastus',
      kind: 'azure-openai',
      baseUrl: 'https://eastus.example',
      apiKey: 'k1',
      headers: { 'x-team': 'search' },
      quotas: { rpm: 1200, tpm: 450_000 },
      timeoutMs: 90_000,
      origin: 'file',
      definition: { ...findProvider('azure')!, name: 'azure-eastus' },
    };
    const westus: Connection = { ...eastus, name: 'azure-westus', baseUrl: 'https://westus.example', headers: {}, quotas: {}, timeoutMs: undefined };
    const plan = planRoute(
      [
        { provider: 'azure-eastus', model: 'gpt-4o', deployment: 'gpt-4o-prod', weight: 3 },
        { provider: 'azure-westus', model: 'gpt-4o', weight: 2 },
        { provider: 'azure-eastus', model: 'gpt-4o-mini', tier: 1 },
      ],
      new ConnectionSet([eastus, westus]),
    );
    expect(plan.targets.map((target) => [target.deployment, target.model, target.weight, target.tier])).toEqual([
      ['azure-eastus/gpt-4o-prod', 'gpt-4o-prod', 3, 0],
      ['azure-westus/gpt-4o', 'gpt-4o', 2, 0],
      ['azure-eastus/gpt-4o-mini', 'gpt-4o-mini', 1, 1],
    ]);
    expect(plan.targets[0]).toMatchObject({ headers: { 'x-team': 'search' }, quotas: { rpm: 1200, tpm: 450_000 }, timeoutMs: 90_000, apiKey: 'k1' });
    expect(plan.targets[1].headers).toBeUndefined();
    expect(plan.targets[1].timeoutMs).toBeUndefined();
  });
});
