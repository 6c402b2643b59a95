<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** A webhook delivery that is not Quarry's, or too old: do not act on it (\Quarry\Webhook::verify). */
final class WebhookVerificationException extends \RuntimeException
{
}
