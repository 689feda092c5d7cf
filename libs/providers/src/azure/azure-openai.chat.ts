import type { ProviderTarget } from '../provider.types';
import { OpenAiChatAdapter } from '../openai/openai.chat';

/** The Azure OpenAI API version the gateway speaks to deployments. */
export const AZURE_API_VERSION = '2024-10-21';

/**
 * Azure OpenAI: OpenAI's wire format, addressed by deployment. The catalogue source's model
 * is the deployment name; the key goes in `api-key`; the API version in the query.
 */
export class AzureOpenAiChatAdapter extends OpenAiChatAdapter {
  constructor() {
    super({
      url: (target: ProviderTarget) =>
        `${target.baseUrl}/openai/deployments/${encodeURIComponent(target.model)}/chat/completions?api-version=${AZURE_API_VERSION}`,
      headers: (target: ProviderTarget): Record<string, string> => (target.apiKey ? { 'api-key': target.apiKey } : {}),
    });
  }
}
