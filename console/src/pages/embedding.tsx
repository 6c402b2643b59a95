// Embedding (docs/embedding.md): the account's embed secrets (create with the secret shown once,
// rotate with an overlap, revoke), whether its keys are accepted from other origins' pages, and a
// form that mints a test embed token and shows it with a snippet for the React hook.

import type {
  CorsSettingsResponse,
  EmbedSecret,
  EmbedToken,
  IssuedEmbedSecret,
  RotatedEmbedSecret,
} from '@quarry/client';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, messageOf } from '../api.js';
import { CodeBlock, CopyButton, ErrorNote, Field, ScrollBox, SecretOnce } from '../components.js';

const when = (iso: string | null, never = '—') => (iso === null ? never : new Date(iso).toLocaleString());

/** Rotation overlaps offered: how long the old secret keeps verifying (the API's default is a day). */
const OVERLAPS = [
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '1 day' },
  { seconds: 7 * 86_400, label: '7 days (the most)' },
  { seconds: 0, label: 'none: the old secret stops now' },
] as const;

/** Expiries offered for a test token (the API allows 1 s to 24 h). */
const EXPIRIES = [
  { seconds: 300, label: '5 minutes' },
  { seconds: 900, label: '15 minutes' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours (the most)' },
] as const;

function SecretsSection() {
  const [secrets, setSecrets] = useState<readonly EmbedSecret[]>();
  const [error, setError] = useState<unknown>();
  const [shown, setShown] = useState<{ label: string; value: string }>();
  const [overlap, setOverlap] = useState<number>(86_400);
  const load = useCallback(() => {
    api<{ embed_secrets: EmbedSecret[] }>('GET', '/v1/embed-secrets').then(
      (r) => setSecrets(r.embed_secrets),
      setError,
    );
  }, []);
  useEffect(load, [load]);

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    setError(undefined);
    try {
      const answer = await api<{ embed_secret: IssuedEmbedSecret }>('POST', '/v1/embed-secrets', {
        name: String(form.get('name')),
      });
      setShown({
        label: `Embed secret "${answer.embed_secret.name}" (kid ${answer.embed_secret.id})`,
        value: answer.embed_secret.secret,
      });
      formElement.reset();
      load();
    } catch (e) {
      setError(e);
    }
  }

  async function rotate(secret: EmbedSecret) {
    setError(undefined);
    try {
      const answer = await api<RotatedEmbedSecret>('POST', `/v1/embed-secrets/${secret.id}/rotate`, {
        overlap_seconds: overlap,
      });
      setShown({
        label: `New embed secret "${answer.embed_secret.name}" (kid ${answer.embed_secret.id}); the old one verifies until ${when(answer.previous.expires_at, 'now')}`,
        value: answer.embed_secret.secret,
      });
      load();
    } catch (e) {
      setError(e);
    }
  }

  async function revoke(secret: EmbedSecret) {
    if (!window.confirm(`Revoke the embed secret "${secret.name}"? Every token it signed stops working.`))
      return;
    setError(undefined);
    try {
      await api('DELETE', `/v1/embed-secrets/${secret.id}`);
      setShown(undefined);
      load();
    } catch (e) {
      setError(e);
    }
  }

  return (
    <>
      <h2 id="secrets-title">Embed secrets</h2>
      <p className="hint">
        Your backend signs embed tokens itself (HS256, the secret's id as <code>kid</code>) without a call per
        token. At most 10 per account.
      </p>
      {shown === undefined ? null : <SecretOnce label={shown.label} secret={shown.value} />}
      <ErrorNote error={error} />
      <form onSubmit={create} className="panel" aria-labelledby="new-secret">
        <h3 id="new-secret">New embed secret</h3>
        <Field label="Secret name">{(id) => <input id={id} name="name" required maxLength={100} />}</Field>
        <button type="submit">Create secret</button>
      </form>
      <Field
        label="Overlap when rotating"
        hint="How long the old secret keeps verifying tokens after a rotation, so you can deploy the new one first."
      >
        {(id, hint) => (
          <select
            id={id}
            value={overlap}
            aria-describedby={hint}
            onChange={(e) => setOverlap(Number(e.currentTarget.value))}
          >
            {OVERLAPS.map((o) => (
              <option key={o.seconds} value={o.seconds}>
                {o.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <ScrollBox label="Your embed secrets">
        <table>
          <caption>Your embed secrets</caption>
          <thead>
            <tr>
              <th scope="col">name</th>
              <th scope="col">id (kid)</th>
              <th scope="col">created</th>
              <th scope="col">verifies until</th>
              <th scope="col">
                <span className="visually-hidden">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(secrets ?? []).map((s) => (
              <tr key={s.id} data-testid="embed-secret">
                <td>{s.name}</td>
                <td>
                  <code>{s.id}</code>
                </td>
                <td>{when(s.created_at)}</td>
                <td>{s.expires_at === null ? 'until revoked' : when(s.expires_at)}</td>
                <td>
                  {s.expires_at === null ? (
                    <button type="button" className="secondary" onClick={() => rotate(s)}>
                      Rotate<span className="visually-hidden"> {s.name}</span>
                    </button>
                  ) : null}{' '}
                  <button type="button" className="danger" onClick={() => revoke(s)}>
                    Revoke<span className="visually-hidden"> {s.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      {secrets !== undefined && secrets.length === 0 ? <p className="hint">No embed secret yet.</p> : null}
    </>
  );
}

function CorsSection() {
  const [allow, setAllow] = useState<boolean>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    api<CorsSettingsResponse>('GET', '/v1/account/cors').then(
      (r) => setAllow(r.cors.allow_keys_from_browsers),
      setError,
    );
  }, []);
  async function change(next: boolean) {
    if (
      next &&
      !window.confirm(
        "Accept this account's API keys from other sites' web pages? Anyone who opens such a page can copy the key and spend your credits.",
      )
    )
      return;
    setError(undefined);
    try {
      const answer = await api<CorsSettingsResponse>('PUT', '/v1/account/cors', {
        allow_keys_from_browsers: next,
      });
      setAllow(answer.cors.allow_keys_from_browsers);
    } catch (e) {
      setError(e);
    }
  }
  return (
    <section className="notice warning" aria-labelledby="cors-title" data-testid="cors-setting">
      <h2 id="cors-title">API keys from browsers</h2>
      <p>
        Off by default: an API key or OAuth token sent from a page of another origin is refused. A key in a
        web page is readable by anyone who opens it, who can then call any analytic with any params on your
        credits. Use embed tokens in pages instead; allow keys only for a page that only you use.
      </p>
      <ErrorNote error={error} />
      {allow === undefined ? null : (
        <label className="inline">
          <input type="checkbox" checked={allow} onChange={(e) => change(e.currentTarget.checked)} /> Allow
          this account's API keys from other origins' web pages
        </label>
      )}
      {allow === undefined ? null : (
        <p role="status" data-testid="cors-state">
          {allow
            ? 'Allowed: your keys work from any web page.'
            : 'Refused: only embed tokens work from web pages.'}
        </p>
      )}
    </section>
  );
}

/** The React snippet for a minted test token. */
function hookSnippet(token: EmbedToken, analytic: string, gateway: string): string {
  return `import { useQuarryQuery } from '@quarry/client/react';

// A test token (expires ${token.expires_at}). In your app, fetch a fresh one from your
// backend, which mints it with POST /v1/embed-tokens or signs it with an embed secret.
const embedToken = async () => ({
  token: '${token.token}',
  expiresAt: '${token.expires_at}',
});

export function Analytic() {
  const { data, error, loading } = useQuarryQuery(
    { baseUrl: '${gateway}', embedToken },
    '${analytic}',
    {}, // the params the token does not fix
  );
  if (loading) return <p>Loading…</p>;
  if (error) return <p>{error.message}</p>;
  return <pre>{JSON.stringify(data?.results, null, 2)}</pre>;
}
`;
}

function MintSection() {
  const [error, setError] = useState<unknown>();
  const [minted, setMinted] = useState<{ token: EmbedToken; analytic: string }>();
  async function mint(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(undefined);
    setMinted(undefined);
    const analytic = String(form.get('analytic')).trim();
    const fixedText = String(form.get('fixed') ?? '').trim();
    let fixed: unknown = {};
    if (fixedText !== '') {
      try {
        fixed = JSON.parse(fixedText);
      } catch (e) {
        setError(new Error(`Fixed params must be a JSON object: ${messageOf(e)}`));
        return;
      }
      if (typeof fixed !== 'object' || fixed === null || Array.isArray(fixed)) {
        setError(new Error('Fixed params must be a JSON object, e.g. {"region": "EU"}.'));
        return;
      }
    }
    const origins = String(form.get('origins') ?? '')
      .split(/[\s,]+/)
      .filter((o) => o !== '');
    try {
      const answer = await api<{ embed_token: EmbedToken }>('POST', '/v1/embed-tokens', {
        analytics: [
          { name: analytic, ...(Object.keys(fixed as object).length > 0 ? { fixed_params: fixed } : {}) },
        ],
        ...(origins.length > 0 ? { origins } : {}),
        expires_in: Number(form.get('expires')),
      });
      setMinted({ token: answer.embed_token, analytic });
    } catch (e) {
      setError(e);
    }
  }
  return (
    <>
      <h2 id="mint-title">Mint a test token</h2>
      <p className="hint">
        What your backend does for each of your users (<code>POST /v1/embed-tokens</code>): a token for one
        analytic, with params the page cannot change, usable from the origins you list. Its calls are paid by
        this account; it stops working when it expires or when you log out.
      </p>
      <form onSubmit={mint} className="panel" aria-labelledby="mint-title">
        <Field label="Analytic" hint="A name you may call, or name@version to pin a version.">
          {(id, hint) => <input id={id} name="analytic" required maxLength={200} aria-describedby={hint} />}
        </Field>
        <Field label="Fixed params (JSON, optional)" hint='For example {"region": "EU"}.'>
          {(id, hint) => <textarea id={id} name="fixed" rows={3} aria-describedby={hint} />}
        </Field>
        <Field
          label="Allowed origins (optional)"
          hint="One a line, exactly as browsers send them (https://app.example.com); none: servers only."
        >
          {(id, hint) => <textarea id={id} name="origins" rows={2} aria-describedby={hint} />}
        </Field>
        <Field label="Expires in">
          {(id) => (
            <select id={id} name="expires" defaultValue={900}>
              {EXPIRIES.map((e) => (
                <option key={e.seconds} value={e.seconds}>
                  {e.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit">Mint token</button>
      </form>
      <ErrorNote error={error} />
      {minted === undefined ? null : (
        <div className="panel" role="status" aria-labelledby="minted-title">
          <h3 id="minted-title">Token for {minted.analytic}</h3>
          <p>Expires {when(minted.token.expires_at)}.</p>
          <div className="row">
            <input
              readOnly
              aria-label="Embed token"
              value={minted.token.token}
              data-testid="embed-token"
              onFocus={(e) => e.currentTarget.select()}
            />
            <CopyButton text={minted.token.token} label="Copy token" />
          </div>
          <h4>In a React page</h4>
          <CodeBlock
            label="React snippet"
            code={hookSnippet(minted.token, minted.analytic, window.location.origin)}
          />
        </div>
      )}
    </>
  );
}

export function EmbeddingPage() {
  return (
    <section aria-labelledby="embedding-title">
      <h1 id="embedding-title">Embedding</h1>
      <p className="hint">
        Show analytics in your own site's pages without putting a key in them: your backend gives each page a
        short-lived embed token (docs/embedding.md).
      </p>
      <MintSection />
      <SecretsSection />
      <CorsSection />
    </section>
  );
}
