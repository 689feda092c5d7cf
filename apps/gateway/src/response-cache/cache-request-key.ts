import { createHash } from 'node:crypto';
import type { CatalogueModel } from '@igw/contracts';

/**
 * Fields that never change an answer: how it is delivered (`stream`, `stream_options`), who
 * asks (`user`, `safety_identifier`, `metadata`), OpenAI's own storage and prompt-cache routing
 * (`store`, `prompt_cache_key`), and `model`, which the key holds as the resolved catalogue entry.
 */
const DELIVERY_FIELDS = new Set(['stream', 'stream_options', 'user', 'safety_identifier', 'metadata', 'store', 'prompt_cache_key', 'model']);

/**
 * The hex SHA-256 naming a request's answer: the API it came through, the catalogue entry that
 * answers it (its whole definition, so a change of its sources or prices starts new entries),
 * and every body field that can change the answer, in a canonical form (object members sorted,
 * absent and undefined members alike). The account and key scope are the store's address, not
 * part of this.
 */
export function requestCacheHash(api: string, model: CatalogueModel, body: object): string {
  const hash = createHash('sha256');
  hash.update(`igw-response-cache/1\n${api}\n${modelFingerprint(model)}\n`);
  const fields = Object.keys(body)
    .filter((field) => !DELIVERY_FIELDS.has(field) && (body as Record<string, unknown>)[field] !== undefined)
    .sort();
  for (const field of fields) hash.update(`${JSON.stringify(field)}:${canonicalJson((body as Record<string, unknown>)[field])}\n`);
  return hash.digest('hex');
}

/** Catalogue entries are replaced, never changed, when the catalogue changes: each is hashed once. */
const fingerprints = new WeakMap<CatalogueModel, string>();

function modelFingerprint(model: CatalogueModel): string {
  let fingerprint = fingerprints.get(model);
  if (fingerprint === undefined) {
    fingerprint = createHash('sha256').update(canonicalJson(model)).digest('hex');
    fingerprints.set(model, fingerprint);
  }
  return fingerprint;
}

/**
 * JSON with every object's members in code-point order and undefined members left out, so two
 * bodies that mean the same are the same text. Iterative: a validated body is bounded in depth,
 * but the key must not be the first place that trusts it.
 */
export function canonicalJson(value: unknown): string {
  let out = '';
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (item instanceof Text) {
      out += item.text;
      continue;
    }
    if (item === null || typeof item !== 'object') {
      out += item === undefined ? 'null' : JSON.stringify(item);
      continue;
    }
    // Class instances (validated DTOs) serialise as their own members, as JSON.stringify would, unless they say otherwise.
    const plain = typeof (item as { toJSON?: unknown }).toJSON === 'function' ? (item as { toJSON(): unknown }).toJSON() : item;
    if (plain !== item) {
      pending.push(plain);
      continue;
    }
    const parts: unknown[] = [];
    if (Array.isArray(item)) {
      parts.push(new Text('['));
      item.forEach((element, index) => {
        if (index > 0) parts.push(new Text(','));
        parts.push(element);
      });
      parts.push(new Text(']'));
    } else {
      const record = item as Record<string, unknown>;
      const keys = Object.keys(record)
        .filter((key) => record[key] !== undefined && typeof record[key] !== 'function')
        .sort();
      parts.push(new Text('{'));
      keys.forEach((key, index) => {
        parts.push(new Text(`${index > 0 ? ',' : ''}${JSON.stringify(key)}:`));
        parts.push(record[key]);
      });
      parts.push(new Text('}'));
    }
    for (let index = parts.length - 1; index >= 0; index--) pending.push(parts[index]);
  }
  return out;
}

/** Literal text on canonicalJson's stack, told apart from values by its class. */
class Text {
  constructor(readonly text: string) {}
}
