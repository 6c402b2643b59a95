<?php

declare(strict_types=1);

namespace Quarry\Exception;

/** The OAuth token endpoint refused the client; errorCode is the OAuth error (invalid_client …). */
class OAuthException extends QuarryException
{
}
