import { useState } from 'preact/hooks';
import { api } from './api';
import { ErrorNote, messageOf } from './ui';

/** Trades the admin token for an HttpOnly session cookie: the page keeps the token nowhere. */
export function LoginPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', 'console/api/login', { token });
      setToken('');
      onSignedIn();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="login">
      <form class="card" onSubmit={submit}>
        <h1>Inference gateway console</h1>
        <label>
          Admin token
          <input
            name="token"
            type="password"
            autoComplete="current-password"
            required
            value={token}
            onInput={(event) => setToken((event.target as HTMLInputElement).value)}
          />
        </label>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy || token === ''}>
          Sign in
        </button>
        <p class="muted small">The token is sent once to billing, which answers with a session cookie scripts cannot read.</p>
      </form>
    </div>
  );
}
