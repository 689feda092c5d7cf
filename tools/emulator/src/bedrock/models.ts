// Bedrock's model calls, answered by the emulator's Anthropic Messages handler: InvokeModel takes
// the Messages body itself (no `model`, `anthropic_version: bedrock-2023-05-31`), Converse is read
// as a Messages request and its answer and events written back in Converse's shape. Streams are
// event-stream frames; `streamException` makes the first frame that exception instead.
import type { OutgoingHttpHeaders } from 'node:http';
import { createMessage } from '../anthropic/messages';
import { RequestContext } from '../context';
import { isRecord } from '../util';
import { chunkFrame, eventFrame, exceptionFrame, STREAM_EXCEPTION_MESSAGES } from './event-frames';
import { bedrockError, refuse } from './errors';

const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';
const CONVERSE_DEFAULT_MAX_TOKENS = 4096;

/** What a Bedrock call makes of the Anthropic handler's answer: the whole answer's JSON, and the frames of each streamed event. */
interface AnswerShape {
  answer(message: Record<string, unknown>): unknown;
  frames(eventJson: string): Buffer[];
}

/** A context over the same exchange whose Anthropic answer is written in Bedrock's shape. */
class BedrockAnswerContext extends RequestContext {
  private streamOpen = false;
  private framesWritten = 0;

  constructor(
    parent: RequestContext,
    body: unknown,
    private readonly shape: AnswerShape,
    private readonly streamException: string | undefined,
  ) {
    // The router reads no controls from Bedrock's path: the route put them in `controls`.
    super(parent.req, parent.res, parent.format, parent.path, body, parent.chunkDelayMs || (parent.controls.chunkDelayMs ?? 0), parent.requestId);
    this.params = parent.params;
  }

  override json(status: number, body: unknown, headers?: OutgoingHttpHeaders): void {
    if (status >= 400) {
      const message = isRecord(body) && typeof body.message === 'string' ? body.message : bedrockError(status).message;
      return refuse(this, { status, type: bedrockError(status).type, message });
    }
    super.json(status, this.shape.answer(body as Record<string, unknown>), headers);
  }

  override startStream(): boolean {
    if (this.closed || this.res.headersSent) return false;
    this.res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': this.requestId, 'x-amzn-bedrock-content-type': 'application/json' });
    if (this.streamException !== undefined) {
      this.res.end(exceptionFrame(this.streamException, STREAM_EXCEPTION_MESSAGES[this.streamException] ?? 'The request failed.'));
      return false;
    }
    this.streamOpen = true;
    return true;
  }

  override async event(data: string): Promise<boolean> {
    if (!this.streamOpen || this.closed) return false;
    if (this.framesWritten > 0 && this.chunkDelayMs > 0 && !(await this.sleep(this.chunkDelayMs))) return false;
    for (const frame of this.shape.frames(data)) {
      this.framesWritten++;
      if (!this.res.write(frame)) await new Promise<void>((resolve) => (this.res.once('drain', resolve), this.res.once('close', resolve)));
      if (this.closed) return false;
    }
    return true;
  }

  override endStream(): void {
    if (!this.closed) this.res.end();
  }
}

/** InvokeModel / InvokeModelWithResponseStream of an Anthropic model. */
export async function invokeModel(ctx: RequestContext, model: string, stream: boolean, streamException: string | undefined): Promise<void> {
  const body = ctx.body;
  if (!isRecord(body)) return refuse(ctx, { status: 400, type: 'ValidationException', message: 'Malformed input request, please reformat your input and try again.' });
  if (!/^(?:[a-z]{2,6}\.)?anthropic\./.test(model)) return refuse(ctx, { status: 400, type: 'ValidationException', message: `The emulator serves InvokeModel for Anthropic models only, not ${model}; use Converse.` });
  if (body.anthropic_version !== BEDROCK_ANTHROPIC_VERSION) return refuse(ctx, { status: 400, type: 'ValidationException', message: `Malformed input request: anthropic_version must be ${BEDROCK_ANTHROPIC_VERSION}` });
  for (const key of ['model', 'stream']) {
    if (key in body) return refuse(ctx, { status: 400, type: 'ValidationException', message: `Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.` });
  }
  if (body.anthropic_beta !== undefined && !(Array.isArray(body.anthropic_beta) && body.anthropic_beta.every((beta) => typeof beta === 'string'))) {
    return refuse(ctx, { status: 400, type: 'ValidationException', message: 'Malformed input request: anthropic_beta must be a list of strings' });
  }
  const { anthropic_version: _version, anthropic_beta: _beta, ...messages } = body;
  const shape: AnswerShape = { answer: (message) => message, frames: (json) => [chunkFrame(json)] };
  await createMessage(new BedrockAnswerContext(ctx, { ...messages, model, stream }, shape, streamException));
}

/** Converse / ConverseStream of any model. */
export async function converse(ctx: RequestContext, model: string, stream: boolean, streamException: string | undefined): Promise<void> {
  const request = messagesRequestOf(ctx.body);
  if (typeof request === 'string') return refuse(ctx, { status: 400, type: 'ValidationException', message: request });
  await createMessage(new BedrockAnswerContext(ctx, { ...request, model, stream }, new ConverseShape(), streamException));
}

/** A Converse request as the Messages request it says, or a ValidationException's message. */
function messagesRequestOf(body: unknown): Record<string, unknown> | string {
  if (!isRecord(body) || !Array.isArray(body.messages)) return 'Malformed input request: messages is required';
  const messages: Array<{ role: string; content: Array<Record<string, unknown>> }> = [];
  for (const [m, message] of (body.messages as unknown[]).entries()) {
    if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant') || !Array.isArray(message.content)) return `messages.${m}: a message needs a role (user or assistant) and a content list`;
    const content: Array<Record<string, unknown>> = [];
    for (const [b, block] of (message.content as unknown[]).entries()) {
      const at = `messages.${m}.content.${b}`;
      if (!isRecord(block)) return `${at}: a content block must be an object`;
      if (typeof block.text === 'string') content.push({ type: 'text', text: block.text });
      else if (isRecord(block.image) && isRecord(block.image.source) && typeof block.image.source.bytes === 'string') {
        content.push({ type: 'image', source: { type: 'base64', media_type: `image/${String(block.image.format)}`, data: block.image.source.bytes } });
      } else if (isRecord(block.toolUse)) content.push({ type: 'tool_use', id: block.toolUse.toolUseId, name: block.toolUse.name, input: block.toolUse.input });
      else if (isRecord(block.toolResult) && Array.isArray(block.toolResult.content)) {
        const texts = (block.toolResult.content as unknown[]).filter((part): part is { text: string } => isRecord(part) && typeof part.text === 'string');
        content.push({ type: 'tool_result', tool_use_id: block.toolResult.toolUseId, content: texts.map((part) => ({ type: 'text', text: part.text })) });
      } else return `${at}: the emulator reads text, image, toolUse and toolResult blocks`;
    }
    messages.push({ role: message.role, content });
  }
  const request: Record<string, unknown> = { messages };
  if (Array.isArray(body.system)) request.system = (body.system as unknown[]).filter(isRecord).map((block) => ({ type: 'text', text: block.text }));
  const inference = isRecord(body.inferenceConfig) ? body.inferenceConfig : {};
  request.max_tokens = inference.maxTokens ?? CONVERSE_DEFAULT_MAX_TOKENS;
  if (inference.temperature !== undefined) request.temperature = inference.temperature;
  if (inference.stopSequences !== undefined) request.stop_sequences = inference.stopSequences;
  if (isRecord(body.toolConfig)) {
    const tools = Array.isArray(body.toolConfig.tools) ? (body.toolConfig.tools as unknown[]) : [];
    if (tools.length === 0) return 'toolConfig.tools: at least one tool is required';
    request.tools = tools.map((tool) => {
      const spec = isRecord(tool) && isRecord(tool.toolSpec) ? tool.toolSpec : {};
      const schema = isRecord(spec.inputSchema) ? spec.inputSchema.json : undefined;
      return { name: spec.name, ...(spec.description !== undefined && { description: spec.description }), input_schema: schema ?? { type: 'object' } };
    });
    const choice = body.toolConfig.toolChoice;
    if (isRecord(choice)) request.tool_choice = isRecord(choice.tool) ? { type: 'tool', name: choice.tool.name } : isRecord(choice.any) ? { type: 'any' } : { type: 'auto' };
  }
  return request;
}

const STOP_REASONS: Readonly<Record<string, string>> = { end_turn: 'end_turn', tool_use: 'tool_use', max_tokens: 'max_tokens', stop_sequence: 'stop_sequence' };

/** Anthropic's usage as Converse reports it: cache counts apart from inputTokens, present when not 0. */
function converseUsage(usage: Record<string, unknown>): Record<string, number> {
  const input = Number(usage.input_tokens ?? 0);
  const output = Number(usage.output_tokens ?? 0);
  const cacheRead = Number(usage.cache_read_input_tokens ?? 0);
  const cacheWrite = Number(usage.cache_creation_input_tokens ?? 0);
  return { inputTokens: input, outputTokens: output, totalTokens: input + output + cacheRead + cacheWrite, ...(cacheRead > 0 && { cacheReadInputTokens: cacheRead }), ...(cacheWrite > 0 && { cacheWriteInputTokens: cacheWrite }) };
}

/** Anthropic's message and events in Converse's shape. */
class ConverseShape implements AnswerShape {
  private usage: Record<string, unknown> = {};
  private stopReason = 'end_turn';
  private readonly started = Date.now();

  answer(message: Record<string, unknown>): unknown {
    const content = (message.content as Array<Record<string, unknown>>).flatMap((block): Array<Record<string, unknown>> =>
      block.type === 'text' ? [{ text: block.text }] : block.type === 'tool_use' ? [{ toolUse: { toolUseId: block.id, name: block.name, input: block.input } }] : [],
    );
    return {
      output: { message: { role: 'assistant', content } },
      stopReason: STOP_REASONS[String(message.stop_reason)] ?? 'end_turn',
      usage: converseUsage(message.usage as Record<string, unknown>),
      metrics: { latencyMs: Date.now() - this.started },
    };
  }

  frames(eventJson: string): Buffer[] {
    const event = JSON.parse(eventJson) as Record<string, unknown> & { type: string };
    const index = event.index as number;
    switch (event.type) {
      case 'message_start':
        this.usage = { ...((event.message as Record<string, unknown>).usage as Record<string, unknown>) };
        return [eventFrame('messageStart', { role: 'assistant' })];
      case 'content_block_start': {
        const block = event.content_block as Record<string, unknown>;
        return block.type === 'tool_use' ? [eventFrame('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: block.id, name: block.name } } })] : [];
      }
      case 'content_block_delta': {
        const delta = event.delta as Record<string, unknown>;
        if (delta.type === 'text_delta') return [eventFrame('contentBlockDelta', { contentBlockIndex: index, delta: { text: delta.text } })];
        if (delta.type === 'input_json_delta' && delta.partial_json !== '') return [eventFrame('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: delta.partial_json } } })];
        return [];
      }
      case 'content_block_stop':
        return [eventFrame('contentBlockStop', { contentBlockIndex: index })];
      case 'message_delta':
        Object.assign(this.usage, event.usage);
        this.stopReason = STOP_REASONS[String((event.delta as Record<string, unknown>).stop_reason)] ?? 'end_turn';
        return [];
      case 'message_stop':
        return [eventFrame('messageStop', { stopReason: this.stopReason }), eventFrame('metadata', { usage: converseUsage(this.usage), metrics: { latencyMs: Date.now() - this.started } })];
      default:
        return [];
    }
  }
}
