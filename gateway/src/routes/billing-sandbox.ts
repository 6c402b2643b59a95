// The sandbox provider's pages (QUARRY_PAYMENTS=sandbox, money/sandbox-provider.ts): a checkout
// where a person pays or declines with one click, and a billing portal that cancels or resumes
// the subscription or removes the card. Each is marked "Sandbox: no money moves". A session's id
// is its only credential (random, an hour long, like a hosted checkout's URL). They are pages for
// a browser: each answers HTML, and a form's answer sends the browser on (a refresh to the return URL).
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

function page(c: Context<AppEnv>, title: string, body: string, status: 200 | 404 = 200, redirect?: string) {
  c.header('content-security-policy', SANDBOX_CSP);
  c.header('cache-control', 'no-store');
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<title>${escapeHtml(title)} — Quarry sandbox</title>` +
      (redirect === undefined ? '' : `<meta http-equiv="refresh" content="0;url=${escapeHtml(redirect)}">`) +
      `<style>${STYLE}</style></head><body><main>` +
      `<p class="banner" role="note">Sandbox: no money moves</p>${body}</main></body></html>`,
    status,
  );
}

/** Where the browser goes next: at once, and a link for a browser that does not follow refreshes. */
const onward = (c: Context<AppEnv>, title: string, message: string, to: string) =>
  page(
    c,
    title,
    `<h1>${escapeHtml(message)}</h1><p><a href="${escapeHtml(to)}">Back to Quarry</a></p>`,
    200,
    to,
  );

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

export function registerSandboxBillingRoutes(app: OpenAPIHono<AppEnv>): void {
  const doc = (method: 'get' | 'post', path: string, summary: string) =>
    createRoute({
      method,
      path,
      tags: ['Billing'],
      summary,
      request: {
        params: z.object({ id: z.string().max(100).openapi({ description: 'The session, from its URL' }) }),
        ...(method === 'post'
          ? {
              body: {
                required: true,
                content: {
                  'application/x-www-form-urlencoded': {
                    schema: z.object({ action: z.string().openapi({ description: 'The button pressed' }) }),
                  },
                },
              },
            }
          : {}),
      },
      responses: {
        200: { description: 'A page', content: { 'text/html': { schema: z.string() } } },
        404: {
          description: 'The session ended or never was',
          content: { 'text/html': { schema: z.string() } },
        },
      },
    });
  const checkoutPath = '/billing/sandbox/checkout/{id}';
  route(
    app,
    doc('get', checkoutPath, 'Sandbox checkout page (QUARRY_PAYMENTS=sandbox): pay or decline'),
    (c) => {
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
    },
  );
  route(app, doc('post', checkoutPath, 'Pays (`action=pay`) or declines a sandbox checkout'), async (c) => {
    const sandbox = sandboxOf(c);
    const action = await formAction(c);
    const finished = sandbox.finishCheckout(pathParam(c, 'id'), action === 'pay');
    if (finished === undefined) return gone(c);
    await c.var.services.payments.apply(finished.facts);
    const paid = finished.facts.length > 0;
    return onward(
      c,
      paid ? 'Paid' : 'Declined',
      paid ? 'Payment received' : 'Payment declined: nothing was charged',
      finished.redirect,
    );
  });

  const onboardingPath = '/billing/sandbox/onboarding/{id}';
  route(app, doc('get', onboardingPath, 'Sandbox payout onboarding page: where an owner is paid'), (c) => {
    const session = sandboxOf(c).onboardingSession(pathParam(c, 'id'));
    if (session === undefined) return gone(c);
    return page(
      c,
      'Get paid',
      '<h1>Where should we pay you?</h1><p class="muted">Bank account 000123456789 (sandbox). Your 80% of ' +
        'every credit spent on your analytics is paid here each month.</p>' +
        '<form method="post"><button class="primary" name="action" value="complete">Complete onboarding</button></form>',
    );
  });
  route(
    app,
    doc('post', onboardingPath, 'Completes a sandbox payout onboarding (`action=complete`)'),
    async (c) => {
      const finished = sandboxOf(c).finishOnboarding(pathParam(c, 'id'));
      if (finished === undefined) return gone(c);
      await c.var.services.payments.apply(finished.facts);
      return onward(c, 'Payouts set up', 'Payouts set up', finished.redirect);
    },
  );

  const portalPath = '/billing/sandbox/portal/{id}';
  route(
    app,
    doc('get', portalPath, 'Sandbox billing portal page: cancel, resume, remove the card'),
    async (c) => {
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
    },
  );
  route(
    app,
    doc('post', portalPath, 'Acts on a sandbox portal (`action=cancel|resume|remove_card|return`)'),
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
        return onward(c, 'Billing', 'Done', c.req.path);
      }
      return onward(c, 'Billing', 'Back to Quarry', session.returnUrl);
    },
  );
}
