import type { UsageEvent } from '@igw/contracts';
import { processMetric } from '@igw/observability';
import { Counter, Histogram } from 'prom-client';

/** From seconds (a healthy queue) to a day (a journal replayed after an outage). */
const LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3_600, 21_600, 86_400];

export const ledgerLag = processMetric(
  'igw_ledger_lag_seconds',
  () =>
    new Histogram({
      name: 'igw_ledger_lag_seconds',
      help: "From a usage event's occurredAt (the gateway settled the request) to its batch being applied to the ledger",
      buckets: LAG_BUCKETS,
    }),
);

export const ledgerEventsApplied = processMetric(
  'igw_ledger_usage_events_total',
  () =>
    new Counter({
      name: 'igw_ledger_usage_events_total',
      help: 'Usage events billing checked and applied (repeats of an applied request id included: they change nothing)',
    }),
);

export const usageEventsRejected = processMetric(
  'igw_ledger_rejected_usage_total',
  () => new Counter({ name: 'igw_ledger_rejected_usage_total', help: 'Usage events billing refused to apply (kept in billing.rejected_usage)' }),
);

/** The lag of each event of a batch that was just applied. */
export function observeLedgerLag(events: readonly UsageEvent[]): void {
  const now = Date.now();
  for (const event of events) {
    const occurredAt = Date.parse(event.occurredAt);
    if (!Number.isNaN(occurredAt)) ledgerLag.observe(Math.max(0, now - occurredAt) / 1000);
  }
  ledgerEventsApplied.inc(events.length);
}
