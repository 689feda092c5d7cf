// Anthropic Messages API wire format (POST /v1/messages, `anthropic-version: 2023-06-01`):
// the subset the gateway sends and reads. Only what the translation needs is typed;
// unknown response blocks and stream events are tolerated and ignored.

/** The API version sent in `anthropic-version`. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Prompt-caching breakpoint on a block or tool. */
export interface AnthropicCacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

// ---- content blocks -------------------------------------------------------------------

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  cache_control?: AnthropicCacheControl;
  /**
   * Responses only: sources of this text. `web_search_result_location` citations become
   * `url_citation` annotations; document citations (char/page/block locations) are skipped.
   */
  citations?: AnthropicCitation[] | null;
}

/** A citation of a web search result, on a text block (or in a `citations_delta`). */
export interface AnthropicWebSearchCitation {
  type: 'web_search_result_location';
  url: string;
  title: string | null;
  cited_text: string;
  encrypted_index: string;
}

/** Citations a text block may carry; only web search results are read. */
export type AnthropicCitation = AnthropicWebSearchCitation | { type: string; [field: string]: unknown };

/** A call of a server tool (web search) that Anthropic ran itself; never shown to the client. */
export interface AnthropicServerToolUseBlock {
  type: 'server_tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** What a server-side web search found (or its error); never shown to the client. */
export interface AnthropicWebSearchToolResultBlock {
  type: 'web_search_tool_result';
  tool_use_id: string;
  content:
    | Array<{ type: 'web_search_result'; url: string; title: string; encrypted_content: string; page_age?: string | null }>
    | { type: 'web_search_tool_result_error'; error_code: string };
}

export type AnthropicImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export interface AnthropicImageBlock {
  type: 'image';
  source: AnthropicImageSource;
  cache_control?: AnthropicCacheControl;
}

/** A PDF (base64) or a plain-text document (its text). */
export interface AnthropicDocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: 'application/pdf'; data: string } | { type: 'text'; media_type: 'text/plain'; data: string };
  title?: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
  is_error?: boolean;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** Blocks a request message may carry. */
export type AnthropicRequestBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock;

/** Blocks a response may carry (server tool blocks are read past: only their citations, on text blocks, reach the client). */
export type AnthropicResponseBlock =
  | AnthropicTextBlock
  | AnthropicToolUseBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicServerToolUseBlock
  | AnthropicWebSearchToolResultBlock;

// ---- request ----------------------------------------------------------------------------

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicRequestBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

/** Anthropic's server-side web search tool (`enable_search`). */
export interface AnthropicWebSearchTool {
  type: 'web_search_20250305';
  name: 'web_search';
  /** Searches allowed in one request; Anthropic's default when absent. */
  max_uses?: number;
}

export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type AnthropicThinkingConfig = { type: 'enabled'; budget_tokens: number } | { type: 'disabled' };

export interface AnthropicMessagesRequest {
  model: string;
  /** Required by Anthropic; counts thinking and visible output together. */
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: AnthropicTextBlock[];
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  stream?: boolean;
  tools?: Array<AnthropicTool | AnthropicWebSearchTool>;
  tool_choice?: AnthropicToolChoice;
  thinking?: AnthropicThinkingConfig;
  metadata?: { user_id?: string };
  /** Structured outputs: the answer's text is JSON satisfying the schema (the models that take it). */
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
}

// ---- response ---------------------------------------------------------------------------

export type AnthropicStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export interface AnthropicUsage {
  /** Input tokens neither read from nor written to the cache. */
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number } | null;
  service_tier?: string | null;
  /** Server tool calls billed by Anthropic per request (not tokens); not part of the OpenAI usage. */
  server_tool_use?: { web_search_requests?: number } | null;
}

export interface AnthropicMessageResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicResponseBlock[];
  /** A string outside AnthropicStopReason may appear as the API grows; it maps to `stop`. */
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** Error body of a non-2xx answer, and the payload of a stream `error` event. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id?: string;
}

// ---- stream events ----------------------------------------------------------------------

export interface AnthropicMessageStartEvent {
  type: 'message_start';
  /** The message skeleton: empty content, null stop_reason, input usage. */
  message: AnthropicMessageResponse;
}

export interface AnthropicContentBlockStartEvent {
  type: 'content_block_start';
  index: number;
  content_block: AnthropicResponseBlock;
}

export type AnthropicContentDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  /** `citation` is an AnthropicCitation; typed loosely because malformed ones are tolerated. */
  | { type: 'citations_delta'; citation: unknown };

export interface AnthropicContentBlockDeltaEvent {
  type: 'content_block_delta';
  index: number;
  delta: AnthropicContentDelta;
}

export interface AnthropicContentBlockStopEvent {
  type: 'content_block_stop';
  index: number;
}

export interface AnthropicMessageDeltaEvent {
  type: 'message_delta';
  delta: { stop_reason: AnthropicStopReason | null; stop_sequence?: string | null };
  /** Cumulative; `output_tokens` always, the input/cache counts on newer API versions. */
  usage: Partial<AnthropicUsage> & { output_tokens: number };
}

export interface AnthropicMessageStopEvent {
  type: 'message_stop';
}

export interface AnthropicPingEvent {
  type: 'ping';
}

export interface AnthropicErrorEvent {
  type: 'error';
  error: { type: string; message: string };
}

export type AnthropicStreamEvent =
  | AnthropicMessageStartEvent
  | AnthropicContentBlockStartEvent
  | AnthropicContentBlockDeltaEvent
  | AnthropicContentBlockStopEvent
  | AnthropicMessageDeltaEvent
  | AnthropicMessageStopEvent
  | AnthropicPingEvent
  | AnthropicErrorEvent;
