import type { AuthenticatedKey } from '@igw/contracts';

/**
 * Turns a presented API key into the account it belongs to, or null. Billing answers
 * from its own tables; the gateway from its cache, asking billing over the queue on a miss.
 */
export abstract class ApiKeyAuthenticator {
  /**
   * `clientAddress` is the caller's network address: look-ups of keys the gateway does not
   * know are budgeted per address, so one client's flood of made-up keys cannot crowd out
   * another's new key.
   */
  abstract authenticate(presentedKey: string, clientAddress?: string): Promise<AuthenticatedKey | null>;
}
