import { effectiveResponseCache, RESPONSE_CACHE_DEFAULTS, RESPONSE_CACHE_MAX_TTL_SECONDS } from '@igw/contracts';
import { responseCacheIssues, responseCacheSettingsOf } from './response-cache-settings.dto';

describe('responseCacheIssues: a cache setting sent to the admin API', () => {
  it.each([{}, { enabled: true }, { enabled: false, scope: 'key' }, { ttlSeconds: 1, maxTtlSeconds: RESPONSE_CACHE_MAX_TTL_SECONDS }, { enabled: true, ttlSeconds: 600, maxTtlSeconds: 600, scope: 'account' }])(
    'accepts %j',
    (value) => {
      expect(responseCacheIssues(value)).toEqual([]);
    },
  );

  it.each<[string, unknown, string[]]>([
    ['a string', 'on', ["Expected an object {enabled, ttlSeconds, maxTtlSeconds, scope} or null. Received string 'on'"]],
    ['a list', [true], ['Expected an object {enabled, ttlSeconds, maxTtlSeconds, scope} or null. Received array']],
    ['an unknown field', { enabled: true, ttl: 60 }, ["Expected only enabled, ttlSeconds, maxTtlSeconds and scope. Received 'ttl'"]],
    ['enabled as text', { enabled: 'true' }, ["enabled: Expected a boolean. Received string 'true'"]],
    ['a fractional ttl', { ttlSeconds: 1.5 }, ['ttlSeconds: Expected an integer. Received 1.5']],
    ['a zero ttl', { ttlSeconds: 0 }, [`ttlSeconds: Expected an integer from 1 to ${RESPONSE_CACHE_MAX_TTL_SECONDS}. Received 0`]],
    ['a maximum past 30 days', { maxTtlSeconds: RESPONSE_CACHE_MAX_TTL_SECONDS + 1 }, [`maxTtlSeconds: Expected an integer from 1 to ${RESPONSE_CACHE_MAX_TTL_SECONDS}. Received ${RESPONSE_CACHE_MAX_TTL_SECONDS + 1}`]],
    ['a ttl as text', { ttlSeconds: '60' }, ["ttlSeconds: Expected an integer. Received string '60'"]],
    ['an unknown scope', { scope: 'global' }, ["scope: Expected one of 'account', 'key'. Received 'global'"]],
    ['a ttl above its own maximum', { ttlSeconds: 7_200, maxTtlSeconds: 3_600 }, ['ttlSeconds: Expected at most maxTtlSeconds (3600). Received 7200']],
    ['several at once', { enabled: 1, scope: 'all' }, ['enabled: Expected a boolean. Received number 1', "scope: Expected one of 'account', 'key'. Received 'all'"]],
  ])('refuses %s', (_label, value, issues) => {
    expect(responseCacheIssues(value)).toEqual(issues);
  });

  it('stores only the fields sent', () => {
    expect(responseCacheSettingsOf({ scope: 'key', enabled: true })).toStrictEqual({ enabled: true, scope: 'key' });
    expect(responseCacheSettingsOf({})).toStrictEqual({});
  });
});

describe('effectiveResponseCache: the key over the account, then the defaults', () => {
  it('is off unless one of them turns it on, and a key can turn it off', () => {
    expect(effectiveResponseCache(null, null)).toBeUndefined();
    expect(effectiveResponseCache({ ttlSeconds: 60 }, { scope: 'key' })).toBeUndefined();
    expect(effectiveResponseCache({ enabled: true }, { enabled: false })).toBeUndefined();
    expect(effectiveResponseCache(null, { enabled: true })).toEqual({ ...RESPONSE_CACHE_DEFAULTS });
    expect(effectiveResponseCache({ enabled: true }, null)).toEqual({ ...RESPONSE_CACHE_DEFAULTS });
  });

  it("takes the key's fields over the account's and cuts the ttl to the lower maximum", () => {
    expect(effectiveResponseCache({ enabled: true, ttlSeconds: 600, scope: 'account' }, { scope: 'key' })).toEqual({ ttlSeconds: 600, maxTtlSeconds: RESPONSE_CACHE_DEFAULTS.maxTtlSeconds, scope: 'key' });
    expect(effectiveResponseCache({ enabled: true, maxTtlSeconds: 300 }, { ttlSeconds: 7_200, maxTtlSeconds: 9_000 })).toEqual({ ttlSeconds: 300, maxTtlSeconds: 300, scope: 'account' });
    expect(effectiveResponseCache({ enabled: true, maxTtlSeconds: 9_000 }, { maxTtlSeconds: 120 })).toEqual({ ttlSeconds: 120, maxTtlSeconds: 120, scope: 'account' });
  });
});
