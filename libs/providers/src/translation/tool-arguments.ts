import type { RequestTranslationError } from '../upstream.errors';

/** How a translation refuses a field: its own RequestTranslationError, naming the field. */
export type TranslationRefusal = new (message: string, param?: string) => RequestTranslationError;

/**
 * A chat tool call's `arguments` (a JSON string) as the object a tool use carries in Anthropic's
 * Messages and Bedrock's Converse; blank is `{}`. Anything else is refused by `refusal`,
 * naming `path` and the API (`upstream`) that needs an object.
 */
export function toolArgumentsObject(args: string, path: string, upstream: string, refusal: TranslationRefusal): Record<string, unknown> {
  if (args.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw new refusal(`${path} is not valid JSON; ${upstream} needs tool arguments as a JSON object`, path);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new refusal(`${path} must encode a JSON object for ${upstream}`, path);
  return parsed as Record<string, unknown>;
}
