import { OpenAiImagesAdapter } from '../openai/openai.images';
import { OpenAiSpeechAdapter } from '../openai/openai.speech';
import { OpenAiTranscriptionAdapter } from '../openai/openai.transcription';
import type { OpenAiEndpoint } from '../openai/openai.chat';
import type { ProviderTarget } from '../provider.types';
import { AZURE_API_VERSION } from './azure-openai.chat';

/** OpenAI's media wire formats at `/openai/deployments/{deployment}/<operation>?api-version=...`, the key in `api-key`. */
function deploymentEndpoint(operation: string): OpenAiEndpoint {
  return {
    url: (target: ProviderTarget) => `${target.baseUrl}/openai/deployments/${encodeURIComponent(target.model)}/${operation}?api-version=${AZURE_API_VERSION}`,
    headers: (target: ProviderTarget): Record<string, string> => (target.apiKey ? { 'api-key': target.apiKey } : {}),
  };
}

/** Azure OpenAI image generation (GPT Image, DALL·E deployments). */
export class AzureOpenAiImagesAdapter extends OpenAiImagesAdapter {
  constructor() {
    super(deploymentEndpoint('images/generations'), deploymentEndpoint('images/edits'));
  }
}

/** Azure OpenAI transcriptions (Whisper, GPT-4o transcribe deployments). */
export class AzureOpenAiTranscriptionAdapter extends OpenAiTranscriptionAdapter {
  constructor() {
    super(deploymentEndpoint('audio/transcriptions'), deploymentEndpoint('audio/translations'));
  }
}

/** Azure OpenAI speech (TTS deployments). */
export class AzureOpenAiSpeechAdapter extends OpenAiSpeechAdapter {
  constructor() {
    super(deploymentEndpoint('audio/speech'));
  }
}
