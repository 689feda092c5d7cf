import { useState } from 'preact/hooks';
import type { CacheCounts, Key, KeyBudget, ResponseCacheSettings } from './api';
import { ErrorNote, formatTime, messageOf } from './ui';

/** "spent of limit unit / period · resets …": the key's budget and what it spent in the current period (UTC). */
export function BudgetSummary({ keyDto }: { keyDto: Key }) {
  if (!keyDto.budget) return <span class="muted small">no budget</span>;
  const { limit, unit, period } = keyDto.budget;
  const unitText = unit === 'usd' ? 'USD' : 'credits';
  const spent = keyDto.spend?.spent ?? '0';
  const resets = keyDto.spend?.resetsAt ? ` · resets ${formatTime(keyDto.spend.resetsAt)}` : period === 'lifetime' ? ' · never resets' : '';
  return (
    <span class="small" data-testid="key-budget" data-spent={spent} data-limit={limit} data-unit={unit} data-period={period}>
      {`${spent} of ${limit} ${unitText} / ${period}${resets}`}
    </span>
  );
}

/** The key's other rules (models, rates, expiry, metadata) on one line. */
export function RulesSummary({ keyDto }: { keyDto: Key }) {
  const parts: string[] = [];
  if (keyDto.models && keyDto.models.length > 0) parts.push(`models: ${keyDto.models.join(', ')}`);
  if (keyDto.rpm != null) parts.push(`${keyDto.rpm} rpm`);
  if (keyDto.concurrency != null) parts.push(`${keyDto.concurrency} at once`);
  if (keyDto.expiresAt) parts.push(`expires ${formatTime(keyDto.expiresAt)}`);
  if (Object.keys(keyDto.metadata).length > 0) parts.push(Object.entries(keyDto.metadata).map(([name, value]) => `${name}=${value}`).join(', '));
  return parts.length > 0 ? (
    <span class="small" data-testid="key-rules">
      {parts.join(' · ')}
    </span>
  ) : (
    <span class="muted small" data-testid="key-rules">
      all models, account's rates, no expiry
    </span>
  );
}

/** A cache setting on one line ("on · 600 s · at most 3600 s · per key"); `unset` when there is none. */
export function CacheSettingSummary({ setting, unset, testId }: { setting: ResponseCacheSettings | null; unset: string; testId: string }) {
  if (!setting || Object.keys(setting).length === 0) {
    return (
      <span class="muted small" data-testid={testId}>
        {unset}
      </span>
    );
  }
  const parts: string[] = [];
  if (setting.enabled !== undefined) parts.push(setting.enabled ? 'on' : 'off');
  if (setting.ttlSeconds !== undefined) parts.push(`${setting.ttlSeconds} s`);
  if (setting.maxTtlSeconds !== undefined) parts.push(`at most ${setting.maxTtlSeconds} s`);
  if (setting.scope !== undefined) parts.push(setting.scope === 'key' ? 'per key' : 'shared by the account');
  return (
    <span class="small" data-testid={testId}>
      {parts.join(' · ')}
    </span>
  );
}

/** "3 hits · 1 miss · 0.0042 USD saved", from the ledger. */
export function CacheCountsSummary({ counts, testId }: { counts: CacheCounts | undefined; testId: string }) {
  const { hits, misses, savedUsd } = counts ?? { hits: 0, misses: 0, savedUsd: '0' };
  return (
    <span class="small" data-testid={testId} data-hits={hits} data-misses={misses} data-saved-usd={savedUsd}>
      {`${hits} ${hits === 1 ? 'hit' : 'hits'} · ${misses} ${misses === 1 ? 'miss' : 'misses'} · ${savedUsd} USD saved`}
    </span>
  );
}

interface RuleFields {
  name: string;
  metadata: string;
  budgetLimit: string;
  budgetUnit: KeyBudget['unit'];
  budgetPeriod: KeyBudget['period'];
  models: string;
  rpm: string;
  concurrency: string;
  expiresAt: string;
}

function fieldsOf(key: Key | undefined): RuleFields {
  return {
    name: key?.name ?? '',
    metadata: Object.entries(key?.metadata ?? {})
      .map(([name, value]) => `${name}=${value}`)
      .join('\n'),
    budgetLimit: key?.budget?.limit ?? '',
    budgetUnit: key?.budget?.unit ?? 'usd',
    budgetPeriod: key?.budget?.period ?? 'month',
    models: (key?.models ?? []).join(', '),
    rpm: key?.rpm == null ? '' : String(key.rpm),
    concurrency: key?.concurrency == null ? '' : String(key.concurrency),
    // <input type="datetime-local"> holds minutes without a zone; the form reads and writes them as UTC (its label says so).
    expiresAt: key?.expiresAt ? key.expiresAt.slice(0, 16) : '',
  };
}

/** A whole number as a number; anything else as typed, so billing's validation names what is wrong with it. */
function integerOrText(text: string): number | string {
  return /^-?\d+$/.test(text) ? Number(text) : text;
}

function metadataOf(text: string): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const index = trimmed.indexOf('=');
    if (index <= 0) throw new Error(`Metadata lines are name=value: “${trimmed}” is not.`);
    metadata[trimmed.slice(0, index).trim()] = trimmed.slice(index + 1).trim();
  }
  return metadata;
}

/**
 * The request body. A new key sends what is filled in; an existing key sends only the fields
 * changed in the form (billing's PATCH changes only the fields sent, and null removes a rule),
 * so a save never rewrites a rule someone else changed meanwhile.
 */
function bodyOf(fields: RuleFields, key: Key | undefined): Record<string, unknown> {
  const before = fieldsOf(key);
  const changed = (...names: Array<keyof RuleFields>) => !key || names.some((name) => fields[name] !== before[name]);
  const body: Record<string, unknown> = {};
  const text = (name: keyof RuleFields) => fields[name].trim();
  const put = (name: string, value: unknown) => {
    // A new key leaves unset rules out rather than sending null.
    if (!key && (value === null || (typeof value === 'object' && Object.keys(value as object).length === 0))) return;
    body[name] = value;
  };
  if (changed('name')) put('name', text('name') === '' ? null : text('name'));
  if (changed('metadata')) put('metadata', metadataOf(fields.metadata));
  if (changed('budgetLimit', 'budgetUnit', 'budgetPeriod')) put('budget', text('budgetLimit') === '' ? null : { limit: text('budgetLimit'), unit: fields.budgetUnit, period: fields.budgetPeriod });
  if (changed('models')) {
    const models = fields.models
      .split(/[\s,]+/)
      .map((model) => model.trim())
      .filter(Boolean);
    put('models', models.length === 0 ? null : models);
  }
  if (changed('rpm')) put('rpm', text('rpm') === '' ? null : integerOrText(text('rpm')));
  if (changed('concurrency')) put('concurrency', text('concurrency') === '' ? null : integerOrText(text('concurrency')));
  if (changed('expiresAt')) put('expiresAt', fields.expiresAt === '' ? null : `${fields.expiresAt.length === 16 ? `${fields.expiresAt}:00` : fields.expiresAt}Z`);
  return body;
}

/** Name and rules of a key: a new one (`keyDto` undefined) or an existing one. Billing's own validation messages show under the form. */
export function KeyRulesForm({ keyDto, submitLabel, onSubmit }: { keyDto: Key | undefined; submitLabel: string; onSubmit: (body: Record<string, unknown>) => Promise<void> }) {
  const [fields, setFields] = useState<RuleFields>(() => fieldsOf(keyDto));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const bind = (field: keyof RuleFields) => ({
    value: fields[field],
    onInput: (event: Event) => setFields({ ...fields, [field]: (event.target as HTMLInputElement).value }),
  });
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      await onSubmit(bodyOf(fields, keyDto));
      if (!keyDto) setFields(fieldsOf(undefined));
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack key-form" onSubmit={submit} data-testid={keyDto ? 'edit-key' : 'create-key'}>
      <label>
        Name
        <input name="name" maxLength={200} placeholder="e.g. ci pipeline" {...bind('name')} />
      </label>
      <div class="row">
        <label class="grow">
          Spend limit
          <input name="budgetLimit" inputMode="decimal" placeholder="no limit" {...bind('budgetLimit')} />
        </label>
        <label>
          Unit
          <select name="budgetUnit" {...bind('budgetUnit')} onChange={(event) => setFields({ ...fields, budgetUnit: (event.target as HTMLSelectElement).value as KeyBudget['unit'] })}>
            <option value="usd">USD</option>
            <option value="credits">credits</option>
          </select>
        </label>
        <label>
          Per
          <select name="budgetPeriod" {...bind('budgetPeriod')} onChange={(event) => setFields({ ...fields, budgetPeriod: (event.target as HTMLSelectElement).value as KeyBudget['period'] })}>
            <option value="day">day (UTC)</option>
            <option value="month">month (UTC)</option>
            <option value="lifetime">lifetime</option>
          </select>
        </label>
      </div>
      <label>
        Models it may call (ids, aliases or patterns like anthropic/*; empty: all)
        <input name="models" placeholder="all models" {...bind('models')} />
      </label>
      <div class="row">
        <label class="grow">
          Requests per minute
          <input name="rpm" inputMode="numeric" placeholder="account's" {...bind('rpm')} />
        </label>
        <label class="grow">
          Concurrent requests
          <input name="concurrency" inputMode="numeric" placeholder="account's" {...bind('concurrency')} />
        </label>
        <label class="grow">
          Expires (UTC)
          <input name="expiresAt" type="datetime-local" {...bind('expiresAt')} />
        </label>
      </div>
      <label>
        Metadata (one name=value a line: owner, team, purpose…)
        <textarea name="metadata" rows={2} {...bind('metadata')} />
      </label>
      <ErrorNote error={error} />
      <div>
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
