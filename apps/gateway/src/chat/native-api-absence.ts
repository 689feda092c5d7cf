import { UpstreamHttpError } from '@igw/providers';

/** How long a source that turned out not to serve a native API is sent the translation without trying it again. */
export const NATIVE_API_ABSENCE_MS = 10 * 60_000;

/** A source as the catalogue names it: its provider key and its model name there. */
export interface SourceName {
  provider: string;
  model: string;
}

/**
 * Whether a native call failed because the source does not serve that route at all: an
 * OpenAI-compatible server without `/v1/responses` (older vLLM, llama.cpp) answers 404, some 405.
 * Anything else (an overload, a refused key, a 400 about the request) is the source's answer and
 * goes through fallback as ever.
 */
export function answeredRouteMissing(error: unknown): boolean {
  return error instanceof UpstreamHttpError && (error.status === 404 || error.status === 405);
}

/**
 * The sources that answered a native API's route as missing, remembered per replica in memory
 * for a while: their requests go to the chat translation at once instead of paying a refused call
 * each. The catalogue's `native` list says what is tried first, not a promise, so after the while
 * the native call is tried again (a server upgraded to the API gets it back without a restart).
 *
 * Per source (provider and model) rather than per provider: one address may front several
 * servers (a proxy routing by model), and a 404 that meant an unknown model then costs that model
 * alone a translated attempt, which answers the same 404.
 */
export class NativeApiAbsences {
  private readonly lackingUntil = new Map<string, number>();

  constructor(
    private readonly forMs: number = NATIVE_API_ABSENCE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether the source answered the API as missing within the last `forMs`. */
  lacks(api: string, source: SourceName): boolean {
    const key = keyOf(api, source);
    const until = this.lackingUntil.get(key);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.lackingUntil.delete(key);
    return false;
  }

  /**
   * Remembers that the source lacks the API, from now for `forMs`. True when it was not known
   * already, so concurrent requests that met the same 404 log it once.
   */
  remember(api: string, source: SourceName): boolean {
    if (this.lacks(api, source)) return false;
    this.lackingUntil.set(keyOf(api, source), this.now() + this.forMs);
    return true;
  }
}

function keyOf(api: string, source: SourceName): string {
  return `${api}\u0000${source.provider}\u0000${source.model}`;
}
