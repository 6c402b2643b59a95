<?php

declare(strict_types=1);

namespace Quarry;

/** Builds the typed exception for a failed response. */
final class ErrorFactory
{
    private const CLASS_BY_CODE = [
        'INVALID_REQUEST' => Exception\InvalidRequestException::class,
        'METHOD_NOT_ALLOWED' => Exception\InvalidRequestException::class,
        'PAYLOAD_TOO_LARGE' => Exception\InvalidRequestException::class,
        'UNSUPPORTED_MEDIA_TYPE' => Exception\InvalidRequestException::class,
        'INVALID_PARAMS' => Exception\InvalidParamsException::class,
        'UNAUTHENTICATED' => Exception\UnauthenticatedException::class,
        'FORBIDDEN' => Exception\ForbiddenException::class,
        'SOURCE_NOT_FOUND' => Exception\NotFoundException::class,
        'NOT_FOUND' => Exception\NotFoundException::class,
        'CONFLICT' => Exception\ConflictException::class,
        'PRICE_ABOVE_LIMIT' => Exception\PriceAboveLimitException::class,
        'RATE_LIMIT_EXCEEDED' => Exception\RateLimitException::class,
        'QUOTA_EXCEEDED' => Exception\QuotaExceededException::class,
        'RESULT_TOO_LARGE' => Exception\ResultTooLargeException::class,
        'UPSTREAM_ERROR' => Exception\UpstreamException::class,
        'SOURCE_UNAVAILABLE' => Exception\SourceUnavailableException::class,
        'QUERY_TIMEOUT' => Exception\QueryTimeoutException::class,
        'INTERNAL' => Exception\InternalException::class,
    ];

    /** The family of a non-JSON answer of a proxy in front of the gateway. */
    private const CLASS_BY_PROXY_STATUS = [
        502 => Exception\UpstreamException::class,
        503 => Exception\SourceUnavailableException::class,
        504 => Exception\UpstreamException::class,
    ];

    /**
     * The envelope's family, an OAuthException for an RFC 6749 error body, else a QuarryException.
     *
     * @param array<string, string> $headers lower-case names
     */
    public static function fromResponse(int $status, array $headers, string $body): Exception\QuarryException
    {
        $parsed = json_decode($body, true);
        $headerRetry = isset($headers['retry-after']) && is_numeric($headers['retry-after'])
            ? (float) $headers['retry-after'] : null;
        $headerRequestId = $headers['x-request-id'] ?? null;
        if (is_array($parsed) && is_array($parsed['error'] ?? null) && is_string($parsed['error']['code'] ?? null)) {
            $e = $parsed['error'];
            $details = [];
            foreach (is_array($e['details'] ?? null) ? $e['details'] : [] as $d) {
                if (is_array($d)) {
                    $details[] = new ErrorDetail(
                        (string) ($d['message'] ?? json_encode($d)),
                        is_string($d['param'] ?? null) ? $d['param'] : null,
                        is_string($d['field'] ?? null) ? $d['field'] : null,
                        is_int($d['value'] ?? null) || is_float($d['value'] ?? null) ? $d['value'] : null,
                    );
                }
            }
            $class = self::CLASS_BY_CODE[$e['code']] ?? Exception\QuarryException::class;
            return new $class(
                $e['code'],
                $status,
                is_string($e['message'] ?? null) ? $e['message'] : "{$e['code']} (HTTP {$status})",
                is_string($e['request_id'] ?? null) ? $e['request_id'] : $headerRequestId,
                is_int($e['retry_after'] ?? null) || is_float($e['retry_after'] ?? null) ? (float) $e['retry_after'] : $headerRetry,
                $details,
            );
        }
        if (is_array($parsed) && is_string($parsed['error'] ?? null)) {
            $description = $parsed['error_description'] ?? '';
            return new Exception\OAuthException(
                $parsed['error'],
                $status,
                is_string($description) && $description !== ''
                    ? $description : "The token endpoint answered {$parsed['error']} (HTTP {$status}).",
                $headerRequestId,
                $headerRetry,
            );
        }
        // A proxy or load balancer in front of the gateway answers 502/503/504 with its own page:
        // the same family as the gateway's own upstream failure, so callers handle (and retry) it alike.
        $class = self::CLASS_BY_PROXY_STATUS[$status] ?? Exception\QuarryException::class;
        $where = isset(self::CLASS_BY_PROXY_STATUS[$status]) ? ' (from a proxy in front of the gateway)' : '';
        return new $class(
            'HTTP_ERROR',
            $status,
            "HTTP {$status} without a Quarry error body{$where}: " . substr($body, 0, 200),
            $headerRequestId,
            $headerRetry,
        );
    }
}
