# frozen_string_literal: true

require_relative "lib/quarry/version"

Gem::Specification.new do |spec|
  spec.name = "quarry-client"
  spec.version = Quarry::VERSION
  spec.summary = "The official Ruby client for a Quarry analytics gateway"
  spec.description = "Queries, analytics, API keys and usage of a Quarry gateway, with typed errors, " \
                     "retries that honour retry_after, and OAuth client credentials. Standard library only."
  spec.authors = ["Quarry"]
  spec.license = "Apache-2.0"
  spec.homepage = "https://quarry.dev"
  spec.metadata = {
    "homepage_uri" => "https://quarry.dev",
    "source_code_uri" => "https://github.com/quarry-dev/quarry/tree/main/clients/ruby",
    "changelog_uri" => "https://github.com/quarry-dev/quarry/blob/main/clients/ruby/CHANGELOG.md"
  }
  spec.required_ruby_version = ">= 3.0"
  spec.files = Dir["lib/**/*.rb"] + ["README.md", "CHANGELOG.md"]
  spec.require_paths = ["lib"]
end
