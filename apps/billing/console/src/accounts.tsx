import { useEffect, useState } from 'preact/hooks';
import { api, query, type Account, type List } from './api';
import { ErrorNote, formatNumber, messageOf, Section, shortId, useLoad } from './ui';

const PAGE = 50;

export function AccountsPage() {
  const [search, setSearch] = useState('');
  const [typed, setTyped] = useState('');
  const [status, setStatus] = useState('');
  const [plan, setPlan] = useState('');
  const [more, setMore] = useState<Account[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [moreError, setMoreError] = useState<string>();
  useEffect(() => {
    const timer = setTimeout(() => setSearch(typed.trim()), 250);
    return () => clearTimeout(timer);
  }, [typed]);
  const filters = { search, status, plan, limit: PAGE };
  const page = useLoad(() => api<List<Account>>('GET', `admin/v1/accounts${query(filters)}`), [search, status, plan]);
  useEffect(() => {
    setMore([]);
    setCursor(page.data?.nextCursor ?? null);
  }, [page.data]);
  const loadMore = async () => {
    try {
      const next = await api<List<Account>>('GET', `admin/v1/accounts${query({ ...filters, cursor })}`);
      setMore((previous) => [...previous, ...next.data]);
      setCursor(next.nextCursor ?? null);
    } catch (error) {
      setMoreError(messageOf(error));
    }
  };
  const accounts = [...(page.data?.data ?? []), ...more];
  return (
    <>
      <Section title="Accounts">
        <div class="toolbar">
          <input type="search" placeholder="Search by name or id" aria-label="Search accounts" value={typed} onInput={(event) => setTyped((event.target as HTMLInputElement).value)} />
          <select aria-label="Status" value={status} onChange={(event) => setStatus((event.target as HTMLSelectElement).value)}>
            <option value="">Any status</option>
            <option value="active">Active</option>
            <option value="suspended">Suspended</option>
          </select>
          <select aria-label="Plan" value={plan} onChange={(event) => setPlan((event.target as HTMLSelectElement).value)}>
            <option value="">Any plan</option>
            <option value="paid">Paid</option>
            <option value="free">Free</option>
          </select>
        </div>
        <ErrorNote error={page.error} />
        <table class="table" data-testid="accounts-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Id</th>
              <th>Plan</th>
              <th>Status</th>
              <th class="num">Balance (credits)</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {accounts.map((account) => (
              <tr key={account.id}>
                <td>
                  <a href={`#/accounts/${account.id}`}>{account.name}</a>
                </td>
                <td class="mono" title={account.id}>
                  {shortId(account.id)}
                </td>
                <td>{account.plan}</td>
                <td>
                  <span class={`badge ${account.status}`}>{account.status}</span>
                </td>
                <td class="num">{formatNumber(account.balance)}</td>
                <td>{account.createdAt.slice(0, 10)}</td>
              </tr>
            ))}
            {!page.loading && accounts.length === 0 && (
              <tr>
                <td colSpan={6} class="muted">
                  No accounts match.
                </td>
              </tr>
            )}
          </tbody>
        </table>
        <ErrorNote error={moreError} />
        {cursor && (
          <button type="button" class="secondary" onClick={loadMore}>
            Load more
          </button>
        )}
      </Section>
      <CreateAccount onCreated={(account) => (location.hash = `#/accounts/${account.id}`)} />
    </>
  );
}

function CreateAccount({ onCreated }: { onCreated: (account: Account) => void }) {
  const [name, setName] = useState('');
  const [plan, setPlan] = useState('paid');
  const [credits, setCredits] = useState('');
  const [error, setError] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      const body: Record<string, unknown> = { name, plan };
      if (credits.trim() !== '') body.credits = Number(credits);
      onCreated(await api<Account>('POST', 'admin/v1/accounts', body));
    } catch (caught) {
      setError(messageOf(caught));
    }
  };
  return (
    <Section title="New account">
      <form class="inline-form" onSubmit={submit} data-testid="create-account">
        <label>
          Name
          <input name="name" required maxLength={200} value={name} onInput={(event) => setName((event.target as HTMLInputElement).value)} />
        </label>
        <label>
          Plan
          <select name="plan" value={plan} onChange={(event) => setPlan((event.target as HTMLSelectElement).value)}>
            <option value="paid">Paid</option>
            <option value="free">Free</option>
          </select>
        </label>
        <label>
          Starting credits
          <input name="credits" inputMode="decimal" placeholder="0" value={credits} onInput={(event) => setCredits((event.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Create account</button>
      </form>
      <ErrorNote error={error} />
    </Section>
  );
}
