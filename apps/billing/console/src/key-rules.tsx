import { useState } from 'preact/hooks';
import type { Key, KeyBudget } from './api';
import { ErrorNote, formatTime, messageOf } from './ui';

/** Billing lists the rule fields on every key once it supports them (null when unset): their presence is the signal. */
export function keyRulesSupported(keys: Key[]): boolean {
  return keys.some((key) => 'budget' in key);
}

export function RulesSummary({ keyDto }: { keyDto: Key }) {
  const parts: string[] = [];
  if (keyDto.budget) {
    const spent = keyDto.spend ? `${keyDto.spend.spent} of ` : '';
    parts.push(`${spent}${keyDto.budget.limit} ${keyDto.budget.unit} / ${keyDto.budget.period}`);
  }
  if (keyDto.models && keyDto.models.length > 0) parts.push(`models: ${keyDto.models.join(', ')}`);
  if (keyDto.rpm != null) parts.push(`${keyDto.rpm} rpm`);
  if (keyDto.concurrency != null) parts.push(`${keyDto.concurrency} at once`);
  if (keyDto.expiresAt) parts.push(`expires ${formatTime(keyDto.expiresAt)}`);
  if (keyDto.metadata && Object.keys(keyDto.metadata).length > 0) parts.push(Object.entries(keyDto.metadata).map(([name, value]) => `${name}=${value}`).join(', '));
  return parts.length > 0 ? <span class="small">{parts.join(' · ')}</span> : <span class="muted small">none</span>;
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
    // <input type="datetime-local"> shows and gives minutes in UTC here: the page says so beside it.
    expiresAt: key?.expiresAt ? key.expiresAt.slice(0, 16) : '',
  };
}

/** The request body: the name, and each rule field the key shows (null clears it; a new key leaves unset rules out). */
function bodyOf(fields: RuleFields, key: Key | undefined, isNew: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  // A name is sent when given (new key) or changed (existing key); billing keeps names non-empty.
  const name = fields.name.trim();
  if (name !== '' && (isNew || name !== (key?.name ?? ''))) body.name = name;
  if (!key) return body;
  const set = (name: keyof Key, value: unknown) => {
    if (!(name in key)) return;
    if (isNew && (value === null || (typeof value === 'object' && Object.keys(value as object).length === 0))) return;
    body[name] = value;
  };
  const metadata: Record<string, string> = {};
  for (const line of fields.metadata.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const index = trimmed.indexOf('=');
    if (index <= 0) throw new Error(`Metadata lines are name=value: “${trimmed}” is not.`);
    metadata[trimmed.slice(0, index).trim()] = trimmed.slice(index + 1).trim();
  }
  set('metadata', metadata);
  set('budget', fields.budgetLimit.trim() === '' ? null : { limit: fields.budgetLimit.trim(), unit: fields.budgetUnit, period: fields.budgetPeriod });
  const models = fields.models
    .split(/[\s,]+/)
    .map((model) => model.trim())
    .filter(Boolean);
  set('models', models.length === 0 ? null : models);
  set('rpm', fields.rpm.trim() === '' ? null : Number(fields.rpm));
  set('concurrency', fields.concurrency.trim() === '' ? null : Number(fields.concurrency));
  set('expiresAt', fields.expiresAt === '' ? null : new Date(`${fields.expiresAt}:00Z`).toISOString());
  return body;
}

/**
 * Name and rules of a key, new or existing. Only the rule fields present on `keyDto` are shown:
 * without key-rule support in billing the form is the name alone.
 */
export function KeyRulesForm({ keyDto, submitLabel, onSubmit }: { keyDto: Key | undefined; submitLabel: string; onSubmit: (body: Record<string, unknown>) => Promise<void> }) {
  const isNew = !keyDto || keyDto.id === '';
  const [fields, setFields] = useState<RuleFields>(() => fieldsOf(isNew ? undefined : keyDto));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const has = (name: keyof Key) => keyDto !== undefined && name in keyDto;
  const bind = (field: keyof RuleFields) => ({
    value: fields[field],
    onInput: (event: Event) => setFields({ ...fields, [field]: (event.target as HTMLInputElement).value }),
  });
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      await onSubmit(bodyOf(fields, keyDto, isNew));
      if (isNew) setFields(fieldsOf(undefined));
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack key-form" onSubmit={submit} data-testid={isNew ? 'create-key' : 'edit-key'}>
      <label>
        Name
        <input name="name" maxLength={200} placeholder="e.g. ci pipeline" {...bind('name')} />
      </label>
      {has('budget') && (
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
      )}
      {has('models') && (
        <label>
          Models it may call (ids, aliases or patterns like anthropic/*; empty: all)
          <input name="models" placeholder="all models" {...bind('models')} />
        </label>
      )}
      {(has('rpm') || has('concurrency') || has('expiresAt')) && (
        <div class="row">
          {has('rpm') && (
            <label class="grow">
              Requests per minute
              <input name="rpm" inputMode="numeric" placeholder="account's" {...bind('rpm')} />
            </label>
          )}
          {has('concurrency') && (
            <label class="grow">
              Concurrent requests
              <input name="concurrency" inputMode="numeric" placeholder="account's" {...bind('concurrency')} />
            </label>
          )}
          {has('expiresAt') && (
            <label class="grow">
              Expires (UTC)
              <input name="expiresAt" type="datetime-local" {...bind('expiresAt')} />
            </label>
          )}
        </div>
      )}
      {has('metadata') && (
        <label>
          Metadata (one name=value a line: owner, team, purpose…)
          <textarea name="metadata" rows={2} {...bind('metadata')} />
        </label>
      )}
      <ErrorNote error={error} />
      <div>
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
