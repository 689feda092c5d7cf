import { HttpStatus } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { checkDestination, parseAllowlist, type AllowlistEntry, type DestinationVerdict } from '@igw/providers';

/**
 * Where billing may send an account's alerts: the address policy of the gateway's media fetches
 * (no loopback, private, link-local, metadata or other non-public address), with billing's own
 * allowlist, WEBHOOK_ALLOWLIST, since an admin's URL otherwise makes billing call into its own
 * network. Checked when the webhook is set and before each delivery.
 */
export class WebhookDestinations {
  private readonly allowlist: AllowlistEntry[];

  /** Throws, naming the setting, when WEBHOOK_ALLOWLIST is not a list of hosts: billing does not start. */
  constructor(allowlistSetting: string | undefined) {
    this.allowlist = parseAllowlist(allowlistSetting, 'WEBHOOK_ALLOWLIST');
  }

  check(url: string): Promise<DestinationVerdict> {
    return checkDestination(url, this.allowlist);
  }

  /** The 400 of a PUT whose URL the policy refuses. */
  async assertAllowed(url: string): Promise<void> {
    const verdict = await this.check(url);
    if (!verdict.allowed) {
      throw new GatewayException(
        HttpStatus.BAD_REQUEST,
        `${ErrorMessages.bodyValidationPrefix} url: ${verdict.detail} (alerts go to public addresses only, unless WEBHOOK_ALLOWLIST names the host)`,
      );
    }
  }
}
