import type { ResponsesRequestDto } from '@igw/contracts';
import type { CallOptions, ProviderTarget, UpstreamChatChunk, UpstreamUsage } from '../provider.types';
import { postJson, type JsonRequest } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';
import { UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';
import { openNativeStream, parsedEvent, type NativeAnswer, type NativeEvent, type NativeEventReader, type NativeEventStream } from './native-call';

// OpenAI's Responses API called natively (OpenAI, and Azure OpenAI's v1 API, where the catalogue
// says the source has it): the client's Responses request goes up as it came (the gateway builds
// the body, see the gateway's responses-native.ts), the answer or events come back as they came.
// Usage: `input_tokens` include the cached ones (`input_tokens_details.cached_tokens`),
// `output_tokens` the reasoning ones (`output_tokens_details.reasoning_tokens`), as chat
// completions count them; each `web_search_call` output item is a search, billed per call.

/** Where a provider kind serves the Responses API, and how it takes the key. */
function responsesEndpoint(target: ResponsesTarget): { url: string; headers: Record<string, string> } {
  if (target.definition?.kind === 'azure-openai') {
    // Azure's v1 API: the deployment is the body's `model`, no api-version.
    return { url: `${target.baseUrl}/openai/v1/responses`, headers: target.apiKey ? { 'api-key': target.apiKey } : {} };
  }
  return { url: `${target.baseUrl}/responses`, headers: target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {} };
}

/** A source whose kind (its definition's) says how it is addressed. */
export type ResponsesTarget = ProviderTarget & { definition?: { kind: string } };

/**
 * The validated Responses request as the gateway sends it (its tools decided): the provider keeps
 * no state of it (`store: false`, no `previous_response_id`); model and stream are the call's.
 */
export type ResponsesNativeBody = Omit<ResponsesRequestDto, 'model' | 'stream' | 'store' | 'previous_response_id'> & { store: false };

function callOf(target: ResponsesTarget, body: ResponsesNativeBody, options: CallOptions, stream: boolean): JsonRequest {
  const { url, headers } = responsesEndpoint(target);
  const sent = { ...body, model: target.model, ...(stream ? { stream: true } : {}) };
  return { provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits, url, headers, body: sent, timeoutMs: options.timeoutMs, signal: options.signal, limits: target.limits };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a parsed answer has the shape of a Responses answer. */
function isResponse(value: unknown): value is Record<string, unknown> & { output: unknown[] } {
  return isRecord(value) && value.object === 'response' && typeof value.id === 'string' && Array.isArray(value.output);
}

/** The gateway's usage for a Responses answer (its `usage` and its output items). */
export function responsesUsageOf(response: Record<string, unknown>): UpstreamUsage {
  const usage = isRecord(response.usage) ? response.usage : {};
  const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  const cached = isRecord(usage.input_tokens_details) ? count(usage.input_tokens_details.cached_tokens) : 0;
  const reasoning = isRecord(usage.output_tokens_details) ? count(usage.output_tokens_details.reasoning_tokens) : 0;
  const searches = Array.isArray(response.output) ? response.output.filter((item) => isRecord(item) && item.type === 'web_search_call').length : 0;
  const read: UpstreamUsage = {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: cached },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
  if (searches > 0) read.web_search_calls = searches;
  return read;
}

/** `POST /responses` with the client's own request: the response as it came, and its usage. */
export async function openAiNativeResponse(target: ResponsesTarget, body: ResponsesNativeBody, options: CallOptions): Promise<NativeAnswer> {
  const answer = await postJson<unknown>(callOf(target, body, options, false));
  if (!isResponse(answer)) throw new UpstreamProtocolError(target.provider, 'the answer is not a Responses response');
  if (answer.status === 'failed') {
    const error = isRecord(answer.error) ? answer.error : {};
    throw new UpstreamHttpError(target.provider, 502, typeof error.message === 'string' ? error.message : 'the response failed');
  }
  return { body: answer, usage: responsesUsageOf(answer) };
}

/** The stream of the client's own request, its events as they came; a failure before the first events rejects (fallback). */
export function openAiNativeResponseStream(target: ResponsesTarget, body: ResponsesNativeBody, options: CallOptions): Promise<NativeEventStream> {
  return openNativeStream(callOf(target, body, options, true), new ResponsesNativeEvents(target.provider));
}

type ChunkDelta = UpstreamChatChunk['choices'][number]['delta'];

function chunkOf(delta: ChunkDelta): UpstreamChatChunk {
  return { id: '', object: 'chat.completion.chunk', created: 0, model: '', choices: [{ index: 0, delta, finish_reason: null }] };
}

/**
 * Reads the Responses API's typed events: each is passed on as it came; text, reasoning,
 * refusals and function call arguments become chat-shaped pieces (a stream cut short is counted
 * from them). `response.completed` (or `response.incomplete`) carries the usage and closes the
 * answer; `error` and `response.failed` are failures.
 */
export class ResponsesNativeEvents implements NativeEventReader {
  private closed = false;

  constructor(private readonly provider: string) {}

  read(event: SseEvent): NativeEvent {
    const parsed = parsedEvent(event.data);
    if (parsed === undefined || typeof parsed.type !== 'string') throw new UpstreamProtocolError(this.provider, 'a stream event is not a typed JSON object');
    const type = parsed.type;
    const read: NativeEvent = { name: event.event ?? type, data: event.data, parsed, chunks: [] };
    const delta = typeof parsed.delta === 'string' ? parsed.delta : undefined;
    switch (type) {
      case 'error':
        throw new UpstreamHttpError(this.provider, 502, typeof parsed.message === 'string' ? parsed.message : 'error event in the stream');
      case 'response.failed': {
        const response = isRecord(parsed.response) ? parsed.response : {};
        const error = isRecord(response.error) ? response.error : {};
        throw new UpstreamHttpError(this.provider, 502, typeof error.message === 'string' ? error.message : 'the response failed');
      }
      case 'response.output_text.delta':
        if (delta) read.chunks.push(chunkOf({ content: delta }));
        break;
      case 'response.refusal.delta':
        if (delta) read.chunks.push(chunkOf({ refusal: delta }));
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (delta) read.chunks.push(chunkOf({ reasoning_content: delta }));
        break;
      case 'response.function_call_arguments.delta':
        if (delta) read.chunks.push(chunkOf({ tool_calls: [{ index: 0, function: { arguments: delta } }] }));
        break;
      case 'response.output_item.added': {
        const item = isRecord(parsed.item) ? parsed.item : {};
        if (item.type === 'function_call' && typeof item.name === 'string') read.chunks.push(chunkOf({ tool_calls: [{ index: 0, function: { name: item.name } }] }));
        break;
      }
      case 'response.completed':
      case 'response.incomplete':
        if (!isRecord(parsed.response)) throw new UpstreamProtocolError(this.provider, `${type} has no response`);
        this.closed = true;
        read.usage = responsesUsageOf(parsed.response);
        break;
      default:
        break;
    }
    return read;
  }

  end(): void {
    if (!this.closed) throw new UpstreamProtocolError(this.provider, 'the stream ended before response.completed');
  }
}
