import type { RequestAuthorizer } from '../transport/http-client';
import type { ProviderKind } from '../provider-definition';
import type { ProviderVariables } from './connections';
import { BEDROCK_FIELDS, bedrockAuthorizer, bedrockBaseUrl, environmentBedrockSettings, readBedrockSettings, type BedrockSettings } from '../bedrock/bedrock.settings';
import { VERTEX_FIELDS, environmentVertexSettings, readVertexSettings, vertexAuthorizer, vertexBaseUrl, type VertexSettings } from '../vertex/vertex.settings';

// The cloud platforms' kinds (Bedrock, Vertex AI): a connection there is a region or location,
// and credentials the platform's own chain finds (a pod's role), not only a key. What each
// kind reads and how it authorizes a call is in its folder; this is where the connections ask.

/** What a cloud connection knows beyond its address: where its models are and how to authorize. */
export type CloudSettings = BedrockSettings | VertexSettings;

export interface CloudSettingsContext {
  /** Throws the providers file's error for `field` of the entry. */
  fail(field: string, problem: string): never;
  /** Expands `${VAR}`s of a value from the environment (failing on one it lacks); the result is a secret. */
  expand(field: string, value: string): string;
  /** Reads a file the entry names (a credentials file), polled with the providers file. */
  readFile(field: string, path: string): string;
  /** The environment `${VAR}`s are read from. */
  environment: ProviderVariables;
}

export type CloudSettingsReader<T extends CloudSettings> = (entry: Record<string, unknown>, context: CloudSettingsContext) => T;

export type CloudKind = CloudSettings['kind'];

export function isCloudKind(kind: ProviderKind): kind is CloudKind {
  return kind === 'bedrock' || kind === 'vertex';
}

/**
 * Whether a cloud kind's connection may carry a key: a Bedrock API key replaces SigV4; Vertex AI
 * calls always carry a token of the connection's Google credentials.
 */
export function cloudTakesApiKey(kind: CloudKind): boolean {
  return kind === 'bedrock';
}

/** The providers-file fields of a cloud kind. */
export function cloudFieldsOf(kind: CloudKind): readonly string[] {
  return kind === 'bedrock' ? BEDROCK_FIELDS : VERTEX_FIELDS;
}

export function readCloudSettings(kind: CloudKind, entry: Record<string, unknown>, context: CloudSettingsContext): CloudSettings {
  return kind === 'bedrock' ? readBedrockSettings(entry, context) : readVertexSettings(entry, context);
}

/** The built-in connection's settings of a cloud kind, from the environment; undefined when they name none. */
export function environmentCloudSettings(kind: CloudKind, variables: ProviderVariables): CloudSettings | undefined {
  return kind === 'bedrock' ? environmentBedrockSettings(variables) : environmentVertexSettings(variables);
}

/** Where a cloud connection's calls go when it names no `baseUrl`. */
export function cloudBaseUrl(settings: CloudSettings): string {
  return settings.kind === 'bedrock' ? bedrockBaseUrl(settings.region) : vertexBaseUrl(settings.location);
}

/** How each call of the connection is authorized: made once per connection, so credentials are cached across calls. */
export function cloudAuthorizer(settings: CloudSettings, apiKey: string | undefined, connection: string): RequestAuthorizer {
  return settings.kind === 'bedrock' ? bedrockAuthorizer(settings, apiKey) : vertexAuthorizer(settings, connection);
}
