// POST /v1/messages (Anthropic Messages API): deterministic replies, JSON or SSE stream.
//
// Reply, by the first rule that applies:
//   1. the last message is a user turn with `tool_result` blocks → a text block
//      "Tool said: <text of the tool results, joined by a space>";
//   2. `tools` are given, `tool_choice` is not `none`, and either it forces a tool (`any`,
//      `tool`) or the last user text contains the word "weather" → one `tool_use` block
//      for the forced tool, else the first tool, with an `input` satisfying its `input_schema`
//      (../schema-values.ts: a `location` is "Paris"), seeded by the tool and the last user
//      text, and stop_reason "tool_use";
//   3. otherwise the OpenAI chat rule: "Hello from the emulator. You said: <last user text>".
// Structured outputs: with `output_config.format` `{type: "json_schema", schema}` the text of
// rules 1 and 3 is compact JSON satisfying the schema instead.
// Whitespace is normalised to single spaces, so streamed words reassemble exactly.
// Web search: with Anthropic's server tool in `tools` (`{type: "web_search_<yyyymmdd>", name,
// max_uses?}`, no input_schema) and `tool_choice` not `none`, a text reply of rule 3 is
// "searched": the content is, after any thinking block,
//   {type: "server_tool_use", id: "srvtoolu_<24>", name: <the tool's name>, input: {query: <last user text>}},
//   {type: "web_search_tool_result", tool_use_id: <that id>, content: [{type: "web_search_result",
//     url: SEARCH_RESULT.url, title: SEARCH_RESULT.title, encrypted_content: "emulated", page_age: null}]},
//   {type: "text", text: "Hello from the emulator. "}                   (uncited: the first 4 words),
//   {type: "text", text: "You said: <...>", citations: [{type: "web_search_result_location",
//     url, title, cited_text: SEARCH_RESULT.citedText, encrypted_index: "emulated"}]}  (the rest);
// so the text is the same as without search. A reply of 4 words or fewer (max_tokens, stop
// sequences) is one uncited block. usage gets `server_tool_use: {web_search_requests: 1}`
// (token counts unchanged). Streams send the server_tool_use block with its input as
// input_json_delta pieces, the result block whole in its content_block_start, and the cited block
// as content_block_start {type: "text", text: "", citations: []}, one citations_delta, then its
// text_deltas. Without the tool (or with tool_choice none) there is no search.
// `thinking: {type: "enabled"}` (or `"adaptive"`) puts a thinking block first:
//   {type: "thinking", thinking: "Considering the request.", signature: "emulated"}.
// `stop_sequences` cut the reply text before the earliest match (stop_reason
// "stop_sequence"); `max_tokens` (required) truncates the text to that many words minus the
// thinking words (stop_reason "max_tokens").
//
// Token counting (a token is a whitespace-separated word, see util.words):
//   prompt total  = 2 + words(system) + Σ over messages (words(message text) + 4), where a
//                   message's text is its text blocks, tool_result contents and
//                   JSON.stringify(tool_use input), joined by a space (tools are not counted);
//   cache_creation_input_tokens = words of the system and message blocks up to and including
//                   the last block carrying `cache_control` (a cached tool adds 0). Every
//                   request writes the cache, none reads it (cache_read_input_tokens 0), except
//                   with the `@cache-read` model control: then those words are read, not written
//                   (cache_read_input_tokens = them, cache_creation_input_tokens 0);
//   input_tokens  = prompt total − cache_creation_input_tokens;
//   output_tokens = thinking words + reply words returned (a tool_use counts the words of
//                   its JSON input).
// Validation mirrors Anthropic's 400s for what the gateway's translation must get right:
// max_tokens present, temperature within 0–1, no blank text blocks or empty messages,
// tool_use/tool_result pairing, document sources (a base64 PDF that is one, a text/plain
// text), and the thinking constraints (budget ≥ 1024 and below
// max_tokens, no temperature other than 1, no forced tool use).
import type { RequestContext } from '../context';
import { inlineDocumentFault } from '../documents';
import { jsonAnswerText, REPLY_PREFIX, type JsonAnswerFormat } from '../openai/chat';
import { answerSeed, toolArguments } from '../schema-values';
import type { ScriptedTurn } from '../scripts';
import { countWords, isRecord, randomId, words } from '../util';

export const TOOL_REPLY_PREFIX = 'Tool said: ';
export const THINKING_TEXT = 'Considering the request.';
export const THINKING_SIGNATURE = 'emulated';
const MIN_THINKING_BUDGET = 1024;
/** The one web page every emulated search finds and cites. */
export const SEARCH_RESULT = { url: 'https://example.com/emulated-search', title: 'Emulated search result', citedText: 'Emulated page text.' } as const;
/** Words of the reply left uncited before the cited block when searching ("Hello from the emulator."). */
const UNCITED_WORDS = 4;
const WEB_SEARCH_TOOL = /^web_search_\d{8}$/;

type Block = Record<string, unknown> & { type: string };
type Role = 'user' | 'assistant';
type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';
type ToolChoice = { type: 'auto' | 'any' | 'none' } | { type: 'tool'; name: string };

interface Message {
  role: Role;
  content: Block[];
}

interface MessagesRequest {
  model: string;
  maxTokens: number;
  system: Block[];
  messages: Message[];
  stopSequences: string[];
  tools: Array<Record<string, unknown> & { name: string }>;
  toolChoice: ToolChoice | undefined;
  thinking: boolean;
  stream: boolean;
  /** The server-side web search tool, when the request carries one. */
  webSearch: { name: string } | undefined;
  /** `output_config.format`: the JSON Schema the answer's text satisfies. */
  format: JsonAnswerFormat | undefined;
}

export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  output_tokens: number;
  service_tier: 'standard';
  server_tool_use?: { web_search_requests: number };
}

interface Citation {
  type: 'web_search_result_location';
  url: string;
  title: string;
  cited_text: string;
  encrypted_index: string;
}

type OutputBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  /** `pieces` are the streamed text_deltas, joining to `text`. */
  | { type: 'text'; text: string; pieces: string[]; citations?: Citation[] }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'server_tool_use'; id: string; name: string; input: Record<string, string> }
  | { type: 'web_search_tool_result'; tool_use_id: string; content: Array<Record<string, unknown>> };

interface Reply {
  id: string;
  model: string;
  blocks: OutputBlock[];
  stopReason: StopReason;
  stopSequence: string | null;
  usage: AnthropicUsage;
}

export async function createMessage(ctx: RequestContext): Promise<void> {
  const parsed = parseRequest(ctx.body, true);
  if (typeof parsed === 'string') {
    ctx.error(400, parsed);
    return;
  }
  const scripted = ctx.nextScriptedTurn(parsed.model);
  if (scripted !== undefined && 'toolCall' in scripted && !parsed.tools.some((tool) => tool.name === scripted.toolCall.name)) {
    ctx.error(400, `The scripted call of '${scripted.toolCall.name}' names no tool of this request.`);
    return;
  }
  const reply = buildReply(parsed, ctx.controls.cacheRead === true, scripted);
  if (parsed.stream) {
    await streamReply(ctx, reply);
    return;
  }
  ctx.json(200, {
    id: reply.id,
    type: 'message',
    role: 'assistant',
    model: reply.model,
    content: reply.blocks.map(wireBlock),
    stop_reason: reply.stopReason,
    stop_sequence: reply.stopSequence,
    usage: reply.usage,
  });
}

/** POST /v1/messages/count_tokens: the prompt total of the rule above. */
export function countTokens(ctx: RequestContext): void {
  const parsed = parseRequest(ctx.body, false);
  if (typeof parsed === 'string') {
    ctx.error(400, parsed);
    return;
  }
  ctx.json(200, { input_tokens: promptUsage(parsed).total });
}

// ---- reply --------------------------------------------------------------------------------

/** The reply by the rules above, or the turn a test scripted (../scripts.ts) in their place. */
function buildReply(request: MessagesRequest, cacheRead: boolean, scripted?: ScriptedTurn): Reply {
  const blocks: OutputBlock[] = [];
  let output = 0;
  if (request.thinking) {
    blocks.push({ type: 'thinking', thinking: THINKING_TEXT, signature: THINKING_SIGNATURE });
    output += countWords(THINKING_TEXT);
  }

  let stopReason: StopReason = 'end_turn';
  let stopSequence: string | null = null;
  let searches = 0;
  const last = request.messages[request.messages.length - 1];
  const toolResults = last.role === 'user' ? last.content.filter((block) => block.type === 'tool_result') : [];
  const call =
    scripted !== undefined
      ? 'toolCall' in scripted
        ? { name: scripted.toolCall.name, input: scripted.toolCall.arguments }
        : undefined
      : toolResults.length === 0
        ? toolToCall(request)
        : undefined;

  if (call !== undefined) {
    blocks.push({ type: 'tool_use', id: `toolu_${randomId(24)}`, name: call.name, input: { ...call.input } });
    output += countWords(JSON.stringify(call.input));
    stopReason = 'tool_use';
  } else {
    const searched = scripted === undefined && toolResults.length === 0 && request.webSearch !== undefined && request.toolChoice?.type !== 'none';
    let text =
      scripted !== undefined && 'text' in scripted
        ? scripted.text
        : request.format !== undefined
          ? jsonAnswerText(request.format, lastUserText(request.messages))
          : toolResults.length > 0
            ? TOOL_REPLY_PREFIX + toolResults.map((block) => contentText(block.content)).join(' ')
            : REPLY_PREFIX + lastUserText(request.messages);
    text = words(text).join(' ');
    const stop = earliestStop(text, request.stopSequences);
    if (stop !== undefined) text = text.slice(0, stop.index);
    let replyWords = words(text);
    const room = Math.max(0, request.maxTokens - output);
    if (replyWords.length > room) {
      replyWords = replyWords.slice(0, room);
      stopReason = 'max_tokens';
    } else if (stop !== undefined) {
      stopReason = 'stop_sequence';
      stopSequence = stop.sequence;
    }
    if (searched) {
      const id = `srvtoolu_${randomId(24)}`;
      blocks.push({ type: 'server_tool_use', id, name: request.webSearch!.name, input: { query: lastUserText(request.messages) } });
      const result = { type: 'web_search_result', url: SEARCH_RESULT.url, title: SEARCH_RESULT.title, encrypted_content: 'emulated', page_age: null };
      blocks.push({ type: 'web_search_tool_result', tool_use_id: id, content: [result] });
      searches = 1;
    }
    if (searched && replyWords.length > UNCITED_WORDS) {
      const citation: Citation = { type: 'web_search_result_location', url: SEARCH_RESULT.url, title: SEARCH_RESULT.title, cited_text: SEARCH_RESULT.citedText, encrypted_index: 'emulated' };
      const uncited = textBlock(replyWords.slice(0, UNCITED_WORDS));
      uncited.text += ' ';
      uncited.pieces[uncited.pieces.length - 1] += ' ';
      blocks.push(uncited, { ...textBlock(replyWords.slice(UNCITED_WORDS)), citations: [citation] });
    } else if (replyWords.length > 0) blocks.push(textBlock(replyWords));
    output += replyWords.length;
  }

  const prompt = promptUsage(request);
  return {
    id: `msg_${randomId(24)}`,
    model: request.model,
    blocks,
    stopReason,
    stopSequence,
    usage: {
      input_tokens: prompt.total - prompt.cacheWrite,
      cache_creation_input_tokens: cacheRead ? 0 : prompt.cacheWrite,
      cache_read_input_tokens: cacheRead ? prompt.cacheWrite : 0,
      cache_creation: {
        ephemeral_5m_input_tokens: cacheRead || prompt.cacheTtl === '1h' ? 0 : prompt.cacheWrite,
        ephemeral_1h_input_tokens: !cacheRead && prompt.cacheTtl === '1h' ? prompt.cacheWrite : 0,
      },
      output_tokens: output,
      service_tier: 'standard',
      ...(searches > 0 ? { server_tool_use: { web_search_requests: searches } } : {}),
    },
  };
}

function textBlock(words: string[]): OutputBlock & { type: 'text' } {
  return { type: 'text', text: words.join(' '), pieces: words.map((word, w) => (w === 0 ? word : ` ${word}`)) };
}

function toolToCall(request: MessagesRequest): { name: string; input: Record<string, unknown> } | undefined {
  const choice = request.toolChoice;
  if (request.tools.length === 0 || choice?.type === 'none') return undefined;
  const prompt = lastUserText(request.messages);
  const called = (tool: MessagesRequest['tools'][number]) => ({ name: tool.name, input: toolArguments(tool.input_schema, answerSeed(tool.name, tool.input_schema, prompt)) });
  if (choice?.type === 'tool') return called(request.tools.find((tool) => tool.name === choice.name) ?? request.tools[0]);
  if (choice?.type === 'any' || /\bweather\b/i.test(prompt)) return called(request.tools[0]);
  return undefined;
}

function earliestStop(text: string, sequences: string[]): { index: number; sequence: string } | undefined {
  let best: { index: number; sequence: string } | undefined;
  for (const sequence of sequences) {
    const index = text.indexOf(sequence);
    if (index >= 0 && (best === undefined || index < best.index)) best = { index, sequence };
  }
  return best;
}

function wireBlock(block: OutputBlock): Record<string, unknown> {
  if (block.type === 'text') return block.citations ? { type: 'text', text: block.text, citations: block.citations } : { type: 'text', text: block.text };
  return { ...block };
}

async function streamReply(ctx: RequestContext, reply: Reply): Promise<void> {
  const send = (data: Record<string, unknown> & { type: string }): Promise<boolean> => ctx.event(JSON.stringify(data), data.type);
  if (!ctx.startStream()) return;
  const { usage } = reply;
  const started = await send({
    type: 'message_start',
    message: {
      id: reply.id,
      type: 'message',
      role: 'assistant',
      model: reply.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  if (!started) return;

  for (let index = 0; index < reply.blocks.length; index++) {
    const block = reply.blocks[index];
    const skeleton =
      block.type === 'thinking'
        ? { type: 'thinking', thinking: '', signature: '' }
        : block.type === 'text'
          ? block.citations
            ? { type: 'text', text: '', citations: [] }
            : { type: 'text', text: '' }
          : block.type === 'web_search_tool_result'
            ? { ...block }
            : { type: block.type, id: block.id, name: block.name, input: {} };
    if (!(await send({ type: 'content_block_start', index, content_block: skeleton }))) return;
    if (index === 0 && !(await send({ type: 'ping' }))) return;
    for (const delta of blockDeltas(block)) {
      if (!(await send({ type: 'content_block_delta', index, delta }))) return;
    }
    if (!(await send({ type: 'content_block_stop', index }))) return;
  }

  const delta = { stop_reason: reply.stopReason, stop_sequence: reply.stopSequence };
  const finalUsage = {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    output_tokens: usage.output_tokens,
    ...(usage.server_tool_use ? { server_tool_use: usage.server_tool_use } : {}),
  };
  if (!(await send({ type: 'message_delta', delta, usage: finalUsage }))) return;
  if (!(await send({ type: 'message_stop' }))) return;
  ctx.endStream();
}

function blockDeltas(block: OutputBlock): Record<string, unknown>[] {
  if (block.type === 'thinking') {
    return [
      { type: 'thinking_delta', thinking: block.thinking },
      { type: 'signature_delta', signature: block.signature },
    ];
  }
  if (block.type === 'text') {
    const citations = (block.citations ?? []).map((citation) => ({ type: 'citations_delta', citation }));
    return [...citations, ...block.pieces.map((piece) => ({ type: 'text_delta', text: piece }))];
  }
  if (block.type === 'web_search_tool_result') return [];
  const json = JSON.stringify(block.input);
  const half = Math.floor(json.length / 2);
  return [
    { type: 'input_json_delta', partial_json: '' },
    { type: 'input_json_delta', partial_json: json.slice(0, half) },
    { type: 'input_json_delta', partial_json: json.slice(half) },
  ];
}

// ---- token counting -----------------------------------------------------------------------

interface PromptUsage {
  total: number;
  cacheWrite: number;
  cacheTtl: '5m' | '1h';
}

function promptUsage(request: MessagesRequest): PromptUsage {
  let total = 2;
  let running = 0;
  let cacheWrite = 0;
  let cacheTtl: '5m' | '1h' = '5m';
  const breakpoint = (block: Record<string, unknown>): void => {
    if (!isRecord(block.cache_control)) return;
    cacheWrite = running;
    cacheTtl = block.cache_control.ttl === '1h' ? '1h' : '5m';
  };
  for (const tool of request.tools) breakpoint(tool);
  for (const block of request.system) {
    const n = countWords(blockText(block));
    total += n;
    running += n;
    breakpoint(block);
  }
  for (const message of request.messages) {
    total += countWords(message.content.map(blockText).join(' ')) + 4;
    for (const block of message.content) {
      running += countWords(blockText(block));
      breakpoint(block);
    }
  }
  return { total, cacheWrite, cacheTtl };
}

function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'tool_result':
      return contentText(block.content);
    case 'tool_use':
      return JSON.stringify(block.input ?? {});
    default:
      return '';
  }
}

/** A string, or the text of `{type: 'text'}` blocks joined with a space. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const block of content as unknown[]) {
    if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
  }
  return texts.join(' ');
}

function lastUserText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') {
      const text = messages[i].content.filter((block) => block.type === 'text').map(blockText);
      if (text.length > 0) return text.join(' ');
    }
  }
  return '';
}

// ---- validation ---------------------------------------------------------------------------

/** The request, or the message of a 400 in Anthropic's wording. */
function parseRequest(body: unknown, needsMaxTokens: boolean): MessagesRequest | string {
  if (!isRecord(body)) return 'The request body must be a JSON object.';
  const { model, max_tokens: maxTokens, temperature } = body;
  if (typeof model !== 'string' || model === '') return 'model: Field required';
  if (needsMaxTokens && maxTokens === undefined) return 'max_tokens: Field required';
  if (needsMaxTokens && (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)) {
    return 'max_tokens: Input should be a valid integer greater than or equal to 1';
  }
  if (temperature !== undefined && (typeof temperature !== 'number' || temperature < 0 || temperature > 1)) {
    return 'temperature: Input should be less than or equal to 1';
  }

  const system = parseSystem(body.system);
  if (typeof system === 'string') return system;
  const messages = parseMessages(body.messages);
  if (typeof messages === 'string') return messages;
  const pairing = checkToolPairing(messages);
  if (pairing !== undefined) return pairing;

  let stopSequences: string[] = [];
  if (body.stop_sequences !== undefined) {
    if (!Array.isArray(body.stop_sequences) || !body.stop_sequences.every((s: unknown) => typeof s === 'string' && s !== '')) {
      return 'stop_sequences: Input should be a valid list of non-empty strings';
    }
    stopSequences = body.stop_sequences as string[];
  }

  const tools: MessagesRequest['tools'] = [];
  let webSearch: MessagesRequest['webSearch'];
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return 'tools: Input should be a valid list';
    for (let i = 0; i < body.tools.length; i++) {
      const tool: unknown = body.tools[i];
      if (!isRecord(tool) || typeof tool.name !== 'string' || tool.name === '') return `tools.${i}.name: Field required`;
      if (typeof tool.type === 'string' && WEB_SEARCH_TOOL.test(tool.type)) {
        const maxUses = tool.max_uses;
        if (maxUses !== undefined && !(typeof maxUses === 'number' && Number.isInteger(maxUses) && maxUses >= 1)) {
          return `tools.${i}.max_uses: Input should be greater than or equal to 1`;
        }
        webSearch = { name: tool.name };
        continue;
      }
      if (tool.type !== undefined && tool.type !== 'custom') return `tools.${i}.type: Input tag '${String(tool.type)}' found using 'type' does not match any of the expected tags`;
      if (!isRecord(tool.input_schema)) return `tools.${i}.input_schema: Field required`;
      tools.push({ ...tool, name: tool.name });
    }
  }

  const toolChoice = parseToolChoice(body.tool_choice, tools);
  if (typeof toolChoice === 'string') return toolChoice;

  let thinking = false;
  if (body.thinking !== undefined) {
    const config = body.thinking;
    if (!isRecord(config) || (config.type !== 'enabled' && config.type !== 'disabled' && config.type !== 'adaptive')) {
      return "thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'";
    }
    if (config.type === 'adaptive') thinking = true;
    if (config.type === 'enabled') {
      const budget = config.budget_tokens;
      if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < MIN_THINKING_BUDGET) {
        return `thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_THINKING_BUDGET}`;
      }
      if (typeof maxTokens === 'number' && budget >= maxTokens) return '`max_tokens` must be greater than `thinking.budget_tokens`.';
      if (temperature !== undefined && temperature !== 1) return '`temperature` may only be set to 1 when thinking is enabled.';
      if (toolChoice?.type === 'any' || toolChoice?.type === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
      thinking = true;
    }
  }

  let format: JsonAnswerFormat | undefined;
  if (body.output_config !== undefined) {
    if (!isRecord(body.output_config)) return 'output_config: Input should be a valid dictionary';
    const asked = body.output_config.format;
    if (asked !== undefined && asked !== null) {
      if (!isRecord(asked) || asked.type !== 'json_schema') return "output_config.format.type: Input should be 'json_schema'";
      if (!isRecord(asked.schema)) return 'output_config.format.schema: Field required';
      format = { kind: 'schema', schema: asked.schema };
    }
  }

  return {
    format,
    model,
    maxTokens: typeof maxTokens === 'number' ? maxTokens : Number.MAX_SAFE_INTEGER,
    system,
    messages,
    stopSequences,
    tools,
    toolChoice,
    thinking,
    stream: body.stream === true,
    webSearch,
  };
}

function parseSystem(system: unknown): Block[] | string {
  if (system === undefined) return [];
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  if (!Array.isArray(system)) return 'system: Input should be a valid string or list of text blocks';
  const blocks: Block[] = [];
  for (let i = 0; i < system.length; i++) {
    const block: unknown = system[i];
    if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string') return `system.${i}: Input should be a text block`;
    if (block.text.trim() === '') return 'system: text content blocks must contain non-whitespace text';
    blocks.push({ ...block, type: 'text' });
  }
  return blocks;
}

function parseMessages(value: unknown): Message[] | string {
  if (value === undefined) return 'messages: Field required';
  if (!Array.isArray(value)) return 'messages: Input should be a valid list';
  if (value.length === 0) return 'messages: at least one message is required';
  const messages: Message[] = [];
  for (let i = 0; i < value.length; i++) {
    const message: unknown = value[i];
    if (!isRecord(message)) return `messages.${i}: Input should be a valid dictionary`;
    if (message.role !== 'user' && message.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    let content: Block[];
    if (typeof message.content === 'string') {
      content = [{ type: 'text', text: message.content }];
    } else if (Array.isArray(message.content)) {
      content = [];
      for (let j = 0; j < message.content.length; j++) {
        const block: unknown = message.content[j];
        if (!isRecord(block) || typeof block.type !== 'string') return `messages.${i}.content.${j}: Input should be a content block`;
        content.push({ ...block, type: block.type });
      }
    } else {
      return `messages.${i}.content: Field required`;
    }
    const isFinalAssistant = i === value.length - 1 && message.role === 'assistant';
    if (content.length === 0 && !isFinalAssistant) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
    for (let j = 0; j < content.length; j++) {
      const block = content[j];
      if (block.type === 'text' && (typeof block.text !== 'string' || block.text.trim() === '')) {
        return `messages.${i}: text content blocks must contain non-whitespace text`;
      }
      const documentIssue = block.type === 'document' ? checkDocument(block, `messages.${i}.content.${j}.document`) : undefined;
      if (documentIssue !== undefined) return documentIssue;
    }
    messages.push({ role: message.role, content });
  }
  return messages;
}

/** A document block's source as Anthropic checks it: a base64 PDF, a plain text, or one it fetches or reads elsewhere. */
function checkDocument(block: Block, at: string): string | undefined {
  const source = block.source;
  if (!isRecord(source)) return `${at}.source: Field required`;
  switch (source.type) {
    case 'base64': {
      if (source.media_type !== 'application/pdf') return `${at}.source.base64.media_type: Input should be 'application/pdf'`;
      const fault = inlineDocumentFault('application/pdf', source.data);
      if (fault === 'base64') return `${at}.source.base64.data: Invalid base64 data`;
      return fault === 'pdf' ? 'The PDF specified was not valid.' : undefined;
    }
    case 'text':
      if (source.media_type !== 'text/plain') return `${at}.source.text.media_type: Input should be 'text/plain'`;
      return typeof source.data === 'string' ? undefined : `${at}.source.text.data: Input should be a valid string`;
    case 'url':
    case 'content':
    case 'file':
      return undefined;
    default:
      return `${at}.source: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', 'content', 'file', 'text', 'url'`;
  }
}

/** Every tool_use needs a tool_result in the next (user) message, and every tool_result a tool_use. */
function checkToolPairing(messages: Message[]): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message.role === 'assistant') {
      const ids = message.content.filter((block) => block.type === 'tool_use').map((block) => String(block.id));
      if (ids.length === 0 || i === messages.length - 1) continue;
      const next = messages[i + 1];
      const answered = new Set(next.content.filter((block) => block.type === 'tool_result').map((block) => String(block.tool_use_id)));
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
      const firstOther = next.content.findIndex((block) => block.type !== 'tool_result');
      const lastResult = next.content.map((block) => block.type).lastIndexOf('tool_result');
      if (firstOther >= 0 && firstOther < lastResult) {
        return `messages.${i + 1}: \`tool_result\` blocks must come first in the message content, before any other blocks.`;
      }
    } else {
      const previous = i > 0 ? messages[i - 1] : undefined;
      const known = new Set(previous?.role === 'assistant' ? previous.content.filter((b) => b.type === 'tool_use').map((b) => String(b.id)) : []);
      for (let j = 0; j < message.content.length; j++) {
        const block = message.content[j];
        if (block.type === 'tool_result' && !known.has(String(block.tool_use_id))) {
          return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
    }
  }
  return undefined;
}

function parseToolChoice(value: unknown, tools: MessagesRequest['tools']): ToolChoice | undefined | string {
  if (value === undefined) return undefined;
  if (!isRecord(value)) return 'tool_choice: Input should be an object';
  switch (value.type) {
    case 'auto':
    case 'any':
    case 'none':
      return { type: value.type };
    case 'tool':
      if (typeof value.name !== 'string' || !tools.some((tool) => tool.name === value.name)) {
        return `tool_choice.name: Tool '${String(value.name)}' not found in tools`;
      }
      return { type: 'tool', name: value.name };
    default:
      return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'";
  }
}
