import type { CallOptions, ProviderTarget } from '../provider.types';
import { postJson } from '../transport/http-client';
import { UpstreamProtocolError } from '../upstream.errors';

// OpenAI's moderation API, `POST {base}/moderations`, on OpenAI and any OpenAI-format server
// that serves it. The input goes up as the client sent it (texts, or text and image_url parts);
// the answer's results come back as they came, one per input.

/** A moderation request as the gateway sends it: the source's model name and the client's input. */
export interface UpstreamModerationRequest {
  model: string;
  input: string | string[] | Array<Record<string, unknown>>;
}

/** One input's verdict, in OpenAI's shape. */
export interface ModerationResult {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
  category_applied_input_types?: Record<string, string[]>;
}

export interface UpstreamModerationResult {
  id: string;
  results: ModerationResult[];
}

export interface ModerationsAdapter {
  moderate(target: ProviderTarget, request: UpstreamModerationRequest, options: CallOptions): Promise<UpstreamModerationResult>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The results, checked for the fields a client reads, one per input as asked. */
export function fromOpenAiModerationResponse(provider: string, answer: unknown, inputs: number): UpstreamModerationResult {
  if (!isRecord(answer) || !Array.isArray(answer.results)) throw new UpstreamProtocolError(provider, 'no results in the moderation answer');
  if (answer.results.length !== inputs) throw new UpstreamProtocolError(provider, `${answer.results.length} moderation results for ${inputs} inputs`);
  const results = answer.results.map((result: unknown): ModerationResult => {
    if (!isRecord(result) || typeof result.flagged !== 'boolean' || !isRecord(result.categories) || !isRecord(result.category_scores)) {
      throw new UpstreamProtocolError(provider, 'a moderation result lacks flagged, categories or category_scores');
    }
    const read: ModerationResult = {
      flagged: result.flagged,
      categories: result.categories as Record<string, boolean>,
      category_scores: result.category_scores as Record<string, number>,
    };
    if (isRecord(result.category_applied_input_types)) read.category_applied_input_types = result.category_applied_input_types as Record<string, string[]>;
    return read;
  });
  return { id: typeof answer.id === 'string' ? answer.id : '', results };
}

/** How many results an input asks for: a string or an array of parts is one, an array of strings one each. */
export function moderationInputCount(input: UpstreamModerationRequest['input']): number {
  return typeof input === 'string' || !input.every((item) => typeof item === 'string') ? 1 : input.length;
}

/** OpenAI and every server that speaks its wire format. */
export class OpenAiModerationsAdapter implements ModerationsAdapter {
  async moderate(target: ProviderTarget, request: UpstreamModerationRequest, options: CallOptions): Promise<UpstreamModerationResult> {
    const answer = await postJson<unknown>({
      provider: target.provider,
      extraHeaders: target.headers,
      onRateLimits: target.onRateLimits,
      url: `${target.baseUrl}/moderations`,
      headers: target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
      body: { model: request.model, input: request.input },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    return fromOpenAiModerationResponse(target.provider, answer, moderationInputCount(request.input));
  }
}
