#!/bin/sh
# The Go client's methods and models as JSON (TestSurface in clients/go/surface_test.go, by
# reflection on a Client and on the model structs' json tags). Run from the repository root.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cache="${TMPDIR:-/tmp}/quarry-clients-go"
cd clients/go
GOCACHE="$cache/cache" GOPATH="$cache/path" GOPROXY=off GOFLAGS= GOTOOLCHAIN=local \
  QUARRY_SURFACE_DUMP="$dir/surface.json" go test -count=1 -run '^TestSurface$' . >&2
cat "$dir/surface.json"
echo
