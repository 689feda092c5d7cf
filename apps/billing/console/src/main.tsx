import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onSignedOut, sessionOpened, signOut } from './api';
import { AccountPage } from './account';
import { AccountsPage } from './accounts';
import { CataloguePage } from './catalogue';
import { ConnectionsPage } from './connections';
import { LoginPage } from './login';
import { UsagePage } from './usage';
import './console.css';

type Route = { page: 'accounts' } | { page: 'account'; id: string } | { page: 'usage'; accountId?: string } | { page: 'catalogue' } | { page: 'connections' };

function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'accounts' && parts[1]) return { page: 'account', id: parts[1] };
  if (parts[0] === 'usage') return { page: 'usage', accountId: parts[1] };
  if (parts[0] === 'catalogue') return { page: 'catalogue' };
  if (parts[0] === 'connections') return { page: 'connections' };
  return { page: 'accounts' };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function App() {
  const [signedIn, setSignedIn] = useState<boolean | undefined>(undefined);
  const route = useRoute();
  useEffect(() => {
    api<{ authenticated: boolean }>('GET', 'console/api/session').then(
      (session) => {
        if (session.authenticated) sessionOpened();
        setSignedIn(session.authenticated);
      },
      () => setSignedIn(false),
    );
    return onSignedOut(() => setSignedIn(false));
  }, []);

  if (signedIn === undefined) return <p class="muted center">Loading…</p>;
  if (!signedIn) {
    return (
      <LoginPage
        onSignedIn={() => {
          sessionOpened();
          setSignedIn(true);
        }}
      />
    );
  }

  const active = route.page === 'account' ? 'accounts' : route.page;
  return (
    <div class="layout">
      <nav class="topbar">
        <span class="brand">Inference gateway</span>
        <a href="#/accounts" class={active === 'accounts' ? 'active' : ''}>
          Accounts
        </a>
        <a href="#/usage" class={active === 'usage' ? 'active' : ''}>
          Usage
        </a>
        <a href="#/catalogue" class={active === 'catalogue' ? 'active' : ''}>
          Catalogue
        </a>
        <a href="#/connections" class={active === 'connections' ? 'active' : ''}>
          Connections
        </a>
        <span class="spacer" />
        <button type="button" class="link" onClick={() => void signOut()}>
          Sign out
        </button>
      </nav>
      <main>
        {route.page === 'accounts' && <AccountsPage />}
        {route.page === 'account' && <AccountPage id={route.id} />}
        {route.page === 'usage' && <UsagePage accountId={route.accountId} />}
        {route.page === 'catalogue' && <CataloguePage />}
        {route.page === 'connections' && <ConnectionsPage />}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
