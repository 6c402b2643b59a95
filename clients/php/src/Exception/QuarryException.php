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
    /**
     * @param string $errorCode the envelope's code (RATE_LIMIT_EXCEEDED …), the client's own
     *     (NETWORK_ERROR, TIMEOUT), or for OAuthException the OAuth error (invalid_client …)
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
        parent::__construct($message, 0, $previous);
    }

    /** "Class: CODE: message (request req_…)": what a log shows and what to quote when reporting it. */
    public function __toString(): string
    {
        $request = $this->requestId === null || $this->requestId === '' ? '' : " (request {$this->requestId})";
        return static::class . ": {$this->errorCode}: {$this->getMessage()}{$request}";
    }
}
