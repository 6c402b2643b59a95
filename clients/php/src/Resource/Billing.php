<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** The account's plan, subscription, card and invoices ($client->billing). */
final class Billing extends Resource
{
    /** The plan, subscription, card, budget, the plans it may move to, and invoices. */
    public function get(): Model\Billing
    {
        return Model\Billing::fromArray($this->transport->send('GET', '/v1/billing'));
    }

    /**
     * A checkout for $plan (a paid plan, or 'payg': a card on file); open its url in a browser,
     * then poll get() until the plan changes. Each attempt opens its own: only a refused call is repeated.
     */
    public function checkout(string $plan, ?string $returnUrl = null): Model\Checkout
    {
        $body = self::object(['plan' => $plan, 'return_url' => $returnUrl]);
        return Model\Checkout::fromArray($this->transport->send('POST', '/v1/billing/checkout', body: $body, idempotent: false));
    }

    /** The payment provider's page for the card, the invoices and cancelling. */
    public function portal(?string $returnUrl = null): Model\Portal
    {
        $body = self::object(['return_url' => $returnUrl]);
        return Model\Portal::fromArray($this->transport->send('POST', '/v1/billing/portal', body: $body, idempotent: false));
    }
}
