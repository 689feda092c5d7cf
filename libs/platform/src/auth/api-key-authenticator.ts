import type { AuthenticatedKey } from '../http/request-context';

/**
 * Turns a presented API key into the account it belongs to, or null. Billing answers
 * from its own tables; the gateway from its cache, asking billing over the queue on a miss.
 */
export abstract class ApiKeyAuthenticator {
  abstract authenticate(presentedKey: string): Promise<AuthenticatedKey | null>;
}
