# frozen_string_literal: true

require "json"

module Quarry
  # One item of an error's details: the param or field, what is wrong with it, and a number it
  # is about (value; QUOTA_EXCEEDED: credits_needed, credits_left).
  ErrorDetail = Struct.new(:message, :param, :field, :value, keyword_init: true)
  ErrorDetail.const_set(:SCHEMA, "Error.error.details[]")

  # Any failed call: an error the gateway answered with (its envelope
  # {"error":{"code","message","retry_after","request_id","details"}}), or the client's own.
  class Error < StandardError
    # The envelope's code (RATE_LIMIT_EXCEEDED …), the client's own (NETWORK_ERROR, TIMEOUT),
    # or for OAuthError the OAuth error (invalid_client …).
    attr_reader :code
    # The HTTP status; 0 when no response arrived.
    attr_reader :status
    # The gateway's request id (quote it when reporting a problem), or nil.
    attr_reader :request_id
    # Seconds until a retry may succeed (Float), or nil.
    attr_reader :retry_after
    # Array of ErrorDetail.
    attr_reader :details

    # What went wrong in the gateway's (or the client's) words, without the code and request id.
    attr_reader :reason

    # Builds an error; +message+ is what went wrong, for people (#reason). Error#message is
    # "CODE: message (request req_…)", so a logged error can be traced.
    def initialize(code:, status:, message:, request_id: nil, retry_after: nil, details: [])
      super(message)
      @reason = message
      @code = code
      @status = status
      @request_id = request_id
      @retry_after = retry_after
      @details = details
    end

    # "CODE: message (request req_…)": what a log shows and what to quote when reporting it.
    def to_s
      request = request_id.to_s.empty? ? "" : " (request #{request_id})"
      "#{code}: #{super}#{request}"
    end
  end

  # 400 INVALID_REQUEST (and 405/413/415): the request itself is malformed.
  class InvalidRequestError < Error; end
  # 400 INVALID_PARAMS: details lists each param that is unknown, missing or wrong.
  class InvalidParamsError < Error; end
  # 401 UNAUTHENTICATED: no, malformed, unknown, revoked or expired credential.
  class UnauthenticatedError < Error; end
  # 403 FORBIDDEN: the credential's scopes or the analytic's visibility forbid the call.
  class ForbiddenError < Error; end
  # 404 SOURCE_NOT_FOUND (an unknown analytic) or NOT_FOUND (another resource).
  class NotFoundError < Error; end
  # 409 CONFLICT: a duplicate name, or an Idempotency-Key still running.
  class ConflictError < Error; end
  # 409 PRICE_ABOVE_LIMIT: the call would cost more than its max_credits; nothing run or charged.
  class PriceAboveLimitError < Error; end
  # 429 RATE_LIMIT_EXCEEDED: retried automatically after retry_after seconds.
  class RateLimitError < Error; end
  # 429 QUOTA_EXCEEDED: the plan's monthly credits are used up; never retried.
  class QuotaExceededError < Error; end
  # 422 RESULT_TOO_LARGE: the result is larger than the gateway answers; narrow the params.
  class ResultTooLargeError < Error; end
  # 502 UPSTREAM_ERROR: the warehouse rejected or failed the query.
  class UpstreamError < Error; end
  # 503 SOURCE_UNAVAILABLE: the warehouse is unreachable or busy.
  class SourceUnavailableError < Error; end
  # 504 QUERY_TIMEOUT: the analytic's own time limit passed on the gateway.
  class QueryTimeoutError < Error; end
  # 500 INTERNAL: a bug in the gateway.
  class InternalError < Error; end
  # No response: connection refused or reset, body cut off.
  class NetworkError < Error; end
  # The client's own overall timeout passed before the call (with its retries) finished.
  class TimeoutError < Error; end
  # The OAuth token endpoint refused the client; code is the OAuth error (invalid_client …).
  class OAuthError < Error; end

  # The error class of each envelope code.
  CLASS_BY_CODE = {
    "INVALID_REQUEST" => InvalidRequestError, "METHOD_NOT_ALLOWED" => InvalidRequestError,
    "PAYLOAD_TOO_LARGE" => InvalidRequestError, "UNSUPPORTED_MEDIA_TYPE" => InvalidRequestError,
    "INVALID_PARAMS" => InvalidParamsError, "UNAUTHENTICATED" => UnauthenticatedError,
    "FORBIDDEN" => ForbiddenError, "SOURCE_NOT_FOUND" => NotFoundError, "NOT_FOUND" => NotFoundError,
    "CONFLICT" => ConflictError, "PRICE_ABOVE_LIMIT" => PriceAboveLimitError, "RATE_LIMIT_EXCEEDED" => RateLimitError, "QUOTA_EXCEEDED" => QuotaExceededError,
    "RESULT_TOO_LARGE" => ResultTooLargeError, "UPSTREAM_ERROR" => UpstreamError,
    "SOURCE_UNAVAILABLE" => SourceUnavailableError, "QUERY_TIMEOUT" => QueryTimeoutError, "INTERNAL" => InternalError
  }.freeze

  # The error class of a non-JSON answer of a proxy in front of the gateway.
  CLASS_BY_PROXY_STATUS = { 502 => UpstreamError, 503 => SourceUnavailableError, 504 => UpstreamError }.freeze

  # The typed error for a failed response: the envelope's class, an OAuthError, or an Error.
  def self.error_from_response(status, headers, body)
    parsed = begin
      JSON.parse(body.to_s)
    rescue JSON::ParserError
      nil
    end
    header_retry = Float(headers["retry-after"], exception: false) if headers["retry-after"]
    header_request_id = headers["x-request-id"]
    if parsed.is_a?(Hash) && parsed["error"].is_a?(Hash) && parsed["error"]["code"].is_a?(String)
      e = parsed["error"]
      details = Array(e["details"]).select { |d| d.is_a?(Hash) }.map do |d|
        ErrorDetail.new(message: d["message"].to_s, param: d["param"], field: d["field"],
                        value: d["value"].is_a?(Numeric) ? d["value"] : nil)
      end
      retry_after = e["retry_after"].is_a?(Numeric) ? e["retry_after"].to_f : header_retry
      return CLASS_BY_CODE.fetch(e["code"], Error).new(
        code: e["code"], status: status, message: e["message"].is_a?(String) ? e["message"] : "#{e['code']} (HTTP #{status})",
        request_id: e["request_id"] || header_request_id, retry_after: retry_after, details: details
      )
    end
    if parsed.is_a?(Hash) && parsed["error"].is_a?(String)
      description = parsed["error_description"]
      message = description.is_a?(String) && !description.empty? ? description : "The token endpoint answered #{parsed['error']} (HTTP #{status})."
      return OAuthError.new(code: parsed["error"], status: status, message: message,
                            request_id: header_request_id, retry_after: header_retry)
    end
    # A proxy or load balancer in front of the gateway answers 502/503/504 with its own page: the
    # same family as the gateway's own upstream failure, so callers handle (and retry) it alike.
    klass = CLASS_BY_PROXY_STATUS.fetch(status, Error)
    where = CLASS_BY_PROXY_STATUS.key?(status) ? " (from a proxy in front of the gateway)" : ""
    klass.new(code: "HTTP_ERROR", status: status, message: "HTTP #{status} without a Quarry error body#{where}: #{body.to_s[0, 200]}",
              request_id: header_request_id, retry_after: header_retry)
  end
end
