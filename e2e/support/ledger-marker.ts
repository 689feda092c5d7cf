import { eventually } from '@igw/testing';
import { call } from './http';
import type { StandaloneHarness, UsageEntry } from './standalone-harness';

/**
 * The account's ledger once all that its earlier requests bill is in it: sends one more paid
 * chat request on the key (the marker) and waits until billing has applied it. The gateway
 * records usage in the order its requests end and sends it on in batches, oldest first, so a
 * charge an earlier request made (or should not have made) travels with the marker's or before
 * it. A check that something was billed once, or not at all, needs this proof; a fixed wait
 * passes on a slow machine without testing anything. Answers the other entries, newest first,
 * and what the marker cost.
 */
export async function ledgerBeforeMarker(app: StandaloneHarness, accountId: string, key: string, model: string): Promise<{ entries: UsageEntry[]; markerCredits: number }> {
  const marker = await call<{ meta: { usage: { credits_used: number } } }>(`${app.gateway}/v1/chat/completions`, {
    token: key,
    body: { model, messages: [{ role: 'user', content: 'marker' }] },
  });
  expect(marker.status).toBe(200);
  const markerId = marker.headers.get('x-request-id');
  let entries: UsageEntry[] = [];
  await eventually(async () => (entries = await app.usageEntries(accountId, 100)).some((entry) => entry.requestId === markerId), 20_000, 50);
  return { entries: entries.filter((entry) => entry.requestId !== markerId), markerCredits: marker.body.meta.usage.credits_used };
}
