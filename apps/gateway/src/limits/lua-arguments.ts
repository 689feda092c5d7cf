/**
 * The records the Redis limit store hands its scripts, one script argument each: the fields
 * are joined by the unit separator (ioredis's per-argument work was a tenth of the gateway's
 * CPU under load) in the order of the lists below, and the scripts read them back by name
 * through a prelude generated from the same lists (`luaFieldReader`). Adding a field to a
 * list therefore cannot shift the others. Values come from ids, prefixes and numbers, never
 * holding the separator.
 */
export const FIELD_SEPARATOR = '\x1f';

/** A request to check and count: its keys (already prefixed), limits, hold and slot. */
export const ADMISSION_FIELDS = [
  'minuteKey',
  'runningKey',
  'hourKey',
  'accountKey',
  'holdsKey',
  'perMinuteLimit',
  'concurrencyLimit',
  /** 0 when the account is not on the free plan. */
  'freeHourlyLimit',
  'slotId',
  'slotTtlMs',
  /** '1' when the request holds credits, '0' otherwise (the money fields are then zeros). */
  'withCredits',
  'balanceMicro',
  'balanceVersion',
  'usageSpentMicro',
  'holdMicro',
  'holdMember',
  'holdLapse',
  'now',
  /** The key's budget: '' for both keys when it has none (the other key fields are then zeros). */
  'keyMoneyKey',
  'keyHoldsKey',
  'keyLimitMicro',
  'keyVersion',
  'keyPeriodStart',
  'keySpentMicro',
  'keyAppliedMicro',
  'keyCurrentPeriodStart',
  /** '1' for a hold added to an admitted request: only the money is checked and taken. */
  'holdOnly',
] as const;

/** A request that is over: its slot and hold to give back, what it cost to count as spent. */
export const DEPARTURE_FIELDS = ['runningKey', 'slotId', 'accountKey', 'holdsKey', 'holdMember', 'holdMicro', 'spentMicro', 'keyMoneyKey', 'keyHoldsKey'] as const;

/** A running request's slot and hold, to live longer; `holdsKey` and `holdMember` are '' without credits, `keyHoldsKey` without a key budget. */
export const RENEWAL_FIELDS = ['runningKey', 'slotId', 'lapse', 'ttlMs', 'holdsKey', 'holdMember', 'keyHoldsKey'] as const;

/** The credits look-up: what `accountKey`'s account can spend at `now`. */
export const AVAILABLE_FIELDS = ['accountKey', 'holdsKey', 'now'] as const;

export type AdmissionArgument = Record<(typeof ADMISSION_FIELDS)[number], string | number>;
export type DepartureArgument = Record<(typeof DEPARTURE_FIELDS)[number], string | number>;
export type RenewalArgument = Record<(typeof RENEWAL_FIELDS)[number], string | number>;
export type AvailableArgument = Record<(typeof AVAILABLE_FIELDS)[number], string | number>;

/** One script argument: the record's values in its list's order. */
export function packFields<Field extends string>(fields: readonly Field[], record: Record<Field, string | number>): string {
  let packed = String(record[fields[0]]);
  for (let index = 1; index < fields.length; index++) packed += FIELD_SEPARATOR + record[fields[index]];
  return packed;
}

const luaList = (fields: readonly string[]) => `{ ${fields.map((field) => `'${field}'`).join(', ')} }`;

/**
 * The Lua prelude every script starts with: the field lists above, and `readFields`, which
 * turns one packed argument back into a table keyed by field name.
 */
export function luaFieldReader(): string {
  return `local ADMISSION_FIELDS = ${luaList(ADMISSION_FIELDS)}
local DEPARTURE_FIELDS = ${luaList(DEPARTURE_FIELDS)}
local RENEWAL_FIELDS = ${luaList(RENEWAL_FIELDS)}
local AVAILABLE_FIELDS = ${luaList(AVAILABLE_FIELDS)}
local function readFields(packed, names)
  local record, from = {}, 1
  for index = 1, #names do
    local at = string.find(packed, '\\31', from, true)
    if not at then
      record[names[index]] = string.sub(packed, from)
      return record
    end
    record[names[index]] = string.sub(packed, from, at - 1)
    from = at + 1
  end
  return record
end
`;
}
