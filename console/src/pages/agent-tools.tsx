// The account's agent tools (docs/mcp.md): on a listing's page, "Add to my agent's tools" (or
// "Remove"); on the keys page, the list of tools its agents see on /mcp and the default price
// limit of a tool call (GET/POST/DELETE /v1/account/tools, GET/PUT /v1/account/mcp). Agents
// cannot add tools themselves: this is where the account's person does.
import type { AgentTool, McpSettings } from '@quarry/client';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api } from '../api.js';
import { ErrorNote, Field } from '../components.js';
import { href } from '../router.js';
import { useSession } from '../session.js';

function useAgentTools() {
  const [tools, setTools] = useState<readonly AgentTool[]>();
  const [error, setError] = useState<unknown>();
  const load = useCallback(() => {
    api<{ items: AgentTool[] }>('GET', '/v1/account/tools').then((b) => setTools(b.items), setError);
  }, []);
  useEffect(load, [load]);
  return { tools, error, setError, load };
}

/** On a listing's page: whether it is one of the account's agent tools, and the button to change that. */
export function AgentToolButton({ name }: { readonly name: string }) {
  const { session } = useSession();
  if (session === undefined) return null;
  if (session === null)
    return (
      <p className="hint">
        <a href={href('login')}>Log in</a> to add it to your agent’s tools.
      </p>
    );
  return <SignedInButton name={name} />;
}

function SignedInButton({ name }: { readonly name: string }) {
  const { tools, error, setError, load } = useAgentTools();
  const [busy, setBusy] = useState(false);
  if (tools === undefined) return <ErrorNote error={error} />;
  const tool = tools.find((t) => t.name === name);
  async function change(add: boolean) {
    setBusy(true);
    setError(undefined);
    try {
      if (add) await api('POST', '/v1/account/tools', { source: name });
      else await api('DELETE', `/v1/account/tools/${encodeURIComponent(name)}`);
      load();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section aria-labelledby="agent-tools" className="panel">
      <h2 id="agent-tools">Your agent’s tools</h2>
      {tool?.owned ? (
        <p data-testid="agent-tool-state">Yours: it is one of your agent’s tools while it exists.</p>
      ) : tool !== undefined ? (
        <>
          <p data-testid="agent-tool-state">Your agents (on /mcp) can call it.</p>
          <button type="button" disabled={busy} onClick={() => change(false)}>
            Remove from my agent’s tools
          </button>
        </>
      ) : (
        <>
          <p data-testid="agent-tool-state">
            Not one of your agent’s tools: your agents can find and preview it, not call it.
          </p>
          <button type="button" disabled={busy} onClick={() => change(true)}>
            Add to my agent’s tools
          </button>
        </>
      )}
      <ErrorNote error={error} />
      <p className="hint">
        <a href={href('keys')}>All your agent’s tools</a> (on the keys page)
      </p>
    </section>
  );
}

/** On the keys page: the account's agent tools and the MCP default price limit. */
export function AgentToolsSection() {
  const { tools, error, setError, load } = useAgentTools();
  const [settings, setSettings] = useState<McpSettings>();
  useEffect(() => {
    api<{ mcp: McpSettings }>('GET', '/v1/account/mcp').then((b) => setSettings(b.mcp), setError);
  }, [setError]);
  async function remove(name: string) {
    setError(undefined);
    try {
      await api('DELETE', `/v1/account/tools/${encodeURIComponent(name)}`);
      load();
    } catch (e) {
      setError(e);
    }
  }
  async function saveLimit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setError(undefined);
    const text = String(new FormData(event.currentTarget).get('max_credits') ?? '').trim();
    try {
      const body = await api<{ mcp: McpSettings }>('PUT', '/v1/account/mcp', {
        max_credits: text === '' ? null : Number(text),
      });
      setSettings(body.mcp);
    } catch (e) {
      setError(e);
    }
  }
  return (
    <>
      <h1 id="agent-tools-list">Your agent’s tools</h1>
      <p className="hint">
        What your agents see and may call on <code>/mcp</code>: your own analytics, and those you add from the
        marketplace. Give agents keys with the <code>query</code> scope only: they cannot add tools.
      </p>
      <ErrorNote error={error} />
      <table>
        <caption>Tools</caption>
        <thead>
          <tr>
            <th scope="col">name</th>
            <th scope="col">title (the owner’s text)</th>
            <th scope="col">price</th>
            <th scope="col">
              <span className="visually-hidden">actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(tools ?? []).map((t) => (
            <tr key={t.name}>
              <td>
                <a href={href('listing', t.name)}>
                  <code>{t.name}</code>
                </a>
              </td>
              <td>{t.title}</td>
              <td>
                {t.price} {t.price === 1 ? 'credit' : 'credits'}
                {t.scheduled_price === null
                  ? ''
                  : `, ${t.scheduled_price} from ${t.price_effective_at ?? ''}`}
              </td>
              <td>
                {t.owned ? (
                  'yours'
                ) : (
                  <button type="button" className="danger" onClick={() => remove(t.name)}>
                    Remove<span className="visually-hidden"> {t.name}</span>
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {settings === undefined ? null : (
        <form onSubmit={saveLimit} className="panel" aria-labelledby="mcp-limit">
          <h2 id="mcp-limit">Price limit of a tool call</h2>
          <Field
            label="Most credits an agent’s call may cost"
            hint="Applies to tool calls that send no max_credits of their own; empty: no limit."
          >
            {(id, hint) => (
              <input
                id={id}
                name="max_credits"
                type="number"
                min={1}
                step={1}
                defaultValue={settings.max_credits ?? ''}
                aria-describedby={hint}
              />
            )}
          </Field>
          <button type="submit">Save limit</button>
        </form>
      )}
    </>
  );
}
