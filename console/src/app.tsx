// The console's frame: navigation, who is signed in, and the page of the current route.
import { type ReactNode, useEffect, useState } from 'react';
import { messageOf } from './api.js';
import { AccountDeletedPage, AccountPage, ForgotPasswordPage, ResetPasswordPage } from './pages/account.js';
import { LogInPage, SignUpPage } from './pages/auth.js';
import { CallsPage } from './pages/calls.js';
import { EmbeddingPage } from './pages/embedding.js';
import { KeysPage } from './pages/keys.js';
import { ListingPage } from './pages/listing.js';
import { MarketplacePage } from './pages/marketplace.js';
import { StatementPrintPage } from './pages/statement-print.js';
import { StatementsPage } from './pages/statements.js';
import { StudioPage } from './pages/studio.js';
import { UsagePage } from './pages/usage.js';
import { WebhooksPage } from './pages/webhooks.js';
import { href, navigate, pathOf, useRoute } from './router.js';
import { SessionProvider, useSession } from './session.js';

const SIGNED_IN_ONLY = new Set([
  'keys',
  'embedding',
  'webhooks',
  'usage',
  'calls',
  'studio',
  'statements',
  'account',
]);

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
    case 'account':
      return <AccountPage />;
    case 'embedding':
      return <EmbeddingPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'deleted':
      return <AccountDeletedPage />;
    case 'forgot':
      return <ForgotPasswordPage />;
    case 'reset':
      return <ResetPasswordPage />;
    case 'usage':
      return <UsagePage />;
    case 'calls':
      return <CallsPage />;
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

/** Each page's title, so tabs, history and bookmarks tell pages apart. */
const TITLES: Readonly<Record<string, string>> = {
  marketplace: 'Marketplace',
  signup: 'Sign up',
  login: 'Log in',
  keys: 'API keys',
  embedding: 'Embedding',
  webhooks: 'Webhooks',
  usage: 'Usage',
  calls: 'Recent calls',
  studio: 'Studio',
  statements: 'Statements',
  account: 'Account',
  deleted: 'Account deleted',
  forgot: 'Forgot your password',
  reset: 'Set a new password',
};

export function pageTitle(route: readonly string[]): string {
  const [page = 'marketplace', arg] = route;
  const title = page === 'listing' && arg !== undefined ? arg : (TITLES[page] ?? 'Not found');
  return `${title} · Quarry`;
}

function Shell() {
  const route = useRoute();
  const { session, signOut } = useSession();
  const page = route[0] ?? 'marketplace';
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    // A signed-out visit to a signed-in page logs in first, then comes back here.
    if (session === null && SIGNED_IN_ONLY.has(page))
      window.location.hash = `${href('login')}?next=${encodeURIComponent(pathOf(route))}`;
  }, [session, page, route]);
  useEffect(() => {
    document.title = pageTitle(route);
    setMenuOpen(false);
  }, [route]);
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
        <nav aria-label="Console" className={menuOpen ? 'open' : undefined}>
          <a className="brand" href={href('marketplace')}>
            Quarry
          </a>
          {/* On a phone the links fold into this menu; on a wide screen the button is hidden. */}
          <button
            type="button"
            className="secondary menu-toggle"
            aria-expanded={menuOpen}
            aria-controls="console-links"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            Menu
          </button>
          <div className="links" id="console-links">
            {link('marketplace', 'Marketplace')}
            {session ? (
              <>
                {link('keys', 'Keys')}
                {link('webhooks', 'Webhooks')}
                {link('usage', 'Usage')}
                {link('calls', 'Calls')}
                {link('studio', 'Studio')}
                {link('statements', 'Statements')}
              </>
            ) : null}
            <a href="/docs">API docs</a>
            <span className="spacer" />
            {session ? (
              <>
                <a
                  className="meta who"
                  href={href('account')}
                  data-testid="signed-in-as"
                  title={`${session.account.email}: your account`}
                >
                  {session.account.email}
                </a>
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
          </div>
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
