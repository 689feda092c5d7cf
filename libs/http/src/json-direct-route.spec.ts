import { claimsJsonRequest, pathMatcher } from './json-direct-route';

const post = (url: string) => ({ method: 'POST', url, headers: { 'content-type': 'application/json', 'content-length': '2' } });

describe('the paths a JSON direct route claims', () => {
  const paths = pathMatcher(['/v1/messages', '/v1beta/*model\\:generateContent']);

  it.each([
    ['an exact path, any query string', '/v1/messages?beta=true', true],
    ['a wildcard taking slashes', '/v1beta/models/google/gemini-2.5-flash:generateContent', true],
    ['the last colon ending the wildcard', '/v1beta/models/a:b:generateContent?alt=sse', true],
    ['another method after the colon', '/v1beta/models/m:streamGenerateContent', false],
    ['nothing for the wildcard', '/v1beta/:generateContent', false],
    ['another prefix', '/v2beta/models/m:generateContent', false],
    ['a path that only ends the same', '/x/v1/messages', false],
  ])('%s', (_case, url, claimed) => {
    expect(claimsJsonRequest(post(url), paths, 100)).toBe(claimed);
  });

  it('keeps an exact set when no path has a wildcard, and refuses parameters it would not match as Express does', () => {
    expect(pathMatcher(['/v1/chat/completions'])).toEqual(new Set(['/v1/chat/completions']));
    expect(() => pathMatcher(['/v1/items/:id/*rest'])).toThrow(/wildcards \(\*name\) only/);
  });
});
