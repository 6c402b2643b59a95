<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** Your account ($client->account). */
final class Account extends Resource
{
    /** The account the credential belongs to. */
    public function get(): Model\Account
    {
        return Model\Account::fromArray($this->transport->send('GET', '/v1/account')['account']);
    }

    /**
     * Sets the console's sign-in password (10–200 characters); $currentPassword is needed only
     * with a console session when one is set already.
     */
    public function setPassword(string $password, ?string $currentPassword = null): void
    {
        $this->transport->send('PUT', '/v1/account/password', body: self::object([
            'password' => $password,
            'current_password' => $currentPassword,
        ]));
    }
}
