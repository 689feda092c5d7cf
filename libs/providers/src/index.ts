export * from './provider.types';
export * from './upstream.errors';
export * from './provider-definition';
export * from './registry';
export * from './routing';
export * from './transport/sse';
export { ChunkWriter, type ChunkStream, type StreamedChunk } from './transport/chunk-stream';
export * from './transport/cancellation';
export * from './transport/upstream-limits';
export * from './transport/address-policy';
export * from './transport/media-fetch';
export * from './transport/checked-destination';
export { AZURE_API_VERSION } from './azure/azure-openai.chat';
export { takesStructuredOutputs } from './anthropic/anthropic.chat';
export * from './fallback';
export {
  AnthropicTranslationError,
  ANTHROPIC_DEFAULT_SEARCH_MAX_USES,
  ANTHROPIC_SEARCH_MAX_USES,
  ANTHROPIC_THINKING_BUDGETS,
} from './anthropic/anthropic.translate';
export { GEMINI_THINKING_BUDGETS, mapFinishReason as geminiChatFinishReason } from './google/gemini.translate';
export * from './decisions/decisions.adapters';
export { audioDurationSeconds, characterCount, speechContentType } from './media/audio-facts';
export { imageDimensions, imageMimeType, parseSize } from './media/image-facts';
export type { NativeAnswer, NativeEvent, NativeEventStream } from './native/native-call';
export { anthropicNativeMessage, anthropicNativeStream, forwardedAnthropicBetas, type AnthropicNativeBody, type AnthropicNativeRequest } from './native/anthropic-messages.native';
export { geminiNativeGenerate, geminiNativeStream, type GeminiNativeBody } from './native/gemini-generate.native';
export { openAiNativeResponse, openAiNativeResponseStream, responsesUsageOf, type ResponsesNativeBody } from './native/openai-responses.native';
export { completionTexts, completionsUsageOf, openAiNativeCompletion, openAiNativeCompletionStream, type UpstreamCompletionRequest } from './native/openai-completions.native';
export { moderationInputCount, type ModerationResult, type UpstreamModerationRequest, type UpstreamModerationResult } from './openai/openai.moderations';
export * from './connections/connections';
export * from './connections/providers-file';
export * from './balancing/deployment-store';
export * from './balancing/redis-deployment-store';
export * from './balancing/strategies';
export * from './balancing/balancer';
export * from './wire-api';
export { isCloudKind, type CloudSettings } from './connections/cloud';
