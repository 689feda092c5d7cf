import { AnthropicChatAdapter } from '../anthropic/anthropic.chat';
import { GeminiChatAdapter } from '../google/gemini.chat';
import { vertexToolSchema } from '../google/gemini.translate';
import { OpenAiChatAdapter } from '../openai/openai.chat';
import type { CallOptions, ChatAdapter, ProviderTarget, UpstreamChatCompletion, UpstreamChatRequest } from '../provider.types';
import type { ChunkStream } from '../transport/chunk-stream';
import { isFunctionTool } from '../translation/chat-tools';
import { vertexWireApi } from '../wire-api';
import { vertexOpenAiBaseUrl } from './vertex.urls';

/** Vertex AI's OpenAI-compatible endpoint: the connection's token, never an API key. */
const VERTEX_OPENAI = new OpenAiChatAdapter({
  url: (target) => `${vertexOpenAiBaseUrl(target)}/chat/completions`,
  headers: () => ({}),
});

/**
 * Vertex AI: Gemini through generateContent, Claude through rawPredict (the Messages body), partner
 * models through its OpenAI-compatible endpoint. Each family's own adapter does the work; the
 * connection's settings decide the URLs (vertex.urls.ts) and its authorizer adds the token.
 */
export class VertexChatAdapter implements ChatAdapter {
  constructor(
    private readonly claude: ChatAdapter = new AnthropicChatAdapter(),
    private readonly gemini: ChatAdapter = new GeminiChatAdapter(),
    private readonly partners: ChatAdapter = VERTEX_OPENAI,
  ) {}

  chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion> {
    const { adapter, call } = this.route(target, request);
    return adapter.chat(call.target, call.request, options);
  }

  stream(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<ChunkStream> {
    const { adapter, call } = this.route(target, request);
    return adapter.stream(call.target, call.request, options);
  }

  private route(target: ProviderTarget, request: UpstreamChatRequest): { adapter: ChatAdapter; call: { target: ProviderTarget; request: UpstreamChatRequest } } {
    switch (vertexWireApi(target.model)) {
      case 'anthropic-messages':
        return { adapter: this.claude, call: { target, request } };
      case 'gemini':
        return { adapter: this.gemini, call: { target, request: withVertexToolSchemas(request) } };
      default:
        return { adapter: this.partners, call: { target, request } };
    }
  }
}

/** The request with its tools' parameters in the schema form Vertex AI's Gemini takes. */
export function withVertexToolSchemas(request: UpstreamChatRequest): UpstreamChatRequest {
  if (!request.tools) return request;
  const tools = request.tools.map((tool) => {
    if (!isFunctionTool(tool) || tool.function.parameters === undefined || tool.function.parameters === null) return tool;
    return { ...tool, function: { ...tool.function, parameters: vertexToolSchema(tool.function.parameters) as Record<string, unknown> } };
  });
  return { ...request, tools };
}
