// POST /v1/moderations: OpenAI's moderation answer, deterministic.
//
// An input is flagged when its text contains the marker word `harmful` (any case): the
// categories `harassment` and `violence` are then true with scores of 0.9; every other score is
// a small number drawn from a hash of the input, so the same input always scores the same.
// `omni-moderation-*` models take text and `image_url` parts (an image is never flagged, and
// `category_applied_input_types` names `image` for the categories OpenAI scores on images);
// `text-moderation-*` models take text only, as OpenAI's do.
import type { RequestContext } from '../context';
import { seededRandom } from '../seeded-random';
import { hashText, isRecord, randomId } from '../util';

/** The word that flags an input. */
export const MODERATION_FLAG_WORD = 'harmful';

const CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;
/** The categories OpenAI's omni model also scores on images. */
const IMAGE_CATEGORIES = new Set(['self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'violence', 'violence/graphic']);
const FLAGGED_CATEGORIES = new Set(['harassment', 'violence']);
const MAX_INPUTS = 2048;

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export function moderations(ctx: RequestContext): void {
  const body = ctx.body;
  if (!isRecord(body)) {
    ctx.error(400, 'The request body must be a JSON object.');
    return;
  }
  const model = typeof body.model === 'string' && body.model !== '' ? body.model : 'omni-moderation-latest';
  const omni = !model.startsWith('text-moderation');
  const inputs = parseInputs(body.input, omni);
  if (typeof inputs === 'string') {
    ctx.error(400, inputs, { param: 'input' });
    return;
  }
  const results = inputs.map((parts) => resultOf(parts, omni));
  ctx.json(200, { id: `modr-${randomId()}`, model, results });
}

/** One result per input: a string or an array of strings is one input each; an array of parts is one input. */
function parseInputs(input: unknown, omni: boolean): Part[][] | string {
  if (typeof input === 'string') return [[{ type: 'text', text: input }]];
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_INPUTS) return `Invalid 'input': expected a string, an array of strings, or an array of parts (at most ${MAX_INPUTS}).`;
  if (input.every((item) => typeof item === 'string')) return (input as string[]).map((text) => [{ type: 'text', text }]);
  const parts: Part[] = [];
  for (const part of input) {
    if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
    else if (isRecord(part) && part.type === 'image_url' && isRecord(part.image_url) && typeof part.image_url.url === 'string') {
      if (!omni) return 'Invalid input: text moderation models take text only.';
      parts.push({ type: 'image_url', image_url: { url: part.image_url.url } });
    } else return "Invalid 'input': each part must be {type: 'text', text} or {type: 'image_url', image_url: {url}}.";
  }
  return [parts];
}

function resultOf(parts: readonly Part[], omni: boolean) {
  const text = parts.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  const hasImage = parts.some((part) => part.type === 'image_url');
  const flagged = text.toLowerCase().includes(MODERATION_FLAG_WORD);
  const random = seededRandom(hashText(`${text}\u0000${parts.length}`));
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const applied: Record<string, string[]> = {};
  for (const category of CATEGORIES) {
    const hit = flagged && FLAGGED_CATEGORIES.has(category);
    categories[category] = hit;
    scores[category] = hit ? 0.9 : Math.round(random() * 1e-4 * 1e8) / 1e8;
    const types = [...(text !== '' ? ['text'] : []), ...(hasImage && IMAGE_CATEGORIES.has(category) ? ['image'] : [])];
    applied[category] = types;
  }
  return { flagged, categories, category_scores: scores, ...(omni ? { category_applied_input_types: applied } : {}) };
}
