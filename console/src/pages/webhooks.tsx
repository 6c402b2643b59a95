// Webhooks: the account's endpoints (add with the signing secret shown once, test, enable or
// disable, delete), each endpoint's delivery log with replay, and the alert thresholds
// (docs/webhooks.md). An endpoint the gateway disabled says why.

import type { AlertSettings, IssuedWebhookEndpoint, WebhookDelivery, WebhookEndpoint } from '@quarry/client';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api } from '../api.js';
import { ErrorNote, Field, ScrollBox, SecretOnce } from '../components.js';

const when = (iso: string | null, never = '—') => (iso === null ? never : new Date(iso).toLocaleString());

function DeliveryLog({ endpoint }: { readonly endpoint: WebhookEndpoint }) {
  const [deliveries, setDeliveries] = useState<readonly WebhookDelivery[]>();
  const [error, setError] = useState<unknown>();
  const load = useCallback(() => {
    api<{ deliveries: WebhookDelivery[] }>('GET', `/v1/webhooks/${endpoint.id}/deliveries?limit=50`).then(
      (r) => setDeliveries(r.deliveries),
      setError,
    );
  }, [endpoint.id]);
  useEffect(load, [load]);
  async function replay(delivery: WebhookDelivery) {
    try {
      await api('POST', `/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`);
      load();
    } catch (e) {
      setError(e);
    }
  }
  return (
    <>
      <ErrorNote error={error} />
      <button type="button" className="secondary" onClick={load}>
        Refresh the log
      </button>
      <ScrollBox label={`Deliveries to ${endpoint.url}`}>
        <table>
          <caption>Deliveries to {endpoint.url}</caption>
          <thead>
            <tr>
              <th scope="col">event</th>
              <th scope="col">type</th>
              <th scope="col">status</th>
              <th scope="col">attempts</th>
              <th scope="col">last answer</th>
              <th scope="col">latency</th>
              <th scope="col">created</th>
              <th scope="col">
                <span className="visually-hidden">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(deliveries ?? []).map((d) => (
              <tr key={d.id} data-testid="delivery">
                <td>
                  <code>{d.event_id}</code>
                </td>
                <td>{d.type}</td>
                <td>
                  {d.status === 'pending' && d.next_attempt_at
                    ? `retry at ${when(d.next_attempt_at)}`
                    : d.status}
                </td>
                <td>{d.attempts}</td>
                <td>{d.last_error ?? d.last_status ?? ''}</td>
                <td>{d.last_latency_ms === null ? '' : `${d.last_latency_ms} ms`}</td>
                <td>{when(d.created_at)}</td>
                <td>
                  {d.status === 'pending' ? null : (
                    <button type="button" className="secondary" onClick={() => replay(d)}>
                      Replay<span className="visually-hidden"> {d.event_id}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
    </>
  );
}

function AlertsForm() {
  const [alerts, setAlerts] = useState<AlertSettings>();
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    api<{ alerts: AlertSettings }>('GET', '/v1/account/alerts').then((r) => setAlerts(r.alerts), setError);
  }, []);
  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(undefined);
    setSaved(false);
    try {
      const thresholds = String(form.get('thresholds'))
        .split(/[ ,]+/)
        .filter((t) => t !== '')
        .map(Number);
      const answer = await api<{ alerts: AlertSettings }>('PUT', '/v1/account/alerts', {
        usage_thresholds: thresholds,
        error_rate_percent: Number(form.get('rate')),
      });
      setAlerts(answer.alerts);
      setSaved(true);
    } catch (e) {
      setError(e);
    }
  }
  if (alerts === undefined) return <ErrorNote error={error} />;
  return (
    <form onSubmit={save} className="panel" aria-labelledby="alerts-title">
      <h2 id="alerts-title">Alert thresholds</h2>
      <ErrorNote error={error} />
      <Field
        label="Usage thresholds (percent)"
        hint="Of the month's credits; on Pay as you Go, of the budget."
      >
        {(id, hint) => (
          <input
            id={id}
            name="thresholds"
            defaultValue={alerts.usage_thresholds.join(', ')}
            aria-describedby={hint}
          />
        )}
      </Field>
      <Field
        label="Analytic error rate (percent)"
        hint="Your analytics failing more than this over 5 minutes."
      >
        {(id, hint) => (
          <input
            id={id}
            name="rate"
            type="number"
            min={1}
            max={100}
            defaultValue={alerts.error_rate_percent}
            aria-describedby={hint}
          />
        )}
      </Field>
      <button type="submit">Save thresholds</button>
      {saved ? <p role="status">Saved.</p> : null}
    </form>
  );
}

export function WebhooksPage() {
  const [endpoints, setEndpoints] = useState<readonly WebhookEndpoint[]>();
  const [error, setError] = useState<unknown>();
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const [open, setOpen] = useState<string>();
  const load = useCallback(() => {
    api<{ endpoints: WebhookEndpoint[] }>('GET', '/v1/webhooks').then(
      (r) => setEndpoints(r.endpoints),
      setError,
    );
  }, []);
  useEffect(load, [load]);

  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const types = String(form.get('types') ?? '')
      .split(/[ ,]+/)
      .filter((t) => t !== '');
    setError(undefined);
    try {
      const answer = await api<IssuedWebhookEndpoint>('POST', '/v1/webhooks', {
        url: String(form.get('url')),
        ...(types.length > 0 ? { event_types: types } : {}),
      });
      setSecret({ label: `Signing secret of ${answer.endpoint.url}`, value: answer.secret });
      formElement.reset();
      load();
    } catch (e) {
      setError(e);
    }
  }

  async function act(method: string, path: string, body?: unknown) {
    setError(undefined);
    try {
      await api(method, path, body);
      load();
    } catch (e) {
      setError(e);
    }
  }

  const disabled = (endpoints ?? []).filter((e) => !e.enabled && e.disabled_reason !== null);
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <p className="hint">
        Signed events to your endpoints: usage thresholds, quota and budget, expiring keys, failing analytics,
        payouts. Verify each delivery with your client's <code>Webhook.verify</code> (docs/webhooks.md).
      </p>
      {disabled.map((e) => (
        <p key={e.id} className="notice" role="alert" data-testid="webhook-disabled">
          The endpoint {e.url} was disabled: {e.disabled_reason}. Fix it, then enable it again.
        </p>
      ))}
      {secret === undefined ? null : <SecretOnce label={secret.label} secret={secret.value} />}
      <ErrorNote error={error} />
      <form onSubmit={add} className="panel" aria-labelledby="new-webhook">
        <h2 id="new-webhook">New endpoint</h2>
        <Field label="URL" hint="On a public address (https recommended).">
          {(id, hint) => (
            <input id={id} name="url" type="url" required maxLength={2048} aria-describedby={hint} />
          )}
        </Field>
        <Field
          label="Event types (optional)"
          hint="Comma-separated, e.g. usage.threshold, quota.exhausted; empty: all."
        >
          {(id, hint) => <input id={id} name="types" aria-describedby={hint} />}
        </Field>
        <button type="submit">Add endpoint</button>
      </form>
      <ScrollBox label="Your endpoints">
        <table>
          <caption>Your endpoints</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">events</th>
              <th scope="col">state</th>
              <th scope="col">
                <span className="visually-hidden">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(endpoints ?? []).map((e) => (
              <tr key={e.id} data-testid="endpoint">
                <td>
                  <code>{e.url}</code>
                </td>
                <td>{e.event_types.length === 0 ? 'all' : e.event_types.join(', ')}</td>
                <td>
                  {e.enabled
                    ? e.failing_since === null
                      ? 'enabled'
                      : `failing since ${when(e.failing_since)}`
                    : 'disabled'}
                </td>
                <td>
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => setOpen(open === e.id ? undefined : e.id)}
                  >
                    {open === e.id ? 'Hide' : 'Deliveries'}
                    <span className="visually-hidden"> of {e.url}</span>
                  </button>{' '}
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => act('POST', `/v1/webhooks/${e.id}/test`)}
                  >
                    Send a test<span className="visually-hidden"> to {e.url}</span>
                  </button>{' '}
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => act('PATCH', `/v1/webhooks/${e.id}`, { enabled: !e.enabled })}
                  >
                    {e.enabled ? 'Disable' : 'Enable'}
                    <span className="visually-hidden"> {e.url}</span>
                  </button>{' '}
                  <button
                    type="button"
                    className="danger"
                    onClick={() =>
                      window.confirm(`Delete the endpoint ${e.url}?`) && act('DELETE', `/v1/webhooks/${e.id}`)
                    }
                  >
                    Delete<span className="visually-hidden"> {e.url}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      {open === undefined ? null : (
        <DeliveryLog key={open} endpoint={(endpoints ?? []).find((e) => e.id === open) as WebhookEndpoint} />
      )}
      <AlertsForm />
    </section>
  );
}
