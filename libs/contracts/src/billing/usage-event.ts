import { anyValue, arrayField, field, integerField, messageProblem, numberField, objectField, optional, recordField, stringField, type MessageOf } from '@igw/validation';

/** More units than any request can meter (a million-token context is 10^6): a bug or a forgery. */
export const MAX_UNITS_PER_EVENT = 1_000_000_000;
/** The longest name (request id, model, endpoint, unit, deployment) an event may carry. */
export const MAX_USAGE_NAME_LENGTH = 200;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NON_NEGATIVE_INTEGER = /^(0|[1-9]\d*)$/;

const name = () => stringField('a non-empty string', { minLength: 1, maxLength: MAX_USAGE_NAME_LENGTH });
const uuid = () => stringField('a UUID', { pattern: UUID });
const time = () => field('a time', (value): value is string => typeof value === 'string' && !Number.isNaN(Date.parse(value)));

/**
 * One billable request, as the gateway priced it. The ledger applies it exactly once,
 * keyed by `requestId`. Money travels as strings of integers in micro-credits
 * (1 credit = 1,000,000 micro-credits) so no float ever touches a sum.
 *
 * The queue is a trust boundary: billing checks every event against this schema (its fields'
 * types and bounds) before it checks what needs more (the charge against the prices, the time).
 */
export const USAGE_EVENT_SCHEMA = {
  requestId: name(),
  accountId: uuid(),
  keyId: uuid(),
  model: name(),
  endpoint: name(),
  /**
   * The deployment that served the request, `<connection>/<upstream>` (e.g. `azure-eastus/gpt-4o-prod`).
   * Absent from events journalled before gateways recorded it.
   */
  deployment: optional(stringField(`a string of at most ${MAX_USAGE_NAME_LENGTH} characters`, { maxLength: MAX_USAGE_NAME_LENGTH })),
  /** Catalogue revision whose prices were used. */
  catalogueRevision: integerField('a non-negative integer', { min: 0 }),
  /** Metered units by name, e.g. { input_tokens: 12, output_tokens: 30 }. */
  units: recordField(integerField(`an integer from 0 to ${MAX_UNITS_PER_EVENT}`, { min: 0, max: MAX_UNITS_PER_EVENT }), MAX_USAGE_NAME_LENGTH),
  /**
   * The price list applied (price USD per `per` units; prices for longer prompts with their
   * `promptTokensAbove`), so the ledger shows what was charged and why.
   */
  prices: arrayField(
    objectField({
      unit: name(),
      price: numberField('a non-negative number', { min: 0 }),
      per: integerField('a positive integer', { min: 1 }),
      promptTokensAbove: optional(integerField('a positive integer', { min: 1 })),
    }),
  ),
  creditsMicro: stringField('a non-negative integer', { pattern: NON_NEGATIVE_INTEGER }),
  /** USD as an exact decimal string. */
  usd: stringField('a decimal string'),
  occurredAt: time(),
  /**
   * The client's X-Client-Request-Id (printable ASCII, at most 128 characters), when it sent one.
   * Never a reason to refuse the charge: the ledger keeps it only when it is well formed.
   */
  clientRequestId: optional(anyValue()),
  /**
   * `hit`: the answer came from the response cache (`units` are the stored answer's, `prices`
   * the model's cache prices); `miss`: the answer was looked up, not found, and stored. Absent:
   * the cache was not asked.
   */
  cache: optional(field('hit or miss', (value): value is 'hit' | 'miss' => value === 'hit' || value === 'miss')),
  /** For a hit: what the same units cost at the model's full prices minus what was charged, in USD as an exact decimal string. */
  cacheSavedUsd: optional(stringField('a decimal string', { pattern: /^\d{1,20}(\.\d{1,18})?$/ })),
} as const;

export type UsageEvent = MessageOf<typeof USAGE_EVENT_SCHEMA>;

/** The first field of the candidate that does not match the schema (`units.input_tokens is not ...`), or undefined. */
export function usageEventShapeProblem(candidate: unknown): string | undefined {
  return messageProblem(USAGE_EVENT_SCHEMA, candidate);
}
