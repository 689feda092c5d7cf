import type { ChatAdapter, ProviderTarget, UpstreamChatCompletion, UpstreamChatRequest, CallOptions } from '../provider.types';
import { postJson } from '../transport/http-client';
import { UpstreamProtocolError } from '../upstream.errors';

/**
 * OpenAI and every server that speaks its wire format (Groq, Together, Mistral, DeepSeek,
 * xAI, OpenRouter, vLLM, Ollama, llama.cpp): the request goes out as is.
 */
export class OpenAiChatAdapter implements ChatAdapter {
  async chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion> {
    const completion = await postJson<UpstreamChatCompletion>({
      provider: target.provider,
      url: `${target.baseUrl}/chat/completions`,
      headers: target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
      body: request,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    if (!completion || !Array.isArray(completion.choices)) {
      throw new UpstreamProtocolError(target.provider, 'no choices in the chat completion');
    }
    return completion;
  }
}
