package quarry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// resources are the Client's fields for the rest of the API, beside Query, Analytics.Get, Keys
// and Usage. Their models are in models.go.
type resources struct {
	// Account reads the account and sets its console password.
	Account *AccountService
	// Budget reads and sets the Pay as you Go budget.
	Budget *BudgetService
	// Jobs submits, reads, lists, cancels and waits for asynchronous queries (docs/large-results.md).
	Jobs *JobsService
	// Webhooks manages the account's webhook endpoints and their delivery log (docs/webhooks.md).
	Webhooks *WebhooksService
	// Alerts reads and sets the account's alert thresholds.
	Alerts *AlertsService
	// Tools lists, adds and removes the account's agent tools (what its agents may call on /mcp).
	Tools *ToolsService
	// MCP reads and sets the account's MCP settings.
	MCP *MCPService
	// Plans lists the plans on offer.
	Plans *PlansService
	// Billing reads the plan and subscription, and opens checkouts and the billing portal.
	Billing *BillingService
	// Payouts is being paid as an owner.
	Payouts *PayoutsService
	// OAuthClients creates, lists and revokes OAuth clients.
	OAuthClients *OAuthClientsService
	// EmbedTokens mints embed tokens for web pages (on your server, never in a page).
	EmbedTokens *EmbedTokensService
	// EmbedSecrets manages the HS256 secrets your backend mints embed tokens with offline.
	EmbedSecrets *EmbedSecretsService
	// Calls lists the account's recent calls.
	Calls *CallsService
	// CORS says whether your keys may be used from other origins' web pages.
	CORS *CORSService
	// Connectors lists the warehouse types this gateway connects to.
	Connectors *ConnectorsService
	// Connections manages an owner's warehouse connections.
	Connections *ConnectionsService
	// Listings manages an owner's marketplace listings.
	Listings *ListingsService
	// Statements reads an owner's earnings.
	Statements *StatementsService
	// Marketplace searches listings, shows one, and mints try-tokens for free previews.
	Marketplace *MarketplaceService
}

func newResources(c *Client) resources {
	return resources{
		Account: &AccountService{c}, Budget: &BudgetService{c}, Plans: &PlansService{c},
		Tools: &ToolsService{c}, MCP: &MCPService{c}, Webhooks: &WebhooksService{c}, Jobs: &JobsService{c}, Alerts: &AlertsService{c},
		Billing: &BillingService{c}, Payouts: &PayoutsService{c}, OAuthClients: &OAuthClientsService{c},
		EmbedTokens: &EmbedTokensService{c}, EmbedSecrets: &EmbedSecretsService{c}, Calls: &CallsService{c}, CORS: &CORSService{c},
		Connectors: &ConnectorsService{c}, Connections: &ConnectionsService{c},
		Listings: &ListingsService{c}, Statements: &StatementsService{c}, Marketplace: &MarketplaceService{c},
	}
}

// Ptr returns a pointer to v, for the optional fields of a request (AnalyticDefinition.Price…).
func Ptr[T any](v T) *T { return &v }

// call sends one request and decodes its JSON answer into a new T.
func call[T any](ctx context.Context, c *Client, req apiRequest) (*T, error) {
	var out T
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func falseFlag(name string, value bool) url.Values {
	if value {
		return nil
	}
	return url.Values{name: {"false"}}
}

// SignUpResult is a new account and its first key, whose Secret is shown this once.
type SignUpResult struct {
	Account Account `json:"account"`
	Key     APIKey  `json:"key"`
}

// SignUp signs up an account at the gateway at baseURL (POST /v1/accounts, no credential
// needed). It is not repeated after a failure that may have created the account. options may
// set the timeout, retry policy, HTTP client and User-Agent (a credential is ignored).
func SignUp(ctx context.Context, baseURL, email, name string, options ...Option) (*SignUpResult, error) {
	c, err := New(baseURL, append(options, WithAPIKey("sign-up"))...)
	if err != nil {
		return nil, err
	}
	c.apiKey, c.tokens = "", nil
	return call[SignUpResult](ctx, c, apiRequest{method: http.MethodPost, path: "/v1/accounts",
		body: map[string]string{"email": email, "name": name}})
}

// AccountService is your account (Client.Account).
type AccountService struct{ c *Client }

// Get returns the account the credential belongs to.
func (s *AccountService) Get(ctx context.Context) (*Account, error) {
	out, err := call[struct {
		Account Account `json:"account"`
	}](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/account", idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Account, nil
}

// SetPassword sets the console's sign-in password (10–200 characters); currentPassword is
// needed only with a console session when one is set already ("" otherwise).
func (s *AccountService) SetPassword(ctx context.Context, password, currentPassword string) error {
	body := map[string]string{"password": password}
	if currentPassword != "" {
		body["current_password"] = currentPassword
	}
	return s.c.do(ctx, apiRequest{method: http.MethodPut, path: "/v1/account/password", body: body, idempotent: true}, nil)
}

// BudgetService is the Pay as you Go budget (Client.Budget).
type BudgetService struct{ c *Client }

// Get returns the budget, what is spent and left this period, and the operator's cap.
func (s *BudgetService) Get(ctx context.Context) (*Budget, error) {
	return call[Budget](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/account/budget", idempotent: true})
}

// Set sets the budget in USD (whole cents; at most the operator's cap).
func (s *BudgetService) Set(ctx context.Context, budgetUSD float64) (*Budget, error) {
	return call[Budget](ctx, s.c, apiRequest{method: http.MethodPut, path: "/v1/account/budget",
		body: map[string]float64{"budget_usd": budgetUSD}, idempotent: true})
}

// ToolsService is the account's agent tools (Client.Tools; needs the account scope): the
// analytics its agents see and may call on /mcp, its own and those added here (docs/mcp.md).
type ToolsService struct{ c *Client }

// List returns every tool of the account: its own live analytics and those it added that it
// may still call.
func (s *ToolsService) List(ctx context.Context) ([]AgentTool, error) {
	out, err := call[struct {
		Items []AgentTool `json:"items"`
	}](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/account/tools", idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.Items, nil
}

// Add adds an analytic the account may call (public or shared with it); adding twice is adding
// once. A *NotFoundError (SOURCE_NOT_FOUND) for one it may not call.
func (s *ToolsService) Add(ctx context.Context, name string) (*AgentTool, error) {
	out, err := call[struct {
		Tool AgentTool `json:"tool"`
	}](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/account/tools",
		body: map[string]string{"source": name}, idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Tool, nil
}

// Remove removes a tool the account added (NOT_FOUND when it was not added; the account's own
// analytics stay tools while they exist).
func (s *ToolsService) Remove(ctx context.Context, name string) error {
	return s.c.do(ctx, apiRequest{method: http.MethodDelete, path: "/v1/account/tools/" + url.PathEscape(name), idempotent: true}, nil)
}

// MCPService is the account's MCP settings (Client.MCP; needs the account scope).
type MCPService struct{ c *Client }

// Get returns the price limit of an MCP tool call without its own max_credits (nil: none).
func (s *MCPService) Get(ctx context.Context) (*McpDefaults, error) {
	return s.settings(ctx, apiRequest{method: http.MethodGet, path: "/v1/account/mcp", idempotent: true})
}

// Set sets that limit in credits (at least 1); nil removes it. REST calls are not affected.
func (s *MCPService) Set(ctx context.Context, maxCredits *int64) (*McpDefaults, error) {
	return s.settings(ctx, apiRequest{method: http.MethodPut, path: "/v1/account/mcp",
		body: map[string]*int64{"max_credits": maxCredits}, idempotent: true})
}

func (s *MCPService) settings(ctx context.Context, req apiRequest) (*McpDefaults, error) {
	out, err := call[McpSettings](ctx, s.c, req)
	if err != nil {
		return nil, err
	}
	return &out.Mcp, nil
}

// PlansService lists the plans on offer (Client.Plans).
type PlansService struct{ c *Client }

// List returns every plan: credits included, monthly price, what a credit costs.
func (s *PlansService) List(ctx context.Context) ([]Plan, error) {
	out, err := call[struct {
		Plans []Plan `json:"plans"`
	}](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/plans", idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.Plans, nil
}

// BillingService is the account's plan, subscription, card and invoices (Client.Billing).
type BillingService struct{ c *Client }

// Get returns the plan, subscription, card, budget, the plans it may move to, and invoices.
func (s *BillingService) Get(ctx context.Context) (*Billing, error) {
	return call[Billing](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/billing", idempotent: true})
}

// Checkout opens a checkout for plan (a paid plan, or "payg": a card on file); open its URL in
// a browser, then poll Get until the plan changes. returnURL may be "" (the console's page).
func (s *BillingService) Checkout(ctx context.Context, plan, returnURL string) (*Checkout, error) {
	if plan == "" {
		return nil, errors.New("quarry: a checkout needs a plan id (smb, enterprise, payg, …)")
	}
	body := map[string]string{"plan": plan}
	if returnURL != "" {
		body["return_url"] = returnURL
	}
	// Each attempt opens a checkout of its own: only a refused call is repeated.
	return call[Checkout](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/billing/checkout", body: body})
}

// Portal returns the payment provider's page for the card, the invoices and cancelling.
func (s *BillingService) Portal(ctx context.Context, returnURL string) (*Portal, error) {
	body := map[string]string{}
	if returnURL != "" {
		body["return_url"] = returnURL
	}
	return call[Portal](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/billing/portal", body: body})
}

// PayoutsService is being paid as an owner: 80% of what callers paid, monthly (Client.Payouts).
type PayoutsService struct{ c *Client }

// Account returns where payouts go: the provider's account state, what it still needs, the minimum.
func (s *PayoutsService) Account(ctx context.Context) (*PayoutAccount, error) {
	return call[PayoutAccount](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/owner/payouts/account", idempotent: true})
}

// Onboarding returns the provider's onboarding page (a new URL each call); poll Account after.
func (s *PayoutsService) Onboarding(ctx context.Context, returnURL string) (*Onboarding, error) {
	body := map[string]string{}
	if returnURL != "" {
		body["return_url"] = returnURL
	}
	return call[Onboarding](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/owner/payouts/onboarding", body: body})
}

// List returns the balance held and carried, and each closed period's payout, newest first.
func (s *PayoutsService) List(ctx context.Context) (*Payouts, error) {
	return call[Payouts](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/owner/payouts", idempotent: true})
}

// OAuthClientsService manages OAuth clients of your account (Client.OAuthClients).
type OAuthClientsService struct{ c *Client }

// IssuedOAuthClient is a new OAuth client and its secret (qcs_…), shown this once.
type IssuedOAuthClient struct {
	Client       OAuthClient `json:"client"`
	ClientSecret string      `json:"client_secret"`
}

// Create makes an OAuth client with scopes (nil: all of yours). Not repeated after a failure
// that may have created it.
func (s *OAuthClientsService) Create(ctx context.Context, name string, scopes []string) (*IssuedOAuthClient, error) {
	body := map[string]any{"name": name}
	if scopes != nil {
		body["scopes"] = scopes
	}
	return call[IssuedOAuthClient](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/oauth/clients", body: body})
}

// List returns every OAuth client of the account, revoked ones included (never a secret).
func (s *OAuthClientsService) List(ctx context.Context) ([]OAuthClient, error) {
	out, err := call[struct {
		Clients []OAuthClient `json:"clients"`
	}](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/oauth/clients", idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.Clients, nil
}

// Revoke revokes a client by its record id (ocl_…): its tokens stop working.
func (s *OAuthClientsService) Revoke(ctx context.Context, id string) error {
	return s.c.do(ctx, apiRequest{method: http.MethodDelete, path: "/v1/oauth/clients/" + url.PathEscape(id), idempotent: true}, nil)
}

// EmbedTokensService mints embed tokens (Client.EmbedTokens; the query scope).
type EmbedTokensService struct{ c *Client }

// EmbedAnalytic is one analytic an embed token may call (Name, or "name@version") and the params
// it fixes: applied whether the page sends them or not, refused (403) with another value.
type EmbedAnalytic struct {
	Name        string         `json:"name"`
	FixedParams map[string]any `json:"fixed_params,omitempty"`
}

// EmbedRateLimit is an embed token's own rate limit, besides the account's.
type EmbedRateLimit struct {
	Limit         int `json:"limit"`
	WindowSeconds int `json:"window_seconds"`
}

// NewEmbedToken is what a token allows: analytics, browser origins (none: servers only), its
// lifetime in seconds (0: 3600; at most 86400) and an optional rate limit.
type NewEmbedToken struct {
	Analytics []EmbedAnalytic `json:"analytics"`
	Origins   []string        `json:"origins,omitempty"`
	ExpiresIn int             `json:"expires_in,omitempty"`
	RateLimit *EmbedRateLimit `json:"rate_limit,omitempty"`
}

// Create mints a token for a web page of your account.
func (s *EmbedTokensService) Create(ctx context.Context, token NewEmbedToken) (*EmbedToken, error) {
	out, err := call[struct {
		EmbedToken EmbedToken `json:"embed_token"`
	}](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/embed-tokens", body: token, idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.EmbedToken, nil
}

// EmbedSecretsService manages HS256 embed secrets (Client.EmbedSecrets; the keys scope).
type EmbedSecretsService struct{ c *Client }

// RotatedEmbedSecret is a rotation's new secret (shown this once) and the old one, now expiring.
type RotatedEmbedSecret struct {
	EmbedSecret IssuedEmbedSecret `json:"embed_secret"`
	Previous    EmbedSecret       `json:"previous"`
}

// Create makes a secret; its Secret is shown this once and its ID is the tokens' kid.
func (s *EmbedSecretsService) Create(ctx context.Context, name string) (*IssuedEmbedSecret, error) {
	out, err := call[struct {
		EmbedSecret IssuedEmbedSecret `json:"embed_secret"`
	}](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/embed-secrets", body: map[string]string{"name": name}})
	if err != nil {
		return nil, err
	}
	return &out.EmbedSecret, nil
}

// List returns the secrets that still verify tokens (never a secret).
func (s *EmbedSecretsService) List(ctx context.Context) ([]EmbedSecret, error) {
	out, err := call[struct {
		EmbedSecrets []EmbedSecret `json:"embed_secrets"`
	}](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/embed-secrets", idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.EmbedSecrets, nil
}

// Rotate makes a new secret; the old one verifies overlapSeconds more (nil: 86400).
func (s *EmbedSecretsService) Rotate(ctx context.Context, id string, overlapSeconds *int) (*RotatedEmbedSecret, error) {
	body := map[string]any{}
	if overlapSeconds != nil {
		body["overlap_seconds"] = *overlapSeconds
	}
	return call[RotatedEmbedSecret](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/embed-secrets/" + url.PathEscape(id) + "/rotate", body: body})
}

// Revoke ends a secret: tokens it signed stop working within seconds.
func (s *EmbedSecretsService) Revoke(ctx context.Context, id string) (*EmbedSecret, error) {
	out, err := call[struct {
		EmbedSecret EmbedSecret `json:"embed_secret"`
	}](ctx, s.c, apiRequest{method: http.MethodDelete, path: "/v1/embed-secrets/" + url.PathEscape(id), idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.EmbedSecret, nil
}

// CallsService lists the account's recent calls (Client.Calls; the account scope).
type CallsService struct{ c *Client }

// CallsOptions filters and pages the calls; zero values leave a filter out (Limit 0: 50).
type CallsOptions struct {
	// Analytic: only calls of this analytic. Status: "ok", "failed" or an error code.
	Analytic, Status string
	// Limit is the page size (1–100); Cursor the previous page's NextCursor.
	Limit  int
	Cursor string
}

// List returns a page of the calls of the last 30 days, newest first: served ones and those that
// failed after running (free). Pass a page's NextCursor as Cursor for older calls.
func (s *CallsService) List(ctx context.Context, opts CallsOptions) (*Calls, error) {
	query := url.Values{}
	for name, value := range map[string]string{"analytic": opts.Analytic, "status": opts.Status, "cursor": opts.Cursor} {
		if value != "" {
			query.Set(name, value)
		}
	}
	if opts.Limit > 0 {
		query.Set("limit", fmt.Sprint(opts.Limit))
	}
	return call[Calls](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/account/calls", query: query, idempotent: true})
}

// ListAll walks every call of List (newest first, the same filters), one page of opts.Limit
// (1–100; 0: 100, the largest page) at a time, following NextCursor from opts.Cursor until it is
// null. Nothing is fetched until the first Next; each page is fetched when the one before is
// used up:
//
//	it := client.Calls.ListAll(quarry.CallsOptions{Analytic: "sales"})
//	for it.Next(ctx) {
//		fmt.Println(it.Call().RequestID)
//	}
//	if err := it.Err(); err != nil { … }
func (s *CallsService) ListAll(opts CallsOptions) *CallIterator {
	if opts.Limit <= 0 {
		opts.Limit = maxPageSize
	}
	return &CallIterator{s: s, opts: opts}
}

// CallIterator walks the pages of the account's recent calls (CallsService.ListAll).
type CallIterator struct {
	s       *CallsService
	opts    CallsOptions // Cursor: where the next page starts
	page    []Call
	current Call
	done    bool
	err     error
}

// Next moves to the next call, fetching the next page when needed; false at the end or on an
// error (see Err).
func (it *CallIterator) Next(ctx context.Context) bool {
	for len(it.page) == 0 {
		if it.done || it.err != nil {
			return false
		}
		out, err := it.s.List(ctx, it.opts)
		if err != nil {
			it.err = err
			return false
		}
		it.page = out.Items
		// The gateway gives a cursor only when a call older than the page's last exists.
		if out.NextCursor == nil {
			it.done = true
		} else {
			it.opts.Cursor = *out.NextCursor
		}
	}
	it.current, it.page = it.page[0], it.page[1:]
	return true
}

// Call is the call Next moved to.
func (it *CallIterator) Call() Call { return it.current }

// Err is the error that stopped Next, or nil when it reached the end.
func (it *CallIterator) Err() error { return it.err }

// CORSService reads and sets whether your keys are accepted from other origins' pages
// (Client.CORS; the account scope). Off by default: prefer embed tokens.
type CORSService struct{ c *Client }

// Get returns the setting.
func (s *CORSService) Get(ctx context.Context) (*CorsSettingsCors, error) {
	out, err := call[CorsSettings](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/account/cors", idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Cors, nil
}

// Set allows (or refuses) your keys from other origins' web pages.
func (s *CORSService) Set(ctx context.Context, allowKeysFromBrowsers bool) (*CorsSettingsCors, error) {
	out, err := call[CorsSettings](ctx, s.c, apiRequest{method: http.MethodPut, path: "/v1/account/cors", body: map[string]bool{"allow_keys_from_browsers": allowKeysFromBrowsers}, idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Cors, nil
}

// ConnectorsService lists the warehouse types this gateway connects to (Client.Connectors).
type ConnectorsService struct{ c *Client }

// List returns each connector type with its config schema and secret fields.
func (s *ConnectorsService) List(ctx context.Context) (*ConnectorTypes, error) {
	return call[ConnectorTypes](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/connectors", idempotent: true})
}

// ConnectionsService manages your warehouse connections as an owner (Client.Connections).
type ConnectionsService struct{ c *Client }

// NewConnection is a connection to save: a connector type and its config (secrets included).
type NewConnection struct {
	Name   string         `json:"name"`
	Type   string         `json:"type"`
	Config map[string]any `json:"config"`
}

// ConnectionDetail is one connection and its circuit breaker.
type ConnectionDetail struct {
	Connection Connection `json:"connection"`
	Circuit    Circuit    `json:"circuit"`
}

// ConnectionTest is a test's answer: the warehouse answered in LatencyMS milliseconds.
type ConnectionTest struct {
	OK        bool    `json:"ok"`
	LatencyMS float64 `json:"latency_ms"`
}

// Create saves a connection; the gateway opens a session with it first when test is true.
func (s *ConnectionsService) Create(ctx context.Context, connection NewConnection, test bool) (*Connection, error) {
	out, err := call[struct {
		Connection Connection `json:"connection"`
	}](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/owner/connections", query: falseFlag("test", test), body: connection})
	if err != nil {
		return nil, err
	}
	return &out.Connection, nil
}

// List returns your connections (secrets are never returned).
func (s *ConnectionsService) List(ctx context.Context) ([]Connection, error) {
	out, err := call[struct {
		Connections []Connection `json:"connections"`
	}](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/owner/connections", idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.Connections, nil
}

// Get returns one connection and its circuit breaker.
func (s *ConnectionsService) Get(ctx context.Context, id string) (*ConnectionDetail, error) {
	return call[ConnectionDetail](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/owner/connections/" + url.PathEscape(id), idempotent: true})
}

// Update changes the given config fields (secrets too; a nil value removes one), tested first
// when test is true. Calls keep being served.
func (s *ConnectionsService) Update(ctx context.Context, id string, config map[string]any, test bool) (*Connection, error) {
	out, err := call[struct {
		Connection Connection `json:"connection"`
	}](ctx, s.c, apiRequest{method: http.MethodPatch, path: "/v1/owner/connections/" + url.PathEscape(id),
		query: falseFlag("test", test), body: map[string]any{"config": config}, idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Connection, nil
}

// Delete deletes a connection; refused (ErrConflict) while analytics use it unless force, which
// also takes their listings off the marketplace.
func (s *ConnectionsService) Delete(ctx context.Context, id string, force bool) (*ConnectionRemoval, error) {
	var query url.Values
	if force {
		query = url.Values{"force": {"true"}}
	}
	return call[ConnectionRemoval](ctx, s.c, apiRequest{method: http.MethodDelete, path: "/v1/owner/connections/" + url.PathEscape(id), query: query, idempotent: true})
}

// Test opens a session to the warehouse and reports the round trip.
func (s *ConnectionsService) Test(ctx context.Context, id string) (*ConnectionTest, error) {
	// Its answer is the point: a failure is reported, not waited out.
	return call[ConnectionTest](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/owner/connections/" + url.PathEscape(id) + "/test"})
}

// DeployResult is what a deploy did: created, updated (a new version) or unchanged.
type DeployResult struct {
	Outcome  string   `json:"outcome"`
	Analytic Analytic `json:"analytic"`
}

// DryRunResult is what a deploy would do; Columns is empty when the engine cannot describe a statement.
type DryRunResult struct {
	Name       string         `json:"name"`
	Outcome    string         `json:"outcome"`
	Definition map[string]any `json:"definition"`
	Columns    []Column       `json:"columns,omitempty"`
}

func analyticPath(name string) string { return "/v1/owner/analytics/" + url.PathEscape(name) }

func (a *Analytics) analytic(ctx context.Context, req apiRequest) (*Analytic, error) {
	out, err := call[struct {
		Analytic Analytic `json:"analytic"`
	}](ctx, a.c, req)
	if err != nil {
		return nil, err
	}
	return &out.Analytic, nil
}

// List returns your analytics at their current versions (owner scope).
func (a *Analytics) List(ctx context.Context) ([]Analytic, error) {
	out, err := call[struct {
		Analytics []Analytic `json:"analytics"`
	}](ctx, a.c, apiRequest{method: http.MethodGet, path: "/v1/owner/analytics", idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.Analytics, nil
}

// Create creates an analytic (ErrConflict when the name is taken); its SQL is tried against
// the warehouse first when check is true.
func (a *Analytics) Create(ctx context.Context, definition AnalyticDefinition, check bool) (*Analytic, error) {
	return a.analytic(ctx, apiRequest{method: http.MethodPost, path: "/v1/owner/analytics", query: falseFlag("check", check), body: definition})
}

// Deploy creates the analytic, adds a version when its definition changed, or changes nothing.
func (a *Analytics) Deploy(ctx context.Context, definition AnalyticDefinition) (*DeployResult, error) {
	if definition.Name == "" {
		return nil, errors.New("quarry: an analytic definition needs a name")
	}
	return call[DeployResult](ctx, a.c, apiRequest{method: http.MethodPut, path: analyticPath(definition.Name), body: definition, idempotent: true})
}

// DryRun runs every check of a deploy (the SQL included) and says what it would do; nothing is saved.
func (a *Analytics) DryRun(ctx context.Context, definition AnalyticDefinition) (*DryRunResult, error) {
	if definition.Name == "" {
		return nil, errors.New("quarry: an analytic definition needs a name")
	}
	return call[DryRunResult](ctx, a.c, apiRequest{method: http.MethodPost, path: analyticPath(definition.Name) + "/dry-run", body: definition, idempotent: true})
}

// Update replaces the definition of one of your analytics with a whole new one: always a new
// version. A repeat would add another: only a refused call is repeated.
func (a *Analytics) Update(ctx context.Context, name string, definition AnalyticDefinition) (*Analytic, error) {
	return a.analytic(ctx, apiRequest{method: http.MethodPatch, path: analyticPath(name), body: definition})
}

// Describe returns one of your analytics at its current version, or at version when above 0.
func (a *Analytics) Describe(ctx context.Context, name string, version int) (*Analytic, error) {
	var query url.Values
	if version > 0 {
		query = url.Values{"version": {fmt.Sprint(version)}}
	}
	return a.analytic(ctx, apiRequest{method: http.MethodGet, path: analyticPath(name), query: query, idempotent: true})
}

// Versions returns every kept version of one of your analytics.
func (a *Analytics) Versions(ctx context.Context, name string) ([]AnalyticVersion, error) {
	out, err := call[struct {
		Versions []AnalyticVersion `json:"versions"`
	}](ctx, a.c, apiRequest{method: http.MethodGet, path: analyticPath(name) + "/versions", idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.Versions, nil
}

// Deprecate deprecates a version callers pin (not the current one): its calls carry Deprecation
// and Sunset headers and are refused from sunset on (at most 366 days ahead). Setting it again
// moves the sunset.
func (a *Analytics) Deprecate(ctx context.Context, name string, version int, sunset time.Time) (*DeprecatedVersion, error) {
	out, err := call[struct {
		DeprecatedVersion DeprecatedVersion `json:"deprecated_version"`
	}](ctx, a.c, apiRequest{method: http.MethodPut, path: versionPath(name, version) + "/deprecation",
		body: map[string]string{"sunset": sunset.UTC().Format(time.RFC3339Nano)}, idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.DeprecatedVersion, nil
}

// Undeprecate withdraws a version's deprecation.
func (a *Analytics) Undeprecate(ctx context.Context, name string, version int) error {
	return a.c.do(ctx, apiRequest{method: http.MethodDelete, path: versionPath(name, version) + "/deprecation", idempotent: true}, nil)
}

// versionPath is the path of one kept version of one of your analytics.
func versionPath(name string, version int) string {
	return analyticPath(name) + "/versions/" + fmt.Sprint(version)
}

// Delete deletes one of your analytics (its name becomes free).
func (a *Analytics) Delete(ctx context.Context, name string) error {
	return a.c.do(ctx, apiRequest{method: http.MethodDelete, path: analyticPath(name), idempotent: true}, nil)
}

// PurgeCache drops the cached answers of one of your analytics on every gateway instance.
func (a *Analytics) PurgeCache(ctx context.Context, name string) error {
	return a.c.do(ctx, apiRequest{method: http.MethodDelete, path: analyticPath(name) + "/cache", idempotent: true}, nil)
}

// ListingsService manages your marketplace listings as an owner (Client.Listings).
type ListingsService struct{ c *Client }

// ListingInput is what a listing shows; empty fields keep the current (or default) value.
type ListingInput struct {
	Title         string         `json:"title,omitempty"`
	Description   string         `json:"description,omitempty"`
	Category      string         `json:"category,omitempty"`
	Tags          []string       `json:"tags,omitempty"`
	ExampleParams map[string]any `json:"example_params,omitempty"`
	// Previews: whether callers may try it for free (nil: the default, true).
	Previews *bool `json:"previews,omitempty"`
}

func (s *ListingsService) listing(ctx context.Context, req apiRequest) (*OwnerListing, error) {
	out, err := call[struct {
		Listing OwnerListing `json:"listing"`
	}](ctx, s.c, req)
	if err != nil {
		return nil, err
	}
	return &out.Listing, nil
}

// Publish lists one of your public analytics on the marketplace (or updates its listing).
func (s *ListingsService) Publish(ctx context.Context, name string, listing ListingInput) (*OwnerListing, error) {
	return s.listing(ctx, apiRequest{method: http.MethodPut, path: analyticPath(name) + "/listing", body: listing, idempotent: true})
}

// Get returns your listing of one analytic, published or not.
func (s *ListingsService) Get(ctx context.Context, name string) (*OwnerListing, error) {
	return s.listing(ctx, apiRequest{method: http.MethodGet, path: analyticPath(name) + "/listing", idempotent: true})
}

// Unpublish takes the listing off the marketplace (the analytic keeps answering its callers).
func (s *ListingsService) Unpublish(ctx context.Context, name string) (*OwnerListing, error) {
	return s.listing(ctx, apiRequest{method: http.MethodDelete, path: analyticPath(name) + "/listing", idempotent: true})
}

// StatementsService reads your earnings as an owner (Client.Statements).
type StatementsService struct{ c *Client }

// Get returns the statement of a UTC month YYYY-MM ("" for the current one).
func (s *StatementsService) Get(ctx context.Context, period string) (*OwnerStatement, error) {
	var query url.Values
	if period != "" {
		query = url.Values{"period": {period}}
	}
	return call[OwnerStatement](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/owner/statements", query: query, idempotent: true})
}

// MarketplaceService is the listed analytics anyone may call (Client.Marketplace).
type MarketplaceService struct{ c *Client }

// SearchOptions narrow a marketplace search; zero values are left out.
type SearchOptions struct {
	// Q is text in the title, description, name or a tag.
	Q string
	// Category is an exact category, any case.
	Category string
	// Sort is "popular" (the default) or "newest".
	Sort string
	// Limit is the page size (1–100, default 20); Offset where the page starts.
	Limit, Offset int
}

// Search returns the listings matching opts, most popular first.
func (s *MarketplaceService) Search(ctx context.Context, opts SearchOptions) ([]Listing, error) {
	query := url.Values{}
	for name, value := range map[string]string{"q": opts.Q, "category": opts.Category, "sort": opts.Sort} {
		if value != "" {
			query.Set(name, value)
		}
	}
	if opts.Limit > 0 {
		query.Set("limit", fmt.Sprint(opts.Limit))
	}
	if opts.Offset > 0 {
		query.Set("offset", fmt.Sprint(opts.Offset))
	}
	out, err := call[struct {
		Items []Listing `json:"items"`
	}](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/marketplace/listings", query: query, idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.Items, nil
}

// SearchAll walks every listing matching opts, in the order of Search, one page of opts.Limit
// (1–100; 0: 100, the largest page) at a time, starting at opts.Offset. Nothing is fetched
// until the first Next; each page is fetched when the one before is used up:
//
//	it := client.Marketplace.SearchAll(quarry.SearchOptions{Q: "sales"})
//	for it.Next(ctx) {
//		fmt.Println(it.Listing().Name)
//	}
//	if err := it.Err(); err != nil { … }
func (s *MarketplaceService) SearchAll(opts SearchOptions) *ListingIterator {
	if opts.Limit <= 0 {
		opts.Limit = maxPageSize
	}
	return &ListingIterator{s: s, opts: opts}
}

// maxPageSize is the largest page GET /v1/marketplace/listings and GET /v1/account/calls give.
const maxPageSize = 100

// ListingIterator walks the pages of a marketplace search (MarketplaceService.SearchAll).
type ListingIterator struct {
	s       *MarketplaceService
	opts    SearchOptions // Offset: where the next page starts
	page    []Listing
	current Listing
	done    bool
	err     error
}

// Next moves to the next listing, fetching the next page when needed; false at the end or on
// an error (see Err).
func (it *ListingIterator) Next(ctx context.Context) bool {
	for len(it.page) == 0 {
		if it.done || it.err != nil {
			return false
		}
		query := url.Values{}
		for name, value := range map[string]string{"q": it.opts.Q, "category": it.opts.Category, "sort": it.opts.Sort} {
			if value != "" {
				query.Set(name, value)
			}
		}
		query.Set("limit", fmt.Sprint(it.opts.Limit))
		if it.opts.Offset > 0 {
			query.Set("offset", fmt.Sprint(it.opts.Offset))
		}
		out, err := call[struct {
			Items []Listing `json:"items"`
			Total int       `json:"total"`
		}](ctx, it.s.c, apiRequest{method: http.MethodGet, path: "/v1/marketplace/listings", query: query, idempotent: true})
		if err != nil {
			it.err = err
			return false
		}
		it.page = out.Items
		it.opts.Offset += len(out.Items)
		// A short or empty page is the last; Total spares the empty page after a full one.
		it.done = len(out.Items) < it.opts.Limit || it.opts.Offset >= out.Total
	}
	it.current, it.page = it.page[0], it.page[1:]
	return true
}

// Listing is the listing Next moved to.
func (it *ListingIterator) Listing() Listing { return it.current }

// Err is the error that stopped Next, or nil when it reached the end.
func (it *ListingIterator) Err() error { return it.err }

// Get returns one listing with its params, example request and curl line.
func (s *MarketplaceService) Get(ctx context.Context, name string) (*ListingDetail, error) {
	return call[ListingDetail](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/marketplace/listings/" + url.PathEscape(name), idempotent: true})
}

// TryToken mints a try-token for free previews of one listed analytic (or one of your own),
// valid ttlSeconds (1–300; 0: the default 300). Use it with WithAPIKey for a client whose
// queries of that analytic are previews.
func (s *MarketplaceService) TryToken(ctx context.Context, source string, ttlSeconds int) (*TryToken, error) {
	body := map[string]any{"source": source}
	if ttlSeconds > 0 {
		body["ttl_seconds"] = ttlSeconds
	}
	// A token more or less costs nothing: a lost answer is asked again.
	return call[TryToken](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/marketplace/try-token", body: body, idempotent: true})
}

// WebhooksService is the account's webhook endpoints (Client.Webhooks; needs the account scope).
// Check deliveries with VerifyWebhook.
type WebhooksService struct{ c *Client }

// NewWebhookEndpoint is an endpoint to add; no EventTypes: every type.
type NewWebhookEndpoint struct {
	URL         string   `json:"url"`
	Description string   `json:"description,omitempty"`
	EventTypes  []string `json:"event_types,omitempty"`
}

// WebhookEndpointChange changes the fields that are set; Enabled true re-enables an endpoint
// the gateway disabled.
type WebhookEndpointChange struct {
	URL         *string  `json:"url,omitempty"`
	Description *string  `json:"description,omitempty"`
	EventTypes  []string `json:"event_types,omitempty"`
	Enabled     *bool    `json:"enabled,omitempty"`
}

type endpointAnswer struct {
	Endpoint WebhookEndpoint `json:"endpoint"`
}

// Create adds an endpoint; the answer's Secret (whsec_…) is shown this once.
func (s *WebhooksService) Create(ctx context.Context, endpoint NewWebhookEndpoint) (*IssuedWebhookEndpoint, error) {
	return call[IssuedWebhookEndpoint](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/webhooks", body: endpoint})
}

// List returns the account's endpoints (never a secret).
func (s *WebhooksService) List(ctx context.Context) ([]WebhookEndpoint, error) {
	out, err := call[struct {
		Endpoints []WebhookEndpoint `json:"endpoints"`
	}](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/webhooks", idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.Endpoints, nil
}

// Get returns one endpoint.
func (s *WebhooksService) Get(ctx context.Context, id string) (*WebhookEndpoint, error) {
	out, err := call[endpointAnswer](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/webhooks/" + url.PathEscape(id), idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Endpoint, nil
}

// Update changes an endpoint.
func (s *WebhooksService) Update(ctx context.Context, id string, change WebhookEndpointChange) (*WebhookEndpoint, error) {
	out, err := call[endpointAnswer](ctx, s.c, apiRequest{method: http.MethodPatch, path: "/v1/webhooks/" + url.PathEscape(id), body: change, idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Endpoint, nil
}

// Delete deletes an endpoint; its pending deliveries are dropped.
func (s *WebhooksService) Delete(ctx context.Context, id string) (*WebhookEndpoint, error) {
	out, err := call[endpointAnswer](ctx, s.c, apiRequest{method: http.MethodDelete, path: "/v1/webhooks/" + url.PathEscape(id), idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Endpoint, nil
}

// RotateSecret makes a new secret (shown once); the old one keeps signing for overlapHours
// (nil: 24).
func (s *WebhooksService) RotateSecret(ctx context.Context, id string, overlapHours *float64) (*IssuedWebhookEndpoint, error) {
	body := map[string]any{}
	if overlapHours != nil {
		body["overlap_hours"] = *overlapHours
	}
	return call[IssuedWebhookEndpoint](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/webhooks/" + url.PathEscape(id) + "/rotate-secret", body: body})
}

// Test sends a webhook.test event to the endpoint and returns its event id (the webhook-id).
func (s *WebhooksService) Test(ctx context.Context, id string) (string, error) {
	out, err := call[struct {
		EventID string `json:"event_id"`
	}](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/webhooks/" + url.PathEscape(id) + "/test"})
	if err != nil {
		return "", err
	}
	return out.EventID, nil
}

// Deliveries returns the endpoint's delivery log, newest first (limit 0: the default 50).
func (s *WebhooksService) Deliveries(ctx context.Context, id string, limit int) ([]WebhookDelivery, error) {
	var query url.Values
	if limit > 0 {
		query = url.Values{"limit": {fmt.Sprint(limit)}}
	}
	out, err := call[struct {
		Deliveries []WebhookDelivery `json:"deliveries"`
	}](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/webhooks/" + url.PathEscape(id) + "/deliveries", query: query, idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.Deliveries, nil
}

// Replay sends a finished delivery again, with the same webhook-id.
func (s *WebhooksService) Replay(ctx context.Context, id, deliveryID string) (*WebhookDelivery, error) {
	out, err := call[struct {
		Delivery WebhookDelivery `json:"delivery"`
	}](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/webhooks/" + url.PathEscape(id) + "/deliveries/" + url.PathEscape(deliveryID) + "/replay", idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Delivery, nil
}

// AlertsService is the account's alert thresholds (Client.Alerts; needs the account scope).
type AlertsService struct{ c *Client }

type alertsAnswer struct {
	Alerts AlertSettings `json:"alerts"`
}

// Get returns the usage thresholds (percent) and the analytic error rate that trigger alerts.
func (s *AlertsService) Get(ctx context.Context) (*AlertSettings, error) {
	out, err := call[alertsAnswer](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/account/alerts", idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Alerts, nil
}

// Set sets both (thresholds 1–100, at most 10; error rate 1–100).
func (s *AlertsService) Set(ctx context.Context, settings AlertSettings) (*AlertSettings, error) {
	out, err := call[alertsAnswer](ctx, s.c, apiRequest{method: http.MethodPut, path: "/v1/account/alerts", body: settings, idempotent: true})
	if err != nil {
		return nil, err
	}
	return &out.Alerts, nil
}

// JobsService is the account's asynchronous queries (Client.Jobs; docs/large-results.md): a job
// runs past the synchronous time limit, is charged once when it succeeds, and its result is read
// in pages from the gateway instance that ran it.
type JobsService struct{ c *Client }

// Submit runs a query as a job (Prefer: respond-async) and returns the queued job once admitted.
// maxCredits 0: no price limit.
func (s *JobsService) Submit(ctx context.Context, source string, params map[string]any, maxCredits int64) (*Job, error) {
	if params == nil {
		params = map[string]any{}
	}
	body := map[string]any{"source": source, "params": params}
	if maxCredits > 0 {
		body["max_credits"] = maxCredits
	}
	// Not idempotent: a repeat would be a second job, so only a refused submission is retried.
	return call[Job](ctx, s.c, apiRequest{method: http.MethodPost, path: "/v1/query", body: body, headers: map[string]string{"Prefer": "respond-async"}})
}

// Get returns the job, and once it succeeded a page of its result: pageSize 0 is the default
// (1,000 rows); cursor "" is the first page, else the previous page's Result.Meta.Next.
func (s *JobsService) Get(ctx context.Context, id string, pageSize int, cursor string) (*Job, error) {
	query := url.Values{}
	if pageSize > 0 {
		query.Set("page_size", fmt.Sprint(pageSize))
	}
	if cursor != "" {
		query.Set("cursor", cursor)
	}
	return call[Job](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/jobs/" + url.PathEscape(id), query: query, idempotent: true})
}

// List returns the account's recent jobs, newest first (state "": any; limit 0: 20).
func (s *JobsService) List(ctx context.Context, state string, limit int) ([]Job, error) {
	query := url.Values{}
	if state != "" {
		query.Set("state", state)
	}
	if limit > 0 {
		query.Set("limit", fmt.Sprint(limit))
	}
	out, err := call[Jobs](ctx, s.c, apiRequest{method: http.MethodGet, path: "/v1/jobs", query: query, idempotent: true})
	if err != nil {
		return nil, err
	}
	return out.Items, nil
}

// Cancel cancels the job: its warehouse query stops, and it is not charged.
func (s *JobsService) Cancel(ctx context.Context, id string) (*Job, error) {
	return call[Job](ctx, s.c, apiRequest{method: http.MethodDelete, path: "/v1/jobs/" + url.PathEscape(id), idempotent: true})
}

// Wait polls the job every interval (0: 1 s) until it succeeded, failed or was cancelled, and
// returns it; it stops with ctx's error when ctx ends first.
func (s *JobsService) Wait(ctx context.Context, id string, interval time.Duration) (*Job, error) {
	if interval <= 0 {
		interval = time.Second
	}
	for {
		job, err := s.Get(ctx, id, 0, "")
		if err != nil {
			return nil, err
		}
		if job.State != "queued" && job.State != "running" {
			return job, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
}
