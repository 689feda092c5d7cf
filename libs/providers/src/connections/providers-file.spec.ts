import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConnectionDirectory, readProvidersFile, sourceDefinition } from './providers-file';

const environment = { AZURE_EASTUS_KEY: 'secret-eastus', TEAM: 'search' };
const read = (text: string) => readProvidersFile('providers.yaml', environment, () => text);

describe('PROVIDERS_FILE', () => {
  it('reads named connections, their keys from the environment, headers and quotas', () => {
    const content = read(`
connections:
  - name: azure-eastus
    kind: azure-openai
    baseUrl: https://eastus.example/
    apiKey: \${AZURE_EASTUS_KEY}
    headers: { x-team: "\${TEAM}" }
    rpm: 1200
    tpm: 450000
    maxConcurrent: 64
    timeoutSeconds: 90
  - { name: vllm-pool, kind: openai, baseUrl: "http://10.0.0.5:8000/v1", keyless: true }
`);
    expect(content.connections[0]).toMatchObject({
      name: 'azure-eastus',
      kind: 'azure-openai',
      baseUrl: 'https://eastus.example',
      apiKey: 'secret-eastus',
      headers: { 'x-team': 'search' },
      quotas: { rpm: 1200, tpm: 450000, maxConcurrent: 64 },
      timeoutMs: 90_000,
      origin: 'file',
    });
    expect(content.connections[1]).toMatchObject({ name: 'vllm-pool', apiKey: undefined, quotas: {} });
    expect(content.secrets).toEqual(['secret-eastus', 'search']);
  });

  it.each([
    ['connections:\n  - { name: a, kind: nope, baseUrl: "http://x", keyless: true }', 'providers.yaml: connections[0] (a).kind: expected one of'],
    ['connections:\n  - { name: a, kind: openai, baseUrl: "ftp://x", keyless: true }', 'connections[0] (a).baseUrl: expected an http:// or https:// URL'],
    ['connections:\n  - { name: a, kind: openai, baseUrl: "http://x", apiKey: sk-live-123 }', 'connections[0] (a).apiKey: expected ${VARIABLE}'],
    ['connections:\n  - { name: a, kind: openai, baseUrl: "http://x", apiKey: "${MISSING}" }', 'connections[0] (a).apiKey: the environment has no MISSING'],
    ['connections:\n  - { name: a, kind: openai, baseUrl: "http://x", keyless: true, rpm: -1 }', 'connections[0] (a).rpm: expected a whole number'],
    ['connections:\n  - { name: a, kind: openai, baseUrl: "http://x", keyless: true, tmp: 5 }', 'connections[0] (a).tmp: unknown field'],
    ['connections:\n  - { name: a, kind: openai, baseUrl: "http://x", keyless: true, headers: { authorization: x } }', 'connections[0] (a).headers.authorization: is set by the gateway itself'],
    ['connections:\n  - { name: a, kind: openai, baseUrl: "http://x", keyless: true }\n  - { name: a, kind: openai, baseUrl: "http://y", keyless: true }', 'connections[1] (a).name: another connection has this name'],
    ['connections:\n  - { name: "Bad Name", kind: openai, baseUrl: "http://x" }', 'connections[0].name: expected lower-case'],
    ['connections: [', 'providers.yaml: is not valid YAML'],
    ['providers: []', 'expected a mapping with a "connections" list'],
  ])('refuses %j naming the file, the entry and the field', (text, message) => {
    expect(() => read(text)).toThrow(message);
  });

  it('reads cloud connections with no key and no address: the region or location gives the address, a cloud field of another kind is refused', () => {
    const content = read(`
connections:
  - { name: bedrock-us, kind: bedrock, region: us-east-1 }
  - { name: vertex-eu, kind: vertex, project: example-project, location: europe-west4 }
  - { name: vertex-global, kind: vertex, location: global, baseUrl: "https://proxy.example/vertex" }
`);
    expect(content.connections.map(({ name, baseUrl, apiKey, cloud }) => ({ name, baseUrl, apiKey, cloud: cloud?.kind }))).toEqual([
      { name: 'bedrock-us', baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', apiKey: undefined, cloud: 'bedrock' },
      { name: 'vertex-eu', baseUrl: 'https://europe-west4-aiplatform.googleapis.com', apiKey: undefined, cloud: 'vertex' },
      { name: 'vertex-global', baseUrl: 'https://proxy.example/vertex', apiKey: undefined, cloud: 'vertex' },
    ]);
    for (const connection of content.connections) expect(typeof connection.authorize).toBe('function');
    expect(() => read('connections:\n  - { name: a, kind: openai, baseUrl: "http://x", keyless: true, region: us-east-1 }')).toThrow('connections[0] (a).region: unknown field for kind openai');
    expect(() => read('connections:\n  - { name: a, kind: bedrock, region: us-east-1, location: global }')).toThrow('connections[0] (a).location: unknown field for kind bedrock');
  });

  it('refuses a key on a Vertex AI connection: its calls carry a token of its Google credentials', () => {
    for (const field of ['apiKey: "${AZURE_EASTUS_KEY}"', 'apiKeyFile: /run/key', 'keyless: true']) {
      expect(() => read(`connections:\n  - { name: v, kind: vertex, location: us-central1, ${field} }`)).toThrow(/connections\[0\] \(v\)\.(apiKey|apiKeyFile|keyless): a Vertex AI connection is authorized by its Google credentials/);
    }
  });

  it('never quotes a key written in the file back', () => {
    expect(() => read('connections:\n  - { name: a, kind: openai, baseUrl: "http://x", apiKey: sk-live-secret-value }')).toThrow(expect.objectContaining({ message: expect.not.stringContaining('sk-live-secret-value') }));
  });

  it('takes a valid edit at once, keeps the last good set on a broken one, and lets a file connection replace a built-in', () => {
    const directory = mkdtempSync(join(tmpdir(), 'providers-'));
    const path = join(directory, 'providers.yaml');
    const write = (text: string) => {
      writeFileSync(`${path}.tmp`, text);
      renameSync(`${path}.tmp`, path);
    };
    write('connections:\n  - { name: openai, kind: openai, baseUrl: "http://127.0.0.1:1/v1", keyless: true, rpm: 60 }');
    const outcomes: Array<{ error?: string }> = [];
    const connections = new ConnectionDirectory({ path, variables: { OPENAI_API_KEY: 'k', GROQ_API_KEY: 'g' }, environment: {}, onReload: (outcome) => outcomes.push(outcome) });
    expect(connections.current.find('openai')).toMatchObject({ origin: 'file', quotas: { rpm: 60 } });
    expect(connections.current.find('groq')).toMatchObject({ origin: 'environment' });
    // What a source's kind decides (an embeddings API, a native call) follows the file's connections.
    write('connections:\n  - { name: openai, kind: openai, baseUrl: "http://127.0.0.1:1/v1", keyless: true, rpm: 60 }\n  - { name: claude-eu, kind: anthropic, baseUrl: "http://127.0.0.1:3", keyless: true }');
    expect(connections.reloadIfChanged()).toBe(true);
    expect(sourceDefinition('claude-eu')?.kind).toBe('anthropic');
    expect(sourceDefinition('groq')?.kind).toBe('openai');
    expect(sourceDefinition('nowhere')).toBeUndefined();

    write('connections:\n  - { name: openai, kind: openai, baseUrl: "http://127.0.0.1:2/v1", keyless: true }');
    expect(connections.reloadIfChanged()).toBe(true);
    expect(connections.current.find('openai')?.baseUrl).toBe('http://127.0.0.1:2/v1');

    write('connections:\n  - { name: openai, kind: openai, baseUrl: "not a url", keyless: true }');
    expect(connections.reloadIfChanged()).toBe(false);
    expect(connections.current.find('openai')?.baseUrl).toBe('http://127.0.0.1:2/v1');
    expect(connections.fileStatus?.error).toContain('connections[0] (openai).baseUrl');
    expect(outcomes.at(-1)?.error).toContain('baseUrl');

    write('connections: []');
    expect(connections.reloadIfChanged()).toBe(true);
    expect(connections.current.find('openai')).toMatchObject({ origin: 'environment', apiKey: 'k' });
    expect(connections.fileStatus?.error).toBeNull();
  });
});
