import { GoogleAuth, type AuthClient } from 'google-auth-library';
import type { OutgoingRequest, RequestAuthorizer } from '../transport/http-client';
import type { ProviderVariables } from '../connections/connections';
import type { CloudSettingsReader } from '../connections/cloud';
import { UpstreamUnavailableError } from '../upstream.errors';

/** Fields a `kind: vertex` entry of the providers file may carry beyond the common ones. */
export const VERTEX_FIELDS: readonly string[] = ['project', 'location', 'credentialsFile'];

/** The OAuth scope Vertex AI's calls need. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/**
 * Where google-auth-library 10 posts a service account's signed assertion, whatever the key file's
 * `token_uri` says (it has no option for another); a file naming another endpoint (a private
 * endpoint, a test's emulator) is honoured by sending that request there instead.
 */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** Stands for the project in a URL built before the credential said which it is; the authorizer puts the project in its place. */
export const PROJECT_FROM_CREDENTIALS = '_project_of_the_credentials_';

const CREDENTIAL_TYPES = ['service_account', 'external_account', 'authorized_user'] as const;
type CredentialType = (typeof CREDENTIAL_TYPES)[number];

/**
 * A Google credential file's content. Its JSON holds a private key or a refresh token, so it
 * never prints: serialized or inspected it shows its type and account only.
 */
export class GoogleCredential {
  readonly #json: Record<string, unknown>;

  constructor(json: Record<string, unknown>) {
    this.#json = json;
  }

  get type(): CredentialType {
    return this.#json.type as CredentialType;
  }

  /** The project the credential belongs to (a service account's `project_id`), if it says. */
  get project(): string | undefined {
    const project = this.#json.project_id;
    return typeof project === 'string' && project !== '' ? project : undefined;
  }

  /** What google-auth-library is given. */
  reveal(): Record<string, unknown> {
    return this.#json;
  }

  toJSON(): object {
    return { type: this.type, account: this.#json.client_email };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `GoogleCredential(${this.type})`;
  }
}

/** Where a Vertex AI connection's models live, and how its calls get their token. */
export interface VertexSettings {
  kind: 'vertex';
  /** Undefined: the credential's own project, else GOOGLE_CLOUD_PROJECT. */
  project?: string;
  /** A region (`europe-west4`) or `global`. */
  location: string;
  /** The connection's credentials file; undefined: Application Default Credentials. */
  credentials?: GoogleCredential;
  /** GOOGLE_CLOUD_PROJECT as the connection was read: the project when neither the connection nor the credential names one. */
  environmentProject?: string;
}

/** `https://{location}-aiplatform.googleapis.com`; the `global` location's host has no region prefix. */
export function vertexBaseUrl(location: string): string {
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

/** Reads the Vertex AI fields of a providers-file entry. */
export const readVertexSettings: CloudSettingsReader<VertexSettings> = (entry, context) => {
  const location = entry.location;
  if (typeof location !== 'string' || !/^(global|[a-z]+-[a-z]+\d+)$/.test(location)) context.fail('location', 'expected a Vertex AI location, e.g. us-central1 or global');
  const project = entry.project;
  if (project !== undefined && (typeof project !== 'string' || !/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/.test(project))) context.fail('project', 'expected a Google Cloud project id');
  let credentials: GoogleCredential | undefined;
  if (entry.credentialsFile !== undefined) {
    if (typeof entry.credentialsFile !== 'string' || entry.credentialsFile === '') context.fail('credentialsFile', 'expected a path');
    credentials = parseCredential(context.readFile('credentialsFile', entry.credentialsFile as string), (problem) => context.fail('credentialsFile', problem));
  }
  const environmentProject = context.environment.GOOGLE_CLOUD_PROJECT || undefined;
  return {
    kind: 'vertex',
    location: location as string,
    ...(project !== undefined && { project: project as string }),
    ...(credentials && { credentials }),
    ...(environmentProject && { environmentProject }),
  };
};

/** A credentials file's JSON, checked enough that a wrong file fails when the providers file is read; never quoted back, it holds a secret. */
export function parseCredential(text: string, fail: (problem: string) => never): GoogleCredential {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return fail('the file is not JSON (expected a Google credentials file: a service account key, an external_account or an authorized_user file)');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return fail('expected a JSON object');
  const record = json as Record<string, unknown>;
  if (!CREDENTIAL_TYPES.includes(record.type as CredentialType)) return fail(`expected "type" to be one of ${CREDENTIAL_TYPES.join(', ')}`);
  const required: Record<CredentialType, string[]> = {
    service_account: ['client_email', 'private_key'],
    external_account: ['audience', 'subject_token_type', 'token_url', 'credential_source'],
    authorized_user: ['client_id', 'client_secret', 'refresh_token'],
  };
  const missing = required[record.type as CredentialType].filter((field) => record[field] === undefined || record[field] === '');
  if (missing.length > 0) return fail(`the ${String(record.type)} credential lacks ${missing.join(', ')}`);
  return new GoogleCredential(record);
}

/** The built-in `vertex` connection's settings, from the environment; undefined when it names no location. */
export function environmentVertexSettings(variables: ProviderVariables): VertexSettings | undefined {
  const location = variables.VERTEX_LOCATION;
  if (!location) return undefined;
  const project = variables.VERTEX_PROJECT || variables.GOOGLE_CLOUD_PROJECT;
  return { kind: 'vertex', location, ...(project && { project }) };
}

/**
 * Adds a bearer token of the connection's Google credentials to each call. One google-auth-library
 * client per connection: it caches the token and fetches a new one only within its eager refresh
 * threshold (5 minutes) of the token's expiry, so calls in between cost no token request.
 * Failures are named after `connection`, the connection the authorizer is made for.
 */
export function vertexAuthorizer(settings: VertexSettings, connection = 'vertex'): RequestAuthorizer {
  const provider = connection;
  let client: Promise<{ auth: GoogleAuth; client: AuthClient }> | undefined;
  let project: Promise<string> | undefined;
  const clientOf = () =>
    (client ??= createClient(settings).catch((error: unknown) => {
      // A failure to build the client (unreadable ADC) is tried again on the next call.
      client = undefined;
      throw error;
    }));
  const projectOf = (auth: GoogleAuth) =>
    (project ??= resolveProject(settings, auth, provider).catch((error: unknown) => {
      project = undefined;
      throw error;
    }));

  return async (request: OutgoingRequest) => {
    let headers: Headers;
    let found: { auth: GoogleAuth; client: AuthClient };
    try {
      found = await clientOf();
      headers = await found.client.getRequestHeaders();
    } catch (error) {
      throw new UpstreamUnavailableError(provider, `cannot get a Google access token (${credentialProblem(error)}); check the connection's credentials (credentialsFile, GOOGLE_APPLICATION_CREDENTIALS or the workload identity)`);
    }
    const authorization = headers.get('authorization');
    if (!authorization) throw new UpstreamUnavailableError(provider, 'the Google credentials gave no access token');
    const authorized: Record<string, string> = { ...request.headers, authorization };
    // A user credential bills its quota project: Google asks for it in its own header.
    const quotaProject = headers.get('x-goog-user-project');
    if (quotaProject) authorized['x-goog-user-project'] = quotaProject;
    if (!request.url.includes(`/projects/${PROJECT_FROM_CREDENTIALS}/`)) return { headers: authorized };
    const projectId = await projectOf(found.auth);
    return { headers: authorized, url: request.url.replace(`/projects/${PROJECT_FROM_CREDENTIALS}/`, `/projects/${encodeURIComponent(projectId)}/`) };
  };
}

async function createClient(settings: VertexSettings): Promise<{ auth: GoogleAuth; client: AuthClient }> {
  const clientOptions = {
    // Node's own fetch: gaxios would otherwise import node-fetch (an ES module) on the first token request.
    transporterOptions: { fetchImplementation: (...args: Parameters<typeof fetch>) => fetch(...args) },
  };
  const auth = new GoogleAuth({
    scopes: [CLOUD_PLATFORM_SCOPE],
    clientOptions,
    ...(settings.credentials && { credentials: settings.credentials.reveal() }),
  });
  const client = await auth.getClient();
  // The credential the library found: the connection's file, or ADC's (GOOGLE_APPLICATION_CREDENTIALS).
  const tokenUri = customTokenUri(auth.jsonContent);
  if (tokenUri !== undefined) {
    client.transporter.interceptors.request.add({
      resolved: async (config) => {
        if (String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(tokenUri);
        return config;
      },
    });
  }
  return { auth, client };
}

/** The token endpoint a service account's key file names, when it is not Google's default one. */
function customTokenUri(json: unknown): string | undefined {
  const uri = (json as { type?: unknown; token_uri?: unknown } | null)?.token_uri;
  return (json as { type?: unknown } | null)?.type === 'service_account' && typeof uri === 'string' && uri !== '' && uri !== GOOGLE_TOKEN_URL ? uri : undefined;
}

/** The connection's project, else the credential's, else GOOGLE_CLOUD_PROJECT; with ADC, whatever the environment's credentials know (the GKE metadata server). */
async function resolveProject(settings: VertexSettings, auth: GoogleAuth, provider: string): Promise<string> {
  const known = settings.project ?? settings.credentials?.project ?? settings.environmentProject;
  if (known !== undefined) return known;
  if (settings.credentials === undefined) {
    const found = await auth.getProjectId().catch(() => undefined);
    if (found) return found;
  }
  throw new UpstreamUnavailableError(provider, 'no Google Cloud project is known for Vertex AI: set the connection\'s project (VERTEX_PROJECT for the built-in connection) or GOOGLE_CLOUD_PROJECT');
}

/** What went wrong getting a token, in words that hold no secret (an OAuth error code, a reason). */
function credentialProblem(error: unknown): string {
  const response = (error as { response?: { status?: number; data?: unknown } }).response;
  if (response?.status !== undefined) {
    const data = response.data as { error?: unknown; error_description?: unknown } | undefined;
    const code = typeof data?.error === 'string' ? `: ${data.error}` : '';
    return `the token endpoint answered ${response.status}${code}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  // Keep the first sentence only, without anything that looks like a key or token.
  return message.split('\n')[0].replace(/-----BEGIN[\s\S]*?-----END [A-Z ]+-----/g, '[key]').replace(/ya29\.[\w.-]+/g, '[token]').slice(0, 200);
}
