export * from './provider.types';
export * from './upstream.errors';
export * from './registry';
export * from './routing';
export * from './transport/sse';
export * from './transport/cancellation';
export { AZURE_API_VERSION } from './azure/azure-openai.chat';
export * from './fallback';
export { AnthropicTranslationError } from './anthropic/anthropic.translate';
