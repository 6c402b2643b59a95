// The sandbox provider's pages (QUARRY_PAYMENTS=sandbox, money/sandbox-provider.ts): a checkout
// where a person pays or declines with one click, and a billing portal that cancels or resumes
// the subscription or removes the card. Each is marked "Sandbox: no money moves". A session's id
// is its only credential (random, an hour long, like a hosted checkout's URL).
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { pathParam, route } from '../http/route.js';
import { creditValueMicroUsd, isBudgeted, type Plan } from '../money/plan-catalog.js';
import type { SandboxPortalAction, SandboxProvider } from '../money/sandbox-provider.js';
import { centsToMicroUsd, formatUsd } from '../money/units.js';

/** The pages' own policy: their one stylesheet is inline; nothing runs. */
const SANDBOX_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f5f7;color:#1d1d1f}
main{max-width:26rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002}
.banner{background:#fff3cd;color:#664d03;border:1px solid #ffe69c;border-radius:8px;padding:.5rem .75rem;font-weight:600}
h1{font-size:1.4rem;margin:.75rem 0 .25rem}.price{font-size:2rem;font-weight:700;margin:.25rem 0}
.muted{color:#555}form{display:flex;gap:.75rem;margin-top:1.25rem;flex-wrap:wrap}
button{font:inherit;padding:.6rem 1.1rem;border-radius:8px;border:1px solid #999;background:#fff;cursor:pointer}
button.primary{background:#0b57d0;color:#fff;border-color:#0b57d0}`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function page(c: Context<AppEnv>, title: string, body: string, status: 200 | 404 = 200) {
  c.header('content-security-policy', SANDBOX_CSP);
  c.header('cache-control', 'no-store');
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<title>${escapeHtml(title)} — Quarry sandbox</title><style>${STYLE}</style></head><body><main>` +
      `<p class="banner" role="note">Sandbox: no money moves</p>${body}</main></body></html>`,
    status,
  );
}

const gone = (c: Context<AppEnv>) =>
  page(
    c,
    'Session ended',
    '<h1>This page has expired</h1><p class="muted">Start again from the console or <code>quarry billing upgrade</code>.</p>',
    404,
  );

function sandboxOf(c: Context<AppEnv>): SandboxProvider {
  const provider = c.var.services.payments.provider;
  if (provider?.kind !== 'sandbox') throw new ApiError('NOT_FOUND', 'This gateway has no sandbox payments.');
  return provider as SandboxProvider;
}

function priceText(plan: Plan): string {
  if (isBudgeted(plan)) return `${formatUsd(creditValueMicroUsd(plan))} USD a credit`;
  return `${formatUsd(centsToMicroUsd(plan.monthly_price_cents))} USD a month`;
}

async function formAction(c: Context<AppEnv>): Promise<string> {
  const form = await c.req.parseBody();
  return typeof form.action === 'string' ? form.action : '';
}

const hidden = { hide: true } as const;
const html = { 200: { description: 'A page', content: { 'text/html': { schema: z.string() } } } };

export function registerSandboxBillingRoutes(app: OpenAPIHono<AppEnv>): void {
  const checkoutPath = '/billing/sandbox/checkout/{id}';
  route(app, createRoute({ ...hidden, method: 'get', path: checkoutPath, responses: html }), (c) => {
    const session = sandboxOf(c).checkoutSession(pathParam(c, 'id'));
    if (session === undefined) return gone(c);
    const { plan } = session;
    const what =
      session.mode === 'setup'
        ? `<h1>Add a card for ${escapeHtml(plan.name)}</h1><p class="price">${escapeHtml(priceText(plan))}</p>` +
          '<p class="muted">Billed monthly for the credits you spend, within your budget. Card 4242 4242 4242 4242 (sandbox).</p>'
        : `<h1>Subscribe to ${escapeHtml(plan.name)}</h1><p class="price">${escapeHtml(priceText(plan))}</p>` +
          `<p class="muted">${plan.included_credits ?? 0} credits a month, from now on. Card 4242 4242 4242 4242 (sandbox).</p>`;
    const pay =
      session.mode === 'setup'
        ? 'Save card'
        : `Pay ${formatUsd(centsToMicroUsd(plan.monthly_price_cents))} USD`;
    return page(
      c,
      `Checkout: ${plan.name}`,
      `${what}<form method="post"><button class="primary" name="action" value="pay">${escapeHtml(pay)}</button>` +
        '<button name="action" value="decline">Decline</button></form>',
    );
  });
  route(
    app,
    createRoute({
      ...hidden,
      method: 'post',
      path: checkoutPath,
      responses: { 303: { description: 'Back' } },
    }),
    async (c) => {
      const sandbox = sandboxOf(c);
      const action = await formAction(c);
      const finished = sandbox.finishCheckout(pathParam(c, 'id'), action === 'pay');
      if (finished === undefined) return gone(c);
      await c.var.services.payments.apply(finished.facts);
      return c.redirect(finished.redirect, 303);
    },
  );

  const portalPath = '/billing/sandbox/portal/{id}';
  route(app, createRoute({ ...hidden, method: 'get', path: portalPath, responses: html }), async (c) => {
    const sandbox = sandboxOf(c);
    const session = sandbox.portalSession(pathParam(c, 'id'));
    if (session === undefined) return gone(c);
    const { services } = c.var;
    const billing = await services.payments.providerStanding(session.customerId);
    if (billing === null) return gone(c);
    const view = await services.payments.view(billing.accountId);
    const plan = view.plan;
    const pending =
      billing.pendingPlan !== null && billing.pendingAt !== null
        ? `<p>Moves to ${escapeHtml(services.plans.resolve(billing.pendingPlan).name)} on ${billing.pendingAt.toISOString().slice(0, 10)}.</p>`
        : '';
    const buttons = [
      billing.subscriptionId !== null && !billing.cancelAtPeriodEnd
        ? '<button name="action" value="cancel">Cancel subscription</button>'
        : '',
      billing.subscriptionId !== null && billing.cancelAtPeriodEnd
        ? '<button name="action" value="resume">Keep subscription</button>'
        : '',
      billing.cardOnFile ? '<button name="action" value="remove_card">Remove card</button>' : '',
      '<button class="primary" name="action" value="return">Back to Quarry</button>',
    ].join('');
    return page(
      c,
      'Billing',
      `<h1>${escapeHtml(plan.name)}</h1><p class="price">${escapeHtml(priceText(plan))}</p>` +
        `<p class="muted">Card on file: ${billing.cardOnFile ? 'yes (4242)' : 'no'}.</p>${pending}` +
        `<form method="post">${buttons}</form>`,
    );
  });
  route(
    app,
    createRoute({ ...hidden, method: 'post', path: portalPath, responses: { 303: { description: 'Back' } } }),
    async (c) => {
      const sandbox = sandboxOf(c);
      const id = pathParam(c, 'id');
      const session = sandbox.portalSession(id);
      if (session === undefined) return gone(c);
      const action = await formAction(c);
      if (action === 'cancel' || action === 'resume' || action === 'remove_card') {
        const billing = await c.var.services.payments.providerStanding(session.customerId);
        if (billing !== null) {
          await c.var.services.payments.apply(
            sandbox.portalAction(id, action as SandboxPortalAction, billing),
          );
        }
        return c.redirect(c.req.path, 303);
      }
      return c.redirect(session.returnUrl, 303);
    },
  );
}
