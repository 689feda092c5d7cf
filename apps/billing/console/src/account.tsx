import { Fragment } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { api, type Account, type CacheStats, type CreatedKey, type Key, type List } from './api';
import { BudgetSummary, CacheCountsSummary, CacheSettingSummary, KeyRulesForm, RulesSummary } from './key-rules';
import { copyText, ErrorNote, formatNumber, formatTime, messageOf, Section, useLoad } from './ui';

export function AccountPage({ id }: { id: string }) {
  const account = useLoad(() => api<Account>('GET', `admin/v1/accounts/${encodeURIComponent(id)}`), [id]);
  const keys = useLoad(() => api<List<Key>>('GET', `admin/v1/accounts/${encodeURIComponent(id)}/keys`), [id]);
  const cache = useLoad(() => api<CacheStats>('GET', `admin/v1/accounts/${encodeURIComponent(id)}/cache`), [id]);
  if (account.error) return <ErrorNote error={account.error} />;
  if (!account.data) return <p class="muted">Loading…</p>;
  const current = account.data;
  return (
    <>
      <div class="page-head">
        <div>
          <p class="crumbs">
            <a href="#/accounts">Accounts</a> /
          </p>
          <h1>{current.name}</h1>
          <p class="mono muted">{current.id}</p>
        </div>
        <dl class="facts">
          <div>
            <dt>Balance</dt>
            <dd data-testid="account-balance">{formatNumber(current.balance)} credits</dd>
          </div>
          <div>
            <dt>Plan</dt>
            <dd>{current.plan}</dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd>
              <span class={`badge ${current.status}`}>{current.status}</span>
            </dd>
          </div>
          <div>
            <dt>Response cache</dt>
            <dd>
              <CacheSettingSummary setting={current.cache} unset="off (no setting)" testId="account-cache" />
              <br />
              <CacheCountsSummary counts={cache.data?.account} testId="account-cache-counts" />
              {cache.data && <span class="muted small">{` since ${formatTime(cache.data.from)}`}</span>}
            </dd>
          </div>
          <div>
            <dt>Usage</dt>
            <dd>
              <a href={`#/usage/${current.id}`}>Charts and ledger →</a>
            </dd>
          </div>
        </dl>
      </div>
      <Keys accountId={id} keys={keys.data?.data} cache={cache.data} error={keys.error ?? cache.error} reload={keys.reload} />
      <div class="columns">
        <Credits accountId={id} onChanged={account.reload} />
        <Settings account={current} onSaved={account.reload} />
      </div>
    </>
  );
}

/** Name, prefix, created, status, budget, rules, cache, actions. */
const COLUMNS = 8;

function Keys({ accountId, keys, cache, error, reload }: { accountId: string; keys: Key[] | undefined; cache: CacheStats | undefined; error: string | undefined; reload: () => void }) {
  const [created, setCreated] = useState<CreatedKey>();
  const [editing, setEditing] = useState<string>();
  const [actionError, setActionError] = useState<string>();
  const revoke = async (key: Key) => {
    if (!confirm(`Revoke ${key.name ?? key.prefix}? Requests with it are refused within seconds.`)) return;
    setActionError(undefined);
    try {
      await api('DELETE', `admin/v1/keys/${encodeURIComponent(key.id)}`);
      reload();
    } catch (caught) {
      setActionError(messageOf(caught));
    }
  };
  return (
    <Section title="API keys">
      {created && <NewKey created={created} onDone={() => setCreated(undefined)} />}
      <ErrorNote error={error ?? actionError} />
      <table class="table" data-testid="keys-table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Prefix</th>
            <th>Created</th>
            <th>Status</th>
            <th>Budget</th>
            <th>Rules</th>
            <th>Response cache</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(keys ?? []).map((key) => (
            <Fragment key={key.id}>
              <tr data-key-id={key.id}>
                <td>{key.name ?? <span class="muted">unnamed</span>}</td>
                <td class="mono">{key.prefix}…</td>
                <td>{formatTime(key.createdAt)}</td>
                <td>{key.revokedAt ? <span class="badge suspended">revoked</span> : <span class="badge active">active</span>}</td>
                <td>
                  <BudgetSummary keyDto={key} />
                </td>
                <td>
                  <RulesSummary keyDto={key} />
                </td>
                <td>
                  <CacheSettingSummary setting={key.cache} unset="the account's" testId="key-cache" />
                  <br />
                  <CacheCountsSummary counts={cache?.keys.find((counts) => counts.keyId === key.id)} testId="key-cache-counts" />
                </td>
                <td class="actions">
                  {!key.revokedAt && (
                    <>
                      <button type="button" class="secondary small" onClick={() => setEditing(editing === key.id ? undefined : key.id)}>
                        {editing === key.id ? 'Close' : 'Edit'}
                      </button>
                      <button type="button" class="danger small" onClick={() => revoke(key)}>
                        Revoke
                      </button>
                    </>
                  )}
                </td>
              </tr>
              {editing === key.id && (
                <tr class="editor-row">
                  <td colSpan={COLUMNS}>
                    <KeyRulesForm
                      keyDto={key}
                      submitLabel="Save"
                      onSubmit={async (changes) => {
                        await api<Key>('PATCH', `admin/v1/keys/${encodeURIComponent(key.id)}`, changes);
                        setEditing(undefined);
                        reload();
                      }}
                    />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
          {keys && keys.length === 0 && (
            <tr>
              <td colSpan={COLUMNS} class="muted">
                No keys yet.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      <h3>New key</h3>
      <KeyRulesForm
        keyDto={undefined}
        submitLabel="Create key"
        onSubmit={async (fields) => {
          setCreated(await api<CreatedKey>('POST', `admin/v1/accounts/${encodeURIComponent(accountId)}/keys`, fields));
          reload();
        }}
      />
    </Section>
  );
}

function NewKey({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState(false);
  return (
    <div class="notice" role="status" data-testid="new-key" data-key-id={created.id}>
      <p>
        <strong>Key {created.name ? `“${created.name}”` : created.prefix} created.</strong> Copy it now: it is shown only once.
      </p>
      <div class="copy-row">
        <input ref={input} class="mono" readOnly value={created.key} aria-label="New API key" data-testid="new-key-value" onFocus={(event) => (event.target as HTMLInputElement).select()} />
        <button type="button" onClick={async () => setCopied(await copyText(created.key, input.current))}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

function Credits({ accountId, onChanged }: { accountId: string; onChanged: () => void }) {
  const [amount, setAmount] = useState('');
  const [unit, setUnit] = useState<'credits' | 'usd'>('credits');
  const [reason, setReason] = useState('');
  const [result, setResult] = useState<string>();
  const [error, setError] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setResult(undefined);
    try {
      const answer = await api<{ balance: number }>('POST', `admin/v1/accounts/${encodeURIComponent(accountId)}/credits`, {
        [unit]: Number(amount),
        ...(reason.trim() ? { reason: reason.trim() } : {}),
      });
      setResult(`Balance now ${formatNumber(answer.balance)} credits.`);
      setAmount('');
      setReason('');
      onChanged();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };
  return (
    <Section title="Add credits">
      <form class="stack" onSubmit={submit} data-testid="credits-form">
        <div class="row">
          <label class="grow">
            Amount (negative for a correction)
            <input name="amount" required inputMode="decimal" value={amount} onInput={(event) => setAmount((event.target as HTMLInputElement).value)} />
          </label>
          <label>
            In
            <select name="unit" value={unit} onChange={(event) => setUnit((event.target as HTMLSelectElement).value as 'credits' | 'usd')}>
              <option value="credits">credits</option>
              <option value="usd">USD</option>
            </select>
          </label>
        </div>
        <label>
          Reason
          <input name="reason" required maxLength={500} placeholder="e.g. monthly top-up" value={reason} onInput={(event) => setReason((event.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Add</button>
      </form>
      <ErrorNote error={error} />
      {result && <p class="ok">{result}</p>}
    </Section>
  );
}

function Settings({ account, onSaved }: { account: Account; onSaved: () => void }) {
  const [form, setForm] = useState({
    name: account.name,
    plan: account.plan,
    status: account.status,
    lowBalanceThreshold: String(account.lowBalanceThreshold),
    requestsPerMinute: account.requestsPerMinute === null ? '' : String(account.requestsPerMinute),
    concurrentRequests: account.concurrentRequests === null ? '' : String(account.concurrentRequests),
  });
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const set = (field: keyof typeof form) => (event: Event) => setForm({ ...form, [field]: (event.target as HTMLInputElement).value });
  const optionalInteger = (text: string) => (text.trim() === '' ? null : Number(text));
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setSaved(false);
    try {
      await api('PATCH', `admin/v1/accounts/${encodeURIComponent(account.id)}`, {
        name: form.name,
        plan: form.plan,
        status: form.status,
        lowBalanceThreshold: Number(form.lowBalanceThreshold),
        requestsPerMinute: optionalInteger(form.requestsPerMinute),
        concurrentRequests: optionalInteger(form.concurrentRequests),
      });
      setSaved(true);
      onSaved();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };
  return (
    <Section title="Settings">
      <form class="stack" onSubmit={submit} data-testid="settings-form">
        <label>
          Name
          <input required maxLength={200} value={form.name} onInput={set('name')} />
        </label>
        <div class="row">
          <label class="grow">
            Plan
            <select value={form.plan} onChange={set('plan')}>
              <option value="paid">Paid</option>
              <option value="free">Free</option>
            </select>
          </label>
          <label class="grow">
            Status
            <select value={form.status} onChange={set('status')}>
              <option value="active">Active</option>
              <option value="suspended">Suspended</option>
            </select>
          </label>
        </div>
        <label>
          Low-balance threshold (credits)
          <input inputMode="decimal" value={form.lowBalanceThreshold} onInput={set('lowBalanceThreshold')} />
        </label>
        <div class="row">
          <label class="grow">
            Requests per minute per key
            <input inputMode="numeric" placeholder="gateway default" value={form.requestsPerMinute} onInput={set('requestsPerMinute')} />
          </label>
          <label class="grow">
            Concurrent requests per key
            <input inputMode="numeric" placeholder="gateway default" value={form.concurrentRequests} onInput={set('concurrentRequests')} />
          </label>
        </div>
        <button type="submit">Save settings</button>
      </form>
      <ErrorNote error={error} />
      {saved && <p class="ok">Saved. Gateways apply it within seconds.</p>}
    </Section>
  );
}
