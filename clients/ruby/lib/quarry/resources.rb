# frozen_string_literal: true

require "timeout"
require "uri"

module Quarry
  # The rest of the API, beside Client#query, analytics.get, keys and usage: the account, budget,
  # agent tools and MCP settings, plans, billing, payouts, OAuth clients, connectors, an owner's connections, analytics,
  # listings and statements, and the marketplace. Each is a reader of the Client
  # (client.marketplace, client.connections …); the answers are Quarry::Models.
  class Client
    # The account: read it, set the console password (AccountResource).
    def account = @account ||= AccountResource.new(@transport)
    # Pay as you Go: the budget of a period (BudgetResource).
    def budget = @budget ||= BudgetResource.new(@transport)
    # Webhook endpoints: signed events out, their delivery log (WebhooksResource).
    def webhooks = @webhooks ||= WebhooksResource.new(@transport)

    # Asynchronous queries: submit, read in pages, list, cancel, wait (JobsResource).
    def jobs = @jobs ||= JobsResource.new(@transport)
    # The account's alert thresholds (AlertsResource).
    def alerts = @alerts ||= AlertsResource.new(@transport)
    # The account's agent tools: what its agents may call on /mcp (ToolsResource).
    def tools = @tools ||= ToolsResource.new(@transport)
    # The account's MCP settings: the default price limit of a tool call (McpResource).
    def mcp = @mcp ||= McpResource.new(@transport)
    # The plans on offer (PlansResource).
    def plans = @plans ||= PlansResource.new(@transport)
    # The plan, subscription, card and invoices (BillingResource).
    def billing = @billing ||= BillingResource.new(@transport)
    # Being paid as an owner (PayoutsResource).
    def payouts = @payouts ||= PayoutsResource.new(@transport)
    # OAuth clients of the account (OAuthClientsResource).
    def oauth_clients = @oauth_clients ||= OAuthClientsResource.new(@transport)
    # Embed tokens for web pages, minted on your server (EmbedTokensResource).
    def embed_tokens = @embed_tokens ||= EmbedTokensResource.new(@transport)
    # HS256 secrets to mint embed tokens offline (EmbedSecretsResource).
    def embed_secrets = @embed_secrets ||= EmbedSecretsResource.new(@transport)
    # The account's recent calls (CallsResource).
    def calls = @calls ||= CallsResource.new(@transport)
    # Whether your keys may be used from other origins' web pages (CorsResource).
    def cors = @cors ||= CorsResource.new(@transport)
    # The warehouse types this gateway connects to (ConnectorsResource).
    def connectors = @connectors ||= ConnectorsResource.new(@transport)
    # Your warehouse connections as an owner (ConnectionsResource).
    def connections = @connections ||= ConnectionsResource.new(@transport)
    # Your marketplace listings as an owner (ListingsResource).
    def listings = @listings ||= ListingsResource.new(@transport)
    # Your earnings statements as an owner (StatementsResource).
    def statements = @statements ||= StatementsResource.new(@transport)
    # Listed analytics: search, details, try-tokens for free previews (MarketplaceResource).
    def marketplace = @marketplace ||= MarketplaceResource.new(@transport)
  end

  # Signs up an account at the gateway at +base_url+ (POST /v1/accounts, no credential needed).
  # Returns { "account" => Models::Account, "key" => ApiKey }: the key's secret is shown this
  # once. Not repeated after a failure that may have created the account.
  # +retry:+ is a RetryPolicy, as for Client.new (+retry_policy:+ its deprecated name).
  def self.sign_up(base_url, email:, name:, timeout: 120.0, retry: nil, retry_policy: nil,
                   user_agent: "quarry-client-ruby/#{VERSION}")
    # `retry` is a keyword of Ruby: read the argument by name.
    retry_given = binding.local_variable_get(:retry)
    raise ArgumentError, "give retry: alone (retry_policy: is its deprecated name)" if retry_given && retry_policy

    warn "Quarry.sign_up: retry_policy: is deprecated; use retry:", uplevel: 1 if retry_policy
    transport = Transport.new(base_url: base_url, api_key: nil, tokens: nil, timeout: timeout,
                              retry_policy: retry_given || retry_policy || RetryPolicy.new, user_agent: user_agent)
    answer = transport.send_request("POST", "/v1/accounts", body: { email: email, name: name }, idempotent: false)
    { "account" => Models::Account.from_json(answer["account"]), "key" => ApiKey.from_json(answer["key"]) }
  end

  # What every resource shares: the client's transport and path segments.
  class Resource
    # Built by the Client; use its reader.
    def initialize(transport) = @transport = transport

    private

    def segment(value) = URI.encode_www_form_component(value).gsub("+", "%20")

    # "false" when +value+ is false (the gateway's default is true), else nil (left out).
    def flag(value) = value ? nil : "false"
  end

  # Your account (Client#account).
  class AccountResource < Resource
    # The account the credential belongs to (Models::Account).
    def get = Models::Account.from_json(@transport.send_request("GET", "/v1/account")["account"])

    # Sets the console's sign-in password (10–200 characters); current_password is needed only
    # with a console session when one is set already.
    def set_password(password:, current_password: nil)
      @transport.send_request("PUT", "/v1/account/password",
                              body: { password: password, current_password: current_password }.compact)
      nil
    end
  end

  # Pay as you Go: the most the account may spend in a period, in USD (Client#budget).
  class BudgetResource < Resource
    # The budget, what is spent and left this period, and the operator's cap (Models::Budget).
    def get = Models::Budget.from_json(@transport.send_request("GET", "/v1/account/budget"))

    # Sets the budget in USD (whole cents; at most the operator's cap).
    def set(budget_usd:)
      Models::Budget.from_json(@transport.send_request("PUT", "/v1/account/budget", body: { budget_usd: budget_usd }))
    end
  end

  # The account's webhook endpoints (Client#webhooks; needs the account scope): signed events out
  # (docs/webhooks.md). Check deliveries with Quarry::Webhook.verify.
  # Asynchronous queries (docs/large-results.md): a job runs past the synchronous time limit, is
  # charged once when it succeeds, and its result is read in pages from the instance that ran it.
  class JobsResource < Resource
    # Submits a query as a job (Prefer: respond-async): the queued Models::Job, once admitted.
    def submit(source, params = {}, max_credits: nil)
      body = { source: source, params: params, max_credits: max_credits }.compact
      Models::Job.from_json(
        @transport.send_request("POST", "/v1/query", body: body, headers: { "Prefer" => "respond-async" }, idempotent: false)
      )
    end

    # The job's state, and once succeeded a page of its result (+result.meta.next+: the next cursor).
    def get(id, page_size: nil, cursor: nil)
      Models::Job.from_json(@transport.send_request("GET", "/v1/jobs/#{segment(id)}", query: { page_size: page_size, cursor: cursor }))
    end

    # The account's recent jobs, newest first (Array of Models::Job).
    def list(state: nil, limit: nil)
      @transport.send_request("GET", "/v1/jobs", query: { state: state, limit: limit })["items"].map { |j| Models::Job.from_json(j) }
    end

    # Cancels the job: its warehouse query stops, and it is not charged.
    def cancel(id) = Models::Job.from_json(@transport.send_request("DELETE", "/v1/jobs/#{segment(id)}"))

    # Polls the job every +interval+ seconds until it succeeded, failed or was cancelled; raises
    # Timeout::Error past +timeout+ seconds.
    def wait(id, interval: 1.0, timeout: nil)
      deadline = timeout && (Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout)
      loop do
        job = get(id)
        return job unless %w[queued running].include?(job.state)
        now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        raise Timeout::Error, "The job #{id} is still #{job.state} after #{timeout} s." if deadline && now >= deadline

        sleep(deadline ? [interval, deadline - now].min : interval)
      end
    end
  end

  class WebhooksResource < Resource
    # Adds an endpoint (Models::IssuedWebhookEndpoint); its secret (whsec_…) is shown this once.
    # No +event_types+: every type.
    def create(url:, description: nil, event_types: nil)
      body = { url: url, description: description, event_types: event_types }.compact
      Models::IssuedWebhookEndpoint.from_json(@transport.send_request("POST", "/v1/webhooks", body: body, idempotent: false))
    end

    # The account's endpoints (Array of Models::WebhookEndpoint; never a secret).
    def list = @transport.send_request("GET", "/v1/webhooks")["endpoints"].map { |e| Models::WebhookEndpoint.from_json(e) }

    # One endpoint.
    def get(id) = Models::WebhookEndpoint.from_json(@transport.send_request("GET", "/v1/webhooks/#{segment(id)}")["endpoint"])

    # Changes the given fields; +enabled: true+ re-enables an endpoint the gateway disabled.
    def update(id, url: nil, description: nil, event_types: nil, enabled: nil)
      body = { url: url, description: description, event_types: event_types, enabled: enabled }.compact
      Models::WebhookEndpoint.from_json(@transport.send_request("PATCH", "/v1/webhooks/#{segment(id)}", body: body)["endpoint"])
    end

    # Deletes an endpoint; its pending deliveries are dropped.
    def delete(id) = Models::WebhookEndpoint.from_json(@transport.send_request("DELETE", "/v1/webhooks/#{segment(id)}")["endpoint"])

    # A new secret (shown once); the old one keeps signing for +overlap_hours+ (default 24).
    def rotate_secret(id, overlap_hours: nil)
      body = { overlap_hours: overlap_hours }.compact
      Models::IssuedWebhookEndpoint.from_json(
        @transport.send_request("POST", "/v1/webhooks/#{segment(id)}/rotate-secret", body: body, idempotent: false)
      )
    end

    # Sends a webhook.test event to the endpoint; its event id (the webhook-id).
    def test(id) = @transport.send_request("POST", "/v1/webhooks/#{segment(id)}/test", idempotent: false)["event_id"]

    # The endpoint's delivery log, newest first (Array of Models::WebhookDelivery).
    def deliveries(id, limit: nil)
      @transport.send_request("GET", "/v1/webhooks/#{segment(id)}/deliveries", query: { limit: limit })["deliveries"]
                .map { |d| Models::WebhookDelivery.from_json(d) }
    end

    # Sends a finished delivery again, with the same webhook-id.
    def replay(id, delivery_id)
      path = "/v1/webhooks/#{segment(id)}/deliveries/#{segment(delivery_id)}/replay"
      Models::WebhookDelivery.from_json(@transport.send_request("POST", path)["delivery"])
    end
  end

  # The account's alert thresholds (Client#alerts; needs the account scope).
  class AlertsResource < Resource
    # The usage thresholds (percent) and the analytic error rate (Models::AlertSettings).
    def get = Models::AlertSettings.from_json(@transport.send_request("GET", "/v1/account/alerts")["alerts"])

    # Sets both (thresholds 1–100, at most 10; error rate 1–100).
    def set(usage_thresholds:, error_rate_percent:)
      body = { usage_thresholds: usage_thresholds, error_rate_percent: error_rate_percent }
      Models::AlertSettings.from_json(@transport.send_request("PUT", "/v1/account/alerts", body: body)["alerts"])
    end
  end

  # The account's agent tools (Client#tools; needs the account scope): the analytics its agents
  # see and may call on /mcp, its own and those added here (docs/mcp.md).
  class ToolsResource < Resource
    # Every tool of the account (Array of Models::AgentTool): its own live analytics and those it
    # added that it may still call.
    def list = @transport.send_request("GET", "/v1/account/tools")["items"].map { |t| Models::AgentTool.from_json(t) }

    # Adds an analytic the account may call (public or shared with it); adding twice is adding
    # once. Raises NotFoundError (SOURCE_NOT_FOUND) for one it may not call (Models::AgentTool).
    def add(name)
      Models::AgentTool.from_json(@transport.send_request("POST", "/v1/account/tools", body: { source: name })["tool"])
    end

    # Removes a tool the account added (NOT_FOUND when it was not added; its own stay tools).
    def remove(name)
      @transport.send_request("DELETE", "/v1/account/tools/#{segment(name)}")
      nil
    end
  end

  # The account's MCP settings (Client#mcp; needs the account scope).
  class McpResource < Resource
    # The price limit of an MCP tool call without its own max_credits, nil: none (Models::McpDefaults).
    def get = Models::McpDefaults.from_json(@transport.send_request("GET", "/v1/account/mcp")["mcp"])

    # Sets that limit in credits (at least 1); nil removes it. REST calls are not affected.
    def set(max_credits:)
      Models::McpDefaults.from_json(@transport.send_request("PUT", "/v1/account/mcp",
                                                            body: { max_credits: max_credits })["mcp"])
    end
  end

  # The plans on offer (Client#plans).
  class PlansResource < Resource
    # Every plan (Array of Models::Plan): credits included, monthly price, what a credit costs.
    def list = @transport.send_request("GET", "/v1/plans")["plans"].map { |p| Models::Plan.from_json(p) }
  end

  # The account's plan, subscription, card and invoices (Client#billing).
  class BillingResource < Resource
    # The plan, subscription, card, budget, the plans it may move to, and invoices.
    def get = Models::Billing.from_json(@transport.send_request("GET", "/v1/billing"))

    # A checkout for +plan+ (a paid plan, or "payg": a card on file); open its url in a browser,
    # then poll #get until the plan changes. Each attempt opens its own: only a refused call is repeated.
    def checkout(plan, return_url: nil)
      body = { plan: plan, return_url: return_url }.compact
      Models::Checkout.from_json(@transport.send_request("POST", "/v1/billing/checkout", body: body, idempotent: false))
    end

    # The payment provider's page for the card, the invoices and cancelling.
    def portal(return_url: nil)
      body = { return_url: return_url }.compact
      Models::Portal.from_json(@transport.send_request("POST", "/v1/billing/portal", body: body, idempotent: false))
    end
  end

  # Being paid as an owner: 80% of what callers paid, monthly (Client#payouts).
  class PayoutsResource < Resource
    # Where payouts go: the provider's account state, what it still needs, the minimum payout.
    def account = Models::PayoutAccount.from_json(@transport.send_request("GET", "/v1/owner/payouts/account"))

    # The provider's onboarding page (a new URL each call); poll #account after.
    def onboarding(return_url: nil)
      body = { return_url: return_url }.compact
      Models::Onboarding.from_json(@transport.send_request("POST", "/v1/owner/payouts/onboarding", body: body,
                                                                                                 idempotent: false))
    end

    # The balance held and carried, and each closed period's payout, newest first.
    def list = Models::Payouts.from_json(@transport.send_request("GET", "/v1/owner/payouts"))
  end

  # OAuth clients of your account, for services that call the gateway (Client#oauth_clients).
  class OAuthClientsResource < Resource
    # A new client: { "client" => Models::OAuthClient, "client_secret" => "qcs_…" }, the secret
    # shown this once. Default scopes: all of yours. Not repeated after a failure.
    def create(name:, scopes: nil)
      answer = @transport.send_request("POST", "/v1/oauth/clients", body: { name: name, scopes: scopes }.compact,
                                                                    idempotent: false)
      { "client" => Models::OAuthClient.from_json(answer["client"]), "client_secret" => answer["client_secret"] }
    end

    # Every OAuth client of the account (Array of Models::OAuthClient), never a secret.
    def list = @transport.send_request("GET", "/v1/oauth/clients")["clients"].map { |c| Models::OAuthClient.from_json(c) }

    # Revokes a client by its record id (ocl_…): its tokens stop working.
    def revoke(id)
      @transport.send_request("DELETE", "/v1/oauth/clients/#{segment(id)}")
      nil
    end
  end

  # Embed tokens for web pages (Client#embed_tokens; query scope): mint them on your server.
  class EmbedTokensResource < Resource
    # A token (Models::EmbedToken) calling +analytics+ only ([{ name:, fixed_params: {} }]), from
    # +origins+ only (none: servers only), for +expires_in+ seconds (default 3600, at most 86400),
    # with an optional +rate_limit+ of its own ({ limit:, window_seconds: }).
    def create(analytics:, origins: nil, expires_in: nil, rate_limit: nil)
      body = { analytics: analytics, origins: origins, expires_in: expires_in, rate_limit: rate_limit }.compact
      Models::EmbedToken.from_json(@transport.send_request("POST", "/v1/embed-tokens", body: body)["embed_token"])
    end
  end

  # HS256 secrets your backend mints embed tokens with offline (Client#embed_secrets; keys scope).
  class EmbedSecretsResource < Resource
    # A new secret (Models::IssuedEmbedSecret): its secret is shown this once, its id is the tokens' kid.
    def create(name:)
      answer = @transport.send_request("POST", "/v1/embed-secrets", body: { name: name }, idempotent: false)
      Models::IssuedEmbedSecret.from_json(answer["embed_secret"])
    end

    # The secrets that still verify tokens (Array of Models::EmbedSecret), never a secret.
    def list = @transport.send_request("GET", "/v1/embed-secrets")["embed_secrets"].map { |s| Models::EmbedSecret.from_json(s) }

    # A new secret; the old one verifies +overlap_seconds+ more (default 86400). Returns
    # { "embed_secret" => Models::IssuedEmbedSecret, "previous" => Models::EmbedSecret }.
    def rotate(id, overlap_seconds: nil)
      answer = @transport.send_request("POST", "/v1/embed-secrets/#{segment(id)}/rotate",
                                       body: { overlap_seconds: overlap_seconds }.compact, idempotent: false)
      { "embed_secret" => Models::IssuedEmbedSecret.from_json(answer["embed_secret"]),
        "previous" => Models::EmbedSecret.from_json(answer["previous"]) }
    end

    # Ends a secret (Models::EmbedSecret): tokens it signed stop working within seconds.
    def revoke(id)
      Models::EmbedSecret.from_json(@transport.send_request("DELETE", "/v1/embed-secrets/#{segment(id)}")["embed_secret"])
    end
  end

  # The account's recent calls (Client#calls; account scope).
  class CallsResource < Resource
    # A page of the calls of the last 30 days, newest first (Models::Calls): served ones and those
    # that failed after running (free). +limit+ 1–100 (default 50); pass the page's next_cursor as
    # +cursor+ for older calls.
    def list(analytic: nil, status: nil, limit: nil, cursor: nil)
      query = { analytic: analytic, status: status, limit: limit, cursor: cursor }
      Models::Calls.from_json(@transport.send_request("GET", "/v1/account/calls", query: query))
    end

    # Every call of list (newest first, the same filters): a lazy Enumerator of Models::Call that
    # fetches one page of page_size (1–100, default 100) at a time, as the loop asks for more
    # (each, next, lazy, first(n) …), following next_cursor until it is nil.
    def list_all(analytic: nil, status: nil, page_size: 100)
      Enumerator.new do |yielder|
        cursor = nil
        loop do
          page = list(analytic: analytic, status: status, limit: page_size, cursor: cursor)
          page.items.each { |c| yielder << c }
          # The gateway gives a cursor only when a call older than the page's last exists.
          break if page.next_cursor.nil?

          cursor = page.next_cursor
        end
      end
    end
  end

  # Whether your keys may be used from other origins' web pages (Client#cors; account scope).
  class CorsResource < Resource
    def get = Models::CorsSettingsCors.from_json(@transport.send_request("GET", "/v1/account/cors")["cors"])

    # Off by default: a key in a web page is a key anyone can copy; prefer embed tokens.
    def set(allow_keys_from_browsers:)
      Models::CorsSettingsCors.from_json(@transport.send_request("PUT", "/v1/account/cors",
                                                                 body: { allow_keys_from_browsers: allow_keys_from_browsers })["cors"])
    end
  end

  # The warehouse types this gateway connects to (Client#connectors).
  class ConnectorsResource < Resource
    # Each connector type with its config schema and secret fields (Models::ConnectorTypes).
    def list = Models::ConnectorTypes.from_json(@transport.send_request("GET", "/v1/connectors"))
  end

  # Your warehouse connections as an owner (Client#connections; owner scope).
  class ConnectionsResource < Resource
    # Saves a connection (Models::Connection); the gateway opens a session with it first unless
    # test: false. A repeat could meet its own first attempt's name: only a refused call is repeated.
    def create(name:, type:, config:, test: true)
      answer = @transport.send_request("POST", "/v1/owner/connections", query: { test: flag(test) },
                                                                        body: { name: name, type: type, config: config }, idempotent: false)
      Models::Connection.from_json(answer["connection"])
    end

    # Your connections (Array of Models::Connection; secrets are never returned).
    def list
      @transport.send_request("GET", "/v1/owner/connections")["connections"].map { |c| Models::Connection.from_json(c) }
    end

    # One connection and its circuit breaker: { "connection" => …, "circuit" => Models::Circuit }.
    def get(id)
      answer = @transport.send_request("GET", "/v1/owner/connections/#{segment(id)}")
      { "connection" => Models::Connection.from_json(answer["connection"]), "circuit" => Models::Circuit.from_json(answer["circuit"]) }
    end

    # Changes the given config fields (secrets too; nil removes one); tested first unless test: false.
    def update(id, config:, test: true)
      answer = @transport.send_request("PATCH", "/v1/owner/connections/#{segment(id)}", query: { test: flag(test) },
                                                                                       body: { config: config })
      Models::Connection.from_json(answer["connection"])
    end

    # Deletes a connection; refused (ConflictError) while analytics use it unless force: true,
    # which also takes their listings off the marketplace.
    def delete(id, force: false)
      answer = @transport.send_request("DELETE", "/v1/owner/connections/#{segment(id)}", query: { force: force ? "true" : nil })
      Models::ConnectionRemoval.from_json(answer)
    end

    # Opens a session to the warehouse: { "ok" => true, "latency_ms" => … }. Not repeated: a
    # failure is reported, not waited out.
    def test(id) = @transport.send_request("POST", "/v1/owner/connections/#{segment(id)}/test", idempotent: false)
  end

  # Your analytics as an owner: the methods of Client#analytics beside #get (owner scope).
  module OwnerAnalytics
    # Your analytics at their current versions (Array of Models::Analytic).
    def list = @transport.send_request("GET", "/v1/owner/analytics")["analytics"].map { |a| Models::Analytic.from_json(a) }

    # Creates an analytic from its definition (a Hash as an owner writes it: name, connection,
    # sql, params …); ConflictError when the name is taken. The SQL is tried first unless check: false.
    def create(definition, check: true)
      answer = @transport.send_request("POST", "/v1/owner/analytics", query: { check: check ? nil : "false" },
                                                                      body: definition, idempotent: false)
      Models::Analytic.from_json(answer["analytic"])
    end

    # Creates the analytic, adds a version when its definition changed, or changes nothing:
    # { "outcome" => "created" | "updated" | "unchanged", "analytic" => Models::Analytic }.
    def deploy(definition, check: true)
      name = definition[:name] || definition["name"]
      raise ArgumentError, "an analytic definition needs a name" if name.to_s.empty?

      answer = @transport.send_request("PUT", owner_path(name), query: { check: check ? nil : "false" }, body: definition)
      { "outcome" => answer["outcome"], "analytic" => Models::Analytic.from_json(answer["analytic"]) }
    end

    # Runs every check of a deploy (the SQL included) and says what it would do, as a Hash
    # (name, outcome, definition, columns); nothing is saved.
    def dry_run(definition)
      name = definition[:name] || definition["name"]
      raise ArgumentError, "an analytic definition needs a name" if name.to_s.empty?

      @transport.send_request("POST", "#{owner_path(name)}/dry-run", body: definition)
    end

    # Replaces the definition of one of your analytics with a whole new one: always a new
    # version. A repeat would add another: only a refused call is repeated.
    def update(name, definition)
      Models::Analytic.from_json(@transport.send_request("PATCH", owner_path(name), body: definition, idempotent: false)["analytic"])
    end

    # One of your analytics, at its current version or at +version+.
    def describe(name, version: nil)
      Models::Analytic.from_json(@transport.send_request("GET", owner_path(name), query: { version: version })["analytic"])
    end

    # Every kept version (Array of Models::AnalyticVersion: version, definition, price, deprecation,
    # created_at…).
    def versions(name)
      @transport.send_request("GET", "#{owner_path(name)}/versions")["versions"].map { |v| Models::AnalyticVersion.from_json(v) }
    end

    # Deprecates a version callers pin (not the current one): its calls carry Deprecation and
    # Sunset headers and are refused from +sunset+ on (an ISO 8601 time, at most 366 days ahead).
    # Setting it again moves the sunset. Returns a Models::DeprecatedVersion.
    def deprecate(name, version, sunset:)
      answer = @transport.send_request("PUT", "#{owner_path(name)}/versions/#{Integer(version)}/deprecation",
                                       body: { sunset: sunset })
      Models::DeprecatedVersion.from_json(answer["deprecated_version"])
    end

    # Withdraws a version's deprecation.
    def undeprecate(name, version)
      @transport.send_request("DELETE", "#{owner_path(name)}/versions/#{Integer(version)}/deprecation")
      nil
    end

    # Deletes one of your analytics (its name becomes free).
    def delete(name)
      @transport.send_request("DELETE", owner_path(name))
      nil
    end

    # Drops the cached answers of one of your analytics on every gateway instance.
    def purge_cache(name)
      @transport.send_request("DELETE", "#{owner_path(name)}/cache")
      nil
    end

    private

    def owner_path(name) = "/v1/owner/analytics/#{URI.encode_www_form_component(name).gsub('+', '%20')}"
  end

  # Client#analytics runs analytics and manages your own.
  class Analytics
    include OwnerAnalytics
  end

  # Your listings on the marketplace as an owner (Client#listings).
  class ListingsResource < Resource
    # Lists one of your public analytics (or updates its listing): title, description,
    # category, tags, example_params, previews (nil: keep). Returns a Models::OwnerListing.
    def publish(name, title: nil, description: nil, category: nil, tags: nil, example_params: nil, previews: nil)
      body = { title: title, description: description, category: category, tags: tags,
               example_params: example_params, previews: previews }.compact
      Models::OwnerListing.from_json(@transport.send_request("PUT", "#{path(name)}/listing", body: body)["listing"])
    end

    # Your listing of one analytic, published or not.
    def get(name) = Models::OwnerListing.from_json(@transport.send_request("GET", "#{path(name)}/listing")["listing"])

    # Takes the listing off the marketplace (the analytic keeps answering its callers).
    def unpublish(name)
      Models::OwnerListing.from_json(@transport.send_request("DELETE", "#{path(name)}/listing")["listing"])
    end

    private

    def path(name) = "/v1/owner/analytics/#{segment(name)}"
  end

  # Your earnings as an owner (Client#statements).
  class StatementsResource < Resource
    # The statement of a UTC month "YYYY-MM" (default: the current one), a Models::OwnerStatement.
    def get(period: nil)
      Models::OwnerStatement.from_json(@transport.send_request("GET", "/v1/owner/statements", query: { period: period }))
    end
  end

  # Listed analytics anyone may call (Client#marketplace).
  class MarketplaceResource < Resource
    # Listings (Array of Models::Listing) matching +q+ (title, description, name, tags) and
    # category, most popular first (sort: "newest": newest first), a page of limit from offset.
    def search(q = nil, category: nil, sort: nil, limit: nil, offset: nil)
      query = { q: q, category: category, sort: sort, limit: limit, offset: offset }
      @transport.send_request("GET", "/v1/marketplace/listings", query: query)["items"].map { |l| Models::Listing.from_json(l) }
    end

    # Every listing matching +q+ and category, in the order of search: a lazy Enumerator of
    # Models::Listing that fetches one page of page_size (1–100, default 100) at a time, as the
    # loop asks for more (each, next, lazy, first(n) …).
    def search_all(q = nil, category: nil, sort: nil, page_size: 100)
      Enumerator.new do |yielder|
        offset = 0
        loop do
          query = { q: q, category: category, sort: sort, limit: page_size, offset: offset.zero? ? nil : offset }
          page = @transport.send_request("GET", "/v1/marketplace/listings", query: query)
          page["items"].each { |l| yielder << Models::Listing.from_json(l) }
          offset += page["items"].length
          # A short or empty page is the last; total spares the empty page after a full one.
          break if page["items"].length < page_size || offset >= page["total"]
        end
      end
    end

    # One listing with its params, example request and curl line (Models::ListingDetail).
    def get(name) = Models::ListingDetail.from_json(@transport.send_request("GET", "/v1/marketplace/listings/#{segment(name)}"))

    # A try-token (Models::TryToken) for free previews of one listed analytic (or one of yours),
    # valid ttl_seconds (1–300, default 300): make a Client with it as api_key and query.
    def try_token(source, ttl_seconds: nil)
      body = { source: source, ttl_seconds: ttl_seconds }.compact
      Models::TryToken.from_json(@transport.send_request("POST", "/v1/marketplace/try-token", body: body))
    end
  end
end
