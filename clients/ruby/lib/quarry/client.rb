# frozen_string_literal: true

require "securerandom"
require "uri"

# `require "quarry/client"` (the gem is quarry-client) loads the whole client; `require "quarry"`
# is the same.
require_relative "version"
require_relative "errors"
require_relative "retry_policy"
require_relative "token_source"
require_relative "models"
require_relative "api_models"
require_relative "transport"

module Quarry
  # A client for one Quarry gateway, authenticated by an API key or an OAuth client.
  #
  #   client = Quarry::Client.new("http://127.0.0.1:8787", api_key: ENV.fetch("QUARRY_API_KEY"))
  #   client.query("sales-by-region", { year: 2024 }).results
  #
  # Thread-safe: share one client.
  class Client
    # Runs analytics with query-string params.
    attr_reader :analytics
    # Creates, lists and revokes API keys.
    attr_reader :keys
    # Reads the account's usage.
    attr_reader :usage

    # base_url:: the gateway, e.g. http://127.0.0.1:8787 (a path prefix is kept)
    # api_key:: an API key (qry_live_…); or
    # oauth:: an OAuthCredentials (client-credentials grant)
    # timeout:: seconds for a whole call, retries and waits included (default 120; nil: none)
    # retry:: a RetryPolicy (default: 3 retries, 0.25 s base, 30 s max)
    # retry_policy:: the former name of retry: (deprecated)
    def initialize(base_url, api_key: nil, oauth: nil, timeout: 120.0, retry: nil, retry_policy: nil,
                   user_agent: "quarry-client-ruby/#{VERSION}")
      # `retry` is a keyword of Ruby: read the argument by name.
      retry_given = binding.local_variable_get(:retry)
      raise ArgumentError, "give retry: alone (retry_policy: is its deprecated name)" if retry_given && retry_policy

      warn "Quarry::Client: retry_policy: is deprecated; use retry:", uplevel: 1 if retry_policy
      retry_policy = retry_given || retry_policy || RetryPolicy.new
      unless %w[http https].include?(URI(base_url).scheme)
        raise ArgumentError, "base_url must be an absolute http(s) URL such as http://127.0.0.1:8787, got #{base_url.inspect}"
      end
      raise ArgumentError, "give exactly one of api_key: or oauth:" if api_key.nil? == oauth.nil? || api_key == ""

      transport = nil
      tokens = oauth && TokenSource.new("#{base_url.chomp('/')}/oauth/token", oauth,
                                        ->(url, body, headers, t) { transport.raw("POST", url, body, headers.merge("User-Agent" => user_agent), t) })
      transport = Transport.new(base_url: base_url, api_key: api_key, tokens: tokens, timeout: timeout,
                                retry_policy: retry_policy, user_agent: user_agent)
      @transport = transport
      @analytics = Analytics.new(transport)
      @keys = Keys.new(transport)
      @usage = Usage.new(transport)
    end

    # Runs an analytic with typed params (POST /v1/query) and returns a QueryResult. Sends an
    # Idempotency-Key (default: a random one per call), the same on every retry, so a repeated
    # query is answered and charged once. no_cache: bypasses the gateway's result cache.
    def query(source, params = {}, no_cache: false, idempotency_key: nil, max_credits: nil)
      headers = { "Idempotency-Key" => idempotency_key || "qc-#{SecureRandom.hex(16)}" }
      headers["Cache-Control"] = "no-cache" if no_cache
      request = { source: source, params: params }
      # A call that would cost more raises PriceAboveLimitError (409), nothing run or charged.
      request[:max_credits] = max_credits unless max_credits.nil?
      body = @transport.send_request("POST", "/v1/query", body: request, headers: headers)
      QueryResult.from_json(body)
    end

    # Runs +source+ once and yields its result page by page (+page_size+ rows, 1–10,000): one
    # warehouse query and one charge, the following pages read from the gateway's snapshot with
    # meta.next, free. Without a block, returns an Enumerator. A snapshot gone midway raises an
    # Error with code CURSOR_EXPIRED (410): rerun to start over.
    def pages(source, params = {}, page_size: 10_000, max_credits: nil)
      return enum_for(:pages, source, params, page_size: page_size, max_credits: max_credits) unless block_given?

      request = { source: source, params: params, page_size: page_size }
      request[:max_credits] = max_credits unless max_credits.nil?
      loop do
        headers = { "Idempotency-Key" => "qc-#{SecureRandom.hex(16)}" }
        page = QueryResult.from_json(@transport.send_request("POST", "/v1/query", body: request, headers: headers))
        yield page
        break if page.meta.next.nil? || page.meta.next.empty?

        request = { source: source, cursor: page.meta.next }
      end
    end
  end

  # Runs analytics with query-string params (Client#analytics).
  class Analytics
    # Built by Client#initialize; use the client's reader.
    def initialize(transport) = @transport = transport

    # Runs +name+ with GET /v1/analytics/<name>; Arrays become repeated keys, nil values are
    # left out, and the gateway coerces the values. Returns a QueryResult.
    def get(name, params = {}, no_cache: false)
      headers = no_cache ? { "Cache-Control" => "no-cache" } : {}
      path = "/v1/analytics/#{URI.encode_www_form_component(name).gsub('+', '%20')}"
      QueryResult.from_json(@transport.send_request("GET", path, query: params, headers: headers))
    end
  end

  # Your account's API keys (Client#keys; needs the keys scope).
  class Keys
    # Built by Client#initialize; use the client's reader.
    def initialize(transport) = @transport = transport

    # A new ApiKey; its secret is shown this once. Default scopes: all of yours. Not repeated
    # after a failure that may have created it (only a rate-limited call is).
    def create(name:, scopes: nil, expires_at: nil)
      body = { name: name, scopes: scopes, expires_at: expires_at }.compact
      ApiKey.from_json(@transport.send_request("POST", "/v1/keys", body: body, idempotent: false)["key"])
    end

    # Every key of the account (Array of ApiKey), revoked ones included, never a secret.
    def list
      @transport.send_request("GET", "/v1/keys")["keys"].map { |k| ApiKey.from_json(k) }
    end

    # Revokes a key and returns it; every gateway instance refuses it within seconds.
    def revoke(id)
      ApiKey.from_json(@transport.send_request("DELETE", "/v1/keys/#{URI.encode_www_form_component(id)}")["key"])
    end
  end

  # Your account's usage (Client#usage).
  class Usage
    # Built by Client#initialize; use the client's reader.
    def initialize(transport) = @transport = transport

    # GET /v1/account/usage as a Models::Usage: period, plan, totals (credits used and left,
    # amount due …), budget, by_analytic, by_day. +period+ is a UTC month "YYYY-MM" (default: the current one).
    def get(period: nil)
      Models::Usage.from_json(@transport.send_request("GET", "/v1/account/usage", query: { period: period }))
    end
  end
end

# The rest of the API (account, marketplace, an owner's connections …) reopens Client.
require_relative "resources"
require_relative "webhook"
