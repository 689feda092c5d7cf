import type { AuthenticatedKey } from '@igw/contracts';
import type { ServedRequest } from '../http/request-context';
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

const requestWith = (headers: Record<string, string>) => ({ headers }) as unknown as ServedRequest;

describe('where a request presents its API key', () => {
  const { key } = generateApiKey();

  it.each([
    ['Authorization: Bearer, everywhere', { authorization: `Bearer ${key}` }, { credits: true }],
    ['Api-Key, on the Azure-style path', { 'api-key': key }, { credits: true, apiKeyHeader: true }],
    ['X-Api-Key, on the Messages API', { 'x-api-key': ` ${key} ` }, { credits: true, xApiKeyHeader: true }],
  ])('takes %s', async (_where, headers, requirements) => {
    await expect(authenticateRequest(new OneKey(key), requestWith(headers), requirements)).resolves.toMatchObject({ keyId: 'k' });
  });

  it.each([
    ['X-Api-Key where the route does not take it', { 'x-api-key': key }, { credits: true }],
    ['Api-Key on the Messages API', { 'api-key': key }, { credits: true, xApiKeyHeader: true }],
  ])('refuses %s with a 401, looking nothing up', async (_where, headers, requirements) => {
    const authenticator = new OneKey(key);
    await expect(authenticateRequest(authenticator, requestWith(headers), requirements)).rejects.toMatchObject({ status: 401 });
    expect(authenticator.presented).toEqual([]);
  });
});
