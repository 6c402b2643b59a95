// Recent calls: the account's served and failed calls of the last 30 days, newest first, with the
// request id (copyable), analytic, version, status, credits, latency and origin; filters by
// analytic and status, and "Load more" with the answer's cursor (GET /v1/account/calls; shape in
// gateway/src/routes/calls.ts).
import type { Call, Calls } from '@quarry/client';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, queryString } from '../api.js';
import { CopyButton, ErrorNote, Field, formatCredits, ScrollBox } from '../components.js';
import { href } from '../router.js';

interface Filters {
  readonly analytic: string;
  readonly status: string;
}

const STATUSES: readonly (readonly [string, string])[] = [
  ['', 'Any'],
  ['ok', 'Served (ok)'],
  ['failed', 'Failed'],
  ['QUERY_TIMEOUT', 'QUERY_TIMEOUT'],
  ['RESULT_TOO_LARGE', 'RESULT_TOO_LARGE'],
  ['UPSTREAM_ERROR', 'UPSTREAM_ERROR'],
];

const when = (iso: string) =>
  new Date(iso).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' });

export function CallsPage() {
  const [filters, setFilters] = useState<Filters>({ analytic: '', status: '' });
  const [analytic, setAnalytic] = useState('');
  const [status, setStatus] = useState('');
  const [items, setItems] = useState<readonly Call[]>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const load = useCallback(
    (after: string | null) => {
      setError(undefined);
      setBusy(true);
      api<Calls>(
        'GET',
        `/v1/account/calls${queryString({ analytic: filters.analytic.trim(), status: filters.status, cursor: after ?? undefined })}`,
      )
        .then((page) => {
          setItems((shown) => (after === null ? page.items : [...(shown ?? []), ...page.items]));
          setCursor(page.next_cursor);
        }, setError)
        .finally(() => setBusy(false));
    },
    [filters],
  );
  useEffect(() => load(null), [load]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setFilters({ analytic, status });
  };
  return (
    <section aria-labelledby="calls-title">
      <h1 id="calls-title">Recent calls</h1>
      <p className="hint">
        Your calls of the last 30 days, newest first: served calls and failed ones (failed calls are free).
        Calls refused before any work (a bad key, a missing scope, a rate limit, invalid params) are not
        recorded. Totals per month are on the <a href={href('usage')}>usage page</a>.
      </p>
      <form onSubmit={submit} aria-label="Filter calls" className="filters">
        <Field label="Analytic">
          {(id) => (
            <input id={id} value={analytic} placeholder="any" onChange={(e) => setAnalytic(e.target.value)} />
          )}
        </Field>
        <Field label="Status">
          {(id) => (
            <select id={id} value={status} onChange={(e) => setStatus(e.target.value)}>
              {STATUSES.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" disabled={busy}>
          Show
        </button>
      </form>
      <ErrorNote error={error} />
      {items === undefined ? null : items.length === 0 ? (
        <p data-testid="no-calls">
          No calls in the last 30 days{filters.analytic || filters.status ? ' that match' : ''}.
        </p>
      ) : (
        <ScrollBox label="Recent calls">
          <table data-testid="calls">
            <caption className="visually-hidden">Recent calls</caption>
            <thead>
              <tr>
                {[
                  'when (UTC)',
                  'request id',
                  'analytic',
                  'version',
                  'status',
                  'credits',
                  'latency',
                  'origin',
                ].map((c) => (
                  <th key={c} scope="col">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {items.map((c) => (
                <tr key={c.request_id}>
                  <td>{when(c.at)}</td>
                  <td>
                    <code>{c.request_id}</code> <CopyButton text={c.request_id} label="Copy id" />
                  </td>
                  <td>{c.analytic}</td>
                  <td>{c.version ?? ''}</td>
                  <td>{c.status}</td>
                  <td>{formatCredits(c.credits)}</td>
                  <td>{c.latency_ms === null ? '' : `${c.latency_ms} ms`}</td>
                  <td>{c.origin ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {cursor === null ? null : (
        <p>
          <button type="button" className="secondary" disabled={busy} onClick={() => load(cursor)}>
            Load more
          </button>
        </p>
      )}
    </section>
  );
}
