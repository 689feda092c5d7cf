import type { AuthenticatedKey } from '@igw/contracts';
import type { ClientConnection } from '@igw/config';

/**
 * Turns a presented API key into the account it belongs to, or null. Billing answers
 * from its own tables; the gateway from its cache, asking billing over the queue on a miss.
 */
export abstract class ApiKeyAuthenticator {
  /**
   * `client` is the request's connection: look-ups of keys the gateway does not know are
   * budgeted per client address (behind TRUSTED_PROXIES, the one `X-Forwarded-For` names), so
   * one client's flood of made-up keys cannot crowd out another's new key.
   */
  abstract authenticate(presentedKey: string, client?: ClientConnection): Promise<AuthenticatedKey | null>;
}
