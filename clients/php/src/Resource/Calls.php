<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** The account's recent calls ($client->calls; the account scope). */
final class Calls extends Resource
{
    /**
     * A page of the calls of the last 30 days, newest first: served ones and those that failed
     * after running (free). $limit 1–100 (default 50); pass the page's next_cursor as $cursor
     * for older calls.
     */
    public function list(?string $analytic = null, ?string $status = null, ?int $limit = null, ?string $cursor = null): Model\Calls
    {
        $query = ['analytic' => $analytic, 'status' => $status, 'limit' => $limit, 'cursor' => $cursor];
        return Model\Calls::fromArray($this->transport->send('GET', '/v1/account/calls', $query));
    }
}
