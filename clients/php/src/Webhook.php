<?php

declare(strict_types=1);

namespace Quarry;

use Quarry\Exception\WebhookVerificationException;

/**
 * Verifies a webhook delivery from Quarry (docs/webhooks.md): Standard Webhooks signatures, an
 * HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" keyed with the endpoint's secret
 * ("whsec_" + base64), sent as space-separated "v1,<base64>" entries (two during a rotation).
 */
final class Webhook
{
    /** Deliveries older or newer than this many seconds are refused (a replayed capture). */
    public const TOLERANCE_SECONDS = 300;

    /**
     * Returns the event (type, timestamp, data) of a genuine, recent delivery; throws
     * WebhookVerificationException otherwise. Pass the raw body exactly as received.
     *
     * @param array<string, string|list<string>> $headers
     * @return array<string, mixed>
     */
    public static function verify(string $secret, string $body, array $headers, ?int $now = null): array
    {
        $id = self::header($headers, 'webhook-id');
        $timestamp = self::header($headers, 'webhook-timestamp');
        $signatures = self::header($headers, 'webhook-signature');
        if (!ctype_digit($timestamp) || abs(($now ?? time()) - (int) $timestamp) > self::TOLERANCE_SECONDS) {
            throw new WebhookVerificationException('the webhook-timestamp is missing or too far from now');
        }
        $key = base64_decode(str_starts_with($secret, 'whsec_') ? substr($secret, 6) : $secret, true);
        if ($key === false) {
            throw new WebhookVerificationException('the secret is not whsec_ and base64');
        }
        $expected = base64_encode(hash_hmac('sha256', "{$id}.{$timestamp}.{$body}", $key, true));
        foreach (explode(' ', $signatures) as $entry) {
            [$version, $signature] = array_pad(explode(',', $entry, 2), 2, '');
            if ($version === 'v1' && hash_equals($expected, $signature)) {
                $event = json_decode($body, true, 512, JSON_THROW_ON_ERROR);
                return is_array($event) ? $event : [];
            }
        }
        throw new WebhookVerificationException('no signature matches this secret');
    }

    /** @param array<string, string|list<string>> $headers */
    private static function header(array $headers, string $name): string
    {
        foreach ($headers as $key => $value) {
            if (strtolower((string) $key) === $name) {
                $one = is_array($value) ? ($value[0] ?? '') : $value;
                if ($one !== '') {
                    return $one;
                }
            }
        }
        throw new WebhookVerificationException("missing {$name} header");
    }
}
