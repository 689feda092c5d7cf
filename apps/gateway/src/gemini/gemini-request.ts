import type { CatalogueModel, ChatCompletionRequestDto, GeminiGenerateContentRequestDto, GeminiPromptDto, GeminiRequestContent, GeminiRequestPart } from '@igw/contracts';
import { cannotCarry, refuseField, translateForNative } from '../chat/front-translation';

// Google's GenerateContentRequest → the gateway's internal (OpenAI-shaped) chat request, which
// the chat pipeline runs as it runs chat completions. Google sources get the client's request
// natively instead (gemini-native.ts): for them the translation decides validation, the hold
// and the count of a stream cut short. Decisions beyond field renames:
// - `systemInstruction` becomes a system message; `model` turns assistant messages.
// - Gemini's calls carry no ids: each `functionCall` of a model turn gets one (its own `id`
//   when it has one), and each `functionResponse` is the answer to the earliest unanswered
//   call of that name; the responses become `tool` messages ahead of the turn's other parts.
// - A `functionCall`'s `thoughtSignature` rides along as the chat request's
//   `extra_content.google.thought_signature` (what the Gemini chat adapter sends back); thought
//   parts are dropped.
// - Function declarations' `parameters` are Google's Schema (types in capitals): sent as the
//   JSON Schema it stands for; `parametersJsonSchema` as it is. `googleSearch` is the chat
//   request's `enable_search`; other built-in tools are left out and named.
// - `toolConfig.functionCallingConfig`: AUTO, ANY and NONE are `auto`, `required` and `none`;
//   ANY with `allowedFunctionNames` forces that function (several: `allowed_tools`).
// - `generationConfig`: `maxOutputTokens` is a most, lowered to the model's output limit;
//   `responseMimeType: application/json` with a schema is `response_format: json_schema`
//   (without one, `json_object`); `thinkingConfig`'s budget is `reasoning.max_tokens` where the
//   source reads a budget (Google, Anthropic), else an effort, as `thinkingLevel` is;
//   `topK` and `safetySettings` have no equivalent and are not sent.
// - `inlineData`: images become image parts, PDFs and text files `file` parts, audio
//   `input_audio`; `fileData` by URL is an image part for an image, else refused.

type ChatMessage = Record<string, unknown>;
type ChatPart = Record<string, unknown>;

/** Budgets up to these many tokens ask for that effort from a source that takes efforts only. */
const EFFORT_BY_BUDGET: ReadonlyArray<[number, 'low' | 'medium']> = [
  [2048, 'low'],
  [8192, 'medium'],
];
const EFFORT_OF_LEVEL: Readonly<Record<string, 'low' | 'medium' | 'high'>> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high' };
const AUDIO_FORMATS: Readonly<Record<string, string>> = { 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/mp3': 'mp3', 'audio/mpeg': 'mp3' };

/** What the translation reads of the catalogue entry: its type (the source's format), whether it reasons, its output limit. */
export type GeminiTarget = Pick<CatalogueModel, 'type' | 'capabilities'> & { info?: Pick<CatalogueModel['info'], 'outputMax'> };

/** What a request asks of the front beyond the chat request: whether thoughts are shown, and the built-in tools left out. */
export interface GeminiAsked {
  includeThoughts: boolean;
  droppedTools: string[];
}

/**
 * The chat request for a model some of whose sources take the request natively: parts the chat
 * request cannot carry are left out of it, and `untranslatable` says why a source that needs the
 * translation cannot be sent it.
 */
export function chatRequestForNative(body: GeminiGenerateContentRequestDto, modelName: string, model: GeminiTarget, stream: boolean): { request: ChatCompletionRequestDto; untranslatable?: string } {
  return translateForNative(() => chatRequestOf(body, modelName, model, stream));
}

/**
 * A null field of the request, or of its configs, as the field left out: proto3 JSON, which
 * Google's API reads, has no null but the default. Validation lets a null optional field by,
 * so the validated request (the gateway's own copy) loses them here, before anything reads it.
 */
export function nullsAsAbsent<T extends object>(body: T): T {
  const drop = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
    for (const [name, field] of Object.entries(value)) if (field === null) delete (value as Record<string, unknown>)[name];
  };
  const request = body as Record<string, unknown>;
  drop(request);
  drop(request.generationConfig);
  drop((request.generationConfig as Record<string, unknown> | undefined)?.thinkingConfig);
  drop(request.toolConfig);
  drop((request.toolConfig as Record<string, unknown> | undefined)?.functionCallingConfig);
  if (request.generateContentRequest !== undefined) nullsAsAbsent(request.generateContentRequest as object);
  return body;
}

/** Refuses what no source may be sent through the gateway (the upstream account's cache). */
export function refuseUnservable(body: GeminiGenerateContentRequestDto): void {
  if (body.cachedContent !== undefined) {
    refuseField('cachedContent', "a cached content of the upstream account cannot be used through this gateway (it is shared by every client): send the contents themselves");
  }
}

/** The internal chat request for a generateContent request (`modelName` is the path's model). */
export function chatRequestOf(body: GeminiGenerateContentRequestDto, modelName: string, model: GeminiTarget, stream: boolean): ChatCompletionRequestDto {
  const request = promptOf(body, modelName, model);
  const config = body.generationConfig;
  if (stream) request.stream = true;
  if (config !== undefined) {
    const outputMax = model.info?.outputMax;
    if (config.maxOutputTokens !== undefined) request.max_tokens = outputMax && config.maxOutputTokens > outputMax ? outputMax : config.maxOutputTokens;
    if (config.temperature !== undefined) request.temperature = config.temperature;
    if (config.topP !== undefined) request.top_p = config.topP;
    if (config.stopSequences !== undefined && config.stopSequences.length > 0) request.stop = config.stopSequences;
    if (config.candidateCount !== undefined && config.candidateCount > 1) request.n = config.candidateCount;
    if (config.presencePenalty !== undefined) request.presence_penalty = config.presencePenalty;
    if (config.frequencyPenalty !== undefined) request.frequency_penalty = config.frequencyPenalty;
    if (config.seed !== undefined) request.seed = config.seed;
    if (config.responseLogprobs === true) {
      request.logprobs = true;
      if (config.logprobs !== undefined) request.top_logprobs = config.logprobs;
    }
    const format = responseFormatOf(config);
    if (format !== undefined) request.response_format = format;
  }
  return request as unknown as ChatCompletionRequestDto;
}

/** What a request asks of the answer's shape (thought parts) and which built-in tools no source here runs. */
export function askedOf(body: GeminiPromptDto & Pick<GeminiGenerateContentRequestDto, 'generationConfig'>): GeminiAsked {
  const droppedTools: string[] = [];
  for (const tool of body.tools ?? []) {
    for (const kind of Object.keys(tool)) if (kind !== 'functionDeclarations' && kind !== 'googleSearch') droppedTools.push(kind);
  }
  return { includeThoughts: body.generationConfig?.thinkingConfig?.includeThoughts === true, droppedTools };
}

function responseFormatOf(config: NonNullable<GeminiGenerateContentRequestDto['generationConfig']>): Record<string, unknown> | undefined {
  if (config.responseMimeType !== 'application/json') {
    if (config.responseSchema !== undefined || config.responseJsonSchema !== undefined) {
      refuseField('generationConfig.responseMimeType', `a response schema needs responseMimeType 'application/json'. Received ${config.responseMimeType === undefined ? 'nothing' : `'${config.responseMimeType}'`}`);
    }
    return undefined;
  }
  const schema = config.responseJsonSchema ?? (config.responseSchema !== undefined ? jsonSchemaOf(config.responseSchema) : undefined);
  if (schema === undefined) return { type: 'json_object' };
  return { type: 'json_schema', json_schema: { name: 'response', schema } };
}

/**
 * Google's Schema (an OpenAPI 3.0 subset: `type` in capitals, `nullable`) as the JSON Schema it
 * stands for; every other keyword is the same in both.
 */
export function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (typeof schema !== 'object' || schema === null) return schema;
  const converted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === 'type' && typeof value === 'string') converted.type = value.toLowerCase();
    else if (key === 'nullable') continue;
    else if (key === 'properties' && typeof value === 'object' && value !== null) {
      converted.properties = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, inner]) => [name, jsonSchemaOf(inner)]));
    } else if (key === 'items' || key === 'anyOf' || key === 'oneOf' || key === 'allOf' || key === 'not' || key === 'additionalProperties') converted[key] = jsonSchemaOf(value);
    else converted[key] = value;
  }
  if ((schema as Record<string, unknown>).nullable === true && typeof converted.type === 'string') converted.type = [converted.type, 'null'];
  return converted;
}

/** The prompt part of the chat request (what countTokens counts): model, messages, tools and thinking. */
export function promptOf(body: GeminiPromptDto & Pick<GeminiGenerateContentRequestDto, 'generationConfig'>, modelName: string, model: GeminiTarget): Record<string, unknown> {
  const messages: ChatMessage[] = [];
  if (body.systemInstruction !== undefined) {
    const text = (body.systemInstruction.parts ?? []).map((part, index) => systemText(part, `systemInstruction.parts[${index}]`)).join('');
    if (text !== '') messages.push({ role: 'system', content: text });
  }
  const calls = new CallIds();
  body.contents.forEach((content, index) => {
    if (content.role === 'model') pushModel(messages, content, `contents[${index}]`, calls, index);
    else pushUser(messages, content, `contents[${index}]`, calls);
  });
  const request: Record<string, unknown> = { model: modelName, messages };
  const declarations = (body.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
  if (declarations.length > 0) {
    request.tools = declarations.map((declaration) => {
      const definition: Record<string, unknown> = { name: declaration.name, parameters: declaration.parametersJsonSchema ?? (declaration.parameters !== undefined ? jsonSchemaOf(declaration.parameters) : { type: 'object', properties: {} }) };
      if (declaration.description !== undefined) definition.description = declaration.description;
      return { type: 'function', function: definition };
    });
    const choice = toolChoiceOf(body.toolConfig?.functionCallingConfig);
    if (choice !== undefined) request.tool_choice = choice;
  }
  if ((body.tools ?? []).some((tool) => tool.googleSearch !== undefined)) request.enable_search = true;
  Object.assign(request, reasoningOf(body, model));
  return request;
}

function systemText(part: GeminiRequestPart, path: string): string {
  if (part.text !== undefined) return part.text;
  return cannotCarry(path, 'a system instruction carries text parts only through this gateway') ?? '';
}

function toolChoiceOf(config: { mode?: string; allowedFunctionNames?: string[] } | undefined): unknown {
  switch (config?.mode) {
    case 'AUTO':
      return 'auto';
    case 'NONE':
      return 'none';
    case 'ANY':
    case 'VALIDATED': {
      const names = config.allowedFunctionNames ?? [];
      if (names.length === 1) return { type: 'function', function: { name: names[0] } };
      if (names.length > 1) return { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: names.map((name) => ({ type: 'function', function: { name } })) } };
      return 'required';
    }
    default:
      return undefined;
  }
}

function reasoningOf(body: Pick<GeminiGenerateContentRequestDto, 'generationConfig'>, model: GeminiTarget): Record<string, unknown> {
  const thinking = body.generationConfig?.thinkingConfig;
  if (thinking === undefined) return {};
  const takesBudget = model.type.startsWith('anthropic/') || model.type.startsWith('google/');
  const reasons = takesBudget || (model.capabilities ?? []).includes('reasoning');
  if (!reasons) return {};
  const budget = thinking.thinkingBudget;
  const exclude = thinking.includeThoughts === false ? { exclude: true } : {};
  if (budget === 0) return takesBudget ? { reasoning: { effort: 'none', ...exclude } } : { reasoning_effort: 'none' };
  if (budget !== undefined && budget > 0) {
    if (takesBudget) return { reasoning: { max_tokens: budget, ...exclude } };
    return { reasoning_effort: EFFORT_BY_BUDGET.find(([most]) => budget <= most)?.[1] ?? 'high' };
  }
  const level = thinking.thinkingLevel !== undefined ? EFFORT_OF_LEVEL[thinking.thinkingLevel.toLowerCase()] : undefined;
  if (level !== undefined) return takesBudget ? { reasoning: { effort: level, ...exclude } } : { reasoning_effort: level };
  return takesBudget && thinking.includeThoughts === false ? { reasoning: { exclude: true } } : {};
}

/** Ids for Gemini's calls, and which call each response answers (the earliest unanswered one of its name). */
class CallIds {
  private readonly unanswered = new Map<string, string[]>();
  private generated = 0;

  called(name: string, own: unknown): string {
    const id = typeof own === 'string' && own !== '' ? own : `call_${(this.generated++).toString(36)}`;
    const list = this.unanswered.get(name) ?? [];
    list.push(id);
    this.unanswered.set(name, list);
    return id;
  }

  answered(name: string, own: unknown): string | undefined {
    const list = this.unanswered.get(name) ?? [];
    const at = typeof own === 'string' && own !== '' ? list.indexOf(own) : 0;
    if (list.length === 0 || at < 0) return undefined;
    return list.splice(at, 1)[0];
  }
}

function pushModel(messages: ChatMessage[], content: GeminiRequestContent, path: string, calls: CallIds, _index: number): void {
  const texts: string[] = [];
  const toolCalls: Array<Record<string, unknown>> = [];
  content.parts.forEach((part, index) => {
    const at = `${path}.parts[${index}]`;
    if (part.thought === true) return;
    if (part.text !== undefined) texts.push(part.text);
    else if (part.functionCall !== undefined) {
      const call = part.functionCall;
      const toolCall: Record<string, unknown> = { id: calls.called(call.name, call.id), type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } };
      if (part.thoughtSignature !== undefined && part.thoughtSignature !== '') toolCall.extra_content = { google: { thought_signature: part.thoughtSignature } };
      toolCalls.push(toolCall);
    } else cannotCarry(at, `a ${partKind(part)} part cannot be sent in a model turn by this gateway (text and functionCall parts can)`);
  });
  const message: ChatMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (texts.length > 0 || toolCalls.length > 0) messages.push(message);
}

function pushUser(messages: ChatMessage[], content: GeminiRequestContent, path: string, calls: CallIds): void {
  const parts: ChatPart[] = [];
  content.parts.forEach((part, index) => {
    const at = `${path}.parts[${index}]`;
    if (part.thought === true) return;
    if (part.text !== undefined) parts.push({ type: 'text', text: part.text });
    else if (part.functionResponse !== undefined) messages.push(toolMessage(part.functionResponse, `${at}.functionResponse`, calls));
    else if (part.inlineData !== undefined) {
      const media = inlinePart(part.inlineData, `${at}.inlineData`);
      if (media) parts.push(media);
    } else if (part.fileData !== undefined) {
      const { mimeType, fileUri } = part.fileData;
      if (typeof mimeType === 'string' && mimeType.startsWith('image/') && /^https?:\/\//i.test(fileUri)) parts.push({ type: 'image_url', image_url: { url: fileUri } });
      else cannotCarry(`${at}.fileData`, 'only an image by http(s) URL (mimeType image/*) can be sent by file URI through this gateway: send other files as inlineData');
    } else cannotCarry(at, `a ${partKind(part)} part cannot be sent in a user turn by this gateway`);
  });
  if (parts.length === 0) return;
  // A lone text part is sent as a string, as most chat clients send it (and as every source takes it).
  messages.push({ role: 'user', content: parts.length === 1 && parts[0].type === 'text' ? parts[0].text : parts });
}

function toolMessage(response: NonNullable<GeminiRequestPart['functionResponse']>, path: string, calls: CallIds): ChatMessage {
  const id = calls.answered(response.name, response.id);
  if (id === undefined) refuseField(`${path}.name`, `a functionResponse for ${JSON.stringify(response.name)} answers no earlier functionCall of that name`);
  const result = response.response ?? {};
  // Google's convention is {output} or {error}, else any object: the tool message carries its JSON unless it is one string.
  const output = typeof result.output === 'string' && Object.keys(result).length === 1 ? result.output : JSON.stringify(result);
  return { role: 'tool', tool_call_id: id, content: output };
}

function inlinePart(data: NonNullable<GeminiRequestPart['inlineData']>, path: string): ChatPart | undefined {
  const mime = data.mimeType.toLowerCase();
  if (mime.startsWith('image/')) return { type: 'image_url', image_url: { url: `data:${mime};base64,${data.data}` } };
  if (mime === 'application/pdf' || mime.startsWith('text/')) return { type: 'file', file: { file_data: `data:${mime};base64,${data.data}` } };
  const format = AUDIO_FORMATS[mime];
  if (format !== undefined) return { type: 'input_audio', input_audio: { data: data.data, format } };
  return cannotCarry(`${path}.mimeType`, `'${data.mimeType}' cannot be sent by this gateway to this model's sources (images, PDFs, text files and WAV or MP3 audio can)`);
}

function partKind(part: GeminiRequestPart): string {
  return Object.keys(part).find((key) => key !== 'thought' && key !== 'thoughtSignature') ?? 'empty';
}
