<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** The account's alert thresholds ($client->alerts; needs the account scope). */
final class Alerts extends Resource
{
    /** The usage thresholds (percent) and the analytic error rate that trigger alerts. */
    public function get(): Model\AlertSettings
    {
        return Model\AlertSettings::fromArray($this->transport->send('GET', '/v1/account/alerts')['alerts']);
    }

    /**
     * Sets both (thresholds 1–100, at most 10; error rate 1–100).
     *
     * @param list<int> $usageThresholds
     */
    public function set(array $usageThresholds, int $errorRatePercent): Model\AlertSettings
    {
        $body = ['usage_thresholds' => array_values($usageThresholds), 'error_rate_percent' => $errorRatePercent];
        return Model\AlertSettings::fromArray($this->transport->send('PUT', '/v1/account/alerts', body: $body)['alerts']);
    }
}
