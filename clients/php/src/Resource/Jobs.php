<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/**
 * Asynchronous queries ($client->jobs; docs/large-results.md): a job runs past the synchronous
 * time limit, is charged once when it succeeds, and its result is read in pages from the gateway
 * instance that ran it.
 */
final class Jobs extends Resource
{
    /**
     * Submits a query as a job (Prefer: respond-async): the queued job, once admitted.
     *
     * @param array<string, mixed> $params
     */
    public function submit(string $source, array $params = [], ?int $maxCredits = null): Model\Job
    {
        $body = self::object(['source' => $source, 'params' => (object) $params, 'max_credits' => $maxCredits]);
        // A repeat would be a second job: only a refused submission is retried.
        return Model\Job::fromArray($this->transport->send(
            'POST',
            '/v1/query',
            body: $body,
            headers: ['Prefer' => 'respond-async'],
            idempotent: false,
        ));
    }

    /** The job's state, and once succeeded a page of its result (result->meta->next: the next cursor). */
    public function get(string $id, ?int $pageSize = null, ?string $cursor = null): Model\Job
    {
        $query = array_filter(['page_size' => $pageSize, 'cursor' => $cursor], static fn ($v) => $v !== null);
        return Model\Job::fromArray($this->transport->send('GET', '/v1/jobs/' . self::segment($id), query: $query));
    }

    /** @return list<Model\Job> The account's recent jobs, newest first. */
    public function list(?string $state = null, ?int $limit = null): array
    {
        $query = array_filter(['state' => $state, 'limit' => $limit], static fn ($v) => $v !== null);
        return array_map(
            static fn (array $j) => Model\Job::fromArray($j),
            $this->transport->send('GET', '/v1/jobs', query: $query)['items'],
        );
    }

    /** Cancels the job: its warehouse query stops, and it is not charged. */
    public function cancel(string $id): Model\Job
    {
        return Model\Job::fromArray($this->transport->send('DELETE', '/v1/jobs/' . self::segment($id)));
    }

    /**
     * Polls the job every $interval seconds until it succeeded, failed or was cancelled; throws a
     * \RuntimeException past $timeout seconds.
     */
    public function wait(string $id, float $interval = 1.0, ?float $timeout = null): Model\Job
    {
        $deadline = $timeout === null ? null : microtime(true) + $timeout;
        while (true) {
            $job = $this->get($id);
            if ($job->state !== 'queued' && $job->state !== 'running') {
                return $job;
            }
            $now = microtime(true);
            if ($deadline !== null && $now >= $deadline) {
                throw new \RuntimeException("The job {$id} is still {$job->state} after {$timeout} s.");
            }
            usleep((int) (1e6 * ($deadline === null ? $interval : min($interval, $deadline - $now))));
        }
    }
}
