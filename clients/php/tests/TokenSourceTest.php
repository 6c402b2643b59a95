<?php

declare(strict_types=1);

namespace Quarry\Tests;

use PHPUnit\Framework\TestCase;
use Quarry\OAuthCredentials;
use Quarry\TokenSource;

final class TokenSourceTest extends TestCase
{
    private float $clock = 0.0;
    /** @var list<string> */
    private array $forms = [];

    private function source(): TokenSource
    {
        return new TokenSource(
            'http://gw/oauth/token',
            new OAuthCredentials('id', 'secret', ['query', 'keys']),
            function (string $url, string $form): array {
                $this->forms[] = $form;
                $token = 'tok-' . count($this->forms);
                return [200, [], json_encode(['access_token' => $token, 'token_type' => 'Bearer', 'expires_in' => 100])];
            },
            fn (): float => $this->clock,
        );
    }

    public function testReusesTheTokenAndRefreshesItBeforeItExpires(): void
    {
        $tokens = $this->source();
        $this->assertSame('tok-1', $tokens->token(5));
        $this->clock = 89.0;
        $this->assertSame('tok-1', $tokens->token(5));
        $this->clock = 90.5; // a tenth of its 100 s life before expiry
        $this->assertSame('tok-2', $tokens->token(5));
        $this->assertSame('grant_type=client_credentials&scope=query+keys', $this->forms[0]);
    }

    public function testInvalidateForgetsOnlyTheRefusedToken(): void
    {
        $tokens = $this->source();
        $this->assertSame('tok-1', $tokens->token(5));
        $tokens->invalidate('another');
        $this->assertSame('tok-1', $tokens->token(5));
        $tokens->invalidate('tok-1');
        $this->assertSame('tok-2', $tokens->token(5));
    }
}
