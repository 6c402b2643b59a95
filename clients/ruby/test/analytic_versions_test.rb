# frozen_string_literal: true

require "minitest/autorun"
require "quarry"

# analytics.versions: the generated Models::AnalyticVersion (no network).
class AnalyticVersionsTest < Minitest::Test
  DEFINITION = { "name" => "sales", "connection" => "demo", "sql" => "SELECT 1" }.freeze
  VERSIONS = [
    { "version" => 1, "definition" => DEFINITION, "price" => 1, "scheduled_price" => nil, "price_effective_at" => nil,
      "deprecation" => { "deprecated_at" => "2026-11-01T00:00:00.000Z", "sunset" => "2027-01-01T00:00:00.000Z" },
      "created_at" => "2026-10-01T00:00:00.000Z" },
    { "version" => 2, "definition" => DEFINITION, "price" => 2, "deprecation" => nil, "created_at" => "2026-11-01T00:00:00.000Z" }
  ].freeze

  # Answers every request with VERSIONS, recording it.
  class FakeGateway
    attr_reader :requests

    def initialize = @requests = []

    def send_request(method, path, **)
      @requests << "#{method} #{path}"
      { "versions" => VERSIONS }
    end
  end

  def test_versions_are_analytic_version_models
    gateway = FakeGateway.new
    versions = Quarry::Analytics.new(gateway).versions("sales/by region")
    assert_equal ["GET /v1/owner/analytics/sales%2Fby%20region/versions"], gateway.requests
    assert_equal [Quarry::Models::AnalyticVersion] * 2, versions.map(&:class)
    first, second = versions
    assert_equal [1, 1, "2026-10-01T00:00:00.000Z"], [first.version, first.price, first.created_at]
    assert_instance_of Quarry::Models::VersionDeprecation, first.deprecation
    assert_equal "2027-01-01T00:00:00.000Z", first.deprecation.sunset
    assert_equal [2, 2, nil], [second.version, second.price, second.deprecation]
    assert_equal DEFINITION, second.definition
    assert_equal VERSIONS[1], second.raw
  end
end
