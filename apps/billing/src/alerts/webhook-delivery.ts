import { Inject, Injectable, Logger } from '@nestjs/common';
import type { JobReply, QueueName } from '@igw/messaging';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import type { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { pinnedAgent } from '@igw/providers';
import { request } from 'undici';
import { WebhookDestinations } from './webhook-destination';
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signatureHeader } from './webhook-signature';

type DeliveryOutcome = JobReply<QueueName.Webhooks, 'webhooks.deliver'>;

/**
 * How much of a receiver's answer is read, for the reason of a failure (stored, shown by the
 * events API, logged); the rest is dropped unread. Enough for an error's first words, too little
 * to read a page of whatever answered at the URL back through billing.
 */
const MAX_ANSWER_BYTES = 100;
const USER_AGENT = 'inference-gateway-webhooks/1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One attempt that did not end in a 2xx: BullMQ retries the job with back-off. */
export class WebhookAttemptFailed extends Error {
  override readonly name = 'WebhookAttemptFailed';
}

/**
 * The `webhooks` queue's worker: POSTs one outbox event to its account's webhook, signed, and
 * records the outcome on the row. The row says whether the event is still owed, so a job added
 * again (the outbox sweep, a second replica) never sends an event that was delivered.
 */
@Injectable()
export class WebhookDelivery {
  private readonly logger = new Logger(WebhookDelivery.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
    private readonly destinations: WebhookDestinations,
  ) {}

  async deliver(eventId: string, job: Pick<Job, 'attemptsMade' | 'opts'>): Promise<DeliveryOutcome> {
    // The queue is a trust boundary: a job naming no event of ours is done with, not retried.
    if (typeof eventId !== 'string' || !UUID.test(eventId)) return { outcome: 'unknown' };
    const rows: Array<{ status: string; body: string; type: string; url: string | null; secret: string | null }> = await this.dataSource.query(
      `SELECT e.status, e.body, e.type, w.url, w.secret
         FROM "billing"."webhook_events" e LEFT JOIN "billing"."account_webhooks" w ON w.account_id = e.account_id
        WHERE e.id = $1`,
      [eventId],
    );
    const event = rows[0];
    if (!event) return { outcome: 'unknown' };
    if (event.status === 'delivered') return { outcome: 'already-delivered' };
    if (event.status !== 'pending') return { outcome: event.status === 'failed' ? 'failed' : 'discarded' };
    if (event.url === null || event.secret === null) {
      // The webhook was removed after the crossing: nobody to tell.
      await this.dataSource.query(`UPDATE "billing"."webhook_events" SET status = 'discarded', last_error = 'the account has no webhook' WHERE id = $1 AND status = 'pending'`, [eventId]);
      return { outcome: 'discarded' };
    }

    const attempt = await postEvent(this.destinations, { url: event.url, secret: event.secret, eventId, type: event.type, body: event.body }, this.settings.env.WEBHOOK_TIMEOUT_MS);
    if (attempt.ok) {
      await this.dataSource.query(
        `UPDATE "billing"."webhook_events" SET status = 'delivered', attempts = attempts + 1, last_status = $2, last_error = NULL, delivered_at = now() WHERE id = $1`,
        [eventId, attempt.status],
      );
      this.logger.debug(`Alert ${eventId} (${event.type}) delivered to ${originOf(event.url)}: ${attempt.status}`);
      return { outcome: 'delivered' };
    }
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    await this.dataSource.query(
      `UPDATE "billing"."webhook_events" SET attempts = attempts + 1, last_status = $2, last_error = $3, status = CASE WHEN $4 THEN 'failed' ELSE status END WHERE id = $1`,
      [eventId, attempt.status ?? null, attempt.reason, lastAttempt],
    );
    // Thrown on the last attempt too: BullMQ then keeps the job as failed, which the queue metrics count.
    throw new WebhookAttemptFailed(`Alert ${eventId} (${event.type}) to ${originOf(event.url)}, attempt ${job.attemptsMade + 1}: ${attempt.reason}${lastAttempt ? '; given up' : ''}`);
  }
}

export interface OutboxEvent {
  url: string;
  secret: string;
  eventId: string;
  type: string;
  body: string;
}

/**
 * One signed POST, bounded in time (`timeoutMs`, connection to the end of the answer) and in
 * what it reads, to a URL the address policy allows now (what its name resolves to may have
 * changed since the PUT), over a connection to the addresses checked.
 */
export async function postEvent(destinations: WebhookDestinations, event: OutboxEvent, timeoutMs: number): Promise<{ ok: true; status: number } | { ok: false; status?: number; reason: string }> {
  const destination = await destinations.check(event.url);
  if (!destination.allowed) return { ok: false, reason: `not sent: the url ${destination.detail}` };
  const agent = pinnedAgent(destination, timeoutMs);
  try {
    const answer = await request(event.url, {
      method: 'POST',
      dispatcher: agent,
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        [EVENT_ID_HEADER]: event.eventId,
        [EVENT_TYPE_HEADER]: event.type,
        [SIGNATURE_HEADER]: signatureHeader(event.secret, event.body, Math.floor(Date.now() / 1000)),
      },
      body: event.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const start = await readAtMost(answer.body, MAX_ANSWER_BYTES);
    if (answer.statusCode >= 200 && answer.statusCode < 300) return { ok: true, status: answer.statusCode };
    return { ok: false, status: answer.statusCode, reason: `answered ${answer.statusCode}${start ? `: ${start}` : ''}` };
  } catch (error) {
    const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `${error instanceof Error ? error.message : String(error)}`;
    return { ok: false, reason };
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

/** The first `limit` bytes of an answer as text (for a failure's reason); the rest is not read. */
async function readAtMost(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) break;
    }
  } catch {
    // An answer cut short still has a status; its text is only for the reason.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8').replace(/\s+/g, ' ').trim();
}

/** Logs name the receiver by origin only: a path or query may carry a token of the receiver's. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid url)';
  }
}
