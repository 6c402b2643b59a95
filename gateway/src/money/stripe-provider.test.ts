// The Stripe provider's webhook verification: a delivery signed with the platform endpoint's
// secret or the Connect endpoint's (one URL serves both) is taken; any other signature, a
// tampered body or no signature is refused before anything is read.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { PaymentSignatureError } from './payment-provider.js';
import { createPlanCatalog, defaultPlans } from './plan-catalog.js';
import { createStripeProvider } from './stripe-provider.js';

const PLATFORM = 'whsec_platform0123456789';
const CONNECT = 'whsec_connect0123456789';
const stripe = new Stripe('sk_test_unused');
const payload = JSON.stringify({
  id: 'evt_1',
  object: 'event',
  type: 'account.updated',
  data: { object: {} },
});
const signed = (secret: string, body = payload) =>
  stripe.webhooks.generateTestHeaderString({ payload: body, secret });

describe('Stripe webhooks', () => {
  it('take the platform and the Connect secret, and nothing else', () => {
    const provider = createStripeProvider({
      secretKey: 'sk_test_unused',
      webhookSecret: PLATFORM,
      connectWebhookSecret: CONNECT,
      plans: createPlanCatalog(defaultPlans()),
    });
    const verify = provider.verifyWebhook!;
    expect(verify(payload, signed(PLATFORM))).toMatchObject({ id: 'evt_1', type: 'account.updated' });
    expect(verify(payload, signed(CONNECT))).toMatchObject({ id: 'evt_1' });
    expect(() => verify(payload, signed('whsec_someone_else'))).toThrow(PaymentSignatureError);
    expect(() => verify(`${payload} `, signed(PLATFORM))).toThrow(PaymentSignatureError);
    expect(() => verify(payload, undefined)).toThrow(PaymentSignatureError);
  });

  it('take only the platform secret when no Connect secret is set', () => {
    const provider = createStripeProvider({
      secretKey: 'sk_test_unused',
      webhookSecret: PLATFORM,
      plans: createPlanCatalog(defaultPlans()),
    });
    expect(() => provider.verifyWebhook!(payload, signed(CONNECT))).toThrow(PaymentSignatureError);
  });
});
