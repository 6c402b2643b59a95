# frozen_string_literal: true

# Plays the shared conformance cases (clients/conformance/cases) with this client; the rules are
# in clients/conformance/README.md, and every official client's runner implements them.

require "json"
require "net/http"
require "quarry"

module ConformanceRunner
  CASES_DIR = File.expand_path("../../conformance/cases", __dir__)

  module_function

  # Every case in file-name order, each with its "name".
  def cases
    Dir[File.join(CASES_DIR, "*.json")].sort.map do |path|
      { "name" => File.basename(path, ".json") }.merge(JSON.parse(File.read(path)))
    end
  end

  # The harness's QUARRY_CONFORMANCE, or nil when the suite runs on its own.
  def fixture
    raw = ENV.fetch("QUARRY_CONFORMANCE", "")
    raw.empty? ? nil : JSON.parse(raw)
  end

  # Replaces "$name.field" strings with what earlier steps saved.
  def resolve(value, saved)
    case value
    when String
      return value unless value.start_with?("$")

      name, *fields = value[1..].split(".")
      fields.reduce(saved[name]) { |current, f| current.is_a?(Hash) ? current[f] : nil }
    when Array then value.map { |v| resolve(v, saved) }
    when Hash then value.transform_values { |v| resolve(v, saved) }
    else value
    end
  end

  # A result as plain JSON-like values (Structs become Hashes with String keys).
  def plain(value)
    case value
    when Struct then value.to_h.to_h { |k, v| [k.to_s, plain(v)] }
    when Quarry::Models::Model then value.to_h
    when Array then value.map { |v| plain(v) }
    when Hash then value.to_h { |k, v| [k.to_s, plain(v)] }
    else value
    end
  end

  def number?(value) = value.is_a?(Numeric)

  # Every difference between expected and actual; empty when they match.
  def match(expected, actual, path = "$")
    return (actual.is_a?(String) && !actual.empty? ? [] : ["#{path}: expected a non-empty string, got #{actual.inspect}"]) if expected == "<nonempty>"
    return (number?(actual) ? [] : ["#{path}: expected a number, got #{actual.inspect}"]) if expected == "<number>"

    case expected
    when Array
      return ["#{path}: expected a list of #{expected.size}, got #{actual.inspect}"] unless actual.is_a?(Array) && actual.size == expected.size

      expected.each_with_index.flat_map { |e, i| match(e, actual[i], "#{path}[#{i}]") }
    when Hash
      return ["#{path}: expected an object, got #{actual.inspect}"] unless actual.is_a?(Hash)

      expected.flat_map { |k, v| actual.key?(k) ? match(v, actual[k], "#{path}.#{k}") : ["#{path}.#{k}: missing"] }
    when Numeric
      number?(actual) && actual == expected ? [] : ["#{path}: expected #{expected.inspect}, got #{actual.inspect}"]
    else
      expected.instance_of?(actual.class) && expected == actual ? [] : ["#{path}: expected #{expected.inspect}, got #{actual.inspect}"]
    end
  end

  # Plays one case against the harness's proxy with this client.
  class Case
    def initialize(fixture, kase)
      @fx = fixture
      @case = kase
      @saved = { "fixture" => fixture } # cases name a runner's own analytics as "$fixture.sources.<name>"
      @base_url = "#{fixture['base_url']}/#{kase['name']}"
      @shared = client(fixture["credentials"][kase["credential"]], kase["client"] || {})
    end

    def client(credential, settings)
      options = { timeout: settings.fetch("timeout_seconds", 10).to_f,
                  retry: Quarry::RetryPolicy.new(retries: settings.fetch("retries", 3)) }
      if credential.key?("api_key")
        Quarry::Client.new(@base_url, api_key: credential["api_key"], **options)
      else
        oauth = Quarry::OAuthCredentials.new(client_id: credential["client_id"], client_secret: credential["client_secret"])
        Quarry::Client.new(@base_url, oauth: oauth, **options)
      end
    end

    def client_for(step)
      return @shared unless step.key?("client") || step.key?("credential")

      credential = @fx["credentials"][@case["credential"]]
      credential = { "api_key" => ConformanceRunner.resolve(step["credential"], @saved) } if step.key?("credential")
      client(credential, (@case["client"] || {}).merge(step["client"] || {}))
    end

    def perform(client, op, args)
      case op
      when "query" then client.query(args["source"], args["params"], max_credits: args["max_credits"])
      when "analytics.get" then client.analytics.get(args["name"], args["params"])
      when "keys.create" then client.keys.create(name: args["name"], scopes: args["scopes"])
      when "keys.list" then client.keys.list
      when "keys.revoke" then client.keys.revoke(args["id"])
      when "usage" then client.usage.get
      when "marketplace.searchAll" then client.marketplace.search_all(args["q"], category: args["category"], page_size: args.fetch("page_size", 100)).to_a
      when "marketplace.search" then client.marketplace.search(args["q"], category: args["category"])
      when "marketplace.get" then client.marketplace.get(args["name"])
      when "marketplace.tryToken" then client.marketplace.try_token(args["source"], ttl_seconds: args["ttl_seconds"])
      when "connections.create" then client.connections.create(name: args["name"], type: args["type"], config: args["config"])
      when "analytics.deploy" then client.analytics.deploy(args["definition"])
      when "listings.publish"
        client.listings.publish(args["name"], **(args["listing"] || {}).transform_keys(&:to_sym))
      when "statements.get" then client.statements.get(period: args["period"])
      when "budget.get" then client.budget.get
      when "budget.set" then client.budget.set(budget_usd: args["budget_usd"])
      when "tools.list" then client.tools.list
      when "tools.add" then client.tools.add(args["name"])
      when "tools.remove" then client.tools.remove(args["name"])
      when "mcp.get" then client.mcp.get
      when "mcp.set" then client.mcp.set(max_credits: args["max_credits"])
      when "account.get" then client.account.get
      when "account.setPassword" then client.account.set_password(password: args["password"])
      when "plans.list" then client.plans.list
      when "billing.get" then client.billing.get
      when "billing.checkout" then client.billing.checkout(args["plan"])
      when "billing.portal" then client.billing.portal
      when "payouts.onboarding" then client.payouts.onboarding
      when "payouts.account" then client.payouts.account
      when "payouts.list" then client.payouts.list
      when "embedTokens.create"
        client.embed_tokens.create(analytics: args["analytics"], origins: args["origins"], expires_in: args["expires_in"])
      when "embedSecrets.create" then client.embed_secrets.create(name: args["name"])
      when "embedSecrets.list" then client.embed_secrets.list
      when "embedSecrets.rotate" then client.embed_secrets.rotate(args["id"], overlap_seconds: args["overlap_seconds"])
      when "embedSecrets.revoke" then client.embed_secrets.revoke(args["id"])
      when "cors.get" then client.cors.get
      when "cors.set" then client.cors.set(allow_keys_from_browsers: args["allow_keys_from_browsers"])
      when "oauthClients.create" then client.oauth_clients.create(name: args["name"], scopes: args["scopes"])
      when "oauthClients.list" then client.oauth_clients.list
      when "oauthClients.revoke" then client.oauth_clients.revoke(args["id"])
      when "connectors.list" then client.connectors.list.connectors
      when "connections.list" then client.connections.list
      when "connections.get" then client.connections.get(args["id"])
      when "connections.test" then client.connections.test(args["id"])
      when "connections.update" then client.connections.update(args["id"], config: args["config"])
      when "connections.delete" then client.connections.delete(args["id"])
      when "analytics.dryRun" then client.analytics.dry_run(args["definition"])
      when "analytics.create" then client.analytics.create(args["definition"])
      when "analytics.update" then client.analytics.update(args["name"], args["definition"])
      when "analytics.describe" then client.analytics.describe(args["name"], version: args["version"])
      when "calls.list" then client.calls.list(analytic: args["analytic"], status: args["status"], limit: args["limit"])
      when "calls.listAll"
        client.calls.list_all(analytic: args["analytic"], status: args["status"], page_size: args.fetch("page_size", 100)).to_a
      when "analytics.versions" then client.analytics.versions(args["name"])
      when "analytics.deprecate" then client.analytics.deprecate(args["name"], args["version"], sunset: args["sunset"])
      when "analytics.undeprecate" then client.analytics.undeprecate(args["name"], args["version"])
      when "analytics.list" then client.analytics.list
      when "analytics.purgeCache" then client.analytics.purge_cache(args["name"])
      when "analytics.delete" then client.analytics.delete(args["name"])
      when "listings.get" then client.listings.get(args["name"])
      when "listings.unpublish" then client.listings.unpublish(args["name"])
      when "signUp" then Quarry.sign_up(@base_url, email: args["email"], name: args["name"])
      when "sleep" then sleep(args["seconds"])
      else raise ArgumentError, "unknown op #{op}"
      end
    end

    def check_error(want, error)
      problems = []
      family = Quarry.const_get("#{want['family']}Error") rescue nil # rubocop:disable Style/RescueModifier
      problems << "expected the #{want['family']} family, got #{error.class} #{error.message}" unless family && error.is_a?(family)
      problems << "code #{error.code}" if want.key?("code") && error.code != want["code"]
      problems << "status #{error.status}" if want.key?("status") && error.status != want["status"]
      problems << "an empty message" if error.message.to_s.empty?
      problems << "no request id" if want["request_id"] && error.request_id.to_s.empty?
      problems << "retry_after #{error.retry_after.inspect}" if want["retry_after"] == "positive" && !(error.retry_after.to_f > 0)
      (want["detail_params"] || []).each do |param|
        problems << "no detail for param #{param}" unless error.details.any? { |d| d.param == param }
      end
      (want["detail_values"] || {}).each do |name, value|
        detail = error.details.find { |d| [d.field, d.param].include?(name) }
        problems << "detail #{name}: value #{detail&.value.inspect}, expected #{value}" unless detail && detail.value == value
      end
      if want["text_names_code_and_request_id"]
        text = error.message
        unless text.include?(error.code) && !error.request_id.to_s.empty? && text.include?(error.request_id)
          problems << "the error's text names not its code and request id: #{text}"
        end
      end
      problems
    end

    def check_result(expect, value)
      return ["expected a #{expect['error']['family']} error, got a result"] if expect.key?("error")

      problems = []
      problems += ConformanceRunner.match(ConformanceRunner.resolve(expect["result"], @saved), value) if expect.key?("result")
      if expect.key?("contains")
        wanted = ConformanceRunner.resolve(expect["contains"], @saved)
        problems << "no item matches #{wanted.inspect} in #{value.inspect}" unless Array(value).any? { |i| ConformanceRunner.match(wanted, i).empty? }
      end
      if expect.key?("absent_field") && Array(value).any? { |i| i.is_a?(Hash) && !i[expect["absent_field"]].nil? }
        problems << "an item has the field #{expect['absent_field']}"
      end
      if expect.key?("usage_since")
        since = expect["usage_since"]
        before = @saved[since["saved"]]["totals"]
        calls = value["totals"]["calls"] - before["calls"]
        credits = value["totals"]["credits"] - before["credits"]
        problems << "usage grew by #{calls} calls and #{credits} credits" unless calls == since["calls"] && credits == since["credits"]
      end
      problems
    end

    # Plays every step, then the proxy's traffic check; returns the problems found.
    def run
      problems = []
      @case["steps"].each_with_index do |step, index|
        expect = step["expect"] || {}
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        found = begin
          value = ConformanceRunner.plain(perform(client_for(step), step["op"], ConformanceRunner.resolve(step["input"] || {}, @saved)))
          @saved[step["save"]] = value if step.key?("save")
          check_result(expect, value)
        rescue Quarry::Error => e
          expect.key?("error") ? check_error(expect["error"], e) : ["unexpected #{e.class}: #{e.message}"]
        end
        elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
        found << format("took %.2f s, more than %s s", elapsed, step["max_seconds"]) if step.key?("max_seconds") && elapsed > step["max_seconds"]
        problems += found.map { |p| "step #{index} (#{step['op']}): #{p}" }
      end
      check = JSON.parse(Net::HTTP.get(URI("#{@fx['check_url']}/#{@case['name']}")))
      problems + check["problems"].map { |p| "traffic: #{p}" }
    end
  end
end
