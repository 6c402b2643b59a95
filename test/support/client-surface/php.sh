#!/bin/sh
# The PHP client's methods and models as JSON (see php_surface.php). Run from the repository root.
set -e
exec php test/support/client-surface/php_surface.php
