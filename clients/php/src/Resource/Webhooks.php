<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/**
 * The account's webhook endpoints ($client->webhooks; needs the account scope): signed events out
 * (docs/webhooks.md). Check deliveries with \Quarry\Webhook::verify().
 */
final class Webhooks extends Resource
{
    /**
     * Adds an endpoint; the answer's secret (whsec_…) is shown this once. No $eventTypes: every type.
     *
     * @param list<string>|null $eventTypes
     */
    public function create(string $url, ?string $description = null, ?array $eventTypes = null): Model\IssuedWebhookEndpoint
    {
        $body = self::object(['url' => $url, 'description' => $description, 'event_types' => $eventTypes]);
        return Model\IssuedWebhookEndpoint::fromArray($this->transport->send('POST', '/v1/webhooks', body: $body, idempotent: false));
    }

    /** @return list<Model\WebhookEndpoint> The account's endpoints (never a secret). */
    public function list(): array
    {
        return array_map(
            static fn (array $e) => Model\WebhookEndpoint::fromArray($e),
            $this->transport->send('GET', '/v1/webhooks')['endpoints'],
        );
    }

    /** One endpoint. */
    public function get(string $id): Model\WebhookEndpoint
    {
        return Model\WebhookEndpoint::fromArray($this->transport->send('GET', '/v1/webhooks/' . self::segment($id))['endpoint']);
    }

    /**
     * Changes the given fields; $enabled true re-enables an endpoint the gateway disabled.
     *
     * @param list<string>|null $eventTypes
     */
    public function update(
        string $id,
        ?string $url = null,
        ?string $description = null,
        ?array $eventTypes = null,
        ?bool $enabled = null,
    ): Model\WebhookEndpoint {
        $body = self::object(['url' => $url, 'description' => $description, 'event_types' => $eventTypes, 'enabled' => $enabled]);
        return Model\WebhookEndpoint::fromArray($this->transport->send('PATCH', '/v1/webhooks/' . self::segment($id), body: $body)['endpoint']);
    }

    /** Deletes an endpoint; its pending deliveries are dropped. */
    public function delete(string $id): Model\WebhookEndpoint
    {
        return Model\WebhookEndpoint::fromArray($this->transport->send('DELETE', '/v1/webhooks/' . self::segment($id))['endpoint']);
    }

    /** A new secret (shown once); the old one keeps signing for $overlapHours (default 24). */
    public function rotateSecret(string $id, ?float $overlapHours = null): Model\IssuedWebhookEndpoint
    {
        $body = self::object(['overlap_hours' => $overlapHours]);
        return Model\IssuedWebhookEndpoint::fromArray(
            $this->transport->send('POST', '/v1/webhooks/' . self::segment($id) . '/rotate-secret', body: $body, idempotent: false),
        );
    }

    /** Sends a webhook.test event to the endpoint; its event id (the webhook-id). */
    public function test(string $id): string
    {
        return $this->transport->send('POST', '/v1/webhooks/' . self::segment($id) . '/test', idempotent: false)['event_id'];
    }

    /** @return list<Model\WebhookDelivery> The endpoint's delivery log, newest first. */
    public function deliveries(string $id, ?int $limit = null): array
    {
        $query = $limit === null ? [] : ['limit' => (string) $limit];
        return array_map(
            static fn (array $d) => Model\WebhookDelivery::fromArray($d),
            $this->transport->send('GET', '/v1/webhooks/' . self::segment($id) . '/deliveries', query: $query)['deliveries'],
        );
    }

    /** Sends a finished delivery again, with the same webhook-id. */
    public function replay(string $id, string $deliveryId): Model\WebhookDelivery
    {
        $path = '/v1/webhooks/' . self::segment($id) . '/deliveries/' . self::segment($deliveryId) . '/replay';
        return Model\WebhookDelivery::fromArray($this->transport->send('POST', $path)['delivery']);
    }
}
