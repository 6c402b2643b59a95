#!/bin/sh
# The Ruby client's methods and models as JSON (see ruby_surface.rb). Run from the repository root.
set -e
exec ruby -Iclients/ruby/lib test/support/client-surface/ruby_surface.rb
