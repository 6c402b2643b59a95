#!/bin/sh
# The TypeScript client's methods and models as JSON (see typescript-surface.ts). Run from the
# repository root.
set -e
exec node_modules/.bin/tsx test/support/client-surface/typescript-surface.ts
