import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { postEvent } from './webhook-delivery';
import { WebhookDestinations } from './webhook-destination';

/** A receiver on 127.0.0.1 that answers every POST with `status` and `answer`, and counts them. */
async function startReceiver(status: number, answer: string): Promise<{ url: string; received: IncomingMessage[]; server: Server }> {
  const received: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    received.push(request);
    request.resume();
    response.writeHead(status, { 'content-type': 'text/plain' }).end(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://localhost:${(server.address() as AddressInfo).port}/hook`, received, server };
}

const event = (url: string) => ({ url, secret: 'a-secret-of-sixteen-or-more', eventId: '7c9e6679-7425-40de-944b-e07fc1f90ae7', type: 'balance.below_threshold', body: '{}' });

describe('where alerts may go', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => (receiver = await startReceiver(500, `${'e'.repeat(300)} internal details`)));
  afterAll(() => new Promise((resolve) => receiver.server.close(resolve)));

  it('checks the address again at delivery: a name that resolves to loopback is not called unless WEBHOOK_ALLOWLIST names it', async () => {
    const refused = await postEvent(new WebhookDestinations(undefined), event(receiver.url), 2_000);
    expect(refused).toEqual({ ok: false, reason: 'not sent: the url has a host name that resolves to a loopback address, which the gateway does not fetch' });
    expect(receiver.received).toHaveLength(0);
    const answered = await postEvent(new WebhookDestinations('localhost'), event(receiver.url), 2_000);
    expect(receiver.received).toHaveLength(1);
    // Of the receiver's error only its start is kept.
    expect(answered).toEqual({ ok: false, status: 500, reason: `answered 500: ${'e'.repeat(100)}` });
  });

  it('refuses at PUT what it would refuse at delivery, with a 400 naming url', async () => {
    await expect(new WebhookDestinations('localhost').assertAllowed('http://127.0.0.1/hook')).rejects.toThrow(
      'Body validation error! url: names a loopback address, which the gateway does not fetch (alerts go to public addresses only, unless WEBHOOK_ALLOWLIST names the host)',
    );
    await expect(new WebhookDestinations(undefined).assertAllowed('http://[fd00:ec2::254]/')).rejects.toThrow(/url: names a cloud metadata address/);
    await expect(new WebhookDestinations('127.0.0.1').assertAllowed('http://127.0.0.1:9/hook')).resolves.toBeUndefined();
  });

  it('stops the start on a WEBHOOK_ALLOWLIST that is not a list of hosts, naming the setting', () => {
    expect(() => new WebhookDestinations('http://hooks.internal/')).toThrow(/^WEBHOOK_ALLOWLIST: "http:\/\/hooks.internal\/" is not a host or host:port/);
  });
});
