import type { AuthenticatedKey } from '@igw/contracts';
import type { ServedRequest } from '../request-context';
import { generateApiKey } from './api-key';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { authenticateRequest } from './api-key.guard';

/** Knows one key; records which key each look-up was given. */
class OneKey extends ApiKeyAuthenticator {
  readonly presented: string[] = [];
  constructor(private readonly key: string) {
    super();
  }
  async authenticate(presentedKey: string): Promise<AuthenticatedKey | null> {
    this.presented.push(presentedKey);
    return presentedKey === this.key ? ({ keyId: 'k', accountId: 'a', status: 'active' } as AuthenticatedKey) : null;
  }
}

const requestWith = (headers: Record<string, string>, url = '/v1/x') => ({ headers, url }) as unknown as ServedRequest;

describe('where a request presents its API key', () => {
  const { key } = generateApiKey();

  it.each([
    ['Authorization: Bearer, everywhere', { authorization: `Bearer ${key}` }, { credits: true }],
    ['Api-Key, on the Azure-style path', { 'api-key': key }, { credits: true, apiKeyHeader: true }],
    ['X-Api-Key, on the Messages API', { 'x-api-key': ` ${key} ` }, { credits: true, xApiKeyHeader: true }],
    ['X-Goog-Api-Key, on the Gemini API', { 'x-goog-api-key': key }, { credits: true, googApiKeyHeader: true }],
  ])('takes %s', async (_where, headers, requirements) => {
    await expect(authenticateRequest(new OneKey(key), requestWith(headers), requirements)).resolves.toMatchObject({ keyId: 'k' });
  });

  it.each([
    ['X-Api-Key where the route does not take it', { 'x-api-key': key }, { credits: true }],
    ['Api-Key on the Messages API', { 'api-key': key }, { credits: true, xApiKeyHeader: true }],
    ['X-Goog-Api-Key where the route does not take it', { 'x-goog-api-key': key }, { credits: true, xApiKeyHeader: true }],
  ])('refuses %s with a 401, looking nothing up', async (_where, headers, requirements) => {
    const authenticator = new OneKey(key);
    await expect(authenticateRequest(authenticator, requestWith(headers), requirements)).rejects.toMatchObject({ status: 401 });
    expect(authenticator.presented).toEqual([]);
  });

  it("takes ?key= on the Gemini API only, the header first", async () => {
    const gemini = { credits: true, googApiKeyHeader: true };
    await expect(authenticateRequest(new OneKey(key), requestWith({}, `/v1beta/models/m:streamGenerateContent?alt=sse&key=${key}`), gemini)).resolves.toMatchObject({ keyId: 'k' });
    await expect(authenticateRequest(new OneKey(key), requestWith({ 'x-goog-api-key': key }, '/v1beta/models/m:generateContent?key=igw_other'), gemini)).resolves.toMatchObject({ keyId: 'k' });
    await expect(authenticateRequest(new OneKey(key), requestWith({}, `/v1/chat/completions?key=${key}`), { credits: true })).rejects.toMatchObject({ status: 401 });
  });

  it.each([
    ['the spec\'s Bearer wording on OpenAI routes', { credits: true }, '"Authorization: Bearer <API_KEY>".'],
    ['x-api-key on the Messages API', { credits: true, xApiKeyHeader: true }, '"x-api-key: <API_KEY>"'],
    ['x-goog-api-key and ?key= on the Gemini API', { credits: true, googApiKeyHeader: true }, '"x-goog-api-key: <API_KEY>" or as ?key=<API_KEY>'],
  ])('names in its 401 %s', async (_what, requirements, named) => {
    const refusal = await authenticateRequest(new OneKey(key), requestWith({}), requirements).catch((error: unknown) => error);
    expect((refusal as { message: string }).message).toContain(named);
  });
});
