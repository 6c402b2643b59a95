# frozen_string_literal: true

module Quarry
  # How the client retries: bounded attempts, exponential backoff with full jitter, never sooner
  # than the gateway's retry_after. retries: 0 turns retries off.
  #
  # retries:: retries after the first attempt (default 3)
  # base_delay:: the first backoff's upper bound in seconds; it doubles per retry (default 0.25)
  # max_delay:: the largest backoff in seconds (default 30). A retry_after longer than this is
  #             not waited out: the error is raised at once, with its retry_after.
  RetryPolicy = Struct.new(:retries, :base_delay, :max_delay, keyword_init: true) do
    # A policy; unset fields keep their defaults.
    def initialize(retries: 3, base_delay: 0.25, max_delay: 30.0)
      super
    end

    # Whether +error+ may be retried. A rate-limited call was refused before any work, so it is
    # retried whatever the call; an unavailable source, a network error and 502/503/504 only on
    # idempotent calls. Never another 4xx: not QUOTA_EXCEEDED, nor the client's own timeout.
    def retryable?(error, idempotent)
      return true if error.is_a?(RateLimitError)
      return false if error.is_a?(TimeoutError) || !idempotent

      error.is_a?(SourceUnavailableError) || error.is_a?(NetworkError) || [502, 503, 504].include?(error.status)
    end

    # Seconds to wait before retry number +attempt+ (0 for the first), or nil to raise instead:
    # full jitter up to base_delay * 2**attempt (capped at max_delay) on top of retry_after.
    def delay(error, attempt, idempotent, rand: Random.method(:rand))
      return nil if attempt >= retries || !retryable?(error, idempotent)

      floor = error.retry_after.to_f
      return nil if floor > max_delay

      floor + (rand.call * [max_delay, base_delay * (2**attempt)].min)
    end
  end
end
