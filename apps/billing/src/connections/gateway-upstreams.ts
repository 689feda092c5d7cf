import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { type GatewayUpstreams, MessagingService } from '@igw/messaging';

/** Short: a page or an admin call waits for it, and a gateway that does not answer in this time is reported as such. */
export const GATEWAY_ASK_TIMEOUT_MS = 3_000;

/**
 * Asks the gateways what they route to (`gateway.upstreams.asked`, a relay broadcast): only a
 * gateway holds the provider credentials and the connections' shared state, so billing's
 * catalogue page and its connections report both learn them from the first gateway to answer.
 */
@Injectable()
export class GatewayUpstreamsAsk implements OnApplicationBootstrap {
  private readonly logger = new Logger(GatewayUpstreamsAsk.name);
  /** Asks waiting for the first gateway's answer, by ask id. */
  private readonly asks = new Map<string, (answer: GatewayUpstreams) => void>();

  constructor(private readonly messaging: MessagingService) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.messaging.subscribe('gateway.upstreams.answered', ({ askId, ...answer }) => this.asks.get(askId)?.(answer));
  }

  /** The first answer of any gateway within `timeoutMs`, or null (the reason is logged). */
  async ask(timeoutMs = GATEWAY_ASK_TIMEOUT_MS): Promise<GatewayUpstreams | null> {
    const askId = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<GatewayUpstreams | null>((resolve) => {
      this.asks.set(askId, resolve);
      timer = setTimeout(() => resolve(null), timeoutMs);
    });
    try {
      await this.messaging.publish('gateway.upstreams.asked', { askId });
      const answer = await answered;
      if (answer === null) this.logger.warn(`no gateway answered within ${timeoutMs} ms what it routes to`);
      return answer;
    } catch (error) {
      this.logger.warn(`could not ask the gateways what they route to: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    } finally {
      clearTimeout(timer);
      this.asks.delete(askId);
    }
  }
}
