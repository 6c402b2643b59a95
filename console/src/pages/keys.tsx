// API keys and OAuth clients: create (name, scopes, and a key's expiry), the secret shown once
// with a copy button, the list (prefix or client id, scopes, last use), revoke.

import type { ApiKey as Key, OAuthClient } from '@quarry/client';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api } from '../api.js';
import { ErrorNote, Field, ScrollBox, SecretOnce } from '../components.js';
import { href } from '../router.js';
import { AgentToolsSection } from './agent-tools.js';

const SCOPES = ['query', 'keys', 'owner', 'account'] as const;

const when = (iso: string | null, never = 'never') => (iso === null ? never : new Date(iso).toLocaleString());

function ScopeBoxes({ legend }: { readonly legend: string }) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {SCOPES.map((scope) => (
        <label key={scope} className="inline">
          <input type="checkbox" name="scopes" value={scope} defaultChecked={scope === 'query'} /> {scope}
        </label>
      ))}
    </fieldset>
  );
}

export function KeysPage() {
  const [keys, setKeys] = useState<readonly Key[]>();
  const [clients, setClients] = useState<readonly OAuthClient[]>();
  const [error, setError] = useState<unknown>();
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const load = useCallback(() => {
    api<{ keys: Key[] }>('GET', '/v1/keys').then((r) => setKeys(r.keys), setError);
    api<{ clients: OAuthClient[] }>('GET', '/v1/oauth/clients').then((r) => setClients(r.clients), setError);
  }, []);
  useEffect(load, [load]);

  async function createKey(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const expires = String(form.get('expires') ?? '');
    setError(undefined);
    try {
      const answer = await api<{ key: Key & { secret: string } }>('POST', '/v1/keys', {
        name: String(form.get('name')),
        scopes: form.getAll('scopes').map(String),
        ...(expires === '' ? {} : { expires_at: new Date(`${expires}T23:59:59Z`).toISOString() }),
      });
      setSecret({ label: `Secret of the key "${answer.key.name}"`, value: answer.key.secret });
      formElement.reset();
      load();
    } catch (e) {
      setError(e);
    }
  }

  async function createClient(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    setError(undefined);
    try {
      const answer = await api<{ client: OAuthClient; client_secret: string }>('POST', '/v1/oauth/clients', {
        name: String(form.get('name')),
        scopes: form.getAll('scopes').map(String),
      });
      setSecret({
        label: `Client secret of "${answer.client.name}" (client id ${answer.client.client_id})`,
        value: answer.client_secret,
      });
      formElement.reset();
      load();
    } catch (e) {
      setError(e);
    }
  }

  async function revoke(path: string, what: string) {
    if (!window.confirm(`Revoke ${what}? Calls using it stop working at once.`)) return;
    try {
      await api('DELETE', path);
      // A secret shown a moment ago may be the one just revoked: it is no use any more.
      setSecret(undefined);
      load();
    } catch (e) {
      setError(e);
    }
  }

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <p className="hint">
        A key must never be in a web page: for analytics in your own site's pages, use{' '}
        <a href={href('embedding')}>embed tokens</a>.
      </p>
      {secret === undefined ? null : <SecretOnce label={secret.label} secret={secret.value} />}
      <ErrorNote error={error} />
      <form onSubmit={createKey} className="panel" aria-labelledby="new-key">
        <h2 id="new-key">New key</h2>
        <Field label="Key name">{(id) => <input id={id} name="name" required maxLength={100} />}</Field>
        <ScopeBoxes legend="Key scopes" />
        <Field label="Expires on (optional)" hint="The key stops working at the end of that day (UTC).">
          {(id, hint) => <input id={id} name="expires" type="date" aria-describedby={hint} />}
        </Field>
        <button type="submit">Create key</button>
      </form>
      <ScrollBox label="Your keys">
        <table>
          <caption>Your keys</caption>
          <thead>
            <tr>
              <th scope="col">name</th>
              <th scope="col">prefix</th>
              <th scope="col">scopes</th>
              <th scope="col">last used</th>
              <th scope="col">expires</th>
              <th scope="col">status</th>
              <th scope="col">
                <span className="visually-hidden">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(keys ?? []).map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>{k.scopes.join(', ')}</td>
                <td>{when(k.last_used_at)}</td>
                <td>{when(k.expires_at)}</td>
                <td>{k.revoked_at === null ? 'active' : `revoked ${when(k.revoked_at)}`}</td>
                <td>
                  {k.revoked_at === null ? (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => revoke(`/v1/keys/${k.id}`, `the key "${k.name}"`)}
                    >
                      Revoke<span className="visually-hidden"> {k.name}</span>
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>

      <h1 id="clients-title">OAuth clients</h1>
      <p className="hint">
        For services that exchange a client id and secret for short-lived tokens (
        <code>POST /oauth/token</code>, client-credentials grant).
      </p>
      <form onSubmit={createClient} className="panel" aria-labelledby="new-client">
        <h2 id="new-client">New OAuth client</h2>
        <Field label="Client name">{(id) => <input id={id} name="name" required maxLength={100} />}</Field>
        <ScopeBoxes legend="Client scopes" />
        <button type="submit">Create client</button>
      </form>
      <ScrollBox label="Your OAuth clients">
        <table>
          <caption>Your OAuth clients</caption>
          <thead>
            <tr>
              <th scope="col">name</th>
              <th scope="col">client id</th>
              <th scope="col">scopes</th>
              <th scope="col">created</th>
              <th scope="col">status</th>
              <th scope="col">
                <span className="visually-hidden">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(clients ?? []).map((c) => (
              <tr key={c.id}>
                <td>{c.name}</td>
                <td>
                  <code>{c.client_id}</code>
                </td>
                <td>{c.scopes.join(', ')}</td>
                <td>{when(c.created_at)}</td>
                <td>{c.revoked_at === null ? 'active' : `revoked ${when(c.revoked_at)}`}</td>
                <td>
                  {c.revoked_at === null ? (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => revoke(`/v1/oauth/clients/${c.id}`, `the OAuth client "${c.name}"`)}
                    >
                      Revoke<span className="visually-hidden"> {c.name}</span>
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      <AgentToolsSection />
    </section>
  );
}
