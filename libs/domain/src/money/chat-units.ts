/**
 * Chat usage as upstreams report it (OpenAI names; Anthropic's cache writes as
 * `cache_write_tokens`, of which `cache_write_1h_tokens` were written for an hour).
 */
export interface ChatUsageCounts {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null; cache_write_1h_tokens?: number | null } | null;
  /** Web searches the upstream ran for the request (priced per call, not by tokens). */
  web_search_calls?: number | null;
}

/**
 * The metered units of a chat request for a price list. Cached prompt tokens are split out
 * only when the price list prices them (`cache_read_input_tokens`, `cache_write_input_tokens`,
 * and `cache_write_1h_input_tokens` for one-hour writes); otherwise they are ordinary input
 * tokens (one-hour writes unpriced apart are cache writes). Reasoning and audio tokens are output tokens (they
 * are counted in `completion_tokens`). Web search calls are their own unit, `web_search_calls`.
 */
export function chatUnits(usage: ChatUsageCounts, pricedUnits: ReadonlySet<string>): Record<string, number> {
  const cachedRead = Math.max(0, usage.prompt_tokens_details?.cached_tokens ?? 0);
  let cachedWrite = Math.max(0, usage.prompt_tokens_details?.cache_write_tokens ?? 0);
  const cachedWriteForAnHour = Math.min(cachedWrite, Math.max(0, usage.prompt_tokens_details?.cache_write_1h_tokens ?? 0));
  const units: Record<string, number> = { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens };
  if (cachedRead > 0 && pricedUnits.has('cache_read_input_tokens')) {
    units.cache_read_input_tokens = cachedRead;
    units.input_tokens -= cachedRead;
  }
  if (cachedWriteForAnHour > 0 && pricedUnits.has('cache_write_1h_input_tokens')) {
    units.cache_write_1h_input_tokens = cachedWriteForAnHour;
    units.input_tokens -= cachedWriteForAnHour;
    cachedWrite -= cachedWriteForAnHour;
  }
  if (cachedWrite > 0 && pricedUnits.has('cache_write_input_tokens')) {
    units.cache_write_input_tokens = cachedWrite;
    units.input_tokens -= cachedWrite;
  }
  units.input_tokens = Math.max(0, units.input_tokens);
  const searches = usage.web_search_calls ?? 0;
  if (Number.isSafeInteger(searches) && searches > 0) units.web_search_calls = searches;
  return units;
}
