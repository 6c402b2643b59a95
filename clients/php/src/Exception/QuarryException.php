<?php

declare(strict_types=1);

namespace Quarry\Exception;

use Quarry\ErrorDetail;

/**
 * Any failed call: an error the gateway answered with (its envelope
 * {"error":{"code","message","retry_after","request_id","details"}}), or the client's own.
 * One subclass per family.
 */
class QuarryException extends \RuntimeException
{
    /** What went wrong in the gateway's (or the client's) words, without the code and request id. */
    public readonly string $reason;

    /**
     * getMessage() is "CODE: reason (request req_…)", so a logged exception can be traced.
     *
     * @param string $errorCode the envelope's code (RATE_LIMIT_EXCEEDED …), the client's own
     *     (NETWORK_ERROR, TIMEOUT), or for OAuthException the OAuth error (invalid_client …)
     * @param string $message what went wrong (the reason)
     * @param int $status the HTTP status; 0 when no response arrived
     * @param ?string $requestId the gateway's request id (quote it when reporting a problem)
     * @param ?float $retryAfter seconds until a retry may succeed
     * @param list<ErrorDetail> $details per-param or per-field problems
     */
    public function __construct(
        public readonly string $errorCode,
        public readonly int $status,
        string $message,
        public readonly ?string $requestId = null,
        public readonly ?float $retryAfter = null,
        public readonly array $details = [],
        ?\Throwable $previous = null,
    ) {
        $this->reason = $message;
        parent::__construct("{$errorCode}: {$message}" . ($requestId !== null && $requestId !== '' ? " (request {$requestId})" : ''), 0, $previous);
    }

    /** "Class: CODE: reason (request req_…)": getMessage() carries the code and request id already. */
    public function __toString(): string
    {
        return static::class . ": {$this->getMessage()}";
    }
}
