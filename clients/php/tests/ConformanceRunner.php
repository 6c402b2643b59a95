<?php

declare(strict_types=1);

namespace Quarry\Tests;

use Quarry\Client;
use Quarry\Exception\QuarryException;
use Quarry\OAuthCredentials;
use Quarry\RetryPolicy;

/**
 * Plays one shared conformance case (clients/conformance/cases) with this client; the rules are
 * in clients/conformance/README.md, and every official client's runner implements them.
 */
final class ConformanceRunner
{
    public const CASES_DIR = __DIR__ . '/../../conformance/cases';

    /** @var array<string, mixed> */
    private array $saved = [];
    private Client $shared;
    private string $baseUrl;

    /**
     * @param array<string, mixed> $fixture
     * @param array<string, mixed> $case
     */
    public function __construct(private readonly array $fixture, private readonly array $case)
    {
        $this->baseUrl = "{$fixture['base_url']}/{$case['name']}";
        $this->saved = ['fixture' => $fixture]; // cases name a runner's own analytics as "$fixture.sources.<name>"
        $this->shared = $this->client($fixture['credentials'][$case['credential']], $case['client'] ?? []);
    }

    /** @return array<string, array{array<string, mixed>}> every case by name, in file order */
    public static function cases(): array
    {
        $files = glob(self::CASES_DIR . '/*.json');
        sort($files);
        $cases = [];
        foreach ($files as $file) {
            $name = basename($file, '.json');
            $cases[$name] = [['name' => $name] + json_decode((string) file_get_contents($file), true, 512, JSON_THROW_ON_ERROR)];
        }
        return $cases;
    }

    public static function resolve(mixed $value, array $saved): mixed
    {
        if (is_string($value) && str_starts_with($value, '$')) {
            $fields = explode('.', substr($value, 1));
            $current = $saved[array_shift($fields)] ?? null;
            foreach ($fields as $field) {
                $current = is_array($current) ? ($current[$field] ?? null) : null;
            }
            return $current;
        }
        if (is_array($value)) {
            return array_map(static fn ($v) => self::resolve($v, $saved), $value);
        }
        return $value;
    }

    /** A result as plain JSON-like values (objects become arrays of their public properties). */
    public static function plain(mixed $value): mixed
    {
        if (is_object($value)) {
            $value = get_object_vars($value);
        }
        return is_array($value) ? array_map([self::class, 'plain'], $value) : $value;
    }

    /** @return list<string> every difference between $expected and $actual */
    public static function match(mixed $expected, mixed $actual, string $path = '$'): array
    {
        $show = static fn ($v) => json_encode($v);
        if ($expected === '<nonempty>') {
            return is_string($actual) && $actual !== '' ? [] : ["{$path}: expected a non-empty string, got {$show($actual)}"];
        }
        if ($expected === '<number>') {
            return is_int($actual) || is_float($actual) ? [] : ["{$path}: expected a number, got {$show($actual)}"];
        }
        if (is_array($expected) && array_is_list($expected)) {
            if (!is_array($actual) || !array_is_list($actual) || count($actual) !== count($expected)) {
                return ["{$path}: expected a list of " . count($expected) . ", got {$show($actual)}"];
            }
            $problems = [];
            foreach ($expected as $i => $e) {
                array_push($problems, ...self::match($e, $actual[$i], "{$path}[{$i}]"));
            }
            return $problems;
        }
        if (is_array($expected)) {
            if (!is_array($actual)) {
                return ["{$path}: expected an object, got {$show($actual)}"];
            }
            $problems = [];
            foreach ($expected as $k => $e) {
                if (array_key_exists($k, $actual)) {
                    array_push($problems, ...self::match($e, $actual[$k], "{$path}.{$k}"));
                } else {
                    $problems[] = "{$path}.{$k}: missing";
                }
            }
            return $problems;
        }
        if (is_int($expected) || is_float($expected)) {
            return (is_int($actual) || is_float($actual)) && $actual == $expected ? [] : ["{$path}: expected {$show($expected)}, got {$show($actual)}"];
        }
        return $expected === $actual ? [] : ["{$path}: expected {$show($expected)}, got {$show($actual)}"];
    }

    /** @return list<string> the problems found: the steps', then the proxy's traffic check */
    public function run(): array
    {
        $problems = [];
        foreach ($this->case['steps'] as $index => $step) {
            $expect = $step['expect'] ?? [];
            $started = hrtime(true) / 1e9;
            try {
                $value = self::plain($this->perform($this->clientFor($step), $step['op'], self::resolve($step['input'] ?? [], $this->saved)));
                if (isset($step['save'])) {
                    $this->saved[$step['save']] = $value;
                }
                $found = $this->checkResult($expect, $value);
            } catch (QuarryException $e) {
                $found = isset($expect['error']) ? $this->checkError($expect['error'], $e)
                    : ['unexpected ' . get_class($e) . ": {$e->getMessage()}"];
            }
            $elapsed = hrtime(true) / 1e9 - $started;
            if (isset($step['max_seconds']) && $elapsed > $step['max_seconds']) {
                $found[] = sprintf('took %.2f s, more than %s s', $elapsed, $step['max_seconds']);
            }
            foreach ($found as $p) {
                $problems[] = "step {$index} ({$step['op']}): {$p}";
            }
        }
        $check = json_decode((string) file_get_contents("{$this->fixture['check_url']}/{$this->case['name']}"), true);
        foreach ($check['problems'] as $p) {
            $problems[] = "traffic: {$p}";
        }
        return $problems;
    }

    private function client(array $credential, array $settings): Client
    {
        $timeout = (float) ($settings['timeout_seconds'] ?? 10);
        $retry = new RetryPolicy((int) ($settings['retries'] ?? 3));
        if (isset($credential['api_key'])) {
            return new Client($this->baseUrl, apiKey: $credential['api_key'], timeout: $timeout, retry: $retry);
        }
        $oauth = new OAuthCredentials($credential['client_id'], $credential['client_secret']);
        return new Client($this->baseUrl, oauth: $oauth, timeout: $timeout, retry: $retry);
    }

    private function clientFor(array $step): Client
    {
        if (!isset($step['client']) && !isset($step['credential'])) {
            return $this->shared;
        }
        $credential = isset($step['credential'])
            ? ['api_key' => self::resolve($step['credential'], $this->saved)]
            : $this->fixture['credentials'][$this->case['credential']];
        return $this->client($credential, ($step['client'] ?? []) + ($this->case['client'] ?? []));
    }

    private function perform(Client $client, string $op, array $args): mixed
    {
        return match ($op) {
            'query' => $client->query($args['source'], $args['params'], maxCredits: $args['max_credits'] ?? null),
            'analytics.get' => $client->analytics->get($args['name'], $args['params']),
            'keys.create' => $client->keys->create($args['name'], $args['scopes'] ?? null),
            'keys.list' => $client->keys->list(),
            'keys.revoke' => $client->keys->revoke($args['id']),
            'usage' => $client->usage->get(),
            'marketplace.searchAll' => iterator_to_array($client->marketplace->searchAll($args['q'] ?? null, $args['category'] ?? null, pageSize: $args['page_size'] ?? 100), false),
            'marketplace.search' => $client->marketplace->search($args['q'] ?? null, $args['category'] ?? null),
            'marketplace.get' => $client->marketplace->get($args['name']),
            'marketplace.tryToken' => $client->marketplace->tryToken($args['source'], $args['ttl_seconds'] ?? null),
            'connections.create' => $client->connections->create($args['name'], $args['type'], $args['config']),
            'analytics.deploy' => $client->analytics->deploy($args['definition']),
            'listings.publish' => $client->listings->publish($args['name'], ...($args['listing'] ?? [])),
            'statements.get' => $client->statements->get($args['period'] ?? null),
            'budget.get' => $client->budget->get(),
            'budget.set' => $client->budget->set($args['budget_usd']),
            'tools.list' => $client->tools->list(),
            'tools.add' => $client->tools->add($args['name']),
            'tools.remove' => $client->tools->remove($args['name']),
            'mcp.get' => $client->mcp->get(),
            'mcp.set' => $client->mcp->set($args['max_credits']),
            'account.get' => $client->account->get(),
            'account.setPassword' => $client->account->setPassword($args['password']),
            'plans.list' => $client->plans->list(),
            'billing.get' => $client->billing->get(),
            'billing.checkout' => $client->billing->checkout($args['plan']),
            'billing.portal' => $client->billing->portal(),
            'payouts.onboarding' => $client->payouts->onboarding(),
            'payouts.account' => $client->payouts->account(),
            'payouts.list' => $client->payouts->list(),
            'embedTokens.create' => $client->embedTokens->create($args['analytics'], $args['origins'] ?? null, $args['expires_in'] ?? null),
            'embedSecrets.create' => $client->embedSecrets->create($args['name']),
            'embedSecrets.list' => $client->embedSecrets->list(),
            'embedSecrets.rotate' => $client->embedSecrets->rotate($args['id'], $args['overlap_seconds'] ?? null),
            'embedSecrets.revoke' => $client->embedSecrets->revoke($args['id']),
            'cors.get' => $client->cors->get(),
            'cors.set' => $client->cors->set($args['allow_keys_from_browsers']),
            'oauthClients.create' => $client->oauthClients->create($args['name'], $args['scopes'] ?? null),
            'oauthClients.list' => $client->oauthClients->list(),
            'oauthClients.revoke' => $client->oauthClients->revoke($args['id']),
            'connectors.list' => $client->connectors->list()->connectors,
            'connections.list' => $client->connections->list(),
            'connections.get' => $client->connections->get($args['id']),
            'connections.test' => $client->connections->test($args['id']),
            'connections.update' => $client->connections->update($args['id'], $args['config']),
            'connections.delete' => $client->connections->delete($args['id']),
            'analytics.dryRun' => $client->analytics->dryRun($args['definition']),
            'analytics.create' => $client->analytics->create($args['definition']),
            'analytics.update' => $client->analytics->update($args['name'], $args['definition']),
            'analytics.describe' => $client->analytics->describe($args['name'], $args['version'] ?? null),
            'calls.list' => $client->calls->list($args['analytic'] ?? null, $args['status'] ?? null, $args['limit'] ?? null),
            'calls.listAll' => iterator_to_array($client->calls->listAll($args['analytic'] ?? null, $args['status'] ?? null, $args['page_size'] ?? 100), false),
            'analytics.versions' => $client->analytics->versions($args['name']),
            'analytics.deprecate' => $client->analytics->deprecate($args['name'], $args['version'], $args['sunset']),
            'analytics.undeprecate' => $client->analytics->undeprecate($args['name'], $args['version']),
            'analytics.list' => $client->analytics->list(),
            'analytics.purgeCache' => $client->analytics->purgeCache($args['name']),
            'analytics.delete' => $client->analytics->delete($args['name']),
            'listings.get' => $client->listings->get($args['name']),
            'listings.unpublish' => $client->listings->unpublish($args['name']),
            'signUp' => Client::signUp($this->baseUrl, $args['email'], $args['name']),
            'sleep' => usleep((int) ($args['seconds'] * 1e6)),
        };
    }

    private function checkError(array $want, QuarryException $e): array
    {
        $problems = [];
        $family = "Quarry\\Exception\\{$want['family']}Exception";
        if (!class_exists($family) || !$e instanceof $family) {
            $problems[] = "expected the {$want['family']} family, got " . get_class($e) . " {$e->errorCode}: {$e->getMessage()}";
        }
        if (isset($want['code']) && $e->errorCode !== $want['code']) {
            $problems[] = "code {$e->errorCode}";
        }
        if (isset($want['status']) && $e->status !== $want['status']) {
            $problems[] = "status {$e->status}";
        }
        if ($e->getMessage() === '') {
            $problems[] = 'an empty message';
        }
        if (($want['request_id'] ?? false) && ($e->requestId ?? '') === '') {
            $problems[] = 'no request id';
        }
        if (($want['retry_after'] ?? null) === 'positive' && !(($e->retryAfter ?? 0) > 0)) {
            $problems[] = 'retry_after ' . json_encode($e->retryAfter);
        }
        foreach ($want['detail_params'] ?? [] as $param) {
            if (!array_filter($e->details, static fn ($d) => $d->param === $param)) {
                $problems[] = "no detail for param {$param}";
            }
        }
        foreach ($want['detail_values'] ?? [] as $name => $value) {
            $found = array_values(array_filter($e->details, static fn ($d) => $d->field === $name || $d->param === $name));
            if ($found === [] || $found[0]->value != $value) {
                $problems[] = "detail {$name}: value " . json_encode($found[0]->value ?? null) . ", expected {$value}";
            }
        }
        if ($want['text_names_code_and_request_id'] ?? false) {
            $text = (string) $e;
            if (!str_contains($text, $e->errorCode) || ($e->requestId ?? '') === '' || !str_contains($text, $e->requestId)) {
                $problems[] = "the error's text names not its code and request id: {$text}";
            }
        }
        return $problems;
    }

    private function checkResult(array $expect, mixed $value): array
    {
        if (isset($expect['error'])) {
            return ["expected a {$expect['error']['family']} error, got a result"];
        }
        $problems = [];
        if (array_key_exists('result', $expect)) {
            $problems = self::match(self::resolve($expect['result'], $this->saved), $value);
        }
        if (isset($expect['contains'])) {
            $wanted = self::resolve($expect['contains'], $this->saved);
            if (!array_filter((array) $value, static fn ($item) => self::match($wanted, $item) === [])) {
                $problems[] = 'no item matches ' . json_encode($wanted) . ' in ' . json_encode($value);
            }
        }
        if (isset($expect['absent_field'])) {
            foreach ((array) $value as $item) {
                if (is_array($item) && ($item[$expect['absent_field']] ?? null) !== null) {
                    $problems[] = "an item has the field {$expect['absent_field']}";
                }
            }
        }
        if (isset($expect['usage_since'])) {
            $since = $expect['usage_since'];
            $before = $this->saved[$since['saved']]['totals'];
            $calls = $value['totals']['calls'] - $before['calls'];
            $credits = $value['totals']['credits'] - $before['credits'];
            if ($calls !== $since['calls'] || $credits !== $since['credits']) {
                $problems[] = "usage grew by {$calls} calls and {$credits} credits";
            }
        }
        return $problems;
    }
}
