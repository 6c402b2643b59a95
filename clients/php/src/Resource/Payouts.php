<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** Being paid as an owner: 80% of what callers paid, monthly ($client->payouts). */
final class Payouts extends Resource
{
    /** Where payouts go: the provider's account state, what it still needs, the minimum payout. */
    public function account(): Model\PayoutAccount
    {
        return Model\PayoutAccount::fromArray($this->transport->send('GET', '/v1/owner/payouts/account'));
    }

    /** The provider's onboarding page (a new URL each call); poll account() after. */
    public function onboarding(?string $returnUrl = null): Model\Onboarding
    {
        $body = self::object(['return_url' => $returnUrl]);
        return Model\Onboarding::fromArray($this->transport->send('POST', '/v1/owner/payouts/onboarding', body: $body, idempotent: false));
    }

    /** The balance held and carried, and each closed period's payout, newest first. */
    public function list(): Model\Payouts
    {
        return Model\Payouts::fromArray($this->transport->send('GET', '/v1/owner/payouts'));
    }
}
