<?php

declare(strict_types=1);

namespace Quarry\Tests;

use PHPUnit\Framework\TestCase;

/** The shared conformance cases, one test each (run by test/clients-conformance.test.ts). */
final class ConformanceTest extends TestCase
{
    /** @return array<string, array{array<string, mixed>}> */
    public static function cases(): array
    {
        return ConformanceRunner::cases();
    }

    /**
     * @dataProvider cases
     * @param array<string, mixed> $case
     */
    public function testCase(array $case): void
    {
        $raw = getenv('QUARRY_CONFORMANCE');
        if ($raw === false || $raw === '') {
            $this->markTestSkipped('QUARRY_CONFORMANCE is not set: run test/clients-conformance.test.ts');
        }
        $problems = (new ConformanceRunner(json_decode($raw, true), $case))->run();
        $this->assertSame([], $problems, "{$case['name']}: {$case['description']}");
        fwrite(STDOUT, "\nCONFORMANCE PASS {$case['name']}\n");
    }
}
