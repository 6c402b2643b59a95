<?php

declare(strict_types=1);

namespace Quarry\Resource;

use Quarry\Model;

/** Whether your keys may be used from other origins' web pages ($client->cors; the account scope). */
final class Cors extends Resource
{
    public function get(): Model\CorsSettingsCors
    {
        return Model\CorsSettingsCors::fromArray($this->transport->send('GET', '/v1/account/cors')['cors']);
    }

    /** Off by default: a key in a web page is a key anyone can copy; prefer embed tokens. */
    public function set(bool $allowKeysFromBrowsers): Model\CorsSettingsCors
    {
        return Model\CorsSettingsCors::fromArray($this->transport->send('PUT', '/v1/account/cors', body: ['allow_keys_from_browsers' => $allowKeysFromBrowsers])['cors']);
    }
}
