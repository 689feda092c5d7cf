import type { ProviderTarget } from '../provider.types';
import { UpstreamUnavailableError } from '../upstream.errors';
import { PROJECT_FROM_CREDENTIALS, type VertexSettings } from './vertex.settings';

/** Google's and Anthropic's models on Vertex AI are published under these names. */
export type VertexPublisher = 'google' | 'anthropic';

function vertexSettingsOf(target: ProviderTarget): VertexSettings {
  if (target.cloud?.kind !== 'vertex') throw new UpstreamUnavailableError(target.provider, 'the connection is not a Vertex AI connection (kind: vertex)');
  return target.cloud;
}

/**
 * `{base}/v1/projects/{project}/locations/{location}`: the connection's project, or a stand-in the
 * authorizer replaces by the credential's own project.
 */
export function vertexLocationUrl(target: ProviderTarget): string {
  const settings = vertexSettingsOf(target);
  const project = settings.project === undefined ? PROJECT_FROM_CREDENTIALS : encodeURIComponent(settings.project);
  return `${target.baseUrl.replace(/\/+$/, '')}/v1/projects/${project}/locations/${encodeURIComponent(settings.location)}`;
}

/** `…/publishers/{publisher}/models/{model}:{method}`; a `publishers/…/models/` prefix on the model id is tolerated. */
export function vertexModelUrl(target: ProviderTarget, publisher: VertexPublisher, method: string): string {
  const model = target.model.replace(/^publishers\/[^/]+\/models\//, '').replace(/^models\//, '');
  // `@` is a path character: Claude's versioned ids (`claude-sonnet-4-5@20250929`) go as Google's and Anthropic's own clients send them.
  return `${vertexLocationUrl(target)}/publishers/${publisher}/models/${encodeURIComponent(model).replace(/%40/g, '@')}:${method}`;
}

/** Vertex AI's OpenAI-compatible endpoint (partner and open models, `meta/llama-3.3-70b-instruct-maas`): chat completions are under it. */
export function vertexOpenAiBaseUrl(target: ProviderTarget): string {
  return `${vertexLocationUrl(target)}/endpoints/openapi`;
}
