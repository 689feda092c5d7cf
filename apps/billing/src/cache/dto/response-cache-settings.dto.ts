import { ApiPropertyOptional } from '@nestjs/swagger';
import { describeWrongType, describeWrongValue, expectedOneOf, isRecord, numberIssues } from '@igw/validation';
import { RESPONSE_CACHE_DEFAULTS, RESPONSE_CACHE_MAX_TTL_SECONDS, RESPONSE_CACHE_SCOPES, type ResponseCacheScope, type ResponseCacheSettings } from '@igw/contracts';

const FIELDS = ['enabled', 'ttlSeconds', 'maxTtlSeconds', 'scope'] as const;
const SECONDS = { integer: true, min: 1, max: RESPONSE_CACHE_MAX_TTL_SECONDS } as const;

/** The response cache as an account or a key sets it; a field left out is the account's (for a key) or the default. */
export class ResponseCacheSettingsDto implements ResponseCacheSettings {
  @ApiPropertyOptional({ type: Boolean, description: "Whether requests are answered from the cache; on a key, false turns it off even where the account turns it on" })
  enabled?: boolean;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: RESPONSE_CACHE_MAX_TTL_SECONDS, description: `How long a stored answer is served, in seconds (default ${RESPONSE_CACHE_DEFAULTS.ttlSeconds}); cut to maxTtlSeconds` })
  ttlSeconds?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: RESPONSE_CACHE_MAX_TTL_SECONDS,
    description: `The longest ttlSeconds may be, and the oldest entry a client's Cache-Control: max-age may accept (default ${RESPONSE_CACHE_DEFAULTS.maxTtlSeconds}); a key's is at most its account's`,
  })
  maxTtlSeconds?: number;

  @ApiPropertyOptional({ enum: RESPONSE_CACHE_SCOPES, description: `account: every key of the account reads the entries; key: a key reads only those it stored (default ${RESPONSE_CACHE_DEFAULTS.scope})` })
  scope?: ResponseCacheScope;
}

/** What is wrong with a `cache` setting sent to the admin API (null, removing it, is checked by the caller's ValidateIf). */
export function responseCacheIssues(value: unknown): string[] {
  if (!isRecord(value)) return [`Expected an object {enabled, ttlSeconds, maxTtlSeconds, scope} or null. Received ${describeWrongType(value)}`];
  const extra = Object.keys(value).filter((field) => !(FIELDS as readonly string[]).includes(field));
  if (extra.length > 0) return [`Expected only enabled, ttlSeconds, maxTtlSeconds and scope. Received ${extra.slice(0, 5).map((field) => describeWrongValue(field)).join(', ')}`];
  const issues: string[] = [];
  if (value.enabled !== undefined && typeof value.enabled !== 'boolean') issues.push(`enabled: Expected a boolean. Received ${describeWrongType(value.enabled)}`);
  for (const field of ['ttlSeconds', 'maxTtlSeconds'] as const) {
    if (value[field] !== undefined) issues.push(...numberIssues(value[field], SECONDS).map((issue) => `${field}: ${issue}`));
  }
  if (value.scope !== undefined && !(typeof value.scope === 'string' && (RESPONSE_CACHE_SCOPES as readonly string[]).includes(value.scope))) {
    issues.push(`scope: ${expectedOneOf(RESPONSE_CACHE_SCOPES, value.scope)}`);
  }
  if (issues.length === 0 && typeof value.ttlSeconds === 'number' && typeof value.maxTtlSeconds === 'number' && value.ttlSeconds > value.maxTtlSeconds) {
    issues.push(`ttlSeconds: Expected at most maxTtlSeconds (${value.maxTtlSeconds}). Received ${value.ttlSeconds}`);
  }
  return issues;
}

/** The setting as stored: only the fields sent, in one order. */
export function responseCacheSettingsOf(value: ResponseCacheSettings): ResponseCacheSettings {
  const settings: ResponseCacheSettings = {};
  if (value.enabled !== undefined) settings.enabled = value.enabled;
  if (value.ttlSeconds !== undefined) settings.ttlSeconds = value.ttlSeconds;
  if (value.maxTtlSeconds !== undefined) settings.maxTtlSeconds = value.maxTtlSeconds;
  if (value.scope !== undefined) settings.scope = value.scope;
  return settings;
}
