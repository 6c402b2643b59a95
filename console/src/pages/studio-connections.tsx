// The studio's connections: a form per warehouse type built from the connector's config schema
// and the form hints (`ui`) its fields declare (labels, help, placeholders, secrets masked,
// advanced settings folded away), tested before it is saved with the warehouse's own message
// shown once and a "Save without testing" button; each saved connection tested, edited (its
// secrets rotated: a secret left empty keeps the saved one) or deleted.
import { type FormEvent, type ReactElement, useCallback, useEffect, useId, useState } from 'react';
import { ApiFailure, api, messageOf } from '../api.js';
import { ErrorNote } from '../components.js';

export interface FieldHints {
  readonly label?: string;
  readonly help?: string;
  readonly placeholder?: string;
  readonly secret?: boolean;
  readonly advanced?: boolean;
  readonly order?: number;
  readonly input?: string;
  readonly options?: readonly { readonly value: unknown; readonly label: string }[];
}

export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly anyOf?: readonly JsonSchema[];
  readonly items?: JsonSchema;
  readonly secret?: boolean;
  readonly default?: unknown;
  readonly description?: string;
  readonly const?: unknown;
  readonly ui?: FieldHints;
}

export interface ConnectorType {
  readonly type: string;
  readonly display_name: string;
  readonly config_schema: JsonSchema;
  readonly secret_fields: readonly string[];
}

export interface Connection {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly config: Record<string, unknown>;
  readonly secret_fields: readonly string[];
}

type Kind =
  | 'text'
  | 'password'
  | 'textarea'
  | 'number'
  | 'checkbox'
  | 'select'
  | 'list'
  | 'map'
  | 'url'
  | 'json';

interface FormField {
  readonly name: string;
  readonly label: string;
  readonly help: string | undefined;
  readonly placeholder: string | undefined;
  readonly secret: boolean;
  readonly advanced: boolean;
  readonly required: boolean;
  readonly kind: Kind;
  readonly options: readonly { readonly value: unknown; readonly label: string }[];
}

const isType = (schema: JsonSchema, type: string): boolean =>
  schema.type === type ||
  (Array.isArray(schema.type) && schema.type.includes(type)) ||
  (schema.anyOf ?? []).some((branch) => isType(branch, type));

/** `connectTimeoutMs` → "Connect timeout ms": what a field without hints is called. */
const humanise = (name: string) => {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

function kindOf(schema: JsonSchema, hints: FieldHints, secret: boolean): Kind {
  const input = hints.input;
  if (input === 'select' && (hints.options?.length ?? 0) > 0) return 'select';
  if (secret) return input === 'textarea' ? 'textarea' : 'password';
  if (input !== undefined && input !== 'select') return input as Kind;
  if (schema.const === true) return 'checkbox';
  // A plain boolean may default to true: a checkbox, empty, could not say "off".
  if (isType(schema, 'boolean')) return 'select';
  if (isType(schema, 'integer') || isType(schema, 'number')) return 'number';
  if (isType(schema, 'string')) return 'text';
  if (isType(schema, 'array') && schema.items !== undefined && isType(schema.items, 'string')) return 'list';
  return 'json';
}

const ON_OFF = [
  { value: true, label: 'On' },
  { value: false, label: 'Off' },
] as const;

/** The fields of one variant, in the order the connector asked for (then the schema's). */
export function fieldsOf(variant: JsonSchema): FormField[] {
  const entries = Object.entries(variant.properties ?? {});
  return entries
    .map(([name, schema], index) => {
      const hints = schema.ui ?? {};
      const secret = hints.secret === true || schema.secret === true;
      const required = (variant.required ?? []).includes(name) && schema.default === undefined;
      return {
        index,
        order: hints.order ?? 1_000 + index,
        field: {
          name,
          label: hints.label ?? humanise(name),
          help: hints.help ?? schema.description,
          placeholder:
            hints.placeholder ?? (schema.default === undefined ? undefined : String(schema.default)),
          secret,
          // A required field is never folded away, whatever its hints say.
          advanced: hints.advanced === true && !required,
          required,
          kind: kindOf(schema, hints, secret),
          options: hints.options ?? (isType(schema, 'boolean') ? ON_OFF : []),
        } satisfies FormField,
      };
    })
    .sort((a, b) => a.order - b.order || a.index - b.index)
    .map((e) => e.field);
}

/** The ways of configuring a type: each `anyOf` branch (in their declared order), or the schema. */
export function variantsOf(schema: JsonSchema): readonly JsonSchema[] {
  const variants = schema.anyOf ?? [schema];
  return [...variants].sort((a, b) => (a.ui?.order ?? 1_000) - (b.ui?.order ?? 1_000));
}

const variantLabel = (variant: JsonSchema, i: number) =>
  variant.ui?.label ??
  (variant.required && variant.required.length > 0
    ? `With ${variant.required.map(humanise).join(', ').toLowerCase()}`
    : `Form ${i + 1}`);

/** A saved value as the form shows it. */
function shownValue(field: FormField, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (field.kind === 'select') {
    const index = field.options.findIndex((o) => JSON.stringify(o.value) === JSON.stringify(value));
    return index < 0 ? '' : String(index);
  }
  if (field.kind === 'list' && Array.isArray(value)) return value.join('\n');
  if (field.kind === 'map' && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k} = ${String(v)}`)
      .join('\n');
  }
  if (field.kind === 'json') return JSON.stringify(value, null, 2);
  return String(value);
}

/** What is wrong with a field's text, for a message naming the field by its label. */
class FieldProblem extends Error {}

/** The value of one field from the form's text, or undefined when it is left empty. */
function fieldValue(field: FormField, raw: FormDataEntryValue | null): unknown {
  if (field.kind === 'checkbox') return raw === 'on' ? true : undefined;
  const text = raw === null ? '' : String(raw).trim();
  if (text === '') return undefined;
  switch (field.kind) {
    case 'number': {
      const n = Number(text);
      if (!Number.isFinite(n)) throw new FieldProblem(`${field.label}: must be a number`);
      return n;
    }
    case 'select':
      return field.options[Number(text)]?.value;
    case 'list':
      return text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '');
    case 'map': {
      const out: Record<string, string> = {};
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        const at = line.indexOf('=');
        if (at < 1) throw new FieldProblem(`${field.label}: write each line as name = value`);
        out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
      }
      return out;
    }
    case 'json':
      try {
        return JSON.parse(text);
      } catch {
        throw new FieldProblem(`${field.label}: must be JSON`);
      }
    default:
      return raw === null ? undefined : String(raw);
  }
}

function ConfigField({
  field,
  saved,
  savedSecret,
  error,
}: {
  readonly field: FormField;
  readonly saved: unknown;
  readonly savedSecret: boolean;
  readonly error: string | undefined;
}) {
  const id = useId();
  const name = `config.${field.name}`;
  const rotating = field.secret && savedSecret;
  const help = rotating
    ? `${field.help === undefined ? '' : `${field.help} `}A value is saved: leave this empty to keep it, or type a new one to replace it.`
    : field.help;
  const hintId = help === undefined ? undefined : `${id}-hint`;
  const errorId = error === undefined ? undefined : `${id}-error`;
  const describedBy = [hintId, errorId].filter((x) => x !== undefined).join(' ') || undefined;
  const label = `${field.label}${field.required || field.kind === 'checkbox' || field.advanced ? '' : ' (optional)'}`;
  const common = {
    id,
    name,
    'aria-describedby': describedBy,
    'aria-invalid': error === undefined ? undefined : true,
    required: field.required && !rotating,
  } as const;
  const value = field.secret ? '' : shownValue(field, saved);
  const help_ = (
    <>
      {help === undefined ? null : (
        <p className="hint" id={hintId}>
          {help}
        </p>
      )}
      {error === undefined ? null : (
        <p className="error field-error" id={errorId}>
          {error}
        </p>
      )}
    </>
  );
  if (field.kind === 'checkbox') {
    return (
      <div className="check">
        <input type="checkbox" {...common} defaultChecked={saved === true} />
        <div>
          <label htmlFor={id}>{label}</label>
          {help_}
        </div>
      </div>
    );
  }
  let input: ReactElement;
  if (field.kind === 'select') {
    input = (
      <select {...common} defaultValue={value}>
        <option value="">Default</option>
        {field.options.map((o, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the options of a field are positional.
          <option key={i} value={String(i)}>
            {o.label}
          </option>
        ))}
      </select>
    );
  } else if (
    field.kind === 'textarea' ||
    field.kind === 'list' ||
    field.kind === 'map' ||
    field.kind === 'json'
  ) {
    input = (
      <textarea
        {...common}
        className={field.kind === 'textarea' && !field.secret ? undefined : 'code'}
        rows={field.kind === 'textarea' ? 5 : 3}
        spellCheck={false}
        autoComplete="off"
        placeholder={rotating ? 'Saved (hidden)' : field.placeholder}
        defaultValue={value}
      />
    );
  } else {
    input = (
      <input
        {...common}
        type={
          field.kind === 'password'
            ? 'password'
            : field.kind === 'number'
              ? 'number'
              : field.kind === 'url'
                ? 'url'
                : 'text'
        }
        autoComplete={field.secret ? 'new-password' : 'off'}
        placeholder={rotating ? 'Saved (hidden)' : field.placeholder}
        defaultValue={value}
      />
    );
  }
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {input}
      {help_}
    </div>
  );
}

/** The warehouse's own words when a test before saving failed, else undefined. */
function warehouseSaid(error: unknown): string | undefined {
  if (!(error instanceof ApiFailure) || error.status !== 400) return undefined;
  return error.details.find((d) => d.field === 'config')?.message;
}

/** Problems of single config fields (`config.host: …`), by field name. */
function fieldErrors(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(error instanceof ApiFailure)) return out;
  for (const d of error.details) {
    const match = /^config\.([^.]+)/.exec(d.field ?? '');
    if (match?.[1] !== undefined && out[match[1]] === undefined) out[match[1]] = d.message;
  }
  return out;
}

/**
 * The form for a new connection (no `editing`) or for changing a saved one: the same fields, the
 * saved values filled in, secrets empty (kept unless typed again).
 */
function ConnectionForm({
  types,
  editing,
  onSaved,
  onCancel,
}: {
  readonly types: readonly ConnectorType[];
  readonly editing?: Connection;
  readonly onSaved: (connection: Connection, tested: boolean) => void;
  readonly onCancel?: () => void;
}) {
  const headingId = useId();
  const [type, setType] = useState(editing?.type ?? 'postgres');
  const connector = types.find((t) => t.type === type) ?? types[0];
  const variants = connector === undefined ? [] : variantsOf(connector.config_schema);
  const savedVariant =
    editing === undefined
      ? 0
      : Math.max(
          0,
          // Secrets are never sent back: a saved secret counts by its name alone.
          variants.findIndex((v) =>
            (v.required ?? []).every((r) => r in editing.config || editing.secret_fields.includes(r)),
          ),
        );
  const [variantIndex, setVariantIndex] = useState(savedVariant);
  const variant = variants[Math.min(variantIndex, variants.length - 1)];
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState<{ name: string; config: Record<string, unknown> }>();
  const [busy, setBusy] = useState(false);
  const fields = variant === undefined ? [] : fieldsOf(variant);
  const basic = fields.filter((f) => !f.advanced);
  const advanced = fields.filter((f) => f.advanced);
  const said = warehouseSaid(error);
  const byField = fieldErrors(error);

  async function save(name: string, config: Record<string, unknown>, test: boolean) {
    setBusy(true);
    setError(undefined);
    try {
      const query = test ? '' : '?test=false';
      const answer =
        editing === undefined
          ? await api<{ connection: Connection }>('POST', `/v1/owner/connections${query}`, {
              name,
              // The type shown: the first registered one when PostgreSQL is not.
              type: connector?.type ?? type,
              config,
            })
          : await api<{ connection: Connection }>('PATCH', `/v1/owner/connections/${editing.id}${query}`, {
              config,
            });
      setPending(undefined);
      onSaved(answer.connection, test);
    } catch (e) {
      setPending(test ? { name, config } : undefined);
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (variant === undefined) return;
    const form = new FormData(event.currentTarget);
    const config: Record<string, unknown> = {};
    try {
      for (const field of fields) {
        const value = fieldValue(field, form.get(`config.${field.name}`));
        if (editing === undefined) {
          if (value !== undefined) config[field.name] = value;
        } else if (value === undefined) {
          // Left empty: a secret is kept; any other saved field is removed.
          if (!field.secret && editing.config[field.name] !== undefined) config[field.name] = null;
        } else if (field.secret || JSON.stringify(value) !== JSON.stringify(editing.config[field.name])) {
          config[field.name] = value;
        }
      }
      if (editing !== undefined) {
        // Fields of another variant than the one shown are dropped.
        const shown = new Set(fields.map((f) => f.name));
        for (const key of [...Object.keys(editing.config), ...editing.secret_fields]) {
          if (!shown.has(key) && !key.includes('.')) config[key] = null;
        }
      }
    } catch (e) {
      setError(e);
      return;
    }
    void save(editing?.name ?? String(form.get('name')), config, true);
  }

  const title = editing === undefined ? 'Add a connection' : `Edit ${editing.name}`;
  return (
    <form onSubmit={submit} className="panel connection-form" aria-labelledby={headingId}>
      <h3 id={headingId}>{title}</h3>
      {editing === undefined ? (
        <>
          <div className="field">
            <label htmlFor={`${headingId}-name`}>Connection name</label>
            <input
              id={`${headingId}-name`}
              name="name"
              required
              pattern="[a-z0-9][a-z0-9_\-]{0,63}"
              aria-describedby={`${headingId}-name-hint`}
              autoComplete="off"
            />
            <p className="hint" id={`${headingId}-name-hint`}>
              How analytics refer to it (<code>connection: shop</code>): lowercase letters, digits, - and _.
            </p>
          </div>
          <div className="field">
            <label htmlFor={`${headingId}-type`}>Warehouse type</label>
            <select
              id={`${headingId}-type`}
              value={connector?.type ?? type}
              onChange={(e) => {
                setType(e.target.value);
                setVariantIndex(0);
                setError(undefined);
                setPending(undefined);
              }}
            >
              {types.map((t) => (
                <option key={t.type} value={t.type}>
                  {t.display_name}
                </option>
              ))}
            </select>
          </div>
        </>
      ) : (
        <p className="meta">
          {connector?.display_name ?? editing.type}. Change what you need; a secret left empty is kept, a new
          one replaces it (rotation without an outage: calls in flight finish on the old one).
        </p>
      )}
      {variants.length > 1 ? (
        <fieldset className="choices">
          <legend>How to connect</legend>
          {variants.map((v, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the variants of a schema are positional.
            <label key={i} className="inline">
              <input
                type="radio"
                name="variant"
                checked={i === variantIndex}
                onChange={() => {
                  setVariantIndex(i);
                  setError(undefined);
                }}
              />
              {variantLabel(v, i)}
            </label>
          ))}
        </fieldset>
      ) : null}
      <div key={`${type}-${variantIndex}`}>
        {basic.map((f) => (
          <ConfigField
            key={f.name}
            field={f}
            saved={editing?.config[f.name]}
            savedSecret={editing?.secret_fields.includes(f.name) === true}
            error={byField[f.name]}
          />
        ))}
        {advanced.length === 0 ? null : (
          <details
            className="advanced"
            open={advanced.some((f) => byField[f.name] !== undefined) || undefined}
          >
            <summary>Advanced settings</summary>
            {advanced.map((f) => (
              <ConfigField
                key={f.name}
                field={f}
                saved={editing?.config[f.name]}
                savedSecret={editing?.secret_fields.includes(f.name) === true}
                error={byField[f.name]}
              />
            ))}
          </details>
        )}
      </div>
      {said === undefined ? (
        Object.keys(byField).length > 0 ? (
          <p className="error" role="alert">
            Some settings need fixing: see the messages under them.
          </p>
        ) : (
          <ErrorNote error={error} />
        )
      ) : (
        <div className="warehouse-said" role="alert" data-testid="warehouse-said">
          <p className="said-line">
            <strong>Not saved: the test connection failed.</strong> The warehouse said:
          </p>
          <pre className="said">{said}</pre>
          <p className="said-hint">
            Fix the settings and try again, or save it as it is (for a warehouse that is not reachable yet).
          </p>
        </div>
      )}
      <div className="row">
        <button type="submit" disabled={busy}>
          {busy ? 'Testing…' : editing === undefined ? 'Test and add connection' : 'Test and save changes'}
        </button>
        {said !== undefined && pending !== undefined ? (
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() => void save(pending.name, pending.config, false)}
          >
            Save without testing
          </button>
        ) : null}
        {onCancel === undefined ? null : (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

export function Connections({
  connections,
  onChange,
}: {
  readonly connections: readonly Connection[];
  readonly onChange: (added?: Connection) => void;
}) {
  const [types, setTypes] = useState<readonly ConnectorType[]>([]);
  const [error, setError] = useState<unknown>();
  const [status, setStatus] = useState<Record<string, { ok: boolean; text: string }>>({});
  const [editing, setEditing] = useState<string>();
  const [formKey, setFormKey] = useState(0);
  const [saved, setSaved] = useState<string>();
  useEffect(() => {
    api<{ connectors: ConnectorType[] }>('GET', '/v1/connectors').then(
      (r) => setTypes(r.connectors),
      setError,
    );
  }, []);
  const displayName = useCallback(
    (type: string) => types.find((t) => t.type === type)?.display_name ?? type,
    [types],
  );

  async function test(connection: Connection) {
    setStatus((s) => ({ ...s, [connection.id]: { ok: true, text: 'Testing…' } }));
    try {
      const result = await api<{ latency_ms: number }>('POST', `/v1/owner/connections/${connection.id}/test`);
      setStatus((s) => ({
        ...s,
        [connection.id]: { ok: true, text: `Reachable (${Math.round(result.latency_ms)} ms)` },
      }));
    } catch (e) {
      setStatus((s) => ({ ...s, [connection.id]: { ok: false, text: messageOf(e) } }));
    }
  }
  async function remove(connection: Connection) {
    if (!window.confirm(`Delete the connection "${connection.name}"?`)) return;
    setError(undefined);
    try {
      await api('DELETE', `/v1/owner/connections/${connection.id}`);
      setSaved(`Deleted ${connection.name}.`);
      onChange();
    } catch (e) {
      setError(e);
    }
  }
  function savedOne(connection: Connection, tested: boolean, verb: string) {
    setError(undefined);
    setEditing(undefined);
    setStatus((s) => {
      const { [connection.id]: _, ...rest } = s;
      return rest;
    });
    setSaved(`${verb} ${connection.name}${tested ? ': the warehouse answered the test.' : ', untested.'}`);
    onChange(verb === 'Added' ? connection : undefined);
  }

  return (
    <section aria-labelledby="connections-title">
      <h2 id="connections-title">Connections</h2>
      <p className="meta">
        The warehouses your analytics read from. Secrets are stored encrypted and never shown again.
      </p>
      <ErrorNote error={error} />
      {saved === undefined ? null : (
        <p className="ok" role="status" data-testid="connection-saved">
          {saved}
        </p>
      )}
      {connections.length === 0 ? <p>No connection yet: add one below.</p> : null}
      <ul className="plain connections">
        {connections.map((c) => (
          <li key={c.id} className="connection">
            <div className="row">
              <strong>{c.name}</strong> <span className="meta">{displayName(c.type)}</span>
              <span className="spacer" />
              <button type="button" className="secondary" onClick={() => test(c)}>
                Test<span className="visually-hidden"> {c.name}</span>
              </button>
              <button
                type="button"
                className="secondary"
                aria-expanded={editing === c.id}
                onClick={() => {
                  setSaved(undefined);
                  setEditing(editing === c.id ? undefined : c.id);
                }}
              >
                Edit<span className="visually-hidden"> {c.name}</span>
              </button>
              <button type="button" className="danger" onClick={() => remove(c)}>
                Delete<span className="visually-hidden"> {c.name}</span>
              </button>
            </div>
            {status[c.id] === undefined ? null : (
              <output className={status[c.id]?.ok ? 'meta' : 'error'} data-testid={`test-${c.name}`}>
                {status[c.id]?.text}
              </output>
            )}
            {editing === c.id && types.length > 0 ? (
              <ConnectionForm
                types={types}
                editing={c}
                onSaved={(saved, tested) => savedOne(saved, tested, 'Saved')}
                onCancel={() => setEditing(undefined)}
              />
            ) : null}
          </li>
        ))}
      </ul>
      {types.length === 0 ? null : (
        <ConnectionForm
          key={formKey}
          types={types}
          onSaved={(connection, tested) => {
            setFormKey((k) => k + 1);
            savedOne(connection, tested, 'Added');
          }}
        />
      )}
    </section>
  );
}
