# frozen_string_literal: true

# The official Ruby client for a Quarry analytics gateway. Standard library only.
module Quarry
end

require_relative "quarry/version"
require_relative "quarry/errors"
require_relative "quarry/retry_policy"
require_relative "quarry/token_source"
require_relative "quarry/models"
require_relative "quarry/api_models"
require_relative "quarry/transport"
require_relative "quarry/client"
require_relative "quarry/resources"
