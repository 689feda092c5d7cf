import type { ProviderTarget } from '../provider.types';

/** `{base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:{method}`. */
export function vertexGeminiUrl(_target: ProviderTarget, _method: string): string {
  throw new Error('Vertex AI generateContent is not built yet');
}
