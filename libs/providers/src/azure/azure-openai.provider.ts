import { builtInProvider, type ProviderKindDefinition } from '../provider-definition';
import { AzureOpenAiChatAdapter } from './azure-openai.chat';
import { AzureOpenAiEmbeddingsAdapter } from './azure-openai.embeddings';
import { AzureOpenAiImagesAdapter, AzureOpenAiSpeechAdapter, AzureOpenAiTranscriptionAdapter } from './azure-openai.media';

/** Azure OpenAI: OpenAI's API under deployments. No moderations: its content filters are part of each call. */
export const AZURE_OPENAI_KIND: ProviderKindDefinition = {
  kind: 'azure-openai',
  wireApi: () => 'openai',
  providers: [builtInProvider('azure', 'azure-openai', { variables: { apiKey: 'AZURE_OPENAI_API_KEY', baseUrl: 'AZURE_OPENAI_ENDPOINT' }, emulatorPath: '' })],
  chat: new AzureOpenAiChatAdapter(),
  embeddings: new AzureOpenAiEmbeddingsAdapter(),
  images: new AzureOpenAiImagesAdapter(),
  transcription: new AzureOpenAiTranscriptionAdapter(),
  speech: new AzureOpenAiSpeechAdapter(),
};
