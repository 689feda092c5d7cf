import { cacheDirectives } from './cache-control';

describe('cacheDirectives', () => {
  it('reads and writes when the client says nothing', () => {
    expect(cacheDirectives(undefined)).toEqual({ read: true, write: true });
    expect(cacheDirectives('')).toEqual({ read: true, write: true });
  });

  it('no-store neither reads nor writes; no-cache writes without reading', () => {
    expect(cacheDirectives('no-store')).toEqual({ read: false, write: false });
    expect(cacheDirectives('No-Cache')).toEqual({ read: false, write: true });
    expect(cacheDirectives('no-cache, no-store')).toEqual({ read: false, write: false });
  });

  it('max-age bounds the age accepted, the strictest of several winning', () => {
    expect(cacheDirectives('max-age=60')).toEqual({ read: true, write: true, maxAgeSeconds: 60 });
    expect(cacheDirectives('max-age="30", max-age=90')).toEqual({ read: true, write: true, maxAgeSeconds: 30 });
    expect(cacheDirectives(['max-age=0'])).toEqual({ read: true, write: true, maxAgeSeconds: 0 });
  });

  it('ignores what HTTP does not define for a request, and malformed values', () => {
    expect(cacheDirectives('max-age=-1, max-age=abc, private, max-age')).toEqual({ read: true, write: true });
    expect(cacheDirectives(`max-age=${'9'.repeat(40)}`)).toEqual({ read: true, write: true });
    expect(cacheDirectives(`${'x'.repeat(5_000)}, no-store`)).toEqual({ read: true, write: true });
  });
});
