import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived (the signature covers these bytes). */
  rawBody: string;
  /** What the receiver answered; 0 when it never did. */
  answeredStatus: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /**
   * The next `count` requests are answered `status` (a receiver that is down or broken), with
   * `answerBytes` of text, or never answered at all with `hang`.
   */
  failNext(count: number, status?: number, options?: { answerBytes?: number; hang?: boolean }): void;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that keeps every request it gets and answers 204, or fails when told to. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let failures = 0;
  let failureStatus = 500;
  let failureOptions: { answerBytes?: number; hang?: boolean } = {};
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const failing = failures > 0;
      if (failing) failures--;
      const answeredStatus = failing ? failureStatus : 204;
      received.push({ headers: request.headers, rawBody: Buffer.concat(chunks).toString('utf8'), answeredStatus: failing && failureOptions.hang ? 0 : answeredStatus });
      if (failing && failureOptions.hang) return;
      response.writeHead(answeredStatus, { 'content-type': 'text/plain' });
      response.end(failing ? (failureOptions.answerBytes ? 'x'.repeat(failureOptions.answerBytes) : 'receiver is down for maintenance') : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/gateway`,
    received,
    failNext(count, status = 500, options = {}) {
      failures = count;
      failureStatus = status;
      failureOptions = options;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The verification recipe of docs/api.md ("Verifying a webhook"), written as a receiver would:
 * split the header on commas into `t` and `v1`, compute HMAC-SHA256 of `<t>.<raw body>` with the
 * secret, compare in constant time, and refuse a timestamp more than five minutes away.
 */
export function verifyWebhookSignature(secret: string, rawBody: string, header: string | undefined, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  if (!header) return false;
  const fields = new Map<string, string[]>();
  for (const part of header.split(',')) {
    const [name, value] = part.split('=', 2);
    fields.set(name.trim(), [...(fields.get(name.trim()) ?? []), value ?? '']);
  }
  const timestamp = Number(fields.get('t')?.[0]);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > 300) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex'));
  return (fields.get('v1') ?? []).some((signature) => {
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
