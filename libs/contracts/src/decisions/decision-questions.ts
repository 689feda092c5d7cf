import { isRecord, describeWrongType, describeWrongValue, expectedOneOf, relativeIssueLine } from '@igw/validation';

/**
 * The two request shapes of POST /v1/decisions (spec: "POST /v1/decisions") and their bounds.
 * The Jev shape (`state`, `questions` as an object, `noul`) is what decision models such as
 * typesafe/jev take; the Luna shape (`input`, `questions` as an array, `predicate`) is what
 * openai/gpt-6-luna takes. Both become one list of {@link DecisionQuestion}s.
 */
export type DecisionShape = 'jev' | 'luna';

export const MAX_DECISION_QUESTIONS = 64;
export const MIN_CHOICE_OPTIONS = 2;
export const MAX_CHOICE_OPTIONS = 255;
export const MIN_SCORE_LEVELS = 2;
/** Ten levels have the single-token labels 0-9, which the chat-logprobs fallback relies on. */
export const MAX_SCORE_LEVELS = 10;
export const MAX_INSTRUCTIONS_CHARS = 8_000;
export const MAX_DESCRIPTION_CHARS = 2_000;
export const MAX_DECISION_ASSETS = 8;
/** Decoded bytes of one image asset (4 MiB). */
export const MAX_ASSET_BYTES = 4 * 1024 * 1024;
export const MAX_STATE_TEXTS = 256;
export const MAX_LUNA_MESSAGES = 64;
export const MAX_LUNA_PARTS = 64;
export const IMAGE_ASSET_FORMATS = ['png', 'jpeg', 'webp', 'gif'] as const;
export type ImageAssetFormat = (typeof IMAGE_ASSET_FORMATS)[number];
export const JEV_QUESTION_TYPES = ['noul', 'choice', 'score', 'box'] as const;
export const LUNA_QUESTION_TYPES = ['predicate', 'choice', 'score'] as const;
/** Names of questions, options and assets: they appear in answer keys and in error paths. */
export const DECISION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const NAME_TEXT = '1-64 letters, digits, underscores or dashes';

/** A question of either shape, as the decisions service answers it. */
export type DecisionQuestion =
  | { name: string; type: 'noul'; instructions: string; criteria?: { true?: string; false?: string } }
  | { name: string; type: 'choice'; instructions: string; options: Array<{ key: string; description: string }> }
  /** `levels`: descriptions, lowest first; `labels`: the Luna shape's level labels, which its answers name. */
  | { name: string; type: 'score'; instructions: string; levels: string[]; labels?: string[] }
  | { name: string; type: 'box'; instructions: string };

export interface ImageAsset {
  type: 'image';
  format: ImageAssetFormat;
  data_base64: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** The first bytes each format starts with (WebP: `RIFF....WEBP`, checked apart). */
const SIGNATURES: Record<ImageAssetFormat, (bytes: Buffer) => boolean> = {
  png: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  jpeg: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  gif: (b) => b.subarray(0, 4).toString('latin1') === 'GIF8',
  webp: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
};

/** Decoded size of base64 text, without decoding it. */
export function base64DecodedBytes(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}

/** The issues of image bytes in base64 that claim a format: size, alphabet and the format's signature. */
export function imageDataIssues(data: unknown, format: ImageAssetFormat): string[] {
  if (typeof data !== 'string' || data === '') return [`Expected non-empty base64 image data. Received ${describeWrongType(data)}`];
  if (data.length % 4 !== 0 || !BASE64.test(data)) return ['Expected base64 image data (A-Z, a-z, 0-9, +, / and = padding, a multiple of 4 characters). Received other characters'];
  const bytes = base64DecodedBytes(data);
  if (bytes > MAX_ASSET_BYTES) return [`Expected at most ${MAX_ASSET_BYTES} bytes of image data. Received ${bytes} bytes`];
  const head = Buffer.from(data.slice(0, 16), 'base64');
  if (!SIGNATURES[format](head)) return [`Expected ${format} image data. Received bytes that do not start as a ${format} file does`];
  return [];
}

function nameIssue(name: string, what: string): string | undefined {
  return DECISION_NAME.test(name) ? undefined : `Expected ${what} names of ${NAME_TEXT}. Received ${describeWrongValue(name)}`;
}

function textIssues(path: string, value: unknown, max: number, required: boolean): string[] {
  if (value === undefined && !required) return [];
  if (typeof value !== 'string' || (required && value.trim() === '')) {
    return [relativeIssueLine(path, `Expected a non-empty string. Received ${describeWrongType(value)}`)];
  }
  if (value.length > max) return [relativeIssueLine(path, `Expected at most ${max} characters. Received ${value.length} characters`)];
  return [];
}

function countIssue(count: number, min: number, max: number, noun: string): string | undefined {
  if (count >= min && count <= max) return undefined;
  return `Expected ${min} to ${max} ${noun}. Received ${count}`;
}

/** `questions` of the Jev shape: an object of question name to `{type, instructions, criteria}`. */
export function jevQuestionsIssues(value: unknown): string[] {
  if (!isRecord(value)) return [`Expected an object of question name to question (the typesafe/jev shape; openai/gpt-6-luna takes an array). Received ${describeWrongType(value)}`];
  const names = Object.keys(value);
  const count = countIssue(names.length, 1, MAX_DECISION_QUESTIONS, 'questions');
  if (count) return [count];
  const badName = names.map((name) => nameIssue(name, 'question')).find((issue) => issue !== undefined);
  if (badName) return [badName];
  return names.flatMap((name) => jevQuestionIssues(`.${name}`, value[name]));
}

function jevQuestionIssues(path: string, question: unknown): string[] {
  if (!isRecord(question)) return [relativeIssueLine(path, `Expected a question object with type, instructions and criteria. Received ${describeWrongType(question)}`)];
  const type = question.type;
  if (typeof type !== 'string' || !(JEV_QUESTION_TYPES as readonly string[]).includes(type)) {
    return [relativeIssueLine(`${path}.type`, expectedOneOf(JEV_QUESTION_TYPES, type))];
  }
  const issues = textIssues(`${path}.instructions`, question.instructions, MAX_INSTRUCTIONS_CHARS, true);
  const criteria = question.criteria;
  const at = `${path}.criteria`;
  if (type === 'choice') {
    if (!isRecord(criteria)) return [...issues, relativeIssueLine(at, `Expected an object of option key to description. Received ${describeWrongType(criteria)}`)];
    const keys = Object.keys(criteria);
    const count = countIssue(keys.length, MIN_CHOICE_OPTIONS, MAX_CHOICE_OPTIONS, 'options');
    if (count) return [...issues, relativeIssueLine(at, count)];
    const badKey = keys.map((key) => nameIssue(key, 'option')).find((issue) => issue !== undefined);
    if (badKey) return [...issues, relativeIssueLine(at, badKey)];
    return [...issues, ...keys.flatMap((key) => textIssues(`${at}.${key}`, criteria[key], MAX_DESCRIPTION_CHARS, true))];
  }
  if (type === 'score') {
    if (!Array.isArray(criteria)) return [...issues, relativeIssueLine(at, `Expected an array of level descriptions, lowest first. Received ${describeWrongType(criteria)}`)];
    const count = countIssue(criteria.length, MIN_SCORE_LEVELS, MAX_SCORE_LEVELS, 'levels');
    if (count) return [...issues, relativeIssueLine(at, count)];
    return [...issues, ...criteria.flatMap((level: unknown, index) => textIssues(`${at}[${index}]`, level, MAX_DESCRIPTION_CHARS, true))];
  }
  if (type === 'noul') {
    if (criteria === undefined) return issues;
    if (!isRecord(criteria)) return [...issues, relativeIssueLine(at, `Expected an object with optional true and false descriptions. Received ${describeWrongType(criteria)}`)];
    const extra = Object.keys(criteria).find((key) => key !== 'true' && key !== 'false');
    if (extra) return [...issues, relativeIssueLine(at, `Expected only the keys 'true' and 'false'. Received '${extra}'`)];
    return [...issues, ...textIssues(`${at}.true`, criteria.true, MAX_DESCRIPTION_CHARS, false), ...textIssues(`${at}.false`, criteria.false, MAX_DESCRIPTION_CHARS, false)];
  }
  // box: what to locate is said by the instructions alone.
  if (criteria !== undefined) return [...issues, relativeIssueLine(at, `Expected no criteria for a box question. Received ${describeWrongType(criteria)}`)];
  return issues;
}

/** `questions` of the Luna shape: an array of `{name, type, instructions?, choices | levels}`. */
export function lunaQuestionsIssues(value: unknown): string[] {
  if (!Array.isArray(value)) return [`Expected an array of named questions (the openai/gpt-6-luna shape; Jev models take an object). Received ${describeWrongType(value)}`];
  const count = countIssue(value.length, 1, MAX_DECISION_QUESTIONS, 'questions');
  if (count) return [count];
  const seen = new Set<string>();
  return value.flatMap((question: unknown, index): string[] => {
    const path = `[${index}]`;
    if (!isRecord(question)) return [relativeIssueLine(path, `Expected a question object with name and type. Received ${describeWrongType(question)}`)];
    const name = question.name;
    if (typeof name !== 'string' || !DECISION_NAME.test(name)) return [relativeIssueLine(`${path}.name`, `Expected ${NAME_TEXT}. Received ${describeWrongType(name)}`)];
    if (seen.has(name)) return [relativeIssueLine(`${path}.name`, `Expected a name no other question has. Received '${name}' again`)];
    seen.add(name);
    const type = question.type;
    if (typeof type !== 'string' || !(LUNA_QUESTION_TYPES as readonly string[]).includes(type)) return [relativeIssueLine(`${path}.type`, expectedOneOf(LUNA_QUESTION_TYPES, type))];
    const issues = textIssues(`${path}.instructions`, question.instructions, MAX_INSTRUCTIONS_CHARS, false);
    if (type === 'choice') return [...issues, ...labelledListIssues(`${path}.choices`, question.choices, 'value', MIN_CHOICE_OPTIONS, MAX_CHOICE_OPTIONS, 'choices')];
    if (type === 'score') return [...issues, ...labelledListIssues(`${path}.levels`, question.levels, 'label', MIN_SCORE_LEVELS, MAX_SCORE_LEVELS, 'levels')];
    return issues;
  });
}

function labelledListIssues(path: string, list: unknown, field: 'value' | 'label', min: number, max: number, noun: string): string[] {
  if (!Array.isArray(list)) return [relativeIssueLine(path, `Expected an array of {${field}, description?}. Received ${describeWrongType(list)}`)];
  const count = countIssue(list.length, min, max, noun);
  if (count) return [relativeIssueLine(path, count)];
  const seen = new Set<string>();
  return list.flatMap((item: unknown, index): string[] => {
    const at = `${path}[${index}]`;
    if (!isRecord(item)) return [relativeIssueLine(at, `Expected {${field}, description?}. Received ${describeWrongType(item)}`)];
    const key = item[field];
    const keyIssues = textIssues(`${at}.${field}`, key, 256, true);
    if (keyIssues.length > 0) return keyIssues;
    if (seen.has(key as string)) return [relativeIssueLine(`${at}.${field}`, `Expected a ${field} no other item has. Received '${String(key)}' again`)];
    seen.add(key as string);
    return textIssues(`${at}.description`, item.description, MAX_DESCRIPTION_CHARS, false);
  });
}

/** Whether a text holds an inline image, which belongs in `assets`. */
const INLINE_IMAGE = /data:image\//i;

/** `state`: a string, a JSON object, or an array of texts; never an image. */
export function stateIssues(value: unknown): string[] {
  if (typeof value === 'string') {
    if (value.trim() === '') return ["Expected a non-empty string, an object, or an array of texts. Received ''"];
    return INLINE_IMAGE.test(value) ? ['Expected text: images go in assets, referenced by name from state. Received an inline data:image URL'] : [];
  }
  if (Array.isArray(value)) {
    if (value.length === 0 || value.length > MAX_STATE_TEXTS) return [`Expected 1 to ${MAX_STATE_TEXTS} texts. Received ${value.length}`];
    return value.flatMap((text: unknown, index) => {
      if (typeof text !== 'string') return [relativeIssueLine(`[${index}]`, `Expected a string. Received ${describeWrongType(text)}`)];
      return INLINE_IMAGE.test(text) ? [relativeIssueLine(`[${index}]`, 'Expected text: images go in assets. Received an inline data:image URL')] : [];
    });
  }
  if (isRecord(value)) {
    if (Object.keys(value).length === 0) return ['Expected a non-empty object. Received an empty object'];
    return INLINE_IMAGE.test(JSON.stringify(value)) ? ['Expected no images in state: images go in assets, referenced by name. Received an inline data:image URL'] : [];
  }
  return [`Expected a string, an object, or an array of texts. Received ${describeWrongType(value)}`];
}

/** `assets`: `{<name>: {type: 'image', format, data_base64}}`; audio and video are refused. */
export function assetsIssues(value: unknown): string[] {
  if (!isRecord(value)) return [`Expected an object of asset name to {type: 'image', format, data_base64}. Received ${describeWrongType(value)}`];
  const names = Object.keys(value);
  const count = countIssue(names.length, 1, MAX_DECISION_ASSETS, 'assets');
  if (count) return [count];
  const badName = names.map((name) => nameIssue(name, 'asset')).find((issue) => issue !== undefined);
  if (badName) return [badName];
  return names.flatMap((name): string[] => {
    const asset = value[name];
    const path = `.${name}`;
    if (!isRecord(asset)) return [relativeIssueLine(path, `Expected {type: 'image', format, data_base64}. Received ${describeWrongType(asset)}`)];
    if (asset.type === 'audio' || asset.type === 'video') {
      return [relativeIssueLine(`${path}.type`, `Expected 'image': decision models take no ${asset.type}. Received '${asset.type}'`)];
    }
    if (asset.type !== 'image') return [relativeIssueLine(`${path}.type`, expectedOneOf(['image'], asset.type))];
    const format = asset.format;
    if (typeof format !== 'string' || !(IMAGE_ASSET_FORMATS as readonly string[]).includes(format)) return [relativeIssueLine(`${path}.format`, expectedOneOf(IMAGE_ASSET_FORMATS, format))];
    return imageDataIssues(asset.data_base64, format as ImageAssetFormat).map((issue) => relativeIssueLine(`${path}.data_base64`, issue));
  });
}

/** The texts of a Jev `state`, in order: what the model reads, and where asset names are looked for. */
export function stateTexts(state: unknown): string[] {
  if (typeof state === 'string') return [state];
  if (Array.isArray(state)) return state.filter((text): text is string => typeof text === 'string');
  return [JSON.stringify(state)];
}

/** The assets no text of the state names (as a whole word): each must be referenced. */
export function unreferencedAssets(state: unknown, assets: Record<string, unknown> | undefined): string[] {
  if (!assets) return [];
  const text = stateTexts(state).join('\n');
  return Object.keys(assets).filter((name) => !new RegExp(`(^|[^A-Za-z0-9_-])${name}($|[^A-Za-z0-9_-])`).test(text));
}

/** The Jev questions as the service answers them. Call on a validated value. */
export function jevQuestions(questions: Record<string, Record<string, unknown>>): DecisionQuestion[] {
  return Object.entries(questions).map(([name, question]): DecisionQuestion => {
    const instructions = question.instructions as string;
    switch (question.type) {
      case 'choice':
        return { name, type: 'choice', instructions, options: Object.entries(question.criteria as Record<string, string>).map(([key, description]) => ({ key, description })) };
      case 'score':
        return { name, type: 'score', instructions, levels: question.criteria as string[] };
      case 'box':
        return { name, type: 'box', instructions };
      default:
        return { name, type: 'noul', instructions, ...(question.criteria ? { criteria: question.criteria as { true?: string; false?: string } } : {}) };
    }
  });
}

/** The Luna questions as the service answers them: `predicate` is `noul`, choices and levels keep their order. */
export function lunaQuestions(questions: Array<Record<string, unknown>>): DecisionQuestion[] {
  return questions.map((question): DecisionQuestion => {
    const name = question.name as string;
    const instructions = typeof question.instructions === 'string' ? question.instructions : '';
    if (question.type === 'choice') {
      const choices = question.choices as Array<{ value: string; description?: string }>;
      return { name, type: 'choice', instructions, options: choices.map((choice) => ({ key: choice.value, description: choice.description ?? choice.value })) };
    }
    if (question.type === 'score') {
      const levels = question.levels as Array<{ label: string; description?: string }>;
      return {
        name,
        type: 'score',
        instructions,
        levels: levels.map((level) => (level.description ? `${level.label}: ${level.description}` : level.label)),
        labels: levels.map((level) => level.label),
      };
    }
    return { name, type: 'noul', instructions };
  });
}

/** An `input_image` part: a base64 data URL of a known image format (no fetching by address). */
const IMAGE_DATA_URL = /^data:image\/(png|jpeg|webp|gif);base64,(.*)$/s;

/** The format and base64 data of an image data URL; undefined when it is not one. */
export function parseImageDataUrl(url: string): { format: ImageAssetFormat; data: string } | undefined {
  const found = IMAGE_DATA_URL.exec(url);
  return found ? { format: found[1] as ImageAssetFormat, data: found[2] } : undefined;
}

/** `input` of the Luna shape: a string, or user messages whose content is text or `input_text` / `input_image` parts. */
export function lunaInputIssues(value: unknown): string[] {
  if (typeof value === 'string') return value.trim() === '' ? ["Expected a non-empty string or an array of user messages. Received ''"] : [];
  if (!Array.isArray(value)) return [`Expected a string or an array of user messages. Received ${describeWrongType(value)}`];
  if (value.length === 0 || value.length > MAX_LUNA_MESSAGES) return [`Expected 1 to ${MAX_LUNA_MESSAGES} messages. Received ${value.length}`];
  let images = 0;
  const issues = value.flatMap((message: unknown, index): string[] => {
    const path = `[${index}]`;
    if (!isRecord(message)) return [relativeIssueLine(path, `Expected a message {role: 'user', content}. Received ${describeWrongType(message)}`)];
    if (message.role !== 'user') return [relativeIssueLine(`${path}.role`, expectedOneOf(['user'], message.role))];
    const content = message.content;
    if (typeof content === 'string') return content === '' ? [relativeIssueLine(`${path}.content`, "Expected a non-empty string or an array of parts. Received ''")] : [];
    if (!Array.isArray(content) || content.length === 0 || content.length > MAX_LUNA_PARTS) {
      return [relativeIssueLine(`${path}.content`, `Expected a non-empty string or 1 to ${MAX_LUNA_PARTS} parts. Received ${Array.isArray(content) ? `${content.length} parts` : describeWrongType(content)}`)];
    }
    return content.flatMap((part: unknown, partIndex): string[] => {
      const at = `${path}.content[${partIndex}]`;
      if (!isRecord(part)) return [relativeIssueLine(at, `Expected an input_text or input_image part. Received ${describeWrongType(part)}`)];
      if (part.type === 'input_text') return textIssues(`${at}.text`, part.text, Number.MAX_SAFE_INTEGER, true);
      if (part.type === 'input_audio' || part.type === 'input_video' || part.type === 'input_file') {
        return [relativeIssueLine(`${at}.type`, `Expected 'input_text' or 'input_image': decision models take no audio, video or files. Received '${part.type}'`)];
      }
      if (part.type !== 'input_image') return [relativeIssueLine(`${at}.type`, expectedOneOf(['input_text', 'input_image'], part.type))];
      images += 1;
      const url = part.image_url;
      const image = typeof url === 'string' ? parseImageDataUrl(url) : undefined;
      if (!image) {
        return [relativeIssueLine(`${at}.image_url`, `Expected a data:image/<${IMAGE_ASSET_FORMATS.join('|')}>;base64,... URL. Received ${typeof url === 'string' ? 'another string' : describeWrongType(url)}`)];
      }
      return imageDataIssues(image.data, image.format).map((issue) => relativeIssueLine(`${at}.image_url`, issue));
    });
  });
  if (images > MAX_DECISION_ASSETS) issues.push(`Expected at most ${MAX_DECISION_ASSETS} images. Received ${images}`);
  return issues;
}
