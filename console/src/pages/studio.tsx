// The owner studio: connections (added from each connector's config schema, tested, the
// warehouse's own error shown), analytics (YAML editor, deploy, a test run, versions, purge
// cache), and listings (publish, unpublish, previews on or off).

import { createQuarryClient, type QueryResult } from '@quarry/client';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { parse, stringify } from 'yaml';
import { api, messageOf } from '../api.js';
import { DataTable, ErrorNote, Field } from '../components.js';
import { ResultChart } from '../result-chart.js';
import { href } from '../router.js';

interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly anyOf?: readonly JsonSchema[];
  readonly secret?: boolean;
  readonly default?: unknown;
  readonly description?: string;
}

interface ConnectorType {
  readonly type: string;
  readonly display_name: string;
  readonly config_schema: JsonSchema;
  readonly secret_fields: readonly string[];
}

interface Connection {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly config: Record<string, unknown>;
  readonly secret_fields: readonly string[];
}

interface Analytic {
  readonly name: string;
  readonly version: number;
  readonly current_version: number;
  readonly visibility: string;
  readonly definition: Record<string, unknown>;
  readonly updated_at: string;
}

interface OwnListing {
  readonly title: string;
  readonly description: string;
  readonly category: string;
  readonly tags: readonly string[];
  readonly previews: boolean;
  readonly published: boolean;
}

/** The variants of a config schema: each `anyOf` branch, or the schema itself. */
const variantsOf = (schema: JsonSchema): readonly JsonSchema[] => schema.anyOf ?? [schema];
const variantName = (variant: JsonSchema, i: number) =>
  variant.required && variant.required.length > 0 ? `with ${variant.required.join(', ')}` : `form ${i + 1}`;
const isType = (schema: JsonSchema, type: string) =>
  schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));

function ConfigFields({ variant }: { readonly variant: JsonSchema }) {
  return (
    <>
      {Object.entries(variant.properties ?? {}).map(([field, spec]) => {
        const required = variant.required?.includes(field) ?? false;
        const label = `${field}${required ? ' (required)' : ''}`;
        if (isType(spec, 'boolean')) {
          return (
            <label key={field} className="inline field">
              <input type="checkbox" name={`config.${field}`} value="true" /> {field}
            </label>
          );
        }
        const simple = isType(spec, 'string') || isType(spec, 'integer') || isType(spec, 'number');
        return (
          <Field key={field} label={label} {...(simple ? {} : { hint: 'JSON' })}>
            {(id, hint) => (
              <input
                id={id}
                name={`config.${field}`}
                required={required}
                aria-describedby={hint}
                type={
                  spec.secret
                    ? 'password'
                    : isType(spec, 'integer') || isType(spec, 'number')
                      ? 'number'
                      : 'text'
                }
                autoComplete="off"
                placeholder={spec.default === undefined ? '' : String(spec.default)}
              />
            )}
          </Field>
        );
      })}
    </>
  );
}

function configFrom(form: FormData, variant: JsonSchema): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [field, spec] of Object.entries(variant.properties ?? {})) {
    const raw = form.get(`config.${field}`);
    if (isType(spec, 'boolean')) {
      if (raw === 'true') config[field] = true;
      continue;
    }
    const text = raw === null ? '' : String(raw).trim();
    if (text === '') continue;
    if (isType(spec, 'integer') || isType(spec, 'number')) config[field] = Number(text);
    else if (isType(spec, 'string')) config[field] = text;
    else config[field] = JSON.parse(text);
  }
  return config;
}

function Connections() {
  const [types, setTypes] = useState<readonly ConnectorType[]>([]);
  const [connections, setConnections] = useState<readonly Connection[]>([]);
  const [type, setType] = useState('postgres');
  const [variantIndex, setVariantIndex] = useState(0);
  const [error, setError] = useState<unknown>();
  const [tested, setTested] = useState<Record<string, string>>({});
  const load = useCallback(() => {
    api<{ connections: Connection[] }>('GET', '/v1/owner/connections').then(
      (r) => setConnections(r.connections),
      setError,
    );
  }, []);
  useEffect(() => {
    api<{ connectors: ConnectorType[] }>('GET', '/v1/connectors').then(
      (r) => setTypes(r.connectors),
      setError,
    );
    load();
  }, [load]);
  const connector = types.find((t) => t.type === type);
  const variants = connector === undefined ? [] : variantsOf(connector.config_schema);
  const variant = variants[Math.min(variantIndex, variants.length - 1)];

  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (variant === undefined) return;
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    setError(undefined);
    try {
      await api('POST', '/v1/owner/connections', {
        name: String(form.get('name')),
        type,
        config: configFrom(form, variant),
      });
      formElement.reset();
      load();
    } catch (e) {
      setError(e);
    }
  }
  async function test(connection: Connection) {
    setTested((t) => ({ ...t, [connection.id]: 'Testing…' }));
    try {
      const result = await api<{ latency_ms: number }>('POST', `/v1/owner/connections/${connection.id}/test`);
      setTested((t) => ({ ...t, [connection.id]: `Reachable (${Math.round(result.latency_ms)} ms)` }));
    } catch (e) {
      setTested((t) => ({ ...t, [connection.id]: messageOf(e) }));
    }
  }
  async function remove(connection: Connection) {
    if (!window.confirm(`Delete the connection "${connection.name}"?`)) return;
    try {
      await api('DELETE', `/v1/owner/connections/${connection.id}`);
      load();
    } catch (e) {
      setError(e);
    }
  }

  return (
    <section aria-labelledby="connections-title">
      <h2 id="connections-title">Connections</h2>
      <ErrorNote error={error} />
      <ul className="plain">
        {connections.map((c) => (
          <li key={c.id} className="row">
            <strong>{c.name}</strong> <span className="meta">{c.type}</span>
            <button type="button" className="secondary" onClick={() => test(c)}>
              Test<span className="visually-hidden"> {c.name}</span>
            </button>
            <button type="button" className="danger" onClick={() => remove(c)}>
              Delete<span className="visually-hidden"> {c.name}</span>
            </button>
            {tested[c.id] === undefined ? null : (
              <output className="meta" data-testid={`test-${c.name}`}>
                {tested[c.id]}
              </output>
            )}
          </li>
        ))}
      </ul>
      <form onSubmit={add} className="panel" aria-labelledby="new-connection">
        <h3 id="new-connection">Add a connection</h3>
        <Field label="Connection name" hint="Lowercase letters, digits, - and _.">
          {(id, hint) => (
            <input id={id} name="name" required pattern="[a-z0-9][a-z0-9_\-]{0,63}" aria-describedby={hint} />
          )}
        </Field>
        <Field label="Warehouse type">
          {(id) => (
            <select
              id={id}
              value={type}
              onChange={(e) => {
                setType(e.target.value);
                setVariantIndex(0);
              }}
            >
              {types.map((t) => (
                <option key={t.type} value={t.type}>
                  {t.display_name}
                </option>
              ))}
            </select>
          )}
        </Field>
        {variants.length > 1 ? (
          <Field label="Settings form">
            {(id) => (
              <select id={id} value={variantIndex} onChange={(e) => setVariantIndex(Number(e.target.value))}>
                {variants.map((v, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: the variants of a schema are positional.
                  <option key={i} value={i}>
                    {variantName(v, i)}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        {variant === undefined ? null : <ConfigFields key={`${type}-${variantIndex}`} variant={variant} />}
        <button type="submit">Add connection</button>
      </form>
    </section>
  );
}

const STARTER = `name: my-analytic
title: My analytic
connection: my-connection
sql: |
  SELECT 1 AS one
params: {}
price: 1
visibility: public
`;

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

function ListingEditor({
  analytic,
  onChange,
}: {
  readonly analytic: Analytic;
  readonly onChange: () => void;
}) {
  const [listing, setListing] = useState<OwnListing | null>();
  const [error, setError] = useState<unknown>();
  const path = `/v1/owner/analytics/${encodeURIComponent(analytic.name)}/listing`;
  const load = useCallback(() => {
    api<{ listing: OwnListing }>('GET', path).then(
      (r) => setListing(r.listing),
      () => setListing(null),
    );
  }, [path]);
  useEffect(load, [load]);
  async function publish(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(undefined);
    try {
      await api('PUT', path, {
        title: String(form.get('title')),
        description: String(form.get('description')),
        category: String(form.get('category')),
        tags: String(form.get('tags'))
          .split(',')
          .map((t) => t.trim())
          .filter((t) => t !== ''),
        previews: form.get('previews') === 'on',
      });
      load();
      onChange();
    } catch (e) {
      setError(e);
    }
  }
  async function unpublish() {
    try {
      await api('DELETE', path);
      load();
    } catch (e) {
      setError(e);
    }
  }
  if (listing === undefined) return null;
  const definition = analytic.definition;
  return (
    <form onSubmit={publish} className="panel" aria-label={`Listing of ${analytic.name}`}>
      <h4>Listing {listing?.published ? '(published)' : '(not published)'}</h4>
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
      <Field label="Description" hint="Plain text: shown as written, never as HTML.">
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
      <label className="inline field">
        <input type="checkbox" name="previews" defaultChecked={listing?.previews ?? true} /> Free previews on
        the marketplace
      </label>
      <ErrorNote error={error} />
      <div className="row">
        <button type="submit">{listing?.published ? 'Update listing' : 'Publish'}</button>
        {listing?.published ? (
          <>
            <button type="button" className="danger" onClick={unpublish}>
              Unpublish
            </button>
            <a href={href('listing', analytic.name)}>View on the marketplace</a>
          </>
        ) : null}
      </div>
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
        version {analytic.current_version} · {analytic.visibility} · updated{' '}
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

function Analytics() {
  const [analytics, setAnalytics] = useState<readonly Analytic[]>([]);
  const [yaml, setYaml] = useState(STARTER);
  const [error, setError] = useState<unknown>();
  const [deployed, setDeployed] = useState<string>();
  const [checked, setChecked] = useState<string>();
  const load = useCallback(() => {
    api<{ analytics: Analytic[] }>('GET', '/v1/owner/analytics').then(
      (r) => setAnalytics(r.analytics),
      setError,
    );
  }, []);
  useEffect(load, [load]);

  /** The YAML as a definition with a name, or throws what is wrong with it. */
  function definitionOf(): Record<string, unknown> & { readonly name: string } {
    const definition = parse(yaml) as Record<string, unknown> | null;
    if (definition === null || typeof definition !== 'object' || typeof definition.name !== 'string') {
      throw new Error('The YAML must be a mapping with a `name`.');
    }
    return definition as Record<string, unknown> & { readonly name: string };
  }

  /** A dry run: every check of a deploy (the SQL against the warehouse too), saving nothing. */
  async function check() {
    setError(undefined);
    setDeployed(undefined);
    setChecked(undefined);
    try {
      const definition = definitionOf();
      const answer = await api<{ outcome: string; columns?: readonly { name: string }[] }>(
        'POST',
        `/v1/owner/analytics/${encodeURIComponent(definition.name)}/dry-run`,
        definition,
      );
      const columns =
        answer.columns === undefined ? '' : ` Columns: ${answer.columns.map((c) => c.name).join(', ')}.`;
      setChecked(`Check passed: deploying would leave ${definition.name} ${answer.outcome}.${columns}`);
    } catch (e) {
      setError(e);
    }
  }

  async function deploy(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setError(undefined);
    setDeployed(undefined);
    setChecked(undefined);
    try {
      const definition = definitionOf();
      const answer = await api<{ analytic: Analytic }>(
        'PUT',
        `/v1/owner/analytics/${encodeURIComponent(definition.name)}`,
        definition,
      );
      setDeployed(`Deployed ${answer.analytic.name}, version ${answer.analytic.current_version}.`);
      load();
    } catch (e) {
      setError(e);
    }
  }

  return (
    <section aria-labelledby="analytics-title">
      <h2 id="analytics-title">Analytics</h2>
      <form onSubmit={deploy} className="panel">
        <Field
          label="Analytic definition (YAML)"
          hint="The same YAML as `quarry analytics deploy`: name, connection, sql, params, insights, price…"
        >
          {(id, hint) => (
            <textarea
              id={id}
              className="code"
              rows={14}
              spellCheck={false}
              value={yaml}
              aria-describedby={hint}
              onChange={(e) => setYaml(e.target.value)}
            />
          )}
        </Field>
        <ErrorNote error={error} />
        {deployed === undefined ? null : (
          <p role="status" className="ok" data-testid="deployed">
            {deployed}
          </p>
        )}
        {checked === undefined ? null : (
          <p role="status" className="ok" data-testid="checked">
            {checked}
          </p>
        )}
        <div className="actions">
          <button type="button" onClick={check}>
            Check (dry run)
          </button>{' '}
          <button type="submit">Deploy</button>
        </div>
      </form>
      <ul className="cards">
        {analytics.map((a) => (
          <AnalyticItem
            key={a.name}
            analytic={a}
            onEdit={() => {
              setYaml(stringify(a.definition));
              window.scrollTo(0, 0);
            }}
            onChange={load}
          />
        ))}
      </ul>
    </section>
  );
}

export function StudioPage() {
  return (
    <section aria-labelledby="studio-title">
      <h1 id="studio-title">Owner studio</h1>
      <p>
        Connect a warehouse, deploy analytics on it, and list them on the marketplace. Earnings are on the{' '}
        <a href={href('statements')}>statements</a> page.
      </p>
      <Connections />
      <Analytics />
    </section>
  );
}
