# frozen_string_literal: true

require "minitest/autorun"
require "quarry"

class RetryPolicyTest < Minitest::Test
  def policy = Quarry::RetryPolicy.new

  def error(klass, status, retry_after = nil)
    klass.new(code: "X", status: status, message: "m", retry_after: retry_after)
  end

  def test_waits_retry_after_plus_jitter
    limited = error(Quarry::RateLimitError, 429, 1.5)
    assert_equal 1.5, policy.delay(limited, 0, false, rand: -> { 0.0 })
    assert_equal 2.5, policy.delay(limited, 2, false, rand: -> { 1.0 })
  end

  def test_never_retries_quota_other_4xx_or_too_long_a_wait
    assert_nil policy.delay(error(Quarry::QuotaExceededError, 429, 10), 0, true)
    assert_nil policy.delay(error(Quarry::InvalidParamsError, 400), 0, true)
    assert_nil policy.delay(error(Quarry::RateLimitError, 429, 31), 0, true)
    assert_nil policy.delay(error(Quarry::RateLimitError, 429, 1), 3, true)
  end

  def test_network_errors_only_on_idempotent_calls
    refute_nil policy.delay(error(Quarry::NetworkError, 0), 0, true)
    assert_nil policy.delay(error(Quarry::NetworkError, 0), 0, false)
  end
end

class ErrorMappingTest < Minitest::Test
  def test_envelope_maps_to_its_family_with_every_field
    body = '{"error":{"code":"INVALID_PARAMS","message":"m","request_id":"req_1","details":[{"param":"year","message":"bad"}]}}'
    e = Quarry.error_from_response(400, {}, body)
    assert_instance_of Quarry::InvalidParamsError, e
    assert_equal ["req_1", "year"], [e.request_id, e.details.first.param]
    limited = Quarry.error_from_response(429, { "retry-after" => "2" }, '{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"m"}}')
    assert_equal 2.0, limited.retry_after
    oauth = Quarry.error_from_response(401, {}, '{"error":"invalid_client"}')
    assert_instance_of Quarry::OAuthError, oauth
    assert_equal "invalid_client", oauth.code
  end
end
