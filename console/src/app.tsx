// The console's frame: navigation, who is signed in, and the page of the current route.
import { type ReactNode, useEffect } from 'react';
import { messageOf } from './api.js';
import { LogInPage, SignUpPage } from './pages/auth.js';
import { KeysPage } from './pages/keys.js';
import { ListingPage } from './pages/listing.js';
import { MarketplacePage } from './pages/marketplace.js';
import { StatementPrintPage } from './pages/statement-print.js';
import { StatementsPage } from './pages/statements.js';
import { StudioPage } from './pages/studio.js';
import { UsagePage } from './pages/usage.js';
import { href, navigate, useRoute } from './router.js';
import { SessionProvider, useSession } from './session.js';

const SIGNED_IN_ONLY = new Set(['keys', 'usage', 'studio', 'statements']);

function Page({ route }: { readonly route: string[] }): ReactNode {
  const [page, arg, sub] = route;
  switch (page) {
    case undefined:
    case 'marketplace':
      return <MarketplacePage />;
    case 'listing':
      return <ListingPage name={arg ?? ''} />;
    case 'signup':
      return <SignUpPage />;
    case 'login':
      return <LogInPage />;
    case 'keys':
      return <KeysPage />;
    case 'usage':
      return <UsagePage />;
    case 'studio':
      return <StudioPage />;
    case 'statements':
      if (arg !== undefined && sub === 'print') return <StatementPrintPage period={arg} />;
      return <StatementsPage key={arg ?? ''} initialPeriod={arg} />;
    default:
      return (
        <p>
          No such page. Go to the <a href={href('marketplace')}>marketplace</a>.
        </p>
      );
  }
}

function Shell() {
  const route = useRoute();
  const { session, signOut } = useSession();
  const page = route[0] ?? 'marketplace';
  useEffect(() => {
    if (session === null && SIGNED_IN_ONLY.has(page)) navigate('login');
  }, [session, page]);
  const link = (to: string, label: string) => (
    <a href={href(to)} aria-current={page === to ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header>
        <nav aria-label="Console">
          <a className="brand" href={href('marketplace')}>
            Quarry
          </a>
          {link('marketplace', 'Marketplace')}
          {session ? (
            <>
              {link('keys', 'Keys')}
              {link('usage', 'Usage')}
              {link('studio', 'Studio')}
              {link('statements', 'Statements')}
            </>
          ) : null}
          <span className="spacer" />
          {session ? (
            <>
              <span className="meta" data-testid="signed-in-as">
                {session.account.email}
              </span>
              <button
                type="button"
                className="secondary"
                onClick={() =>
                  signOut().then(
                    () => navigate('login'),
                    (error: unknown) => window.alert(`Logging out failed: ${messageOf(error)}`),
                  )
                }
              >
                Log out
              </button>
            </>
          ) : session === null ? (
            <>
              {link('login', 'Log in')}
              {link('signup', 'Sign up')}
            </>
          ) : null}
          <a href="/docs">API docs</a>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {session === undefined ? <p>Loading…</p> : <Page route={route} />}
      </main>
    </>
  );
}

export function App() {
  return (
    <SessionProvider>
      <Shell />
    </SessionProvider>
  );
}
