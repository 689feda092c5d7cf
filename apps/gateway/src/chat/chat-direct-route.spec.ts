import { claimsChatRequest } from './chat-direct-route';

const request = (overrides: { method?: string; url?: string; headers?: Record<string, string> } = {}) => ({
  method: overrides.method ?? 'POST',
  url: overrides.url ?? '/v1/chat/completions',
  headers: { 'content-type': 'application/json', 'content-length': '120', ...overrides.headers },
});

describe('claimsChatRequest', () => {
  it('claims the chat paths with a JSON body of known length within the limit', () => {
    expect(claimsChatRequest(request(), 1024)).toBe(true);
    expect(claimsChatRequest(request({ url: '/chat/completions' }), 1024)).toBe(true);
    expect(claimsChatRequest(request({ url: '/v1/chat/completions?x=1' }), 1024)).toBe(true);
    expect(claimsChatRequest(request({ headers: { 'content-type': 'application/json; charset=utf-8' } }), 1024)).toBe(true);
    expect(claimsChatRequest(request({ headers: { 'content-type': 'application/json;charset="UTF-8"' } }), 1024)).toBe(true);
    expect(claimsChatRequest(request({ headers: { 'content-encoding': 'identity' } }), 1024)).toBe(true);
    expect(claimsChatRequest(request({ headers: { 'content-length': '1024' } }), 1024)).toBe(true);
  });

  it.each([
    ['another method', request({ method: 'GET' })],
    ['another path', request({ url: '/v1/embeddings' })],
    ['a trailing slash (Express decides)', request({ url: '/v1/chat/completions/' })],
    ['another case (Express decides)', request({ url: '/V1/chat/completions' })],
    ['the Azure-style path', request({ url: '/openai/deployments/mini/chat/completions?api-version=2024-10-21' })],
    ['a +json type (the e2e parity test relies on this)', request({ headers: { 'content-type': 'application/vnd.igw+json' } })],
    ['another charset', request({ headers: { 'content-type': 'application/json; charset=utf-16' } })],
    ['no content type', request({ headers: { 'content-type': '' } })],
    ['a compressed body', request({ headers: { 'content-encoding': 'gzip' } })],
    ['a chunked body', request({ headers: { 'transfer-encoding': 'chunked' } })],
    ['a body over the limit (Express answers 413)', request({ headers: { 'content-length': '1025' } })],
    ['a malformed length', request({ headers: { 'content-length': '12a' } })],
  ])('leaves %s to Express', (_, candidate) => {
    expect(claimsChatRequest(candidate, 1024)).toBe(false);
  });

  it('leaves a request without content-length to Express', () => {
    const { 'content-length': _, ...headers } = request().headers;
    expect(claimsChatRequest({ method: 'POST', url: '/v1/chat/completions', headers }, 1024)).toBe(false);
  });
});
