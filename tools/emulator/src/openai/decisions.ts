// Decision APIs, deterministic:
//
// POST /v1/systemone (TypeSafe System One, the Jev shape; llama.cpp / vLLM servers expose the
// same): body {model, state, questions: {<name>: {type, instructions, criteria}}, assets?};
// answer {id, object: 'decision', model, answers: {<name>: ...}, usage: {input_tokens,
// output_tokens}}. Probabilities come from `decisionWeight` (a hash of the question name and
// the option key or level index), normalised per question; a noul's p(yes) is its weight
// over (weight + weight of 'no'); a box is {top: 0.1, bottom: 0.6, left: 0.2, right: 0.7,
// confidence: 0.9}. `systemOneAnswers` computes the same answers for tests.
//
// POST /v1/decisions (OpenAI's decisions endpoint, the Luna shape): body {model, input,
// questions: [{name, type: predicate|choice|score, instructions?, choices|levels}]}; answer
// {id, object: 'decision', model, answers: [{type, name, ...}], usage}. Same weights, keyed
// by value or label; a question whose instructions contain "refuse me" is {type: 'refusal',
// name}. `lunaAnswers` computes them for tests.
//
// usage: input_tokens = words of the content (state texts or input texts), instructions and
// criteria, plus 85 per image; output_tokens = one per question, 0 for a model whose name
// contains "d1" (liquid/d1 produces none). `@no-usage` omits usage.
import type { RequestContext } from '../context';
import { countWords, hashText, isRecord, randomId } from '../util';

const IMAGE_TOKENS = 85;
const BOX = { top: 0.1, bottom: 0.6, left: 0.2, right: 0.7, confidence: 0.9 };

/** A weight in 1..9 for one option of one question. */
export function decisionWeight(question: string, option: string): number {
  return (hashText(`${question}\u0000${option}`) % 9) + 1;
}

function normalised(question: string, options: readonly string[]): number[] {
  const weights = options.map((option) => decisionWeight(question, option));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return weights.map((weight) => weight / total);
}

const yesProbability = (question: string) => normalised(question, ['yes', 'no'])[0];

/** The Jev answers the emulator gives to `questions`. */
export function systemOneAnswers(questions: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const answers: Record<string, unknown> = {};
  for (const [name, question] of Object.entries(questions)) {
    if (question.type === 'choice') {
      const keys = Object.keys(question.criteria as Record<string, unknown>);
      const probabilities = normalised(name, keys);
      const best = probabilities.indexOf(Math.max(...probabilities));
      answers[name] = { type: 'choice', choice: keys[best], confidence: probabilities[best], probabilities: Object.fromEntries(keys.map((key, i) => [key, probabilities[i]])) };
    } else if (question.type === 'score') {
      const levels = (question.criteria as unknown[]).map((_, i) => String(i));
      const probabilities = normalised(name, levels);
      answers[name] = {
        type: 'score',
        score: probabilities.reduce((sum, p, i) => sum + i * p, 0),
        confidence: Math.max(...probabilities),
        legend: Object.fromEntries((question.criteria as string[]).map((text, i) => [String(i), text])),
        probabilities: Object.fromEntries(levels.map((level, i) => [level, probabilities[i]])),
      };
    } else if (question.type === 'box') {
      answers[name] = { type: 'box', ...BOX };
    } else {
      answers[name] = { type: 'noul', noul: yesProbability(name) };
    }
  }
  return answers;
}

/** The Luna answers the emulator gives to `questions`. */
export function lunaAnswers(questions: Array<Record<string, unknown>>): unknown[] {
  return questions.map((question) => {
    const name = question.name as string;
    if (typeof question.instructions === 'string' && /refuse me/i.test(question.instructions)) return { type: 'refusal', name };
    if (question.type === 'choice') {
      const values = (question.choices as Array<{ value: string }>).map((choice) => choice.value);
      const probabilities = normalised(name, values);
      const best = probabilities.indexOf(Math.max(...probabilities));
      return { type: 'choice', name, choice: values[best], confidence: probabilities[best], probabilities: values.map((value, i) => ({ value, probability: probabilities[i] })) };
    }
    if (question.type === 'score') {
      const labels = (question.levels as Array<{ label: string }>).map((level) => level.label);
      const probabilities = normalised(name, labels);
      return {
        type: 'score',
        name,
        score: probabilities.reduce((sum, p, i) => sum + i * p, 0),
        confidence: Math.max(...probabilities),
        probabilities: labels.map((label, i) => ({ label, probability: probabilities[i] })),
      };
    }
    return { type: 'predicate', name, probability: yesProbability(name) };
  });
}

/** Words of every string in a JSON value (criteria, instructions, state objects). */
function wordsIn(value: unknown): number {
  if (typeof value === 'string') return countWords(value);
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + wordsIn(item), 0);
  if (isRecord(value)) return Object.values(value).reduce((sum: number, item) => sum + wordsIn(item), 0);
  return 0;
}

function usageOf(model: string, inputTokens: number, questions: number): { input_tokens: number; output_tokens: number } {
  return { input_tokens: inputTokens, output_tokens: model.includes('d1') ? 0 : questions };
}

export function systemOne(ctx: RequestContext): void {
  const body = ctx.body;
  if (!isRecord(body) || typeof body.model !== 'string' || !isRecord(body.questions) || body.state === undefined) {
    ctx.error(400, 'Expected {model, state, questions: {<name>: question}}.', { param: 'questions' });
    return;
  }
  const questions = body.questions as Record<string, Record<string, unknown>>;
  const assets = isRecord(body.assets) ? Object.keys(body.assets).length : 0;
  const instructions = Object.values(questions).reduce((sum, question) => sum + wordsIn(question.instructions) + wordsIn(question.criteria), 0);
  const usage = usageOf(body.model, wordsIn(body.state) + instructions + assets * IMAGE_TOKENS, Object.keys(questions).length);
  ctx.json(200, { id: `dec_${randomId(24)}`, object: 'decision', model: body.model, answers: systemOneAnswers(questions), ...(ctx.controls.noUsage ? {} : { usage }) });
}

export function openAiDecisions(ctx: RequestContext): void {
  const body = ctx.body;
  if (!isRecord(body) || typeof body.model !== 'string' || !Array.isArray(body.questions) || body.input === undefined) {
    ctx.error(400, "Invalid request: expected 'model', 'input' and an array of 'questions'.", { param: 'questions' });
    return;
  }
  const questions = body.questions as Array<Record<string, unknown>>;
  const parts = Array.isArray(body.input) ? (body.input as Array<{ content?: unknown }>).flatMap((message) => (Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : [])) : [];
  const images = parts.filter((part) => part.type === 'input_image').length;
  const texts = typeof body.input === 'string' ? countWords(body.input) : wordsIn((body.input as Array<{ content?: unknown }>).map((message) => (typeof message.content === 'string' ? message.content : (message.content as Array<Record<string, unknown>>).map((part) => (part.type === 'input_text' ? part.text : '')))));
  const instructions = questions.reduce((sum, question) => sum + wordsIn(question.instructions) + wordsIn(question.choices) + wordsIn(question.levels), 0);
  const usage = usageOf(body.model, texts + instructions + images * IMAGE_TOKENS, questions.length);
  ctx.json(200, { id: `dec_${randomId(24)}`, object: 'decision', model: body.model, answers: lunaAnswers(questions), ...(ctx.controls.noUsage ? {} : { usage }) });
}
