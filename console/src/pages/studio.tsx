// The owner studio, around an owner's tasks: connect a warehouse (studio-connections.tsx), write an
// analytic in a YAML editor (highlighted, checked inline by a dry run, its connection picked from
// the owner's own), deploy it, try it (a test run, one chart per measure), and publish it after a
// confirmation, with a link to the live listing.

import { createQuarryClient, type QueryResult } from '@quarry/client';
import { type FormEvent, useCallback, useEffect, useId, useRef, useState } from 'react';
import { LineCounter, parseDocument, stringify } from 'yaml';
import { ApiFailure, api, messageOf } from '../api.js';
import { DataTable, ErrorNote, Field } from '../components.js';
import { ResultChart } from '../result-chart.js';
import { href } from '../router.js';
import type { EditorProblem, YamlEditor } from '../yaml-editor.js';
import { type Connection, Connections } from './studio-connections.js';

interface Analytic {
  readonly name: string;
  readonly version: number;
  readonly current_version: number;
  readonly visibility: string;
  readonly definition: Record<string, unknown>;
  readonly updated_at: string;
  /** Whether it is failing (the analytic.failing alert); on the owner's list. */
  readonly health?: {
    readonly state: 'ok' | 'failing';
    readonly since: string | null;
    readonly error_rate_percent: number | null;
  };
}

/** The notice of the owner's failing analytics: the same alert as the analytic.failing webhook. */
function FailingNotice({ analytics }: { readonly analytics: readonly Analytic[] }) {
  const failing = analytics.filter((a) => a.health?.state === 'failing');
  if (failing.length === 0) return null;
  return (
    <div className="notice warning" role="status" data-testid="analytic-failing">
      {failing.map((a) => (
        <p key={a.name}>
          <strong>{a.name}</strong> is failing:{' '}
          {a.health?.error_rate_percent === null || a.health?.error_rate_percent === undefined
            ? 'most'
            : `${a.health.error_rate_percent}%`}{' '}
          of its warehouse queries failed over 5 minutes
          {a.health?.since ? ` (since ${new Date(a.health.since).toLocaleString()})` : ''}. Callers get errors
          until its connection answers again; check the connection and its warehouse.
        </p>
      ))}
      <p>
        Alerts by webhook: <a href={href('webhooks')}>Webhooks</a>.
      </p>
    </div>
  );
}

interface OwnListing {
  readonly title: string;
  readonly description: string;
  readonly category: string;
  readonly tags: readonly string[];
  readonly previews: boolean;
  readonly published: boolean;
}

const PLACEHOLDER_CONNECTION = 'my-connection';

const starter = (connection: string) => `name: my-analytic
title: My analytic
connection: ${connection}
sql: |
  SELECT 1 AS one
params: {}
price: 1
visibility: public
`;

const CONNECTION_LINE = /^connection:[ \t]*(.*?)[ \t]*$/m;

/** The connection the YAML names (top-level `connection:`), or undefined. */
export function connectionOf(yaml: string): string | undefined {
  const match = CONNECTION_LINE.exec(yaml);
  return match?.[1]?.replace(/^["']|["']$/g, '') || undefined;
}

/** The YAML with its top-level `connection:` set to `name` (added after `name:` when absent). */
export function withConnection(yaml: string, name: string): string {
  if (CONNECTION_LINE.test(yaml)) return yaml.replace(CONNECTION_LINE, `connection: ${name}`);
  const nameLine = /^name:.*$/m.exec(yaml);
  if (nameLine === null) return `connection: ${name}\n${yaml}`;
  const end = nameLine.index + nameLine[0].length;
  return `${yaml.slice(0, end)}\nconnection: ${name}${yaml.slice(end)}`;
}

/** YAML syntax errors, on their lines: checked as the owner types, before any dry run. */
function yamlProblems(text: string): EditorProblem[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  return doc.errors.map((e) => ({
    line: e.linePos?.[0]?.line,
    message: e.message.split('\n')[0] ?? e.message,
    severity: 'error' as const,
  }));
}

/** The 1-based line of the YAML node at `path` (or of its nearest ancestor that exists). */
function lineOfPath(text: string, path: readonly string[]): number | undefined {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, keepSourceTokens: false });
  for (let depth = path.length; depth > 0; depth--) {
    const parent = depth === 1 ? doc.contents : doc.getIn(path.slice(0, depth - 1), true);
    // The key's own line, rather than its value's (a block value starts on the next line).
    const items = (parent as { items?: { key?: { value?: unknown; range?: number[] } }[] } | null)?.items;
    const pair = items?.find((item) => String(item.key?.value) === path[depth - 1]);
    const offset = pair?.key?.range?.[0];
    if (offset !== undefined) return lineCounter.linePos(offset).line;
  }
  return undefined;
}

/** The line of the SQL that names `word` (a table or column the warehouse did not know). */
function lineOfSqlWord(text: string, word: string): number | undefined {
  const lines = text.split('\n');
  const sqlLine = lines.findIndex((l) => /^sql:/.test(l));
  if (sqlLine < 0) return undefined;
  const pattern = new RegExp(
    `(^|[^A-Za-z0-9_])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9_])`,
  );
  for (let i = sqlLine; i < lines.length; i++) {
    if (i > sqlLine && /^\S/.test(lines[i] ?? '')) break;
    if (pattern.test(lines[i] ?? '')) return i + 1;
  }
  return sqlLine + 1;
}

/** A dry run's or a deploy's refusal as problems on the lines they are about. */
export function problemsOf(text: string, error: unknown): EditorProblem[] {
  if (!(error instanceof ApiFailure)) {
    return [{ line: undefined, message: messageOf(error), severity: 'error' }];
  }
  const details = error.details.length > 0 ? error.details : [{ message: error.message }];
  return details.map((d) => {
    const field = (d.field ?? '').replace(/^(body|definition)\./, '');
    const path = field === '' ? [] : field.split(/[.[\]]+/).filter((p) => p !== '');
    let line: number | undefined;
    const quoted = /"([A-Za-z_][A-Za-z0-9_.]*)"/.exec(d.message)?.[1];
    if ((path.length === 0 || path[0] === 'sql') && quoted !== undefined) {
      line = lineOfSqlWord(text, quoted.split('.').pop() ?? quoted);
    }
    line ??= path.length > 0 ? lineOfPath(text, path) : lineOfPath(text, ['sql']);
    return { line, message: d.message, severity: 'error' as const };
  });
}

/**
 * The YAML editor: a plain textarea until CodeMirror (a chunk of its own, loaded only here) is in,
 * then CodeMirror with highlighting and the problems on their lines.
 */
function DefinitionEditor({
  text,
  onChange,
  problems,
}: {
  readonly text: string;
  readonly onChange: (text: string) => void;
  readonly problems: readonly EditorProblem[];
}) {
  const id = useId();
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<YamlEditor | undefined>(undefined);
  const [loaded, setLoaded] = useState(false);
  const changed = useRef(onChange);
  changed.current = onChange;
  const initial = useRef(text);
  useEffect(() => {
    let cancelled = false;
    import('../yaml-editor.js').then(
      ({ createYamlEditor }) => {
        if (cancelled || host.current === null) return;
        editor.current = createYamlEditor(host.current, {
          text: initial.current,
          onChange: (t) => changed.current(t),
          check: yamlProblems,
          labelledBy: `${id}-label`,
          describedBy: `${id}-hint`,
        });
        setLoaded(true);
      },
      () => {
        // Offline or a stale build: the textarea stays and still works.
      },
    );
    return () => {
      cancelled = true;
      editor.current?.destroy();
      editor.current = undefined;
    };
  }, [id]);
  useEffect(() => {
    initial.current = text;
    editor.current?.setText(text);
  }, [text]);
  useEffect(() => {
    editor.current?.setProblems(problems);
  }, [problems]);
  return (
    <div className="field">
      <span className="label" id={`${id}-label`}>
        Analytic definition (YAML)
      </span>
      {loaded ? null : (
        <textarea
          aria-labelledby={`${id}-label`}
          aria-describedby={`${id}-hint`}
          className="code"
          rows={14}
          spellCheck={false}
          value={text}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
      <div ref={host} className="yaml-editor" data-loaded={loaded} />
      <p className="hint" id={`${id}-hint`}>
        The same YAML as <code>quarry analytics deploy</code>: name, connection, sql, params, insights, price.
        Check marks problems on their lines; in the editor, Escape then Tab leaves it.
      </p>
    </div>
  );
}

function TestRun({ analytic }: { readonly analytic: Analytic }) {
  const [state, setState] = useState<{ error?: unknown; result?: QueryResult }>();
  async function run() {
    setState({});
    try {
      const minted = await api<{ token: string }>('POST', '/v1/marketplace/try-token', {
        source: analytic.name,
      });
      const client = createQuarryClient(
        { baseUrl: window.location.origin, apiKey: minted.token },
        { retry: { retries: 0 } },
      );
      const example = analytic.definition.example_params;
      const params =
        example !== null && typeof example === 'object' ? (example as Record<string, unknown>) : {};
      setState({ result: await client.query<Record<string, unknown>>(analytic.name, params) });
    } catch (e) {
      setState({ error: e });
    }
  }
  return (
    <div>
      <button type="button" className="secondary" onClick={run}>
        Test run<span className="visually-hidden"> {analytic.name}</span>
      </button>
      {state?.error === undefined ? null : (
        <p className="error" role="alert" data-testid="test-run-error">
          {messageOf(state.error)}
        </p>
      )}
      {state?.result === undefined ? null : (
        <div data-testid="test-run-result">
          <ResultChart
            spec={analytic.definition.insights}
            result={state.result}
            title={`${analytic.name}: test run`}
            onePerMeasure
          />
          <DataTable
            caption={`Test run of ${analytic.name} (version ${analytic.current_version}, example params, preview rows)`}
            columns={state.result.columns.map((c) => c.name)}
            rows={state.result.results.map((row) => state.result!.columns.map((c) => row[c.name]))}
          />
        </div>
      )}
    </div>
  );
}

interface ListingDraft {
  readonly title: string;
  readonly description: string;
  readonly category: string;
  readonly tags: readonly string[];
  readonly previews: boolean;
}

function ListingEditor({
  analytic,
  onChange,
}: {
  readonly analytic: Analytic;
  readonly onChange: () => void;
}) {
  const [listing, setListing] = useState<OwnListing | null>();
  const [error, setError] = useState<unknown>();
  const [draft, setDraft] = useState<ListingDraft>();
  const [published, setPublished] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  const dialogTitle = useId();
  const path = `/v1/owner/analytics/${encodeURIComponent(analytic.name)}/listing`;
  const load = useCallback(() => {
    api<{ listing: OwnListing }>('GET', path).then(
      (r) => setListing(r.listing),
      () => setListing(null),
    );
  }, [path]);
  useEffect(load, [load]);
  useEffect(() => {
    if (draft !== undefined && dialog.current?.open === false) dialog.current.showModal();
  }, [draft]);

  function review(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(undefined);
    setPublished(false);
    setDraft({
      title: String(form.get('title')),
      description: String(form.get('description')),
      category: String(form.get('category')),
      tags: String(form.get('tags'))
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== ''),
      previews: form.get('previews') === 'on',
    });
  }
  function close() {
    dialog.current?.close();
    setDraft(undefined);
  }
  async function publish() {
    if (draft === undefined) return;
    try {
      await api('PUT', path, draft);
      close();
      setPublished(true);
      load();
      onChange();
    } catch (e) {
      close();
      setError(e);
    }
  }
  async function unpublish() {
    if (!window.confirm(`Take ${analytic.name} off the marketplace? Callers will get 404 from now on.`))
      return;
    setError(undefined);
    setPublished(false);
    try {
      await api('DELETE', path);
      load();
    } catch (e) {
      setError(e);
    }
  }
  if (listing === undefined) return null;
  const definition = analytic.definition;
  const price = typeof definition.price === 'number' ? definition.price : undefined;
  const live = listing?.published === true;
  return (
    <form onSubmit={review} className="panel" aria-label={`Listing of ${analytic.name}`}>
      <h4>Listing {live ? '(published)' : '(not published)'}</h4>
      <Field label="Title">
        {(id) => (
          <input
            id={id}
            name="title"
            required
            maxLength={200}
            defaultValue={listing?.title ?? String(definition.title ?? analytic.name)}
          />
        )}
      </Field>
      <Field label="Description" hint="Markdown: emphasis, code, lists and links; never HTML.">
        {(id, hint) => (
          <textarea
            id={id}
            name="description"
            rows={3}
            maxLength={10_000}
            aria-describedby={hint}
            defaultValue={listing?.description ?? String(definition.description ?? '')}
          />
        )}
      </Field>
      <Field label="Category">
        {(id) => (
          <input
            id={id}
            name="category"
            required
            maxLength={64}
            defaultValue={listing?.category ?? String(definition.category ?? 'Other')}
          />
        )}
      </Field>
      <Field label="Tags" hint="Comma-separated.">
        {(id, hint) => (
          <input
            id={id}
            name="tags"
            aria-describedby={hint}
            defaultValue={(listing?.tags ?? []).join(', ')}
          />
        )}
      </Field>
      <div className="check">
        <input
          type="checkbox"
          id={`${dialogTitle}-previews`}
          name="previews"
          defaultChecked={listing?.previews ?? true}
        />
        <label htmlFor={`${dialogTitle}-previews`}>Free previews on the marketplace</label>
      </div>
      <ErrorNote error={error} />
      {published && live ? (
        <p className="ok" role="status" data-testid="published">
          Published: it is live on the marketplace.{' '}
          <a href={href('listing', analytic.name)}>See the live listing</a>
        </p>
      ) : null}
      <div className="row">
        <button type="submit">{live ? 'Update listing…' : 'Publish…'}</button>
        {live ? (
          <>
            <button type="button" className="danger" onClick={unpublish}>
              Unpublish
            </button>
            {published ? null : <a href={href('listing', analytic.name)}>View on the marketplace</a>}
          </>
        ) : null}
      </div>
      <dialog
        ref={dialog}
        aria-labelledby={dialogTitle}
        className="confirm"
        onCancel={() => setDraft(undefined)}
      >
        {draft === undefined ? null : (
          <>
            <h3 id={dialogTitle}>
              {live ? 'Update' : 'Publish'} “{draft.title}”?
            </h3>
            <ul>
              <li>Anyone on the marketplace can find it and call {analytic.name}.</li>
              <li>
                {price === undefined
                  ? 'Each call costs the price in its definition.'
                  : `Each call costs the caller ${price} credit${price === 1 ? '' : 's'}; you earn 80% of what callers pay.`}
              </li>
              <li>
                {draft.previews
                  ? 'Signed-in visitors can try it for free (previews, a few rows, on your warehouse).'
                  : 'No free previews.'}
              </li>
              <li>Category: {draft.category}.</li>
            </ul>
            <div className="row">
              <button type="button" onClick={publish}>
                {live ? 'Update now' : 'Publish now'}
              </button>
              <button type="button" className="secondary" onClick={close}>
                Cancel
              </button>
            </div>
          </>
        )}
      </dialog>
    </form>
  );
}

function AnalyticItem({
  analytic,
  onEdit,
  onChange,
}: {
  readonly analytic: Analytic;
  readonly onEdit: () => void;
  readonly onChange: () => void;
}) {
  const [versions, setVersions] = useState<readonly { version: number; created_at: string }[]>();
  const [note, setNote] = useState<string>();
  const base = `/v1/owner/analytics/${encodeURIComponent(analytic.name)}`;
  return (
    <li className="card">
      <h3>{analytic.name}</h3>
      <p className="meta">
        version {analytic.current_version} · {analytic.visibility} · on{' '}
        {String(analytic.definition.connection ?? '?')} · updated{' '}
        {new Date(analytic.updated_at).toLocaleString()}
      </p>
      <div className="row">
        <button type="button" className="secondary" onClick={onEdit}>
          Edit<span className="visually-hidden"> {analytic.name}</span>
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() =>
            api<{ versions: { version: number; created_at: string }[] }>('GET', `${base}/versions`).then(
              (r) => setVersions(r.versions),
              (e) => setNote(messageOf(e)),
            )
          }
        >
          Versions<span className="visually-hidden"> of {analytic.name}</span>
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() =>
            api('DELETE', `${base}/cache`).then(
              () => setNote('Cached answers dropped on every instance.'),
              (e) => setNote(messageOf(e)),
            )
          }
        >
          Purge cache<span className="visually-hidden"> of {analytic.name}</span>
        </button>
      </div>
      {note === undefined ? null : <p className="meta">{note}</p>}
      {versions === undefined ? null : (
        <DataTable
          caption="Versions"
          columns={['version', 'deployed']}
          rows={versions.map((v) => [v.version, new Date(v.created_at).toLocaleString()])}
        />
      )}
      <TestRun analytic={analytic} />
      <ListingEditor analytic={analytic} onChange={onChange} />
    </li>
  );
}

function Analytics({
  connections,
  yaml,
  setYaml,
}: {
  readonly connections: readonly Connection[];
  readonly yaml: string;
  readonly setYaml: (text: string) => void;
}) {
  const [analytics, setAnalytics] = useState<readonly Analytic[]>([]);
  const [error, setError] = useState<unknown>();
  const [problems, setProblems] = useState<readonly EditorProblem[]>([]);
  const [outcome, setOutcome] = useState<{ testId: string; text: string }>();
  const [busy, setBusy] = useState(false);
  const top = useRef<HTMLElement>(null);
  const load = useCallback(() => {
    api<{ analytics: Analytic[] }>('GET', '/v1/owner/analytics').then(
      (r) => setAnalytics(r.analytics),
      setError,
    );
  }, []);
  useEffect(load, [load]);
  const picked = connectionOf(yaml);
  const known = connections.some((c) => c.name === picked);

  function edit(text: string) {
    setYaml(text);
    setProblems([]);
  }

  /** The YAML as a definition with a name, or throws what is wrong with it. */
  function definitionOf(): Record<string, unknown> & { readonly name: string } {
    const doc = parseDocument(yaml);
    if (doc.errors.length > 0)
      throw new Error(`The YAML does not parse: ${doc.errors[0]?.message.split('\n')[0]}`);
    const definition = doc.toJS() as Record<string, unknown> | null;
    if (definition === null || typeof definition !== 'object' || typeof definition.name !== 'string') {
      throw new Error('The YAML must be a mapping with a `name`.');
    }
    return definition as Record<string, unknown> & { readonly name: string };
  }

  async function send(kind: 'check' | 'deploy') {
    setError(undefined);
    setOutcome(undefined);
    setProblems([]);
    setBusy(true);
    try {
      const definition = definitionOf();
      const path = `/v1/owner/analytics/${encodeURIComponent(definition.name)}`;
      if (kind === 'check') {
        const answer = await api<{ outcome: string; columns?: readonly { name: string }[] }>(
          'POST',
          `${path}/dry-run`,
          definition,
        );
        const columns =
          answer.columns === undefined ? '' : ` Columns: ${answer.columns.map((c) => c.name).join(', ')}.`;
        setOutcome({
          testId: 'checked',
          text: `Check passed: deploying would leave ${definition.name} ${answer.outcome}.${columns}`,
        });
      } else {
        const answer = await api<{ analytic: Analytic }>('PUT', path, definition);
        setOutcome({
          testId: 'deployed',
          text: `Deployed ${answer.analytic.name}, version ${answer.analytic.current_version}.`,
        });
        load();
      }
    } catch (e) {
      setError(e);
      setProblems(problemsOf(yaml, e));
    } finally {
      setBusy(false);
    }
  }

  function deploy(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    void send('deploy');
  }

  return (
    <section aria-labelledby="analytics-title" ref={top}>
      <h2 id="analytics-title">Analytics</h2>
      <FailingNotice analytics={analytics} />
      <form onSubmit={deploy} className="panel" aria-label="Analytic editor">
        <Field
          label="Connection"
          hint={
            connections.length === 0
              ? 'Add a connection above first.'
              : 'The warehouse this analytic reads; the YAML’s connection: follows your pick.'
          }
        >
          {(id, hint) => (
            <select
              id={id}
              aria-describedby={hint}
              value={known ? picked : ''}
              onChange={(e) => {
                if (e.target.value !== '') edit(withConnection(yaml, e.target.value));
              }}
            >
              <option value="">
                {picked === undefined || picked === PLACEHOLDER_CONNECTION
                  ? 'Pick a connection'
                  : `${picked} (not one of yours)`}
              </option>
              {connections.map((c) => (
                <option key={c.id} value={c.name}>
                  {c.name} ({c.type})
                </option>
              ))}
            </select>
          )}
        </Field>
        <DefinitionEditor text={yaml} onChange={edit} problems={problems} />
        {error === undefined ? null : (
          <div className="error" role="alert" data-testid="editor-error">
            {error instanceof ApiFailure && error.details.length > 0 ? (
              <>
                <p className="problem">
                  {kindOfRefusal(error)}
                  {problems.some((p) => p.line !== undefined) ? ' The lines are marked in the editor.' : ''}
                </p>
                {problems.map((p, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: problems are positional.
                  <p key={i} className="problem">
                    {p.line === undefined ? '' : `Line ${p.line}: `}
                    {p.message}
                  </p>
                ))}
              </>
            ) : (
              <p className="problem">{messageOf(error)}</p>
            )}
          </div>
        )}
        {outcome === undefined ? null : (
          <p role="status" className="ok" data-testid={outcome.testId}>
            {outcome.text}
          </p>
        )}
        <div className="row">
          <button type="button" className="secondary" disabled={busy} onClick={() => void send('check')}>
            Check (dry run)
          </button>
          <button type="submit" disabled={busy}>
            Deploy
          </button>
        </div>
      </form>
      <ul className="cards">
        {analytics.map((a) => (
          <AnalyticItem
            key={a.name}
            analytic={a}
            onEdit={() => {
              edit(stringify(a.definition));
              setOutcome(undefined);
              setError(undefined);
              top.current?.scrollIntoView();
            }}
            onChange={load}
          />
        ))}
      </ul>
    </section>
  );
}

/** The refusal's headline: the API's message without what its details repeat. */
function kindOfRefusal(error: ApiFailure): string {
  const first = error.details[0]?.message;
  const field = error.details[0]?.field;
  if (first !== undefined && error.message.includes(first)) {
    let cut = error.message.slice(0, error.message.indexOf(first)).replace(/[:\s]+$/, '');
    // "Invalid analytic definition: sql" says "sql" again: the line is marked.
    if (field !== undefined && cut.endsWith(field)) cut = cut.slice(0, -field.length).replace(/[:\s]+$/, '');
    return cut === '' ? 'Refused.' : `${cut}.`;
  }
  return error.message;
}

export function StudioPage() {
  const [connections, setConnections] = useState<readonly Connection[]>([]);
  const [error, setError] = useState<unknown>();
  const [yaml, setYaml] = useState(() => starter(PLACEHOLDER_CONNECTION));
  const loadConnections = useCallback((added?: Connection) => {
    api<{ connections: Connection[] }>('GET', '/v1/owner/connections').then((r) => {
      setConnections(r.connections);
      setError(undefined);
      // The template follows the owner's connections: the one just added, or the first one
      // while the YAML still names the placeholder.
      const pick = added?.name ?? r.connections[0]?.name;
      if (pick !== undefined) {
        setYaml((current) =>
          added !== undefined || connectionOf(current) === PLACEHOLDER_CONNECTION
            ? withConnection(current, pick)
            : current,
        );
      }
    }, setError);
  }, []);
  useEffect(() => loadConnections(), [loadConnections]);
  return (
    <section aria-labelledby="studio-title">
      <h1 id="studio-title">Owner studio</h1>
      <p>
        Connect a warehouse, write an analytic on it, try it, and list it on the marketplace. Earnings are on
        the <a href={href('statements')}>statements</a> page.
      </p>
      <ErrorNote error={error} />
      <Connections connections={connections} onChange={loadConnections} />
      <Analytics connections={connections} yaml={yaml} setYaml={setYaml} />
    </section>
  );
}
