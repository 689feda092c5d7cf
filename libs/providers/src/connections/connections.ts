import type { ProviderDefinition, ProviderKind } from '../provider-definition';
import { PROVIDERS } from '../registry';
import type { RequestAuthorizer } from '../transport/http-client';
import { cloudAuthorizer, cloudBaseUrl, cloudTakesApiKey, environmentCloudSettings, isCloudKind, type CloudSettings } from './cloud';

/** Quotas of each deployment on a connection (Azure's and OpenAI's quotas are per deployment or model); absent = unbounded. */
export interface DeploymentQuotas {
  rpm?: number;
  tpm?: number;
  maxConcurrent?: number;
}

/** One named way to reach an upstream: a wire format, an address, a key and what the operator allows it. */
export interface Connection {
  name: string;
  kind: ProviderKind;
  /** Without a trailing slash. */
  baseUrl: string;
  apiKey?: string;
  /** Extra request headers of every call on it (the adapter's own auth headers win). */
  headers: Readonly<Record<string, string>>;
  quotas: DeploymentQuotas;
  /** How long one call waits for its answer, when the model sets no `timeoutSeconds` of its own. */
  timeoutMs?: number;
  /** `environment`: a built-in provider configured by its variables; `file`: PROVIDERS_FILE. */
  origin: 'environment' | 'file';
  /** What the adapters and the demo know of its provider (for a file connection, made from its kind). */
  definition: ProviderDefinition;
  /** A cloud platform's region or location and credentials (Bedrock, Vertex AI). */
  cloud?: CloudSettings;
  /** Authorizes each call (signs it, adds a cloud token), its credentials cached for the connection's life. */
  authorize?: RequestAuthorizer;
}

/** Provider variables by name, e.g. { OPENAI_API_KEY: 'sk-...' } (from the environment). */
export type ProviderVariables = Readonly<Record<string, string | undefined>>;

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The connections a gateway routes to, by name: the built-in providers its environment
 * configures, and those of PROVIDERS_FILE, which replace a built-in of the same name. Never
 * changed once made: a reload makes a new set, swapped in whole.
 */
export class ConnectionSet {
  private readonly byName = new Map<string, Connection>();

  constructor(
    connections: readonly Connection[],
    private readonly variables: ProviderVariables = {},
  ) {
    for (const connection of connections) this.byName.set(connection.name, connection);
  }

  find(name: string): Connection | undefined {
    return this.byName.get(name) ?? this.byName.get(name.toLowerCase()) ?? localDefaultOf(name.toLowerCase());
  }

  all(): IterableIterator<Connection> {
    return this.byName.values();
  }

  /** What would make `name` usable, for a 503 that names it: the variables of a built-in provider, else the file. */
  missing(name: string): string {
    const definition = PROVIDERS.find((candidate) => candidate.name === name.toLowerCase());
    if (!definition) return `a connection named "${name}" (unknown to this gateway: declare it in PROVIDERS_FILE)`;
    if (definition.kind === 'bedrock') return 'BEDROCK_REGION';
    if (definition.kind === 'vertex') return 'VERTEX_LOCATION';
    const hasAddress = Boolean(this.variables[definition.variables.baseUrl] || definition.defaultBaseUrl);
    return hasAddress ? definition.variables.apiKey : definition.variables.baseUrl;
  }
}

const localDefaults = new Map<string, Connection>();

/**
 * A keyless provider with a default address (Ollama on 127.0.0.1:11434) serves a source that
 * names it with none of its variables set; it is not listed among the configured ones until one is.
 */
function localDefaultOf(name: string): Connection | undefined {
  let connection = localDefaults.get(name);
  if (!connection) {
    const definition = PROVIDERS.find((candidate) => candidate.name === name);
    if (!definition?.keyless || !definition.defaultBaseUrl) return undefined;
    connection = { name, kind: definition.kind, baseUrl: definition.defaultBaseUrl, headers: NO_HEADERS, quotas: {}, origin: 'environment', definition };
    localDefaults.set(name, connection);
  }
  return connection;
}

/**
 * The built-in providers the environment configures: a variable of theirs is set, and requests
 * could be sent (a key unless keyless, and an address, given or default). A keyless provider with
 * a default address (Ollama) counts only once one of its variables names it.
 */
export function environmentConnections(variables: ProviderVariables): Connection[] {
  const connections: Connection[] = [];
  for (const definition of PROVIDERS) {
    const apiKey = variables[definition.variables.apiKey] || undefined;
    const givenUrl = variables[definition.variables.baseUrl] || undefined;
    if (isCloudKind(definition.kind)) {
      const cloud = environmentCloudSettings(definition.kind, variables);
      if (!cloud) continue;
      const baseUrl = (givenUrl ?? cloudBaseUrl(cloud)).replace(/\/+$/, '');
      const key = cloudTakesApiKey(definition.kind) ? apiKey : undefined;
      connections.push({ name: definition.name, kind: definition.kind, baseUrl, apiKey: key, headers: NO_HEADERS, quotas: {}, origin: 'environment', definition, cloud, authorize: cloudAuthorizer(cloud, key, definition.name) });
      continue;
    }
    if (!apiKey && !givenUrl) continue;
    const baseUrl = (givenUrl ?? definition.defaultBaseUrl)?.replace(/\/+$/, '');
    if (!baseUrl || (!apiKey && !definition.keyless)) continue;
    connections.push({ name: definition.name, kind: definition.kind, baseUrl, apiKey, headers: NO_HEADERS, quotas: {}, origin: 'environment', definition });
  }
  return connections;
}

/** The environment's connections alone (no providers file): what tests and tools without a gateway use. */
export function connectionsOfEnvironment(variables: ProviderVariables): ConnectionSet {
  return new ConnectionSet(environmentConnections(variables), variables);
}
