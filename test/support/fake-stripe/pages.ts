// The hosted pages a browser would see: Checkout at `/checkout/pay/<id>` (Pay / Decline buttons
// that POST back, then 303 to success_url with `{CHECKOUT_SESSION_ID}` substituted, or to
// cancel_url) and the billing portal at `/portal/<id>` (the customer's subscriptions and a link
// back to return_url), and Connect onboarding at `/connect/onboard/<token>` (an account link's
// URL: "Complete onboarding" completes it and 303s to return_url, "Leave" 303s to refresh_url; an
// expired or already used link 303s to refresh_url, as Stripe's does).
import type { ServerResponse } from 'node:http';
import type { Account, CheckoutSession, Subscription } from './objects.js';
import type { Store } from './store.js';

export function createPages(store: Store, baseUrl: () => string) {
  return function pages(method: string, url: URL, res: ServerResponse): void {
    const html = (status: number, content: string) => {
      res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html><head><meta charset="utf-8"><title>fake Stripe</title></head><body>${content}</body></html>`,
      );
    };
    const redirect = (location: string) => {
      res.writeHead(303, { Location: location });
      res.end();
    };

    const checkout = /^\/checkout\/pay\/([^/]+)(?:\/(complete|decline))?$/.exec(url.pathname);
    const found = checkout ? store.objects.get(checkout[1]!) : undefined;
    if (checkout && found?.object === 'checkout.session') {
      const cs = found as CheckoutSession;
      if (method === 'GET' && !checkout[2]) {
        const amount =
          cs.amount_total === null
            ? ''
            : `<p>Total: ${(cs.amount_total / 100).toFixed(2)} ${cs.currency}</p>`;
        const forms =
          cs.status === 'open'
            ? `<form method="post" action="/checkout/pay/${cs.id}/complete"><button id="pay">Pay</button></form>` +
              `<form method="post" action="/checkout/pay/${cs.id}/decline"><button id="decline">Decline</button></form>`
            : `<p>This session is ${cs.status}.</p>`;
        html(200, `<h1>Checkout (${cs.mode})</h1>${amount}${forms}`);
        return;
      }
      if (method === 'POST' && cs.status === 'open') {
        if (checkout[2] === 'complete') {
          store.completeCheckout(cs);
          redirect((cs.success_url ?? baseUrl()).replace(/\{CHECKOUT_SESSION_ID\}/g, cs.id));
        } else {
          redirect(cs.cancel_url ?? `${baseUrl()}/checkout/pay/${cs.id}`);
        }
        return;
      }
      html(409, `<p>This session is ${cs.status}.</p>`);
      return;
    }

    const onboard = /^\/connect\/onboard\/([^/]+)(?:\/(complete|leave))?$/.exec(url.pathname);
    const link = onboard ? store.accountLinks.get(onboard[1]!) : undefined;
    if (onboard && link) {
      const acct = store.get<Account>('account', link.account);
      const refresh = () =>
        link.refreshUrl ? redirect(link.refreshUrl) : html(410, '<p>This link has expired.</p>');
      const expired = store.nowSeconds() >= link.expiresAt;
      if (method === 'GET' && !onboard[2]) {
        if (expired || link.state !== 'new') {
          refresh();
          return;
        }
        link.state = 'visited';
        const due = acct.requirements.currently_due.map((f) => `<li>${escapeHtml(f)}</li>`).join('');
        html(
          200,
          `<h1>Onboarding for ${escapeHtml(acct.email ?? acct.id)}</h1><ul>${due}</ul>` +
            `<form method="post" action="/connect/onboard/${link.token}/complete"><button id="complete">Complete onboarding</button></form>` +
            `<form method="post" action="/connect/onboard/${link.token}/leave"><button id="leave">Leave</button></form>`,
        );
        return;
      }
      if (method === 'POST' && onboard[2]) {
        if (expired || link.state === 'done') {
          refresh();
          return;
        }
        link.state = 'done';
        if (onboard[2] === 'leave') {
          refresh();
          return;
        }
        store.completeOnboarding(acct);
        if (link.returnUrl) redirect(link.returnUrl);
        else html(200, '<p>Onboarding complete.</p>');
        return;
      }
    }

    const portal = /^\/portal\/([^/]+)$/.exec(url.pathname);
    const session = portal ? store.objects.get(portal[1]!) : undefined;
    if (method === 'GET' && session?.object === 'billing_portal.session') {
      const rows = store
        .all<Subscription>('subscription')
        .filter((sub) => sub.customer === session.customer)
        .map((sub) => {
          const shown = sub.items.data.map((item) => item.price.lookup_key ?? item.price.id).join(', ');
          return `<li>${sub.id}: ${sub.status} (${escapeHtml(shown)})</li>`;
        })
        .join('');
      const back =
        typeof session.return_url === 'string'
          ? `<a id="return" href="${escapeHtml(session.return_url)}">Return</a>`
          : '';
      html(200, `<h1>Billing portal</h1><ul>${rows}</ul>${back}`);
      return;
    }
    html(404, '<p>Not found</p>');
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
