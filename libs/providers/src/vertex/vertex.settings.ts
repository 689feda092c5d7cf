import type { RequestAuthorizer } from '../transport/http-client';
import type { ProviderVariables } from '../connections/connections';
import type { CloudSettingsReader } from '../connections/cloud';

/** Fields a `kind: vertex` entry of the providers file may carry beyond the common ones. */
export const VERTEX_FIELDS: readonly string[] = ['project', 'location'];

/** Where a Vertex AI connection's models live, and how its calls get their token. */
export interface VertexSettings {
  kind: 'vertex';
  /** Undefined: the credential's own project, else GOOGLE_CLOUD_PROJECT. */
  project?: string;
  /** A region (`europe-west4`) or `global`. */
  location: string;
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
  return { kind: 'vertex', location: location as string, ...(project !== undefined && { project: project as string }) };
};

/** The built-in `vertex` connection's settings, from the environment; undefined when it names no location. */
export function environmentVertexSettings(variables: ProviderVariables): VertexSettings | undefined {
  const location = variables.VERTEX_LOCATION;
  if (!location) return undefined;
  const project = variables.VERTEX_PROJECT || variables.GOOGLE_CLOUD_PROJECT;
  return { kind: 'vertex', location, ...(project && { project }) };
}

/** Adds a bearer token of the connection's Google credentials to each call. */
export function vertexAuthorizer(_settings: VertexSettings): RequestAuthorizer {
  return async () => {
    throw new Error('Vertex AI credentials are not built yet');
  };
}
