# frozen_string_literal: true

# The shared conformance cases, one test each (run by test/clients-conformance.test.ts with
# QUARRY_CONFORMANCE set; skipped without it).

require "minitest/autorun"
require_relative "conformance_runner"

class ConformanceTest < Minitest::Test
  FIXTURE = ConformanceRunner.fixture

  ConformanceRunner.cases.each do |kase|
    define_method("test_#{kase['name'].tr('-', '_')}") do
      skip "QUARRY_CONFORMANCE is not set: run test/clients-conformance.test.ts" unless FIXTURE
      problems = ConformanceRunner::Case.new(FIXTURE, kase).run
      assert_equal [], problems, "#{kase['name']}: #{kase['description']}"
      puts "\nCONFORMANCE PASS #{kase['name']}"
    end
  end
end
