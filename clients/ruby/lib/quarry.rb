# frozen_string_literal: true

# The official Ruby client for a Quarry analytics gateway. Standard library only.
# `require "quarry/client"` is the gem's own name for this; `require "quarry"` stays an alias.
require_relative "quarry/client"
