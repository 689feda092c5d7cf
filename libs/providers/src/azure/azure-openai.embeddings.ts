import type { ProviderTarget } from '../provider.types';
import { OpenAiEmbeddingsAdapter } from '../openai/openai.embeddings';
import { AZURE_API_VERSION } from './azure-openai.chat';

/**
 * Azure OpenAI embeddings: OpenAI's wire format at
 * `/openai/deployments/{deployment}/embeddings?api-version=...`, the key in `api-key`.
 */
export class AzureOpenAiEmbeddingsAdapter extends OpenAiEmbeddingsAdapter {
  constructor() {
    super({
      url: (target: ProviderTarget) => `${target.baseUrl}/openai/deployments/${encodeURIComponent(target.model)}/embeddings?api-version=${AZURE_API_VERSION}`,
      headers: (target: ProviderTarget): Record<string, string> => (target.apiKey ? { 'api-key': target.apiKey } : {}),
    });
  }
}
