<?php

declare(strict_types=1);

// Composer's autoloader when `composer install` ran; else the same PSR-4 map by hand (the
// client has no dependencies, and Debian's phpunit runs the tests without Composer).
if (is_file(__DIR__ . '/../vendor/autoload.php')) {
    require __DIR__ . '/../vendor/autoload.php';
} else {
    spl_autoload_register(static function (string $class): void {
        foreach (['Quarry\\Tests\\' => __DIR__ . '/', 'Quarry\\' => __DIR__ . '/../src/'] as $prefix => $dir) {
            if (str_starts_with($class, $prefix)) {
                $file = $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
                if (is_file($file)) {
                    require $file;
                }
                return;
            }
        }
    });
}
