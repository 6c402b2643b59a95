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

    /**
     * Every call of list() (newest first, the same filters): a Generator that fetches one page
     * of $pageSize (1–100, default 100) at a time, as the loop asks for more, following
     * next_cursor until it is null.
     *
     * @return \Generator<int, Model\Call, mixed, void>
     */
    public function listAll(?string $analytic = null, ?string $status = null, int $pageSize = 100): \Generator
    {
        $cursor = null;
        while (true) {
            $page = $this->list($analytic, $status, $pageSize, $cursor);
            foreach ($page->items as $call) {
                yield $call;
            }
            // The gateway gives a cursor only when a call older than the page's last exists.
            if ($page->next_cursor === null) {
                return;
            }
            $cursor = $page->next_cursor;
        }
    }
}
