# frozen_string_literal: true

require "json"
require "uri"

module Quarry
  # An OAuth client of your account (POST /v1/oauth/clients shows the secret once).
  # scope: space-separated scopes or an Array; nil for all of the client's.
  OAuthCredentials = Struct.new(:client_id, :client_secret, :scope, keyword_init: true)

  # Bearer tokens for one OAuth client (client-credentials grant): cached, fetched again a little
  # before they expire (60 s, or a tenth of their life when shorter), forgotten when the API
  # refuses one. A mutex makes concurrent calls share one token request.
  class TokenSource
    MAX_REFRESH_MARGIN = 60.0
    DEFAULT_LIFETIME = 300.0

    # +post+ is called as post.(url, form_body, headers, timeout) and returns [status, headers, body].
    def initialize(url, credentials, post)
      @url = url
      @post = post
      encode = ->(v) { URI.encode_www_form_component(v) } # RFC 6749 §2.3.1
      @basic = "Basic #{["#{encode.(credentials.client_id)}:#{encode.(credentials.client_secret)}"].pack('m0')}"
      scope = credentials.scope
      @scope = scope.is_a?(Array) ? scope.join(" ") : scope
      @mutex = Mutex.new
      @token = nil
      @refresh_at = 0.0
    end

    # A token valid for a while yet: the cached one, or one fetched now.
    def token(timeout)
      @mutex.synchronize do
        return @token if @token && now < @refresh_at

        fetch(timeout)
      end
    end

    # Forgets +token+ (the API refused it), so the next #token fetches a new one.
    def invalidate(token)
      @mutex.synchronize { @token = nil if @token == token }
    end

    private

    def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

    def fetch(timeout)
      form = { "grant_type" => "client_credentials" }
      form["scope"] = @scope if @scope && !@scope.empty?
      headers = { "Authorization" => @basic, "Content-Type" => "application/x-www-form-urlencoded",
                  "Accept" => "application/json" }
      status, answer_headers, body = @post.call(@url, URI.encode_www_form(form), headers, timeout)
      raise Quarry.error_from_response(status, answer_headers, body) unless (200..299).cover?(status)

      parsed = JSON.parse(body) rescue nil # rubocop:disable Style/RescueModifier
      token = parsed.is_a?(Hash) ? parsed["access_token"] : nil
      unless token.is_a?(String) && !token.empty? && parsed["token_type"].to_s.casecmp?("bearer")
        raise OAuthError.new(code: "invalid_token_response", status: status,
                             message: "The token endpoint answered without a bearer access_token; check the gateway URL.")
      end
      expires_in = parsed["expires_in"]
      lifetime = expires_in.is_a?(Numeric) && expires_in.positive? ? expires_in.to_f : DEFAULT_LIFETIME
      @refresh_at = now + lifetime - [MAX_REFRESH_MARGIN, lifetime / 10].min
      @token = token
    end
  end
end
