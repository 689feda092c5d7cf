import { HttpStatus } from '@nestjs/common';
import {
  ErrorMessages,
  jevQuestions,
  lunaQuestions,
  parseImageDataUrl,
  stateTexts,
  unreferencedAssets,
  type CatalogueModel,
  type DecideJob,
  type DecisionQuestion,
  type DecisionRequestDto,
  type DecisionShape,
} from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { checkTokenBudgets, NON_TEXT_PART_TOKENS, whenCounted, type BudgetVerdict } from '@igw/tokenizer';

/** Catalogue tag of a decision model that takes the Luna shape (`input`, questions as an array). */
export const LUNA_SHAPE_TAG = 'decisions:shape-v2';
export { LOGPROBS_TAG } from '@igw/domain';
/** Capability of the model versions that locate things in images (`box` questions, experimental). */
export const BOX_CAPABILITY = 'box';
/** Labels, instructions framing and options list of one fallback call beyond the question's own text. */
const FALLBACK_PROMPT_OVERHEAD = 64;
/** One fallback call labels at most this many options; more go in rounds (see apps/decisions fallback). */
const LABELS_PER_CALL = 20;

const invalid = (message: string) => new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${message}`);

const SHAPE_TEXT: Record<DecisionShape, string> = {
  jev: 'the Jev shape: `state` (a string, object or array of texts), `questions` as an object of named questions (noul, choice, score, box) and optional image `assets`',
  luna: 'the Luna shape: `input` (a string or user messages), and `questions` as an array of named questions (predicate, choice, score)',
};

/** The shape a model that answers decisions (PaidRequestPipeline.resolveModel checked it does) takes. */
export function decisionShapeOf(model: CatalogueModel): DecisionShape {
  return model.tags.includes(LUNA_SHAPE_TAG) ? 'luna' : 'jev';
}

/** A body in the other shape is refused with a message naming the shape the model takes. */
export function assertShape(model: CatalogueModel, shape: DecisionShape, body: DecisionRequestDto): void {
  const jevFields = body.state !== undefined || body.assets !== undefined || (body.questions !== undefined && !Array.isArray(body.questions));
  const lunaFields = body.input !== undefined || Array.isArray(body.questions);
  const wrong = shape === 'jev' ? lunaFields : jevFields;
  const missing = shape === 'jev' ? body.state === undefined : body.input === undefined;
  if (!wrong && !missing) return;
  // The field of the other shape is named first: it says what the client did.
  const field = wrong ? wrongField(body, shape) : shape === 'jev' ? 'state' : 'input';
  throw invalid(`${field}: ${model.id} takes ${SHAPE_TEXT[shape]}.`);
}

function wrongField(body: DecisionRequestDto, shape: DecisionShape): string {
  if (shape === 'jev') return body.input !== undefined ? 'input' : 'questions';
  return body.state !== undefined ? 'state' : body.assets !== undefined ? 'assets' : 'questions';
}

/** The questions in the common form, after the model-specific checks: `box` and images only where the model supports them. */
export function decisionQuestions(model: CatalogueModel, shape: DecisionShape, body: DecisionRequestDto): DecisionQuestion[] {
  const questions = shape === 'jev' ? jevQuestions(body.questions as Record<string, Record<string, unknown>>) : lunaQuestions(body.questions as Array<Record<string, unknown>>);
  const box = questions.find((question) => question.type === 'box');
  if (box && !(model.capabilities ?? []).includes(BOX_CAPABILITY)) {
    throw invalid(
      `questions.${box.name}.type: Expected one of 'noul', 'choice', 'score' for ${model.id}: 'box' (experimental) is answered only by a model version with the box capability (typesafe/jev-1.14). Received 'box'`,
    );
  }
  const images = imageCount(shape, body);
  if (images > 0 && !(model.modalities?.input ?? []).includes('image')) {
    throw invalid(`${shape === 'jev' ? 'assets' : 'input'}: ${model.id} reads no images. Received ${images} image${images === 1 ? '' : 's'}`);
  }
  if (shape === 'jev') {
    const unreferenced = unreferencedAssets(body.state, body.assets);
    if (unreferenced.length > 0) throw invalid(`assets.${unreferenced[0]}: Expected every asset to be referenced by name from state. Received an asset state never names`);
  }
  return questions;
}

export function imageCount(shape: DecisionShape, body: DecisionRequestDto): number {
  if (shape === 'jev') return Object.keys(body.assets ?? {}).length;
  if (!Array.isArray(body.input)) return 0;
  return (body.input as Array<{ content: unknown }>).reduce(
    (sum, message) =>
      sum + (Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>).filter((part) => part.type === 'input_image' && typeof part.image_url === 'string' && parseImageDataUrl(part.image_url)).length : 0),
    0,
  );
}

/** The content's text (images aside), as the model reads it. */
export function contentText(shape: DecisionShape, body: DecisionRequestDto): string {
  if (shape === 'jev') return stateTexts(body.state).join('\n');
  if (typeof body.input === 'string') return body.input;
  return (body.input as Array<{ content: unknown }>)
    .flatMap((message) => (typeof message.content === 'string' ? [message.content] : (message.content as Array<Record<string, unknown>>).filter((part) => part.type === 'input_text').map((part) => part.text as string)))
    .join('\n');
}

/** Each upstream call a question takes, as the texts of its question part: one, or for the fallback one per round plus the final. */
function questionCalls(question: DecisionQuestion, via: DecideJob['via']): string[][] {
  const own = [question.instructions];
  if (question.type === 'noul') return [[...own, question.criteria?.true ?? '', question.criteria?.false ?? '']];
  if (question.type === 'score') return [[...own, ...question.levels]];
  if (question.type === 'box') return [own];
  const descriptions = question.options.flatMap((option) => [option.key, option.description]);
  if (via === 'decisions-api' || question.options.length <= LABELS_PER_CALL) return [[...own, ...descriptions]];
  const calls: string[][] = [];
  for (let start = 0; start < question.options.length; start += LABELS_PER_CALL) {
    calls.push([...own, ...question.options.slice(start, start + LABELS_PER_CALL).map((option) => option.description)]);
  }
  // The final round offers one winner per group; the longest descriptions bound it.
  const longest = question.options.map((option) => option.description).sort((a, b) => b.length - a.length);
  calls.push([...own, ...longest.slice(0, calls.length)]);
  return calls;
}

/**
 * Input tokens of the decision, with `measure` per text: the content (and an allowance per
 * image) once for a decision API, or once per call for the fallback, plus the questions.
 * With UTF-8 bytes it is the credit hold (no text has more tokens than bytes); with the
 * tokenizer it is the count billed when no upstream reports one.
 */
export function inputTokensOf(
  shape: DecisionShape,
  via: DecideJob['via'],
  body: DecisionRequestDto,
  questions: readonly DecisionQuestion[],
  measure: (text: string) => number,
): number {
  const content = measure(contentText(shape, body)) + imageCount(shape, body) * NON_TEXT_PART_TOKENS;
  const calls = questions.flatMap((question) => questionCalls(question, via));
  const questionTokens = calls.reduce((sum, texts) => sum + texts.reduce((inner, text) => inner + measure(text), 0), 0);
  if (via === 'decisions-api') return content + questionTokens;
  return calls.length * (content + FALLBACK_PROMPT_OVERHEAD) + questionTokens;
}

export const utf8Bytes = (text: string) => Buffer.byteLength(text);

/** The texts {@link inputTokensOf} measures, each once. */
export function measuredTexts(shape: DecisionShape, via: DecideJob['via'], body: DecisionRequestDto, questions: readonly DecisionQuestion[]): string[] {
  return [...new Set([contentText(shape, body), ...questions.flatMap((question) => questionCalls(question, via).flat())])];
}

/**
 * The content must fit the model's context. It is counted only when bounds on its bytes cannot
 * decide (token-budget.ts), on the event loop when it is short, else in the token counting
 * workers: then the check returns a Promise.
 */
export function assertWithinContext(model: CatalogueModel, shape: DecisionShape, body: DecisionRequestDto): void | Promise<void> {
  const context = model.info.contextLength;
  if (!context) return;
  const text = contentText(shape, body);
  const images = imageCount(shape, body) * NON_TEXT_PART_TOKENS;
  if (Buffer.byteLength(text) + images <= context) return;
  const refuseIfTooLong = ([verdict]: BudgetVerdict[]) => {
    if (verdict.fits) return;
    throw invalid(
      `${shape === 'jev' ? 'state' : 'input'}: Expected at most ${context} tokens (the context of ${model.id}). Received ${verdict.exact ? 'about' : 'at least'} ${verdict.tokens + images} tokens`,
    );
  };
  const verdicts = checkTokenBudgets([{ texts: [text], budget: context - images }]);
  return whenCounted(verdicts, refuseIfTooLong);
}
