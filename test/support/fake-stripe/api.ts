// The `/v1` endpoints the fake serves: each parses Stripe's parameters (unknown ones are refused
// as Stripe refuses them), changes the store and answers the object, expanded as asked.

import { randomBytes } from 'node:crypto';
import {
  expandPaths,
  type FormParams,
  mergeMetadata,
  onlyParams,
  optBool,
  optInt,
  optList,
  optObject,
  optString,
  ParamError,
  reqString,
} from './form.js';
import {
  type Account,
  account,
  type Charge,
  type CheckoutSession,
  type Customer,
  checkoutSession,
  type Invoice,
  type InvoiceItem,
  invoice,
  invoiceItem,
  type PaymentMethod,
  type Price,
  type Product,
  portalSession,
  price,
  product,
  type StripeObject,
  type Subscription,
  setupIntent,
  subscriptionItem,
  type Transfer,
  type TransferReversal,
} from './objects.js';
import { ApiError, type Store } from './store.js';

export interface Answer {
  status: number;
  body: unknown;
}

type Handler = (params: FormParams, ids: string[]) => unknown;

export function createApi(store: Store, baseUrl: () => string) {
  const routes: [string, RegExp, Handler][] = [];
  const on = (method: string, pattern: string, handler: Handler) => {
    routes.push([method, new RegExp(`^${pattern.replace(/:id/g, '([^/]+)')}$`), handler]);
  };
  const now = () => store.nowSeconds();
  const get = <T extends StripeObject>(type: T['object'], id: string, params: FormParams) =>
    render(store.get<T>(type, id), expandPaths(params));

  // ---- rendering -----------------------------------------------------------------------------

  function render(value: StripeObject, expand: string[]): unknown {
    const copy = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
    for (const path of expand) expandPath(copy, path.split('.'));
    return copy;
  }

  function expandPath(target: Record<string, unknown>, path: string[]): void {
    const [head, ...rest] = path;
    if (head === undefined) return;
    if (head === 'data' && Array.isArray(target.data)) {
      for (const entry of target.data as Record<string, unknown>[]) expandPath(entry, rest);
      return;
    }
    if (head === 'payments' && target.object === 'invoice') {
      target.payments = listOf(
        `/v1/invoices/${String(target.id)}/payments`,
        store.paymentsOf(String(target.id)),
        {},
      );
    }
    const value = target[head];
    if (value === undefined) {
      throw new ParamError(`This property cannot be expanded (${head}).`, 'expand', 'parameter_invalid');
    }
    if (typeof value === 'string') {
      const found = store.objects.get(value);
      if (!found) return;
      const expanded = JSON.parse(JSON.stringify(found)) as Record<string, unknown>;
      target[head] = expanded;
      expandPath(expanded, rest);
    } else if (value && typeof value === 'object') {
      expandPath(value as Record<string, unknown>, rest);
    }
  }

  /** Stripe's list envelope, newest first, with `limit` / `starting_after` / `ending_before`. */
  function listOf(url: string, items: StripeObject[], params: FormParams): unknown {
    let sorted = [...items].reverse().sort((a, b) => Number(b.created ?? 0) - Number(a.created ?? 0));
    const after = optString(params, 'starting_after');
    const before = optString(params, 'ending_before');
    if (after) sorted = sorted.slice(sorted.findIndex((o) => o.id === after) + 1);
    if (before)
      sorted = sorted.slice(
        0,
        Math.max(
          0,
          sorted.findIndex((o) => o.id === before),
        ),
      );
    const limit = Math.min(100, Math.max(1, optInt(params, 'limit') ?? 10));
    const page = sorted.slice(0, limit);
    const expand = expandPaths(params)
      .filter((p) => p.startsWith('data.'))
      .map((p) => p.slice(5));
    return { object: 'list', data: page.map((o) => render(o, expand)), has_more: sorted.length > limit, url };
  }

  const LIST = ['limit', 'starting_after', 'ending_before'];

  // ---- customers & payment methods ---------------------------------------------------------

  on('POST', '/v1/customers', (p) => {
    onlyParams(p, ['email', 'name', 'metadata', 'description', 'phone', 'invoice_settings']);
    const made = store.createCustomer({
      email: optString(p, 'email') ?? null,
      name: optString(p, 'name') ?? null,
      metadata: mergeMetadata({}, p),
    });
    return render(made, expandPaths(p));
  });
  on('GET', '/v1/customers/:id', (p, [id]) => get<Customer>('customer', id!, p));
  on('POST', '/v1/customers/:id', (p, [id]) => {
    onlyParams(p, ['email', 'name', 'metadata', 'description', 'phone', 'invoice_settings']);
    const found = store.get<Customer>('customer', id!);
    const settings = optObject(p, 'invoice_settings');
    const pm = settings ? optString(settings, 'default_payment_method') : undefined;
    if (pm) {
      const method = store.objects.get(pm);
      if (method?.object !== 'payment_method') {
        throw new ApiError(
          400,
          'invalid_request_error',
          `No such PaymentMethod: '${pm}'`,
          'resource_missing',
          'invoice_settings[default_payment_method]',
        );
      }
      if ((method as PaymentMethod).customer !== found.id) {
        throw new ApiError(
          400,
          'invalid_request_error',
          `The PaymentMethod ${pm} does not belong to the Customer you supplied ${found.id}.`,
          undefined,
          'invoice_settings[default_payment_method]',
        );
      }
    }
    store.update('customer.updated', found, (c) => {
      const email = optString(p, 'email');
      const name = optString(p, 'name');
      if (email !== undefined) c.email = email || null;
      if (name !== undefined) c.name = name || null;
      c.metadata = mergeMetadata(c.metadata, p);
      if (pm !== undefined) c.invoice_settings.default_payment_method = pm || null;
    });
    return render(found, expandPaths(p));
  });
  const paymentMethodsOf = (customerId: string, p: FormParams) => {
    store.get<Customer>('customer', customerId);
    const type = optString(p, 'type');
    const methods = store
      .all<PaymentMethod>('payment_method')
      .filter((m) => m.customer === customerId && (!type || m.type === type));
    return listOf(`/v1/customers/${customerId}/payment_methods`, methods, p);
  };
  on('GET', '/v1/customers/:id/payment_methods', (p, [id]) => {
    onlyParams(p, ['type', 'allow_redisplay', ...LIST]);
    return paymentMethodsOf(id!, p);
  });
  on('GET', '/v1/payment_methods', (p) => {
    onlyParams(p, ['customer', 'type', ...LIST]);
    return paymentMethodsOf(reqString(p, 'customer'), p);
  });
  on('GET', '/v1/payment_methods/:id', (p, [id]) => get<PaymentMethod>('payment_method', id!, p));

  // ---- products & prices -------------------------------------------------------------------

  on('POST', '/v1/products', (p) => {
    onlyParams(p, ['id', 'name', 'metadata', 'description', 'active']);
    const id = optString(p, 'id');
    if (id && store.objects.has(id)) {
      throw new ApiError(
        400,
        'invalid_request_error',
        `Product already exists.`,
        'resource_already_exists',
        'id',
      );
    }
    const made = store.add(
      product(now(), { id, name: reqString(p, 'name'), metadata: mergeMetadata({}, p) }),
    );
    store.emit('product.created', made);
    return render(made, expandPaths(p));
  });
  on('GET', '/v1/products/:id', (p, [id]) => get<Product>('product', id!, p));
  on('POST', '/v1/prices', (p) => {
    onlyParams(p, [
      'product',
      'product_data',
      'unit_amount',
      'currency',
      'recurring',
      'lookup_key',
      'transfer_lookup_key',
      'metadata',
      'nickname',
      'active',
    ]);
    const currency = reqString(p, 'currency').toLowerCase();
    const unitAmount = optInt(p, 'unit_amount');
    if (unitAmount === undefined)
      throw new ParamError('Missing required param: unit_amount.', 'unit_amount', 'parameter_missing');
    let productId = optString(p, 'product');
    const productData = optObject(p, 'product_data');
    if (!productId && !productData)
      throw new ParamError('Missing required param: product.', 'product', 'parameter_missing');
    if (productId) store.get<Product>('product', productId);
    const recurring = optObject(p, 'recurring');
    const interval = recurring ? reqString(recurring, 'interval') : undefined;
    if (interval && !['day', 'week', 'month', 'year'].includes(interval)) {
      throw new ParamError(
        `Invalid recurring[interval]: must be one of day, week, month, or year`,
        'recurring[interval]',
        'parameter_invalid',
      );
    }
    const lookupKey = optString(p, 'lookup_key') || null;
    const holder = lookupKey ? store.all<Price>('price').find((o) => o.lookup_key === lookupKey) : undefined;
    if (holder && !optBool(p, 'transfer_lookup_key')) {
      throw new ApiError(
        400,
        'invalid_request_error',
        `A price (\`${holder.id}\`) already uses that lookup key.`,
        undefined, // which code Stripe sets here is not established, so the fake claims none
        'lookup_key',
      );
    }
    if (productData) {
      const madeProduct = store.add(
        product(now(), { name: reqString(productData, 'name'), metadata: mergeMetadata({}, productData) }),
      );
      store.emit('product.created', madeProduct);
      productId = madeProduct.id;
    }
    if (holder) store.update('price.updated', holder, (o) => (o.lookup_key = null));
    const made = store.add(
      price(now(), {
        product: productId!,
        unitAmount,
        currency,
        interval,
        intervalCount: recurring ? (optInt(recurring, 'interval_count') ?? 1) : 1,
        lookupKey,
        nickname: optString(p, 'nickname') ?? null,
        metadata: mergeMetadata({}, p),
      }),
    );
    store.emit('price.created', made);
    return render(made, expandPaths(p));
  });
  on('GET', '/v1/prices', (p) => {
    onlyParams(p, ['lookup_keys', 'active', 'product', 'type', 'currency', ...LIST]);
    const keys = optList(p, 'lookup_keys')?.map(String);
    const active = optBool(p, 'active');
    const productId = optString(p, 'product');
    const type = optString(p, 'type');
    const found = store
      .all<Price>('price')
      .filter(
        (o) =>
          (!keys || (o.lookup_key !== null && keys.includes(o.lookup_key))) &&
          (active === undefined || o.active === active),
      )
      .filter((o) => (!productId || o.product === productId) && (!type || o.type === type));
    return listOf('/v1/prices', found, p);
  });
  on('GET', '/v1/prices/:id', (p, [id]) => get<Price>('price', id!, p));

  // ---- checkout & portal -------------------------------------------------------------------

  on('POST', '/v1/checkout/sessions', (p) => {
    onlyParams(p, [
      'mode',
      'customer',
      'customer_email',
      'client_reference_id',
      'line_items',
      'success_url',
      'cancel_url',
      'metadata',
      'subscription_data',
      'currency',
      'payment_method_types',
      'setup_intent_data',
    ]);
    const mode = reqString(p, 'mode');
    if (mode !== 'payment' && mode !== 'setup' && mode !== 'subscription') {
      throw new ParamError(
        `Invalid mode: must be one of payment, setup, or subscription`,
        'mode',
        'parameter_invalid',
      );
    }
    const customerId = optString(p, 'customer') ?? null;
    if (customerId) store.get<Customer>('customer', customerId);
    const lines = (optList(p, 'line_items') ?? []).map((line, i) => {
      if (typeof line !== 'object' || Array.isArray(line))
        throw new ParamError('Invalid line_items', `line_items[${i}]`, 'parameter_invalid');
      const priceId = reqString(line, 'price');
      const found = store.objects.get(priceId);
      if (found?.object !== 'price') {
        throw new ApiError(
          400,
          'invalid_request_error',
          `No such price: '${priceId}'`,
          'resource_missing',
          `line_items[${i}][price]`,
        );
      }
      return { price: found as Price, quantity: optInt(line, 'quantity') ?? 1 };
    });
    if (mode !== 'setup' && lines.length === 0)
      throw new ParamError('Missing required param: line_items.', 'line_items', 'parameter_missing');
    if (mode === 'setup' && lines.length > 0) {
      throw new ParamError(
        'You cannot pass `line_items` in `setup` mode.',
        'line_items',
        'parameter_invalid',
      );
    }
    if (mode === 'subscription' && lines.some((l) => l.price.type !== 'recurring')) {
      throw new ParamError(
        'You must provide at least one recurring price in `subscription` mode when using prices.',
        'line_items',
        'parameter_invalid',
      );
    }
    if (mode === 'payment' && lines.some((l) => l.price.type === 'recurring')) {
      throw new ParamError(
        'You specified `payment` mode but passed a recurring price. Either switch to `subscription` mode or use only one-time prices.',
        'line_items',
        'parameter_invalid',
      );
    }
    if (mode === 'setup' && !optList(p, 'payment_method_types') && !optString(p, 'currency')) {
      throw new ParamError('Missing required param: currency.', 'currency', 'parameter_missing');
    }
    const types = (optList(p, 'payment_method_types') ?? ['card']).map(String);
    const made = store.add(
      checkoutSession(now(), {
        mode,
        customer: customerId,
        customerEmail: optString(p, 'customer_email') ?? null,
        clientReferenceId: optString(p, 'client_reference_id') ?? null,
        successUrl: optString(p, 'success_url') ?? null,
        cancelUrl: optString(p, 'cancel_url') ?? null,
        metadata: mergeMetadata({}, p),
        amountTotal:
          mode === 'setup' ? null : lines.reduce((sum, l) => sum + l.price.unit_amount * l.quantity, 0),
        currency: lines[0]?.price.currency ?? optString(p, 'currency') ?? null,
        paymentMethodTypes: types,
        baseUrl: baseUrl(),
      }),
    );
    if (mode === 'setup') {
      const data = optObject(p, 'setup_intent_data');
      const intent = store.add(setupIntent(now(), customerId, data ? mergeMetadata({}, data) : {}));
      made.setup_intent = intent.id;
      store.emit('setup_intent.created', intent);
    }
    const subscriptionData = optObject(p, 'subscription_data');
    store.checkoutInputs.set(made.id, {
      lines: lines.map((l) => ({ price: l.price.id, quantity: l.quantity })),
      subscriptionMetadata: subscriptionData ? mergeMetadata({}, subscriptionData) : {},
    });
    return render(made, expandPaths(p));
  });
  on('GET', '/v1/checkout/sessions/:id', (p, [id]) => get<CheckoutSession>('checkout.session', id!, p));
  on('GET', '/v1/checkout/sessions/:id/line_items', (_p, [id]) => {
    const session = store.get<CheckoutSession>('checkout.session', id!);
    const data = store.lineItemsOf(session).map((line, i) => ({
      id: `li_${session.id.slice(8, 20)}${i}`,
      object: 'item',
      amount_discount: 0,
      amount_subtotal: line.price.unit_amount * line.quantity,
      amount_tax: 0,
      amount_total: line.price.unit_amount * line.quantity,
      currency: line.price.currency,
      description: line.price.nickname,
      price: line.price,
      quantity: line.quantity,
    }));
    return { object: 'list', data, has_more: false, url: `/v1/checkout/sessions/${session.id}/line_items` };
  });
  on('POST', '/v1/billing_portal/sessions', (p) => {
    onlyParams(p, ['customer', 'return_url', 'configuration', 'locale', 'flow_data']);
    const customerId = reqString(p, 'customer');
    store.get<Customer>('customer', customerId);
    const made = store.add(
      portalSession(now(), {
        customer: customerId,
        returnUrl: optString(p, 'return_url') ?? null,
        baseUrl: baseUrl(),
      }),
    );
    return render(made, expandPaths(p));
  });

  // ---- subscriptions & setup intents -------------------------------------------------------

  on('GET', '/v1/subscriptions/:id', (p, [id]) => get<Subscription>('subscription', id!, p));
  on('GET', '/v1/subscriptions', (p) => {
    onlyParams(p, ['customer', 'status', 'price', ...LIST]);
    const customerId = optString(p, 'customer');
    const status = optString(p, 'status');
    const priceId = optString(p, 'price');
    const found = store
      .all<Subscription>('subscription')
      .filter(
        (s) =>
          (!customerId || s.customer === customerId) &&
          (!priceId || s.items.data.some((i) => i.price.id === priceId)),
      )
      .filter((s) => (status === 'all' ? true : status ? s.status === status : s.status !== 'canceled'));
    return listOf('/v1/subscriptions', found, p);
  });
  on('POST', '/v1/subscriptions/:id', (p, [id]) => {
    onlyParams(p, [
      'items',
      'proration_behavior',
      'cancel_at_period_end',
      'metadata',
      'default_payment_method',
      'payment_behavior',
    ]);
    const sub = store.get<Subscription>('subscription', id!);
    if (sub.status === 'canceled') {
      throw new ApiError(
        400,
        'invalid_request_error',
        'A canceled subscription can only update its cancellation_details and metadata.',
      );
    }
    // As Stripe: an entry with `id` changes (or, with `deleted`, removes) that item; one without
    // `id` adds a new item, and a price the subscription already has is refused.
    const changes = (optList(p, 'items') ?? []).map((entry, i) => {
      if (typeof entry !== 'object' || Array.isArray(entry)) {
        throw new ParamError('Invalid items', `items[${i}]`, 'parameter_invalid');
      }
      const itemId = optString(entry, 'id');
      const item = itemId ? sub.items.data.find((it) => it.id === itemId) : undefined;
      if (itemId && !item) {
        throw new ApiError(
          400,
          'invalid_request_error',
          `No such subscription item: '${itemId}'`,
          'resource_missing',
          `items[${i}][id]`,
        );
      }
      const priceId = optString(entry, 'price');
      const newPrice = priceId ? store.objects.get(priceId) : undefined;
      if (priceId && newPrice?.object !== 'price') {
        throw new ApiError(
          400,
          'invalid_request_error',
          `No such price: '${priceId}'`,
          'resource_missing',
          `items[${i}][price]`,
        );
      }
      if (!item && !newPrice)
        throw new ParamError(
          'Missing required param: items[0][price].',
          `items[${i}][price]`,
          'parameter_missing',
        );
      if (!item && sub.items.data.some((it) => it.price.id === priceId)) {
        throw new ApiError(
          400,
          'invalid_request_error',
          'Cannot add multiple subscription items with the same price (pass items[n][id] to change an existing item).',
          undefined,
          `items[${i}][price]`,
        );
      }
      return {
        item,
        price: newPrice as Price | undefined,
        quantity: optInt(entry, 'quantity'),
        deleted: optBool(entry, 'deleted') === true,
      };
    });
    const cancelAtEnd = optBool(p, 'cancel_at_period_end');
    const pm = optString(p, 'default_payment_method');
    store.update('customer.subscription.updated', sub, (s) => {
      for (const change of changes) {
        if (change.item && change.deleted) {
          s.items.data = s.items.data.filter((it) => it !== change.item);
        } else if (change.item) {
          if (change.price) change.item.price = change.price;
          if (change.quantity !== undefined) change.item.quantity = change.quantity;
        } else if (change.price) {
          const first = s.items.data[0];
          const added = subscriptionItem(
            now(),
            s.id,
            change.price,
            change.quantity ?? 1,
            first?.current_period_end ?? now(),
          );
          if (first) added.current_period_start = first.current_period_start;
          s.items.data.push(added);
        }
      }
      s.items.total_count = s.items.data.length;
      s.metadata = mergeMetadata(s.metadata, p);
      if (pm !== undefined) s.default_payment_method = pm || null;
      if (cancelAtEnd !== undefined) {
        s.cancel_at_period_end = cancelAtEnd;
        s.cancel_at = cancelAtEnd ? s.items.data[0]!.current_period_end : null;
        s.canceled_at = cancelAtEnd ? now() : null;
        s.cancellation_details = {
          comment: null,
          feedback: null,
          reason: cancelAtEnd ? 'cancellation_requested' : null,
        };
      }
    });
    return render(sub, expandPaths(p));
  });
  on('DELETE', '/v1/subscriptions/:id', (p, [id]) => {
    onlyParams(p, ['invoice_now', 'prorate', 'cancellation_details']);
    const sub = store.get<Subscription>('subscription', id!);
    store.cancel(sub, false);
    return render(sub, expandPaths(p));
  });
  on('GET', '/v1/setup_intents/:id', (p, [id]) => get('setup_intent', id!, p));

  // ---- invoices ---------------------------------------------------------------------------

  on('POST', '/v1/invoiceitems', (p) => {
    onlyParams(p, [
      'customer',
      'amount',
      'currency',
      'description',
      'invoice',
      'metadata',
      'period',
      'subscription',
    ]);
    const owner = store.get<Customer>('customer', reqString(p, 'customer'));
    const amount = optInt(p, 'amount');
    if (amount === undefined)
      throw new ParamError('Missing required param: amount.', 'amount', 'parameter_missing');
    const invoiceId = optString(p, 'invoice');
    const bill = invoiceId ? store.get<Invoice>('invoice', invoiceId) : undefined;
    if (bill && bill.status !== 'draft') {
      throw new ApiError(
        400,
        'invalid_request_error',
        `You can only add invoice items to draft invoices. Invoice ${bill.id} is ${bill.status}.`,
        'invoice_not_editable',
        'invoice',
      );
    }
    if (bill && bill.customer !== owner.id) {
      throw new ApiError(
        400,
        'invalid_request_error',
        `Invoice ${bill.id} belongs to a different customer.`,
        undefined,
        'invoice',
      );
    }
    const period = optObject(p, 'period');
    const made = store.add(
      invoiceItem(now(), {
        customer: owner.id,
        amount,
        currency: (optString(p, 'currency') ?? bill?.currency ?? 'usd').toLowerCase(),
        description: optString(p, 'description') ?? null,
        metadata: mergeMetadata({}, p),
        period: period
          ? { start: optInt(period, 'start') ?? now(), end: optInt(period, 'end') ?? now() }
          : { start: now(), end: now() },
      }),
    );
    if (bill) store.addItemToInvoice(made, bill);
    store.emit('invoiceitem.created', made);
    return render(made, expandPaths(p));
  });
  on('GET', '/v1/invoiceitems/:id', (p, [id]) => get<InvoiceItem>('invoiceitem', id!, p));
  on('POST', '/v1/invoices', (p) => {
    onlyParams(p, [
      'customer',
      'collection_method',
      'auto_advance',
      'pending_invoice_items_behavior',
      'metadata',
      'description',
      'currency',
      'default_payment_method',
    ]);
    const owner = store.get<Customer>('customer', reqString(p, 'customer'));
    const collection = optString(p, 'collection_method') ?? 'charge_automatically';
    if (collection !== 'charge_automatically') {
      throw new ParamError(
        'The fake only supports collection_method=charge_automatically.',
        'collection_method',
        'parameter_invalid',
      );
    }
    const behavior = optString(p, 'pending_invoice_items_behavior') ?? 'exclude';
    if (behavior !== 'exclude' && behavior !== 'include') {
      throw new ParamError(
        'Invalid pending_invoice_items_behavior: must be one of exclude or include',
        'pending_invoice_items_behavior',
        'parameter_invalid',
      );
    }
    const made = store.add(
      invoice(now(), {
        customer: owner,
        currency: (optString(p, 'currency') ?? 'usd').toLowerCase(),
        description: optString(p, 'description') ?? null,
        metadata: mergeMetadata({}, p),
        autoAdvance: optBool(p, 'auto_advance') ?? false,
        billingReason: 'manual',
        subscription: null,
      }),
    );
    made.default_payment_method = optString(p, 'default_payment_method') ?? null;
    if (behavior === 'include') {
      for (const item of store.all<InvoiceItem>('invoiceitem')) {
        if (item.customer === owner.id && item.invoice === null) store.addItemToInvoice(item, made);
      }
    }
    store.emit('invoice.created', made);
    return render(made, expandPaths(p));
  });
  on('GET', '/v1/invoices/:id', (p, [id]) => get<Invoice>('invoice', id!, p));
  on('GET', '/v1/invoices', (p) => {
    onlyParams(p, ['customer', 'status', 'subscription', 'collection_method', ...LIST]);
    const customerId = optString(p, 'customer');
    const status = optString(p, 'status');
    const subId = optString(p, 'subscription');
    const found = store
      .all<Invoice>('invoice')
      .filter((i) => (!customerId || i.customer === customerId) && (!status || i.status === status))
      .filter((i) => !subId || i.parent?.subscription_details.subscription === subId);
    return listOf('/v1/invoices', found, p);
  });
  on('POST', '/v1/invoices/:id/finalize', (p, [id]) => {
    onlyParams(p, ['auto_advance']);
    const bill = store.get<Invoice>('invoice', id!);
    store.finalize(bill);
    return render(bill, expandPaths(p));
  });
  on('POST', '/v1/invoices/:id/pay', (p, [id]) => {
    onlyParams(p, ['payment_method', 'off_session', 'forgive', 'paid_out_of_band']);
    const bill = store.get<Invoice>('invoice', id!);
    const pmId = optString(p, 'payment_method');
    store.pay(bill, pmId ? store.get<PaymentMethod>('payment_method', pmId) : store.cardFor(bill));
    return render(bill, expandPaths(p));
  });
  on('GET', '/v1/invoice_payments', (p) => {
    onlyParams(p, ['invoice', 'payment', 'status', ...LIST]);
    const invoiceId = reqString(p, 'invoice');
    return listOf(`/v1/invoice_payments`, store.paymentsOf(invoiceId), p);
  });

  // ---- charges, refunds, disputes, events ---------------------------------------------------

  on('GET', '/v1/charges/:id', (p, [id]) => get<Charge>('charge', id!, p));
  on('GET', '/v1/charges', (p) => {
    onlyParams(p, ['customer', ...LIST]);
    const customerId = optString(p, 'customer');
    return listOf(
      '/v1/charges',
      store.all<Charge>('charge').filter((c) => !customerId || c.customer === customerId),
      p,
    );
  });
  on('POST', '/v1/refunds', (p) => {
    onlyParams(p, ['charge', 'amount', 'reason', 'metadata', 'payment_intent']);
    const paid = store.get<Charge>('charge', reqString(p, 'charge'));
    return render(
      store.refund(paid, optInt(p, 'amount'), optString(p, 'reason') ?? null, mergeMetadata({}, p)),
      expandPaths(p),
    );
  });
  on('GET', '/v1/refunds/:id', (p, [id]) => get('refund', id!, p));
  on('GET', '/v1/disputes/:id', (p, [id]) => get('dispute', id!, p));
  on('GET', '/v1/events/:id', (p, [id]) => get('event', id!, p));
  on('GET', '/v1/events', (p) => {
    onlyParams(p, ['type', 'types', ...LIST]);
    const type = optString(p, 'type');
    return listOf(
      '/v1/events',
      store.all('event').filter((e) => !type || e.type === type),
      p,
    );
  });

  // ---- Connect: connected accounts, account links, transfers, balance -----------------------

  on('POST', '/v1/accounts', (p) => {
    onlyParams(p, [
      'type',
      'controller',
      'email',
      'country',
      'capabilities',
      'business_type',
      'business_profile',
      'default_currency',
      'metadata',
    ]);
    const type = optString(p, 'type');
    const wanted = optObject(p, 'controller');
    if (type !== undefined && wanted) {
      throw new ParamError(
        'You cannot specify both `type` and `controller`; use `controller` alone.',
        'controller',
        'parameter_invalid',
      );
    }
    let controller: Account['controller'];
    let accountType: Account['type'];
    if (type === 'express') {
      // The controller properties Stripe sets on an account created as `type=express`.
      accountType = 'express';
      controller = {
        fees: { payer: 'application_express' },
        is_controller: true,
        losses: { payments: 'application' },
        requirement_collection: 'stripe',
        stripe_dashboard: { type: 'express' },
        type: 'application',
      };
    } else if (type === 'standard' || (type === undefined && !wanted)) {
      accountType = 'standard';
      controller = {
        fees: { payer: 'account' },
        is_controller: true,
        losses: { payments: 'stripe' },
        requirement_collection: 'stripe',
        stripe_dashboard: { type: 'full' },
        type: 'application',
      };
    } else if (type !== undefined) {
      throw new ParamError(
        type === 'custom'
          ? 'fake-stripe does not cover Custom accounts (type=custom).'
          : `Invalid type: must be one of custom, express, or standard`,
        'type',
        'parameter_invalid',
      );
    } else {
      controller = connectController(wanted!);
      // Which `type` Stripe reports for an account made with controller properties is not
      // established; the fake says `none` (read `controller.stripe_dashboard.type` instead).
      accountType = 'none';
    }
    const capabilities = optObject(p, 'capabilities') ?? {};
    const requested = Object.keys(capabilities).filter((name) => {
      const entry = optObject(capabilities, name);
      return entry ? optBool(entry, 'requested') === true : false;
    });
    const businessType = optString(p, 'business_type') ?? null;
    if (
      businessType &&
      !['individual', 'company', 'non_profit', 'government_entity'].includes(businessType)
    ) {
      throw new ParamError(
        'Invalid business_type: must be one of company, government_entity, individual, or non_profit',
        'business_type',
        'parameter_invalid',
      );
    }
    const made = store.add(
      account(now(), {
        type: accountType,
        controller,
        email: optString(p, 'email') ?? null,
        country: (optString(p, 'country') ?? 'US').toUpperCase(),
        businessType,
        capabilities: requested,
        metadata: mergeMetadata({}, p),
      }),
    );
    const currency = optString(p, 'default_currency');
    if (currency) made.default_currency = currency.toLowerCase();
    return render(made, expandPaths(p));
  });
  on('GET', '/v1/accounts/:id', (p, [id]) => get<Account>('account', id!, p));
  on('POST', '/v1/accounts/:id', (p, [id]) => {
    onlyParams(p, ['metadata', 'email']);
    const found = store.get<Account>('account', id!);
    store.changeAccount(found, (a) => {
      const email = optString(p, 'email');
      if (email !== undefined) a.email = email || null;
      a.metadata = mergeMetadata(a.metadata, p);
    });
    return render(found, expandPaths(p));
  });
  on('GET', '/v1/accounts', (p) => {
    onlyParams(p, ['created', ...LIST]);
    return listOf('/v1/accounts', store.all<Account>('account'), p);
  });

  on('POST', '/v1/account_links', (p) => {
    onlyParams(p, ['account', 'type', 'refresh_url', 'return_url', 'collect', 'collection_options']);
    const accountId = reqString(p, 'account');
    const found = store.objects.get(accountId);
    if (found?.object !== 'account') {
      throw new ApiError(
        400,
        'invalid_request_error',
        `No such account: '${accountId}'`,
        'resource_missing',
        'account',
      );
    }
    const type = reqString(p, 'type');
    if (type !== 'account_onboarding' && type !== 'account_update') {
      throw new ParamError(
        'Invalid type: must be one of account_onboarding or account_update',
        'type',
        'parameter_invalid',
      );
    }
    if (type === 'account_update' && (found as Account).controller.requirement_collection !== 'application') {
      throw new ParamError(
        'You cannot create `account_update` type Account Links for accounts where Stripe collects requirements; use `account_onboarding`.',
        'type',
        'parameter_invalid',
      );
    }
    const options = optObject(p, 'collection_options');
    const collect =
      (options ? optString(options, 'fields') : undefined) ?? optString(p, 'collect') ?? 'currently_due';
    if (collect !== 'currently_due' && collect !== 'eventually_due') {
      throw new ParamError(
        'Invalid fields: must be one of currently_due or eventually_due',
        options ? 'collection_options[fields]' : 'collect',
        'parameter_invalid',
      );
    }
    const token = randomBytes(9).toString('base64url');
    const created = now();
    const url = `${baseUrl()}/connect/onboard/${token}`;
    store.accountLinks.set(token, {
      token,
      account: accountId,
      type,
      collect,
      refreshUrl: optString(p, 'refresh_url') ?? null,
      returnUrl: optString(p, 'return_url') ?? null,
      created,
      expiresAt: created + 300,
      url,
      state: 'new',
    });
    return { object: 'account_link', created, expires_at: created + 300, url };
  });

  on('POST', '/v1/transfers', (p) => {
    onlyParams(p, [
      'amount',
      'currency',
      'destination',
      'transfer_group',
      'description',
      'metadata',
      'source_transaction',
      'source_type',
    ]);
    const amount = optInt(p, 'amount');
    if (amount === undefined)
      throw new ParamError('Missing required param: amount.', 'amount', 'parameter_missing');
    if (amount < 1) {
      throw new ParamError(
        'This value must be greater than or equal to 1.',
        'amount',
        'parameter_invalid_integer',
      );
    }
    const currency = reqString(p, 'currency').toLowerCase();
    if (!/^[a-z]{3}$/.test(currency)) {
      throw new ParamError(`Invalid currency: ${currency}.`, 'currency', 'parameter_invalid');
    }
    if (optString(p, 'source_transaction')) {
      throw new ParamError(
        'fake-stripe does not cover transfers with source_transaction.',
        'source_transaction',
        'parameter_invalid',
      );
    }
    const made = store.createTransfer({
      amount,
      currency,
      destination: reqString(p, 'destination'),
      description: optString(p, 'description') ?? null,
      transferGroup: optString(p, 'transfer_group') ?? null,
      metadata: mergeMetadata({}, p),
    });
    return render(made, expandPaths(p));
  });
  on('GET', '/v1/transfers/:id', (p, [id]) => get<Transfer>('transfer', id!, p));
  on('POST', '/v1/transfers/:id', (p, [id]) => {
    onlyParams(p, ['description', 'metadata']);
    const found = store.get<Transfer>('transfer', id!);
    store.update('transfer.updated', found, (t) => {
      const description = optString(p, 'description');
      if (description !== undefined) t.description = description || null;
      t.metadata = mergeMetadata(t.metadata, p);
    });
    return render(found, expandPaths(p));
  });
  on('GET', '/v1/transfers', (p) => {
    onlyParams(p, ['destination', 'transfer_group', 'created', ...LIST]);
    const destination = optString(p, 'destination');
    const group = optString(p, 'transfer_group');
    const found = store
      .all<Transfer>('transfer')
      .filter(
        (t) => (!destination || t.destination === destination) && (!group || t.transfer_group === group),
      );
    return listOf('/v1/transfers', found, p);
  });
  on('POST', '/v1/transfers/:id/reversals', (p, [id]) => {
    onlyParams(p, ['amount', 'description', 'metadata', 'refund_application_fee']);
    const sent = store.get<Transfer>('transfer', id!);
    return render(store.reverseTransfer(sent, optInt(p, 'amount'), mergeMetadata({}, p)), expandPaths(p));
  });
  on('GET', '/v1/transfers/:id/reversals', (p, [id]) => {
    onlyParams(p, LIST);
    const sent = store.get<Transfer>('transfer', id!);
    // listOf takes items oldest first; the transfer holds its reversals newest first.
    return listOf(`/v1/transfers/${sent.id}/reversals`, [...sent.reversals.data].reverse(), p);
  });
  on('GET', '/v1/transfers/:id/reversals/:id', (p, [id, reversalId]) => {
    const sent = store.get<Transfer>('transfer', id!);
    const found = store.get<TransferReversal>('transfer_reversal', reversalId!);
    if (found.transfer !== sent.id)
      throw new ApiError(
        404,
        'invalid_request_error',
        `No such transfer_reversal: '${reversalId}'`,
        'resource_missing',
        'id',
      );
    return render(found, expandPaths(p));
  });

  on('GET', '/v1/balance', (p) => {
    onlyParams(p, []);
    const currencies = [...store.balance.keys()];
    return {
      object: 'balance',
      available: currencies.map((currency) => {
        const amount = store.balance.get(currency) ?? 0;
        return { amount, currency, source_types: { card: amount } };
      }),
      connect_reserved: currencies.map((currency) => ({ amount: 0, currency })),
      livemode: false,
      pending: currencies.map((currency) => ({ amount: 0, currency, source_types: { card: 0 } })),
    };
  });

  return function handle(method: string, path: string, params: FormParams): Answer {
    for (const [routeMethod, pattern, handler] of routes) {
      const match = routeMethod === method ? pattern.exec(path) : null;
      if (match) {
        try {
          return { status: 200, body: handler(params, match.slice(1).map(decodeURIComponent)) };
        } catch (error) {
          if (error instanceof ParamError) {
            return {
              status: 400,
              body: new ApiError(400, 'invalid_request_error', error.message, error.code, error.param).body(),
            };
          }
          if (error instanceof ApiError) return { status: error.status, body: error.body() };
          throw error;
        }
      }
    }
    return {
      status: 404,
      body: new ApiError(
        404,
        'invalid_request_error',
        `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
      ).body(),
    };
  };
}

/** The controller properties asked for, with Stripe's defaults and the combinations it refuses. */
function connectController(wanted: FormParams): Account['controller'] {
  const dashboard = optObject(wanted, 'stripe_dashboard');
  const fees = optObject(wanted, 'fees');
  const losses = optObject(wanted, 'losses');
  const dashboardType = (dashboard ? optString(dashboard, 'type') : undefined) ?? 'full';
  const collection = optString(wanted, 'requirement_collection') ?? 'stripe';
  const payer =
    (fees ? optString(fees, 'payer') : undefined) ?? (dashboardType === 'full' ? 'account' : 'application');
  const payments =
    (losses ? optString(losses, 'payments') : undefined) ??
    (dashboardType === 'full' ? 'stripe' : 'application');
  const check = (ok: boolean, param: string, message: string) => {
    if (!ok) throw new ParamError(message, param, 'parameter_invalid');
  };
  check(
    ['express', 'full', 'none'].includes(dashboardType),
    'controller[stripe_dashboard][type]',
    'Invalid controller[stripe_dashboard][type]: must be one of express, full, or none',
  );
  check(
    ['application', 'stripe'].includes(collection),
    'controller[requirement_collection]',
    'Invalid controller[requirement_collection]: must be one of application or stripe',
  );
  check(
    ['account', 'application'].includes(payer),
    'controller[fees][payer]',
    'Invalid controller[fees][payer]: must be one of account or application',
  );
  check(
    ['application', 'stripe'].includes(payments),
    'controller[losses][payments]',
    'Invalid controller[losses][payments]: must be one of application or stripe',
  );
  if (dashboardType === 'express') {
    check(
      payer === 'application' && payments === 'application' && collection === 'stripe',
      'controller',
      'An account with the Express Dashboard needs controller[fees][payer]=application, controller[losses][payments]=application and controller[requirement_collection]=stripe.',
    );
  }
  if (collection === 'application') {
    check(
      dashboardType === 'none' && payments === 'application',
      'controller[requirement_collection]',
      'controller[requirement_collection]=application needs controller[stripe_dashboard][type]=none and controller[losses][payments]=application.',
    );
  }
  return {
    fees: { payer },
    is_controller: true,
    losses: { payments },
    requirement_collection: collection,
    stripe_dashboard: { type: dashboardType },
    type: 'application',
  };
}
