# frozen_string_literal: true

module Quarry
  # The client's version, sent in its User-Agent.
  VERSION = "0.1.0"
end
