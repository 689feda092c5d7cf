import { readFileSync, statSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { ProviderDefinition, ProviderKind } from '../provider-definition';
import { findProvider, wireApiOf } from '../registry';
import { ConnectionSet, environmentConnections, type Connection, type ProviderVariables } from './connections';
import type { WireApi } from '../wire-api';
import { cloudAuthorizer, cloudBaseUrl, cloudFieldsOf, cloudTakesApiKey, isCloudKind, readCloudSettings, type CloudSettings } from './cloud';

const KINDS: readonly ProviderKind[] = ['openai', 'azure-openai', 'anthropic', 'google', 'deepgram', 'stability', 'bedrock', 'vertex'];
const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const FIELDS = new Set(['name', 'kind', 'baseUrl', 'apiKey', 'apiKeyFile', 'keyless', 'headers', 'rpm', 'tpm', 'maxConcurrent', 'timeoutSeconds']);
/** A header value or key may name variables; nothing else is expanded. */
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
/** The headers a connection may not set: the transport's and the adapters' own. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'authorization', 'api-key', 'x-api-key', 'x-goog-api-key']);
const MAX_CONNECTIONS = 1_000;
const MAX_FILE_BYTES = 1024 * 1024;

export class ProvidersFileError extends Error {}

/** What reading a providers file gives: its connections, and the secrets the log must never show. */
export interface ProvidersFileContent {
  connections: Connection[];
  secrets: string[];
  /** The key files read, to poll for changes with the file. */
  keyFiles: string[];
}

/**
 * Reads and validates PROVIDERS_FILE. Every problem names the file, the entry and the field, so
 * an operator finds it in one look; a key is taken from the environment (`${VAR}`) or a file
 * (`apiKeyFile`), never written in the file itself.
 */
export function readProvidersFile(path: string, environment: ProviderVariables, readText: (file: string) => string = readTextFile): ProvidersFileContent {
  let text: string;
  try {
    text = readText(path);
  } catch (error) {
    throw new ProvidersFileError(`${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let document: unknown;
  try {
    document = parseYaml(text, { maxAliasCount: 100 });
  } catch (error) {
    throw new ProvidersFileError(`${path}: is not valid YAML (${(error as Error).message.split('\n')[0]})`);
  }
  if (document === null || document === undefined) document = { connections: [] };
  if (!isObject(document) || !('connections' in document)) throw new ProvidersFileError(`${path}: expected a mapping with a "connections" list`);
  const unknown = Object.keys(document).filter((key) => key !== 'connections');
  if (unknown.length > 0) throw new ProvidersFileError(`${path}: unknown field "${unknown[0]}" (only "connections" is read)`);
  const list = document.connections ?? [];
  if (!Array.isArray(list)) throw new ProvidersFileError(`${path}: "connections" must be a list`);
  if (list.length > MAX_CONNECTIONS) throw new ProvidersFileError(`${path}: at most ${MAX_CONNECTIONS} connections (found ${list.length})`);
  const content: ProvidersFileContent = { connections: [], secrets: [], keyFiles: [] };
  const names = new Set<string>();
  list.forEach((entry, index) => {
    const connection = readConnection(entry, `${path}: connections[${index}]`, environment, readText, content);
    if (names.has(connection.name)) throw new ProvidersFileError(`${path}: connections[${index}] (${connection.name}).name: another connection has this name`);
    names.add(connection.name);
    content.connections.push(connection);
  });
  return content;
}

function readConnection(entry: unknown, where: string, environment: ProviderVariables, readText: (file: string) => string, content: ProvidersFileContent): Connection {
  if (!isObject(entry)) throw new ProvidersFileError(`${where}: expected a mapping {name, kind, baseUrl, ...}`);
  const name = entry.name;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new ProvidersFileError(`${where}.name: expected lower-case letters, digits, '.', '_' or '-' (at most 63, starting with a letter or digit)`);
  }
  const at = `${where} (${name})`;
  const fail = (field: string, problem: string): never => {
    throw new ProvidersFileError(`${at}.${field}: ${problem}`);
  };
  const kind = entry.kind;
  if (typeof kind !== 'string' || !KINDS.includes(kind as ProviderKind)) fail('kind', `expected one of ${KINDS.join(', ')}`);
  const cloudKind = isCloudKind(kind as ProviderKind) ? (kind as CloudSettings['kind']) : undefined;
  const known = cloudKind ? new Set([...FIELDS, ...cloudFieldsOf(cloudKind)]) : FIELDS;
  for (const key of Object.keys(entry)) if (!known.has(key)) fail(key, `unknown field for kind ${String(kind)} (known: ${[...known].join(', ')})`);
  const cloud = cloudKind
    ? readCloudSettings(cloudKind, entry, {
        fail,
        expand: (field, value) => {
          const expanded = expand(value, environment, (variable) => fail(field, `the environment has no ${variable}`));
          if (expanded !== value) content.secrets.push(expanded);
          return expanded;
        },
        readFile: (field, file) => {
          try {
            const text = readText(file);
            content.keyFiles.push(file);
            return text;
          } catch (error) {
            return fail(field, `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
          }
        },
        environment,
      })
    : undefined;
  // A cloud connection's address follows from its region or location; baseUrl moves it (a VPC endpoint, a proxy).
  const baseUrl = entry.baseUrl ?? (cloud && cloudBaseUrl(cloud));
  if (typeof baseUrl !== 'string' || !isHttpUrl(baseUrl)) fail('baseUrl', 'expected an http:// or https:// URL');
  const keyless = entry.keyless ?? false;
  if (typeof keyless !== 'boolean') fail('keyless', 'expected true or false');
  let apiKey: string | undefined;
  if (cloudKind !== undefined && !cloudTakesApiKey(cloudKind)) {
    for (const field of ['apiKey', 'apiKeyFile', 'keyless'] as const) {
      if (entry[field] !== undefined) fail(field, 'a Vertex AI connection is authorized by its Google credentials (credentialsFile, or Application Default Credentials), never a key');
    }
  }
  if (entry.apiKey !== undefined && entry.apiKeyFile !== undefined) fail('apiKey', 'set apiKey or apiKeyFile, not both');
  if (entry.apiKey !== undefined) {
    if (typeof entry.apiKey !== 'string' || !/^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(entry.apiKey.trim())) {
      // Never quote it back: it may be the very secret the file must not hold.
      fail('apiKey', 'expected ${VARIABLE}, read from the environment (a key written in the file is refused; or use apiKeyFile)');
    }
    apiKey = expand(String(entry.apiKey).trim(), environment, (variable) => fail('apiKey', `the environment has no ${variable}`));
  } else if (entry.apiKeyFile !== undefined) {
    if (typeof entry.apiKeyFile !== 'string' || entry.apiKeyFile === '') fail('apiKeyFile', 'expected a path');
    const file = String(entry.apiKeyFile);
    try {
      apiKey = readText(file).trim();
    } catch (error) {
      fail('apiKeyFile', `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    if (!apiKey) fail('apiKeyFile', `${file} is empty`);
    content.keyFiles.push(file);
  } else if (!keyless && !cloud) {
    fail('apiKey', 'a key is needed: apiKey: ${VARIABLE} or apiKeyFile: <path> (or keyless: true for a server that takes none)');
  }
  if (apiKey) content.secrets.push(apiKey);
  const headers: Record<string, string> = {};
  if (entry.headers !== undefined) {
    if (!isObject(entry.headers)) fail('headers', 'expected a mapping of header names to values');
    for (const [header, value] of Object.entries(entry.headers as Record<string, unknown>)) {
      if (!HEADER_NAME.test(header)) fail(`headers.${header}`, 'not a valid header name');
      if (RESERVED_HEADERS.has(header.toLowerCase())) fail(`headers.${header}`, 'is set by the gateway itself');
      if (typeof value !== 'string' && typeof value !== 'number') fail(`headers.${header}`, 'expected a string');
      const expanded = expand(String(value), environment, (variable) => fail(`headers.${header}`, `the environment has no ${variable}`));
      if (/[\r\n\0]/.test(expanded)) fail(`headers.${header}`, 'a header value cannot hold line breaks');
      if (expanded !== String(value)) content.secrets.push(expanded);
      headers[header.toLowerCase()] = expanded;
    }
  }
  const count = (field: 'rpm' | 'tpm' | 'maxConcurrent' | 'timeoutSeconds', max: number): number | undefined => {
    const value = entry[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) fail(field, `expected a whole number from 1 to ${max}`);
    return value as number;
  };
  const rpm = count('rpm', 100_000_000);
  const tpm = count('tpm', 1_000_000_000_000);
  const maxConcurrent = count('maxConcurrent', 1_000_000);
  const timeoutSeconds = count('timeoutSeconds', 86_400);
  const definition: ProviderDefinition = {
    name: name as string,
    kind: kind as ProviderKind,
    variables: { apiKey: '', baseUrl: '' },
    keyless: keyless as boolean,
    emulatorPath: '',
  };
  return {
    name: name as string,
    kind: kind as ProviderKind,
    baseUrl: (baseUrl as string).replace(/\/+$/, ''),
    apiKey,
    headers,
    quotas: { ...(rpm && { rpm }), ...(tpm && { tpm }), ...(maxConcurrent && { maxConcurrent }) },
    ...(timeoutSeconds && { timeoutMs: timeoutSeconds * 1000 }),
    origin: 'file',
    definition,
    ...(cloud && { cloud, authorize: cloudAuthorizer(cloud, apiKey, name as string) }),
  };
}

function expand(value: string, environment: ProviderVariables, missing: (variable: string) => never): string {
  return value.replace(VARIABLE, (_match, variable: string) => environment[variable] ?? missing(variable));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

function readTextFile(file: string): string {
  if (statSync(file).size > MAX_FILE_BYTES) throw Object.assign(new Error(`larger than ${MAX_FILE_BYTES} bytes`), { code: 'TOO_LARGE' });
  return readFileSync(file, 'utf8');
}

export interface ProvidersFileStatus {
  path: string;
  /** When the connections in use were read; null when none was ever read. */
  loadedAt: Date | null;
  /** Why the file's latest edit is not in use, when it is not. */
  error: string | null;
}

export interface ConnectionDirectoryOptions {
  /** PROVIDERS_FILE, when set. */
  path?: string;
  /** The built-in providers' variables (`OPENAI_API_KEY`, ...). */
  variables: ProviderVariables;
  /** Where the file's `${VAR}`s are read (the process's environment). */
  environment: ProviderVariables;
  /** Hears each connection's secrets (the log redacts them). */
  onSecrets?: (secrets: string[]) => void;
  onReload?: (outcome: { error?: string; connections?: number }) => void;
  pollMs?: number;
}

/**
 * The connections in use, kept current: the environment's built-ins with PROVIDERS_FILE's on top.
 * The file and its key files are polled (a ConfigMap edit swaps a symlink, which a watcher of
 * the old inode would miss); a valid edit replaces the whole set at once, a broken one keeps
 * the last good set and says why. The first read throws, so a broken file stops the start.
 */
export class ConnectionDirectory {
  private set: ConnectionSet;
  private status: ProvidersFileStatus | null;
  private watched: string[] = [];
  private signature = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ConnectionDirectoryOptions) {
    if (!options.path) {
      this.set = new ConnectionSet(environmentConnections(options.variables), options.variables);
      this.status = null;
      return;
    }
    this.signature = this.signatureOf([options.path]);
    const content = readProvidersFile(options.path, options.environment);
    this.set = this.setOf(content);
    this.status = { path: options.path, loadedAt: new Date(), error: null };
  }

  get current(): ConnectionSet {
    return this.set;
  }

  get fileStatus(): ProvidersFileStatus | null {
    return this.status && { ...this.status };
  }

  /** Starts polling the file for edits; nothing without a file. */
  watch(): void {
    if (!this.options.path || this.timer) return;
    this.timer = setInterval(() => this.reloadIfChanged(), this.options.pollMs ?? 1_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads the file again when it or a key file changed since the last read; true when the set was replaced. */
  reloadIfChanged(): boolean {
    const path = this.options.path;
    if (!path || !this.status) return false;
    const signature = this.signatureOf([path, ...this.watched]);
    if (signature === this.signature) return false;
    this.signature = signature;
    try {
      const content = readProvidersFile(path, this.options.environment);
      this.set = this.setOf(content);
      this.status = { path, loadedAt: new Date(), error: null };
      this.options.onReload?.({ connections: content.connections.length });
      return true;
    } catch (error) {
      const message = error instanceof ProvidersFileError ? error.message : `${path}: ${(error as Error).message}`;
      this.status = { ...this.status, error: message };
      this.options.onReload?.({ error: message });
      return false;
    }
  }

  private setOf(content: ProvidersFileContent): ConnectionSet {
    this.options.onSecrets?.(content.secrets);
    this.watched = content.keyFiles;
    const fromFile = new Set(content.connections.map((connection) => connection.name));
    const builtIns = environmentConnections(this.options.variables).filter((connection) => !fromFile.has(connection.name));
    fileDefinitions = new Map(content.connections.map((connection) => [connection.name, connection.definition]));
    return new ConnectionSet([...builtIns, ...content.connections], this.options.variables);
  }

  /** Size, modification time and inode of each file: what any edit, in place or by rename, changes. */
  private signatureOf(files: readonly string[]): string {
    return files
      .map((file) => {
        try {
          const stat = statSync(file);
          return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
        } catch {
          return 'absent';
        }
      })
      .join('|');
  }
}

/** The process's file connections' definitions (their kinds), as last read. */
let fileDefinitions = new Map<string, ProviderDefinition>();

/**
 * What a catalogue source's connection is: one of PROVIDERS_FILE, else a built-in provider;
 * undefined for a name neither knows. Where a source's kind decides what it is sent (an
 * embeddings API, a native Messages call), this is the one place that says.
 */
export function sourceDefinition(name: string): ProviderDefinition | undefined {
  return fileDefinitions.get(name) ?? fileDefinitions.get(name.toLowerCase()) ?? findProvider(name);
}

/** One directory per set of provider variables (one per process): every caller sees the same connections, and one poll of the file. */
const directories = new WeakMap<object, ConnectionDirectory>();

/**
 * The process's connection directory, opened (and watching PROVIDERS_FILE) on first use; a file
 * that does not validate throws here, which stops the start.
 */
export function connectionDirectoryFor(options: ConnectionDirectoryOptions): ConnectionDirectory {
  let directory = directories.get(options.variables);
  if (!directory) {
    directory = new ConnectionDirectory(options);
    directory.watch();
    directories.set(options.variables, directory);
  }
  return directory;
}

/** Whether a catalogue source (its connection and model) is called through `api`; false for a connection this process does not know. */
export function sourceSpeaks(source: { provider: string; model: string; deployment?: string }, api: WireApi): boolean {
  const definition = sourceDefinition(source.provider);
  return definition !== undefined && wireApiOf(definition.kind, source.deployment ?? source.model) === api;
}
