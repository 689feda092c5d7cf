import type { ProviderTarget } from '../provider.types';
import { vertexModelUrl } from './vertex.urls';

/** `{base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:{method}`. */
export function vertexGeminiUrl(target: ProviderTarget, method: string): string {
  return vertexModelUrl(target, 'google', method);
}
