<?php

// The PHP client's methods and models as JSON, for test/clients-surface.test.ts.
// methods: by reflection on a constructed Quarry\Client: its public methods (query, and the
// static signUp), and for each public property holding a resource, the resource's public
// methods ($client->marketplace->tryToken -> marketplace.tryToken). models: every class of
// src/ with a SCHEMA constant, and its constructor's parameters (the JSON field names).
declare(strict_types=1);

require __DIR__ . '/../../../clients/php/tests/bootstrap.php';

$root = realpath(__DIR__ . '/../../../clients/php/src');
foreach (new RecursiveIteratorIterator(new RecursiveDirectoryIterator($root)) as $file) {
    if (str_ends_with((string) $file, '.php')) {
        $class = 'Quarry\\' . str_replace('/', '\\', substr((string) $file, strlen($root) + 1, -4));
        if (!str_contains($class, '\\Exception\\')) {
            class_exists($class) || interface_exists($class) || trait_exists($class);
        }
    }
}

$client = new Quarry\Client('http://127.0.0.1:9', apiKey: 'qry_live_surface');
$own = static fn (ReflectionClass $c) => array_map(
    static fn (ReflectionMethod $m) => $m->getName(),
    array_filter(
        $c->getMethods(ReflectionMethod::IS_PUBLIC),
        static fn (ReflectionMethod $m) => !$m->isConstructor() && !str_starts_with($m->getName(), '__'),
    ),
);
$reflection = new ReflectionObject($client);
$methods = $own($reflection);
foreach ($reflection->getProperties(ReflectionProperty::IS_PUBLIC) as $property) {
    $resource = $property->getValue($client);
    if (is_object($resource)) {
        foreach ($own(new ReflectionObject($resource)) as $method) {
            $methods[] = $property->getName() . '.' . $method;
        }
    }
}
sort($methods);

$models = [];
foreach (get_declared_classes() as $class) {
    if (!str_starts_with($class, 'Quarry\\') || !defined("{$class}::SCHEMA")) {
        continue;
    }
    $fields = array_values(array_filter(
        array_map(static fn (ReflectionParameter $p) => $p->getName(), (new ReflectionClass($class))->getConstructor()?->getParameters() ?? []),
        static fn (string $name) => $name !== 'raw',
    ));
    foreach ((array) constant("{$class}::SCHEMA") as $schema) {
        $models[$schema] = $fields;
    }
}

echo json_encode(['methods' => array_values(array_unique($methods)), 'models' => $models], JSON_UNESCAPED_SLASHES), "\n";
