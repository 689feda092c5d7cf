import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, query, type Account, type Key, type List, type Summary, type SummaryRow, type UsageEntry } from './api';
import { ErrorNote, formatNumber, formatTime, formatUsd, messageOf, Section, shortId, useLoad } from './ui';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

const RANGES = {
  '24h': { label: 'Last 24 hours, by hour', granularity: 'hour', periods: 24 },
  '7d': { label: 'Last 7 days, by hour', granularity: 'hour', periods: 7 * 24 },
  '30d': { label: 'Last 30 days, by day', granularity: 'day', periods: 30 },
  '90d': { label: 'Last 90 days, by day', granularity: 'day', periods: 90 },
} as const;
type RangeName = keyof typeof RANGES;

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

/** The window's periods (UTC), oldest first, and its bounds as the summary API takes them. */
function windowOf(range: RangeName, now = Date.now()): { from: string; to: string; periods: string[]; granularity: 'hour' | 'day' } {
  const { granularity, periods } = RANGES[range];
  const step = granularity === 'hour' ? HOUR_MS : DAY_MS;
  const end = Math.floor(now / step) * step + step;
  const start = end - periods * step;
  const labels: string[] = [];
  for (let at = start; at < end; at += step) {
    const iso = new Date(at).toISOString();
    labels.push(granularity === 'hour' ? `${iso.slice(0, 13)}:00:00Z` : iso.slice(0, 10));
  }
  return { from: new Date(start).toISOString(), to: new Date(end).toISOString(), periods: labels, granularity };
}

const PALETTE = ['#2563eb', '#16a34a', '#d97706', '#dc2626', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#475569', '#ea580c'];

function SpendChart({ title, rows, periods, hourly, seriesOf, labelOf, testId }: {
  title: string;
  rows: SummaryRow[];
  periods: string[];
  hourly: boolean;
  seriesOf: (row: SummaryRow) => string;
  labelOf: (series: string) => string;
  testId: string;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const series = [...new Set(rows.map(seriesOf))].sort();
    const index = new Map(periods.map((period, position) => [period, position]));
    const datasets = series.map((name, position) => {
      const data = periods.map(() => 0);
      for (const row of rows) {
        if (seriesOf(row) !== name) continue;
        const at = index.get(hourly ? (row.hour ?? '') : row.day);
        if (at !== undefined) data[at] += Number(row.usd);
      }
      const color = PALETTE[position % PALETTE.length];
      return { label: labelOf(name), data, backgroundColor: color, borderColor: color, stack: 'spend' };
    });
    const labels = periods.map((period) => (hourly ? `${period.slice(5, 10)} ${period.slice(11, 13)}h` : period.slice(5)));
    const chart = new Chart(canvas.current!, {
      type: 'bar',
      data: { labels, datasets },
      options: {
        animation: false,
        maintainAspectRatio: false,
        plugins: { legend: { position: 'bottom' }, tooltip: { callbacks: { label: (item) => `${item.dataset.label}: $${Number(item.raw).toFixed(6)}` } } },
        scales: { x: { stacked: true, ticks: { maxTicksLimit: 16 } }, y: { stacked: true, title: { display: true, text: 'USD' } } },
      },
    });
    return () => chart.destroy();
  }, [rows, periods, hourly]);
  return (
    <div class="chart-box">
      <h3>{title}</h3>
      <div class="chart" data-testid={testId} data-series={String(new Set(rows.map(seriesOf)).size)}>
        <canvas ref={canvas} />
      </div>
    </div>
  );
}

export function UsagePage({ accountId }: { accountId?: string }) {
  return (
    <>
      <AccountPicker accountId={accountId} />
      {accountId ? <Usage accountId={accountId} /> : <p class="muted">Choose an account to see its usage.</p>}
    </>
  );
}

function AccountPicker({ accountId }: { accountId?: string }) {
  const [search, setSearch] = useState('');
  const accounts = useLoad(() => api<List<Account>>('GET', `admin/v1/accounts${query({ search, limit: 20 })}`), [search]);
  const current = useLoad(() => (accountId ? api<Account>('GET', `admin/v1/accounts/${encodeURIComponent(accountId)}`) : Promise.resolve(undefined)), [accountId]);
  return (
    <div class="toolbar picker">
      <strong>{current.data ? <a href={`#/accounts/${current.data.id}`}>{current.data.name}</a> : 'Usage'}</strong>
      <input type="search" placeholder="Find an account" aria-label="Find an account" value={search} onInput={(event) => setSearch((event.target as HTMLInputElement).value)} />
      <select aria-label="Account" value={accountId ?? ''} onChange={(event) => (location.hash = `#/usage/${(event.target as HTMLSelectElement).value}`)}>
        <option value="">Choose…</option>
        {(accounts.data?.data ?? []).map((account) => (
          <option key={account.id} value={account.id}>
            {account.name} ({shortId(account.id)})
          </option>
        ))}
      </select>
    </div>
  );
}

function Usage({ accountId }: { accountId: string }) {
  const [range, setRange] = useState<RangeName>('24h');
  const [model, setModel] = useState('');
  const [keyId, setKeyId] = useState('');
  const [refreshed, setRefreshed] = useState(0);
  const keys = useLoad(() => api<List<Key>>('GET', `admin/v1/accounts/${encodeURIComponent(accountId)}/keys`), [accountId]);
  const summaries = useLoad(async () => {
    const periods = windowOf(range);
    const { from, to, granularity } = periods;
    const base = `admin/v1/accounts/${encodeURIComponent(accountId)}/usage/summary`;
    const filters = { from, to, granularity, model, key: keyId };
    const [byModel, byKey] = await Promise.all([
      api<Summary>('GET', `${base}${query({ ...filters, groupBy: 'model' })}`),
      api<Summary>('GET', `${base}${query({ ...filters, groupBy: 'key' })}`),
    ]);
    return { byModel, byKey, window: periods };
  }, [accountId, range, model, keyId, refreshed]);
  const keyNames = new Map((keys.data?.data ?? []).map((key) => [key.id, key.name ?? `${key.prefix}…`]));
  const models = [...new Set((summaries.data?.byModel.data ?? []).map((row) => row.model ?? ''))].filter(Boolean).sort();
  const totals = summaries.data?.byModel.totals;
  return (
    <>
      <Section
        title="Spend"
        actions={
          <div class="toolbar">
            <select aria-label="Range" value={range} onChange={(event) => setRange((event.target as HTMLSelectElement).value as RangeName)}>
              {Object.entries(RANGES).map(([name, { label }]) => (
                <option key={name} value={name}>
                  {label}
                </option>
              ))}
            </select>
            <select aria-label="Model" value={model} onChange={(event) => setModel((event.target as HTMLSelectElement).value)}>
              <option value="">All models</option>
              {[...new Set([...models, model].filter(Boolean))].map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
            <select aria-label="Key" value={keyId} onChange={(event) => setKeyId((event.target as HTMLSelectElement).value)}>
              <option value="">All keys</option>
              {(keys.data?.data ?? []).map((key) => (
                <option key={key.id} value={key.id}>
                  {keyNames.get(key.id)}
                </option>
              ))}
            </select>
            <button type="button" class="secondary" onClick={() => setRefreshed((value) => value + 1)}>
              Refresh
            </button>
          </div>
        }
      >
        <ErrorNote error={summaries.error} />
        {totals && (
          <dl class="facts totals" data-testid="usage-totals">
            <div>
              <dt>Requests</dt>
              <dd data-testid="total-requests">{formatNumber(totals.requests)}</dd>
            </div>
            <div>
              <dt>Spent (USD)</dt>
              <dd data-testid="total-usd" data-value={totals.usd}>
                {formatUsd(totals.usd)}
              </dd>
            </div>
            <div>
              <dt>Spent (credits)</dt>
              <dd data-testid="total-credits" data-value={totals.credits}>
                {formatNumber(totals.credits)}
              </dd>
            </div>
          </dl>
        )}
        {summaries.data && (
          <div class="columns">
            <SpendChart
              title="By model"
              testId="chart-by-model"
              rows={summaries.data.byModel.data}
              periods={summaries.data.window.periods}
              hourly={summaries.data.window.granularity === 'hour'}
              seriesOf={(row) => row.model ?? '(none)'}
              labelOf={(name) => name}
            />
            <SpendChart
              title="By key"
              testId="chart-by-key"
              rows={summaries.data.byKey.data}
              periods={summaries.data.window.periods}
              hourly={summaries.data.window.granularity === 'hour'}
              seriesOf={(row) => row.keyId ?? '(none)'}
              labelOf={(id) => keyNames.get(id) ?? shortId(id)}
            />
          </div>
        )}
      </Section>
      <Ledger accountId={accountId} model={model} keyId={keyId} keyNames={keyNames} refreshed={refreshed} />
    </>
  );
}

function Ledger({ accountId, model, keyId, keyNames, refreshed }: { accountId: string; model: string; keyId: string; keyNames: Map<string, string>; refreshed: number }) {
  const [kind, setKind] = useState('');
  const [more, setMore] = useState<UsageEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [moreError, setMoreError] = useState<string>();
  const filters = { kind, model, key: keyId, limit: 50 };
  const path = `admin/v1/accounts/${encodeURIComponent(accountId)}/usage`;
  const page = useLoad(() => api<List<UsageEntry>>('GET', `${path}${query(filters)}`), [accountId, kind, model, keyId, refreshed]);
  useEffect(() => {
    setMore([]);
    setCursor(page.data?.nextCursor ?? null);
  }, [page.data]);
  const loadMore = async () => {
    try {
      const next = await api<List<UsageEntry>>('GET', `${path}${query({ ...filters, cursor })}`);
      setMore((previous) => [...previous, ...next.data]);
      setCursor(next.nextCursor ?? null);
    } catch (error) {
      setMoreError(messageOf(error));
    }
  };
  const entries = [...(page.data?.data ?? []), ...more];
  return (
    <Section
      title="Latest ledger entries"
      actions={
        <select aria-label="Kind" value={kind} onChange={(event) => setKind((event.target as HTMLSelectElement).value)}>
          <option value="">Usage and credits</option>
          <option value="usage">Usage only</option>
          <option value="credit">Credits only</option>
        </select>
      }
    >
      <ErrorNote error={page.error ?? moreError} />
      <table class="table" data-testid="ledger-table">
        <thead>
          <tr>
            <th>When (UTC)</th>
            <th>Kind</th>
            <th>Model</th>
            <th>Key</th>
            <th>Units</th>
            <th class="num">Credits</th>
            <th class="num">USD</th>
            <th>Request / reason</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id} data-kind={entry.kind}>
              <td>{formatTime(entry.occurredAt)}</td>
              <td>{entry.kind}</td>
              <td>{entry.model ?? ''}</td>
              <td>{entry.keyId ? (keyNames.get(entry.keyId) ?? shortId(entry.keyId)) : ''}</td>
              <td class="small">
                {Object.entries(entry.units ?? {})
                  .map(([unit, count]) => `${unit} ${formatNumber(count)}`)
                  .join(', ')}
              </td>
              <td class="num">{formatNumber(entry.credits)}</td>
              <td class="num" data-usd={entry.usd}>
                {entry.usd}
              </td>
              <td class="mono small">{entry.kind === 'usage' ? (entry.requestId ?? '') : (entry.reason ?? '')}</td>
            </tr>
          ))}
          {!page.loading && entries.length === 0 && (
            <tr>
              <td colSpan={8} class="muted">
                No entries.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      {cursor && (
        <button type="button" class="secondary" onClick={loadMore}>
          Load more
        </button>
      )}
    </Section>
  );
}
