// A protocol-level fake of Stripe for the tests: an HTTP server on loopback that the real `stripe`
// SDK (23.1.0, API version 2026-10-28.endive) talks to over real HTTP in Stripe's wire format.
// Point the SDK at it with `new Stripe('sk_test_…', { host: '127.0.0.1', port: fake.port,
// protocol: 'http' })`, the gateway with `QUARRY_STRIPE_API_BASE=${fake.url}`.
//
// Covers:
// - `/v1` (api.ts): customers (create, retrieve, update incl. invoice_settings
//   [default_payment_method]; their card payment methods), products, prices (lookup_key,
//   transfer_lookup_key, list by lookup_keys / active / product, expand data.product), checkout
//   sessions in subscription / setup / payment mode (+ their line_items), billing portal sessions,
//   subscriptions (retrieve, list by customer / status=all, update items / metadata /
//   cancel_at_period_end, cancel now), setup intents, invoice items, invoices (create draft,
//   finalize, pay, list, `expand[]=payments`), invoice payments, charges, refunds, disputes, events.
// - Connect for paying data owners (api.ts, store.ts): connected accounts (create with the legacy
//   `type=express` / `standard` or with `controller[...]` properties; an Express Dashboard without
//   platform fees and losses and Stripe-collected requirements refused, in the fake's words, as
//   are `type` with `controller`; retrieve, update metadata / email, list), account links
//   (`account_onboarding`; expire after 300 s), transfers (create, retrieve, update, list by
//   destination / transfer_group; refused as Stripe refuses them: unknown destination 400
//   resource_missing, destination without an active `transfers` capability 400
//   insufficient_capabilities_for_transfer, amount < 1, balance_insufficient), transfer reversals
//   (partial or full; create, list, retrieve) and `GET /v1/balance`: the platform's available
//   balance by currency, 10,000,000 usd cents at start, debited by transfers, credited by reversals.
//   A new account is not onboarded: details_submitted, charges_enabled and payouts_enabled false,
//   requested capabilities `inactive`, requirements past due. Emits `transfer.created`,
//   `transfer.reversed` (Stripe documents `transfer.updated` for description / metadata changes
//   only, so a reversal does not send it), `transfer.updated`, and `account.updated` (with
//   `previous_attributes`, only when something changed, and the event's `account` set to the
//   connected account; nothing on create).
// - The protocol: form-encoded bracket parameters, unknown ones refused (400 parameter_unknown);
//   `Authorization: Bearer sk_test_…` (401 otherwise); `Request-Id` on every answer; idempotency
//   keys on POST (same key + same body: the stored answer byte for byte with `Idempotent-Replayed:
//   true`; another body: 400 idempotency_error); Stripe's error envelope with 400 / 402 / 404
//   (unknown id: 404 resource_missing, param `id`); list envelopes (newest first, limit,
//   starting_after); `expand` of any id-valued field, nested with dots.
// - Hosted pages (pages.ts): `/checkout/pay/<id>` with Pay / Decline buttons that 303 to
//   success_url (`{CHECKOUT_SESSION_ID}` substituted) / cancel_url; `/portal/<id>`; an account
//   link's `/connect/onboard/<token>` with "Complete onboarding" (→ return_url) and "Leave"
//   (→ refresh_url) buttons; a link is single-use, and an expired or used one 303s to refresh_url.
// - Drivers for what a customer, the portal or the card network does: complete / decline / expire a
//   checkout, renew a subscription (paid, or failed → past_due), cancel or change its price as the
//   portal does, refund, dispute, declining cards; a data owner completing onboarding
//   (`completeOnboarding`: details submitted, requested capabilities active, payouts enabled,
//   charges_enabled only if `card_payments` was requested, a test bank account, requirements
//   emptied) or Stripe asking for more (`requireMore`: those fields past due, payouts, charges and
//   capabilities stopped); the platform's balance (`setBalance`). Each emits the events Stripe
//   sends, in Stripe's order, each `data.object` a snapshot, `previous_attributes` on `*.updated`,
//   `request.id` set when an API call caused it. Drivers resolve after their events' deliveries
//   were answered.
// - Webhooks signed as Stripe signs them (verified by `stripe.webhooks.constructEvent`), POSTed to
//   the webhook URL in order, each awaited, as they happen (events caused by an API call are
//   delivered after it, asynchronously as Stripe does: `await fake.idle()` to wait), or held
//   (no URL, or `holdEvents`) for `deliver(ids)` in any order; `redeliver(id)` replays one.
//   Signatures carry the real clock (receivers check them against theirs); objects carry `now()`.
// - Faults for retry tests: `failNextRequests(n, 'error500' | 'dropBeforeProcessing' |
//   'dropAfterProcessing')`; `failNextTransfers(n, code)`: the next n transfer creations (past
//   their parameter checks; replays excepted) answer 400 `transfers_not_allowed` (default) or
//   `balance_insufficient`.
//
// Does not cover: payment intents (charges have `payment_intent: null`; an invoice reaches its
// charge through its invoice payments, type `charge`), 3-D Secure / SCA, taxes, coupons and
// discounts, trials, prorations (a price change takes effect with no proration invoice), usage-
// based billing, test clocks, search endpoints, webhook endpoint objects, automatic
// retries of failed webhook deliveries or of failed renewals (call renewSubscription again),
// `send_invoice` collection, deleting customers, non-card payment methods. Of Connect: Custom
// accounts and `account_update` links (requirement_collection=application), the `Stripe-Account`
// header (acting as a connected account), direct and destination charges, application fees,
// `source_transaction`, payouts and the connected accounts' own balances, login links, persons,
// external account endpoints, capability endpoints and `capability.updated` /
// `account.external_account.*` events, deleting or rejecting accounts, requirements with a future
// `current_deadline`, currency conversion (a transfer draws on the balance in its own currency;
// charges do not feed the balance). Connect events go to the same webhook URL and secret as the
// rest (Stripe sends them to a separate Connect endpoint with its own secret). Which `type` Stripe
// reports for an account made with controller properties is not established: the fake says
// `none` (read `controller.stripe_dashboard.type`, set both ways). Unknown connected account ids
// answer 404 resource_missing like other ids; the messages of refused reversals and links are the
// fake's. As in this API version, a charge has no `invoice` field, an invoice has no
// `charge`/`subscription` (see `parent`), and a subscription has `current_period_start/end` only
// on its items.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Stripe from 'stripe';
import { createApi } from './api.js';
import { parseForm } from './form.js';
import {
  type Account,
  type CheckoutSession,
  newId,
  type Price,
  type StripeObject,
  type Subscription,
} from './objects.js';
import { createPages } from './pages.js';
import { type AccountLinkRecord, ApiError, Store, type TransferFailure } from './store.js';
import { API_VERSION, type Delivery, type FakeEvent, makeEvent, postEvent, signPayload } from './webhooks.js';

export type { AccountLinkRecord, Delivery, FakeEvent, TransferFailure };

export interface FakeStripeOptions {
  /** The signing secret of the webhook endpoint (`whsec_…`, generated if not given). */
  webhookSecret?: string;
  /** Deliver events to this URL as they happen (default: hold them until `deliver()`). */
  webhookUrl?: string;
  /** Hold events even when a webhook URL is set, until `deliver()`. */
  holdEvents?: boolean;
  /** The clock objects are stamped with (default: the real clock). */
  now?: () => Date;
}

export interface RecordedRequest {
  readonly method: string;
  /** The path, without the query string. */
  readonly path: string;
  /** The query string, without `?` ('' when none). */
  readonly query: string;
  readonly idempotencyKey?: string;
  readonly requestId: string;
  status: number;
  replayed: boolean;
}

export type Fault = 'error500' | 'dropBeforeProcessing' | 'dropAfterProcessing';

export interface FakeStripe {
  readonly url: string;
  readonly port: number;
  readonly webhookSecret: string;
  setWebhookUrl(url: string | undefined): void;
  /** Hold events (true) or deliver them as they happen (false, when a webhook URL is set). */
  holdEvents(hold: boolean): void;
  close(): Promise<void>;

  customers(): readonly Stripe.Customer[];
  prices(): readonly Stripe.Price[];
  subscriptions(): readonly Stripe.Subscription[];
  invoices(): readonly Stripe.Invoice[];
  charges(): readonly Stripe.Charge[];
  checkoutSessions(): readonly Stripe.Checkout.Session[];
  paymentMethods(): readonly Stripe.PaymentMethod[];
  /** Connected accounts. */
  accounts(): readonly Stripe.Account[];
  transfers(): readonly Stripe.Transfer[];
  /** Every account link made, with what it was made for and how far its page got. */
  accountLinks(): readonly AccountLinkRecord[];
  /** The platform's available balance by currency (smallest unit), as `GET /v1/balance` shows it. */
  balance(): Readonly<Record<string, number>>;
  events(): readonly FakeEvent[];
  requests(): readonly RecordedRequest[];
  deliveries(): readonly Delivery[];

  completeCheckout(sessionId: string): Promise<void>;
  declineCheckout(sessionId: string): Promise<void>;
  expireCheckout(sessionId: string): Promise<void>;
  renewSubscription(subId: string, outcome: 'paid' | 'failed'): Promise<void>;
  cancelSubscription(subId: string, options: { atPeriodEnd: boolean }): Promise<void>;
  changeSubscriptionPrice(subId: string, priceId: string): Promise<void>;
  refundCharge(chargeId: string): Promise<void>;
  disputeCharge(chargeId: string): Promise<void>;
  setCardDeclines(customerId: string, declines: boolean): void;
  /** The owner finishes Stripe's hosted onboarding (what the page's "Complete onboarding" does). */
  completeOnboarding(accountId: string): Promise<void>;
  /** Stripe asks the account for `fields`: they are past due, payouts and capabilities stop. */
  requireMore(accountId: string, fields: string[]): Promise<void>;
  /** Sets the platform's available balance in `currency` (default usd), in its smallest unit. */
  setBalance(amount: number, currency?: string): void;
  /** The next `count` `POST /v1/transfers` (not replays) answer 400 with this code. */
  failNextTransfers(count: number, code?: TransferFailure): void;
  /** The next `count` API requests fail: a 500 before processing, or a dropped connection. */
  failNextRequests(
    count: number,
    fault: Fault,
    only?: { readonly method?: string; readonly path?: RegExp },
  ): void;

  pendingEvents(): readonly FakeEvent[];
  deliver(eventIds?: string[]): Promise<Response[]>;
  redeliver(eventId: string): Promise<Response>;
  /** Resolves once every event delivered as it happened has had its answer. */
  idle(): Promise<void>;
  signPayload(payload: string, secret?: string, timestamp?: number): string;
}

interface Stored {
  fingerprint: string;
  requestId: string;
  status: number;
  body: string;
}

export async function startFakeStripe(options: FakeStripeOptions = {}): Promise<FakeStripe> {
  const clock = options.now ?? (() => new Date());
  const webhookSecret = options.webhookSecret ?? newId('whsec_', 32);
  let webhookUrl = options.webhookUrl;
  let hold = options.holdEvents ?? false;
  let baseUrl = '';
  const events: FakeEvent[] = [];
  const pending: FakeEvent[] = [];
  const deliveries: Delivery[] = [];
  const requests: RecordedRequest[] = [];
  const idempotency = new Map<string, Stored>();
  const faults: { fault: Fault; method?: string; path?: RegExp }[] = [];
  let context: FakeEvent['request'] = { id: null, idempotency_key: null };
  let chain: Promise<void> = Promise.resolve();

  const send = async (event: FakeEvent): Promise<Response> => {
    if (!webhookUrl) throw new Error('fake-stripe: no webhook URL to deliver to');
    const response = await postEvent(webhookUrl, event, webhookSecret);
    const kept = response.clone();
    await response.arrayBuffer().catch(() => undefined);
    deliveries.push({ eventId: event.id, status: response.status, at: Math.floor(Date.now() / 1000) });
    return kept;
  };

  const store = new Store(
    () => Math.floor(clock().getTime() / 1000),
    (type, object, previous) => {
      const event = makeEvent(type, object, store.nowSeconds(), context, previous);
      event.pending_webhooks = webhookUrl ? 1 : 0;
      events.push(event);
      store.objects.set(event.id, event as unknown as StripeObject);
      if (webhookUrl && !hold) {
        chain = chain.then(() =>
          send(event).then(
            () => undefined,
            () => {
              deliveries.push({ eventId: event.id, status: 0, at: Math.floor(Date.now() / 1000) });
            },
          ),
        );
      } else {
        pending.push(event);
      }
    },
  );
  const api = createApi(store, () => baseUrl);
  const pages = createPages(store, () => baseUrl);

  const session = (id: string) => store.get<CheckoutSession>('checkout.session', id);
  /** A change made by a person or the card network (no API request), then its deliveries awaited. */
  const drive = async (change: () => void): Promise<void> => {
    context = { id: null, idempotency_key: null };
    change();
    await chain;
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        serve(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'api_error', message: String(error) } }));
      }
    });
  });

  function serve(req: IncomingMessage, res: ServerResponse, body: string): void {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://fake');
    if (!url.pathname.startsWith('/v1/')) {
      pages(method, url, res);
      return;
    }
    const requestId = newId('req_', 14);
    const key =
      typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      query: url.search.slice(1),
      requestId,
      status: 0,
      replayed: false,
    };
    if (key) (record as { idempotencyKey?: string }).idempotencyKey = key;
    requests.push(record);
    const answer = (status: number, text: string, extra: Record<string, string> = {}) => {
      record.status = status;
      res.writeHead(status, {
        'Content-Type': 'application/json',
        'Request-Id': requestId,
        'Stripe-Version': String(req.headers['stripe-version'] ?? API_VERSION),
        ...(key ? { 'Idempotency-Key': key } : {}),
        ...extra,
      });
      res.end(text);
    };
    // The first fault meant for this request (any request, unless it names a method or path).
    const index = faults.findIndex(
      (f) =>
        (f.method === undefined || f.method === method) &&
        (f.path === undefined || f.path.test(url.pathname)),
    );
    const fault = index === -1 ? undefined : faults.splice(index, 1)[0]!.fault;
    if (fault === 'dropBeforeProcessing') {
      req.socket.destroy();
      return;
    }
    if (fault === 'error500') {
      answer(
        500,
        json(new ApiError(500, 'api_error', 'An unknown error occurred (injected by fake-stripe).').body()),
      );
      return;
    }
    const auth = req.headers.authorization ?? '';
    const apiKey = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!apiKey.startsWith('sk_test_') && !apiKey.startsWith('rk_test_')) {
      const shown = apiKey
        ? `${apiKey.slice(0, 8)}${'*'.repeat(Math.max(0, apiKey.length - 12))}${apiKey.slice(-4)}`
        : '';
      const message = apiKey
        ? `Invalid API Key provided: ${shown}`
        : "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').";
      answer(401, json(new ApiError(401, 'invalid_request_error', message).body()), {
        'WWW-Authenticate': 'Bearer realm="Stripe"',
      });
      return;
    }
    const fingerprint = `${method} ${url.pathname}?${url.search} ${body}`;
    const stored = method === 'POST' && key ? idempotency.get(key) : undefined;
    if (stored && stored.fingerprint !== fingerprint) {
      const message = `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`;
      answer(400, json(new ApiError(400, 'idempotency_error', message).body()));
      return;
    }
    if (stored) {
      record.replayed = true;
      answer(stored.status, stored.body, {
        'Idempotent-Replayed': 'true',
        'Original-Request': stored.requestId,
      });
      return;
    }
    const params = { ...parseForm(url.search.slice(1)), ...parseForm(body) };
    context = { id: requestId, idempotency_key: key ?? null };
    let result: { status: number; body: unknown };
    try {
      result = api(method, url.pathname, params);
    } finally {
      context = { id: null, idempotency_key: null };
    }
    const text = json(result.body);
    if (method === 'POST' && key)
      idempotency.set(key, { fingerprint, requestId, status: result.status, body: text });
    if (fault === 'dropAfterProcessing') {
      record.status = result.status;
      req.socket.destroy();
      return;
    }
    answer(result.status, text);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
  const view =
    <T>(type: string) =>
    () =>
      store.all(type).map((o) => structuredClone(o) as unknown as T);

  return {
    url: baseUrl,
    port,
    webhookSecret,
    setWebhookUrl: (next) => {
      webhookUrl = next;
    },
    holdEvents: (next) => {
      hold = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),

    customers: view<Stripe.Customer>('customer'),
    prices: view<Stripe.Price>('price'),
    subscriptions: view<Stripe.Subscription>('subscription'),
    invoices: view<Stripe.Invoice>('invoice'),
    charges: view<Stripe.Charge>('charge'),
    checkoutSessions: view<Stripe.Checkout.Session>('checkout.session'),
    paymentMethods: view<Stripe.PaymentMethod>('payment_method'),
    accounts: view<Stripe.Account>('account'),
    transfers: view<Stripe.Transfer>('transfer'),
    accountLinks: () => [...store.accountLinks.values()].map((link) => ({ ...link })),
    balance: () => Object.fromEntries(store.balance),
    events: () => events.map((e) => structuredClone(e)),
    requests: () => [...requests],
    deliveries: () => [...deliveries],

    completeCheckout: (id) => drive(() => store.completeCheckout(session(id))),
    declineCheckout: (id) =>
      drive(() => {
        const cs = session(id);
        if (cs.status !== 'open') throw new Error(`checkout session ${id} is ${cs.status}, not open`);
      }),
    expireCheckout: (id) =>
      drive(() => {
        const cs = session(id);
        if (cs.status !== 'open') throw new Error(`checkout session ${id} is ${cs.status}, not open`);
        store.update('checkout.session.expired', cs, (s) => {
          s.status = 'expired';
          s.url = null;
        });
      }),
    renewSubscription: (id, outcome) => drive(() => store.renew(store.get('subscription', id), outcome)),
    cancelSubscription: (id, { atPeriodEnd }) =>
      drive(() => store.cancel(store.get('subscription', id), atPeriodEnd)),
    changeSubscriptionPrice: (id, priceId) =>
      drive(() => {
        const next = store.get<Price>('price', priceId);
        const sub = store.get<Subscription>('subscription', id);
        store.update('customer.subscription.updated', sub, (s) => {
          s.items.data[0]!.price = next;
        });
      }),
    refundCharge: (id) =>
      drive(() => store.refund(store.get('charge', id), undefined, 'requested_by_customer', {})),
    disputeCharge: (id) => drive(() => store.dispute(store.get('charge', id))),
    setCardDeclines: (customerId, declines) => {
      store.get('customer', customerId);
      if (declines) store.declining.add(customerId);
      else store.declining.delete(customerId);
    },
    completeOnboarding: (id) => drive(() => store.completeOnboarding(store.get<Account>('account', id))),
    requireMore: (id, fields) =>
      drive(() => {
        if (fields.length === 0) throw new Error('fake-stripe: requireMore needs at least one field');
        store.requireMore(store.get<Account>('account', id), fields);
      }),
    setBalance: (amount, currency = 'usd') => {
      if (!Number.isInteger(amount) || amount < 0) throw new Error(`fake-stripe: bad balance ${amount}`);
      store.balance.set(currency.toLowerCase(), amount);
    },
    failNextTransfers: (count, code = 'transfers_not_allowed') => {
      for (let i = 0; i < count; i++) store.transferFailures.push(code);
    },
    failNextRequests: (count, fault, only = {}) => {
      for (let i = 0; i < count; i++) faults.push({ fault, ...only });
    },

    pendingEvents: () => pending.map((e) => structuredClone(e)),
    deliver: async (ids) => {
      const chosen = ids
        ? ids.map((id) => {
            const found = pending.find((e) => e.id === id);
            if (!found) throw new Error(`fake-stripe: ${id} is not a held event`);
            return found;
          })
        : [...pending];
      const responses: Response[] = [];
      for (const event of chosen) {
        pending.splice(pending.indexOf(event), 1);
        responses.push(await send(event));
      }
      return responses;
    },
    redeliver: async (id) => {
      const found = events.find((e) => e.id === id);
      if (!found) throw new Error(`fake-stripe: no event ${id}`);
      return send(found);
    },
    idle: async () => {
      await chain;
    },
    signPayload: (payload, secret = webhookSecret, timestamp) => signPayload(payload, secret, timestamp),
  };
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
