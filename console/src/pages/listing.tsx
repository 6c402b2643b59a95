// One listing: its owner, description, params with types and bounds, price and what it costs
// on each plan, example calls in every official client, and "Try it": a form built from the
// param schema, answered by a free marketplace preview (a try-token minted by the session) as a
// table and, where the analytic declares insights, a chart.
import { createQuarryClient, type QuarryClient } from '@quarry/client';
import { useQuarryQuery } from '@quarry/client/react';
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { api } from '../api.js';
import {
  CodeBlock,
  DataTable,
  ErrorNote,
  Field,
  formatCents,
  formatUsd,
  Markdown,
  plural,
} from '../components.js';
import { codeExamples } from '../examples.js';
import {
  boundsText,
  type ParamSchema,
  type ParamSpec,
  paramSchemaOf,
  paramValue,
  textOf,
  typeText,
} from '../params.js';
import { ResultChart } from '../result-chart.js';
import { href } from '../router.js';
import { useSession } from '../session.js';
import { AgentToolButton } from './agent-tools.js';
import type { ListingItem } from './marketplace.js';

interface ListingDetail extends ListingItem {
  readonly version: number;
  readonly params: Record<string, unknown>;
  readonly insights: Record<string, unknown> | null;
  readonly example_params: Record<string, unknown>;
  readonly curl: string;
}

interface Plan {
  readonly id: string;
  readonly name: string;
  /** Credits included a month; null: Pay as you Go (billed per credit within a budget). */
  readonly included_credits: number | null;
  readonly monthly_price_cents: number;
  /** What one credit costs on this plan (subscription ÷ credits, the PAYG price, Free: 0). */
  readonly credit_value_usd: number;
}

/** What a credit costs on a plan, and what `price` credits (a call) cost there. */
function costOn(plan: Plan, price: number): [string, string, string] {
  const call = formatUsd(plan.credit_value_usd * price);
  const included =
    plan.included_credits === null
      ? 'none: billed per credit, within your budget'
      : `${plan.included_credits} a month${plan.monthly_price_cents > 0 ? ` for ${formatCents(plan.monthly_price_cents)}` : ''}`;
  return [included, formatUsd(plan.credit_value_usd), plan.included_credits === 0 ? 'not callable' : call];
}

export function ListingPage({ name }: { readonly name: string }) {
  const [listing, setListing] = useState<ListingDetail>();
  const [plans, setPlans] = useState<readonly Plan[]>([]);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setListing(undefined);
    api<ListingDetail>('GET', `/v1/marketplace/listings/${encodeURIComponent(name)}`).then(
      setListing,
      setError,
    );
    api<{ plans: Plan[] }>('GET', '/v1/plans').then((p) => setPlans(p.plans), setError);
  }, [name]);
  if (listing === undefined) return error === undefined ? <p>Loading…</p> : <ErrorNote error={error} />;
  const schema = paramSchemaOf(listing.params);
  const examples = codeExamples(window.location.origin, listing.name, listing.example_params, listing.curl);
  return (
    <article aria-labelledby="listing-title">
      <p>
        <a href={href('marketplace')}>← Marketplace</a>
      </p>
      <h1 id="listing-title">{listing.title}</h1>
      <p className="meta">
        <code>{listing.name}</code> · version {listing.version} · by {listing.owner.name} · {listing.category}
        {listing.tags.length > 0 ? ` · ${listing.tags.join(', ')}` : ''}
      </p>
      <div className="description" data-testid="description">
        <Markdown text={listing.description} />
      </div>
      <h2>Price</h2>
      <p>
        <strong data-testid="price">{plural(listing.price, 'credit')}</strong> a call.
      </p>
      <DataTable
        caption="What a call costs on each plan"
        columns={['plan', 'credits included', 'a credit costs', 'a call costs']}
        rows={plans.map((p) => [p.name, ...costOn(p, listing.price)])}
      />
      <h2>Parameters</h2>
      <DataTable
        caption="Parameters"
        hideCaption
        columns={['name', 'type', 'required', 'bounds', 'default', 'description']}
        rows={Object.entries(schema).map(([param, spec]) => [
          param,
          typeText(spec),
          spec.required ? 'yes' : 'no',
          boundsText(spec, listing.example_params[param]),
          textOf(spec.default),
          spec.description ?? '',
        ])}
      />
      <TryIt listing={listing} schema={schema} />
      <AgentToolButton name={listing.name} />
      <h2>Call it</h2>
      {examples.map((example) => (
        <details key={example.language} open={example.language === 'curl'}>
          <summary>{example.language}</summary>
          <CodeBlock code={example.code} label={example.language} />
        </details>
      ))}
    </article>
  );
}

function ParamInput({
  name,
  spec,
  initial,
}: {
  readonly name: string;
  readonly spec: ParamSpec;
  readonly initial: unknown;
}) {
  const text = textOf(initial ?? spec.default);
  const label = `${name}${spec.required ? ' (required)' : ''}`;
  const hint = [typeText(spec), boundsText(spec, initial), spec.description]
    .filter((s) => s !== undefined && s !== '')
    .join(' — ');
  return (
    <Field label={label} hint={hint}>
      {(id, hintId) => {
        const common = { id, name, 'aria-describedby': hintId, required: spec.required === true };
        switch (spec.type) {
          case 'integer':
          case 'number':
            return (
              <input
                {...common}
                type="number"
                step={spec.type === 'integer' ? 1 : 'any'}
                defaultValue={text}
                {...(typeof spec.min === 'number' ? { min: spec.min } : {})}
                {...(typeof spec.max === 'number' ? { max: spec.max } : {})}
              />
            );
          case 'boolean':
            return (
              <select {...common} defaultValue={text === 'true' ? 'true' : 'false'}>
                <option value="true">true</option>
                <option value="false">false</option>
              </select>
            );
          case 'enum':
            return (
              <select {...common} defaultValue={text}>
                {spec.required ? null : <option value="">(none)</option>}
                {(spec.values ?? []).map((v) => (
                  <option key={v} value={v}>
                    {v}
                  </option>
                ))}
              </select>
            );
          case 'date':
            return <input {...common} type="date" defaultValue={text} />;
          default:
            return (
              <input
                {...common}
                type="text"
                defaultValue={text}
                {...(spec.maxLength ? { maxLength: spec.maxLength } : {})}
              />
            );
        }
      }}
    </Field>
  );
}

interface Attempt {
  readonly client: QuarryClient;
  readonly params: Record<string, unknown>;
}

function TryIt({ listing, schema }: { readonly listing: ListingDetail; readonly schema: ParamSchema }) {
  const { session } = useSession();
  const [attempt, setAttempt] = useState<Attempt>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const placeholder = useMemo(
    () => createQuarryClient({ baseUrl: window.location.origin, apiKey: 'unused' }),
    [],
  );
  const state = useQuarryQuery(attempt?.client ?? placeholder, listing.name, attempt?.params ?? {}, {
    enabled: attempt !== undefined,
  });

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const params: Record<string, unknown> = {};
    for (const [param, spec] of Object.entries(schema)) {
      const value = paramValue(spec, String(form.get(param) ?? ''));
      if (value !== undefined) params[param] = value;
    }
    setBusy(true);
    setError(undefined);
    try {
      const minted = await api<{ token: string }>('POST', '/v1/marketplace/try-token', {
        source: listing.name,
      });
      const client = createQuarryClient(
        { baseUrl: window.location.origin, apiKey: minted.token },
        { retry: { retries: 0 } },
      );
      setAttempt({ client, params });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="try-it" className="try-it">
      <h2 id="try-it">Try it</h2>
      {session === null ? (
        <p>
          <a href={href('login')}>Log in</a> or <a href={href('signup')}>sign up</a> to try it for free.
        </p>
      ) : !listing.previews ? (
        <p>The owner has turned free previews of this analytic off.</p>
      ) : (
        <form onSubmit={submit}>
          {Object.entries(schema).map(([param, spec]) => (
            <ParamInput key={param} name={param} spec={spec} initial={listing.example_params[param]} />
          ))}
          <button type="submit" disabled={busy || state.loading}>
            Run preview
          </button>
          <p className="hint">Previews are free (0 credits) and show at most a few rows.</p>
        </form>
      )}
      <ErrorNote error={error ?? state.error} />
      {state.data === undefined ? null : (
        <div data-testid="try-result">
          <p className="meta" data-testid="try-meta">
            {plural(state.data.meta.row_count, 'row')} · {plural(state.data.meta.credits, 'credit')}
            {state.data.meta.preview ? ' · preview' : ''}
          </p>
          {state.data.meta.truncated ? (
            <p className="notice" data-testid="try-truncated">
              This preview shows only the first {plural(state.data.meta.row_count, 'row')}: the full result
              has more, so the chart below is partial. A paid call answers every row.
            </p>
          ) : null}
          <ResultChart
            spec={listing.insights}
            result={state.data}
            title={`${listing.title}: preview result${state.data.meta.truncated ? ' (partial: first rows only)' : ''}`}
          />
          <DataTable
            caption="Preview result"
            columns={state.data.columns.map((c) => c.name)}
            rows={state.data.results.map((row) => state.data!.columns.map((c) => row[c.name]))}
          />
        </div>
      )}
    </section>
  );
}
