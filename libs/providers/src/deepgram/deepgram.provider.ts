import { NoChatAdapter } from '../no-chat.adapter';
import { builtInProvider, type ProviderKindDefinition } from '../provider-definition';
import { DeepgramSpeechAdapter } from './deepgram.speech';
import { DEEPGRAM_DEFAULT_BASE_URL, DeepgramTranscriptionAdapter } from './deepgram.transcription';

/** Deepgram: speech-to-text of pre-recorded audio and text-to-speech, no chat. */
export const DEEPGRAM_KIND: ProviderKindDefinition = {
  kind: 'deepgram',
  wireApi: () => 'openai',
  providers: [builtInProvider('deepgram', 'deepgram', { defaultBaseUrl: DEEPGRAM_DEFAULT_BASE_URL, emulatorPath: '' })],
  chat: new NoChatAdapter('deepgram'),
  transcription: new DeepgramTranscriptionAdapter(),
  speech: new DeepgramSpeechAdapter(),
};
