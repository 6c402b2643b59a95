// quarry.dev/quarry-go: the official Go client for a Quarry analytics gateway (standard library
// only). License: Apache-2.0. Homepage: https://quarry.dev
// Source: https://github.com/quarry-dev/quarry/tree/main/clients/go (CHANGELOG.md beside this file)
module quarry.dev/quarry-go

go 1.19
