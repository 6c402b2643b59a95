# frozen_string_literal: true

require "json"
require "net/http"
require "openssl"
require "uri"

module Quarry
  # One HTTP call to the gateway with everything around it: the credential (API key, or OAuth
  # token fetched again once when the API answers 401), typed errors, bounded retries with
  # backoff, and one deadline for the whole call, retries and waits included. Net::HTTP only.
  class Transport
    # The refused 401 of an OAuth token: one fresh token is fetched before it is raised.
    class TokenRefused < StandardError
      attr_reader :original

      def initialize(original)
        super(original.message)
        @original = original
      end
    end
    private_constant :TokenRefused

    # Built by Client#initialize: exactly one of api_key or tokens (a TokenSource).
    def initialize(base_url:, api_key:, tokens:, timeout:, retry_policy:, user_agent:)
      @base = base_url.chomp("/")
      @api_key = api_key
      @tokens = tokens
      @timeout = timeout
      @retry = retry_policy
      @user_agent = user_agent
    end

    # Sends one API call and returns the parsed JSON body (nil for 204), or raises a Quarry::Error.
    # +query+ values that are Arrays become repeated keys; nil values are left out.
    def send_request(method, path, query: nil, body: nil, headers: {}, idempotent: true)
      deadline = @timeout && (now + @timeout)
      url = @base + path
      pairs = (query || {}).flat_map { |k, v| v.nil? ? [] : Array(v).map { |item| [k.to_s, item.to_s] } }
      url += "?#{URI.encode_www_form(pairs)}" unless pairs.empty?
      payload = body.nil? ? nil : JSON.generate(body)
      reauthorized = false
      last = nil
      retry_count = 0
      loop do
        remaining = deadline ? deadline - now : 3600.0
        raise timeout_error(method, path, last) if remaining <= 0

        begin
          return attempt(method, url, payload, headers, remaining)
        rescue TokenRefused => e
          raise e.original if reauthorized

          reauthorized = true
        rescue TimeoutError
          raise timeout_error(method, path, last)
        rescue Error => e
          last = e
          delay = @retry.delay(e, retry_count, idempotent)
          raise if delay.nil? || (deadline && now + delay >= deadline)

          sleep(delay)
          retry_count += 1
        end
      end
    end

    # One HTTP exchange: [status, headers (lower-case names), body]. No answer raises
    # NetworkError, a timed-out socket TimeoutError.
    def raw(method, url, body, headers, timeout)
      uri = URI(url)
      http = Net::HTTP.new(uri.host, uri.port)
      http.use_ssl = uri.scheme == "https"
      http.open_timeout = http.read_timeout = http.write_timeout = [timeout, 0.001].max
      request = Net::HTTPGenericRequest.new(method, !body.nil?, true, uri.request_uri, headers)
      request.body = body unless body.nil?
      response = http.start { |h| h.request(request) }
      [response.code.to_i, response.each_header.to_h, response.body.to_s]
    rescue Net::OpenTimeout, Net::ReadTimeout, Net::WriteTimeout => e
      raise TimeoutError.new(code: "TIMEOUT", status: 0, message: "#{method} #{url} did not answer in time (#{e.class})")
    rescue SystemCallError, IOError, SocketError, EOFError, OpenSSL::SSL::SSLError => e
      raise NetworkError.new(code: "NETWORK_ERROR", status: 0, message: "No answer from #{@base} (#{method}): #{e.message}")
    end

    private

    def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

    def timeout_error(method, path, last)
      suffix = last ? " (last error: #{last.code})" : ""
      TimeoutError.new(code: "TIMEOUT", status: 0, message: "#{method} #{path} did not finish within #{@timeout} s#{suffix}.")
    end

    def attempt(method, url, payload, extra_headers, timeout)
      headers = { "Accept" => "application/json", "User-Agent" => @user_agent }.merge(extra_headers)
      headers["Content-Type"] = "application/json" unless payload.nil?
      token = @tokens ? @tokens.token(timeout) : @api_key
      headers["Authorization"] = "Bearer #{token}" if token # sign-up is the one call without one
      status, answer_headers, body = raw(method, url, payload, headers, timeout)
      if status == 401 && @tokens
        # The token may have been revoked or rotated early: one fresh token, then the API decides.
        @tokens.invalidate(token)
        raise TokenRefused, Quarry.error_from_response(status, answer_headers, body)
      end
      raise Quarry.error_from_response(status, answer_headers, body) unless (200..299).cover?(status)
      return nil if status == 204 || body.empty?

      JSON.parse(body)
    rescue JSON::ParserError
      raise Error.new(code: "INVALID_RESPONSE", status: status,
                      message: "The gateway answered with a body that is not JSON; check the base URL.")
    end
  end
end
