// Package quarry is the official Go client for a Quarry analytics gateway: queries, analytics
// over GET, API keys and usage, with an API key or OAuth client credentials, typed errors,
// retries that honour retry_after with one Idempotency-Key per call, an overall timeout and
// context cancellation. Standard library only; Go 1.19 or later.
//
// License: Apache-2.0. Homepage: https://quarry.dev. Source and changelog:
// https://github.com/quarry-dev/quarry/tree/main/clients/go.
package quarry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"
)

const defaultUserAgent = "quarry-client-go/0.1.0"

// Client talks to one gateway; safe for concurrent use.
type Client struct {
	baseURL   string
	apiKey    string
	tokens    *tokenSource
	http      *http.Client
	timeout   time.Duration
	retry     RetryPolicy
	userAgent string

	// Analytics runs analytics with query-string params.
	Analytics *Analytics
	// Keys creates, lists and revokes API keys.
	Keys *Keys
	// Usage reads the account's usage.
	Usage *UsageService
	// The rest of the API (account, budget, plans, billing, payouts, OAuth clients, connectors,
	// connections, listings, statements, marketplace): see resources.go.
	resources
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey authenticates with an API key (qry_live_…).
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithOAuth authenticates with an OAuth client (client-credentials grant).
func WithOAuth(creds OAuthCredentials) Option {
	return func(c *Client) { c.tokens = &tokenSource{creds: creds} }
}

// WithTimeout bounds a whole call, retries and waits included (default 120 s; 0: none).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithRetry sets the retry policy (default DefaultRetryPolicy); a zero BaseDelay or MaxDelay
// keeps its default.
func WithRetry(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithHTTPClient sets the *http.Client used (default: one that does not follow redirects).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client for the gateway at baseURL (e.g. http://127.0.0.1:8787; a path prefix
// is kept), with exactly one of WithAPIKey or WithOAuth.
func New(baseURL string, options ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("quarry: baseURL must be an absolute http(s) URL such as http://127.0.0.1:8787, got %q", baseURL)
	}
	c := &Client{
		baseURL: strings.TrimRight(baseURL, "/"), timeout: 120 * time.Second, retry: DefaultRetryPolicy,
		userAgent: defaultUserAgent,
		http:      &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
	for _, option := range options {
		option(c)
	}
	if (c.apiKey == "") == (c.tokens == nil) {
		return nil, errors.New("quarry: give exactly one of WithAPIKey or WithOAuth")
	}
	if c.tokens != nil {
		if c.tokens.creds.ClientID == "" || c.tokens.creds.ClientSecret == "" {
			return nil, errors.New("quarry: WithOAuth needs a ClientID and a ClientSecret")
		}
		c.tokens.url = c.baseURL + "/oauth/token"
		c.tokens.post = c.postToken
	}
	c.Analytics = &Analytics{c}
	c.Keys = &Keys{c}
	c.Usage = &UsageService{c}
	c.resources = newResources(c)
	return c, nil
}

// Params are an analytic's params for Query, encoded as JSON (typed by the analytic's schema).
type Params = map[string]any

// QueryOptions tune one Query.
type QueryOptions struct {
	// NoCache bypasses the gateway's result cache (the call is still charged).
	NoCache bool
	// IdempotencyKey is sent as Idempotency-Key (default: a random one per call), the same on
	// every retry, so a repeated query is answered and charged once.
	IdempotencyKey string
	// MaxCredits, when above 0, is sent as max_credits: a call that would cost more is refused
	// (ErrPriceAboveLimit, 409 PRICE_ABOVE_LIMIT), nothing run or charged.
	MaxCredits int
}

func randomKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "qc-" + hex.EncodeToString(b)
}

// Query runs an analytic with typed params (POST /v1/query). opts is optional. Rows are maps
// whose numbers are json.Number; QueryInto decodes them into your struct instead.
func (c *Client) Query(ctx context.Context, source string, params Params, opts ...QueryOptions) (*Result, error) {
	return QueryInto[Row](ctx, c, source, params, opts...)
}

// Pages runs an analytic once and hands its result to page, a page of pageSize rows (1–10,000)
// at a time (page_size, then meta.next): one warehouse query and one charge, the following pages
// read from the gateway's snapshot for free. It stops at the last page, or when page returns an
// error (which it returns). A snapshot gone midway is an *Error with code CURSOR_EXPIRED (410):
// rerun to start over.
func (c *Client) Pages(ctx context.Context, source string, params Params, pageSize int, page func(*Result) error) error {
	if params == nil {
		params = Params{}
	}
	body := map[string]any{"source": source, "params": params, "page_size": pageSize}
	for {
		var out Result
		headers := map[string]string{"Idempotency-Key": randomKey()}
		if err := c.do(ctx, apiRequest{method: http.MethodPost, path: "/v1/query", idempotent: true, headers: headers,
			body: body}, &out); err != nil {
			return err
		}
		if err := page(&out); err != nil {
			return err
		}
		if out.Meta.Next == nil || *out.Meta.Next == "" {
			return nil
		}
		body = map[string]any{"source": source, "cursor": *out.Meta.Next}
	}
}

// QueryInto runs an analytic like Client.Query and decodes each row into a T (a struct with
// json tags, usually): an integer column into an int64, a decimal into a float64 or, exactly,
// a json.Number, which also takes the 64-bit integers and wide decimals the gateway sends as
// strings (a string field keeps them too).
func QueryInto[T any](ctx context.Context, c *Client, source string, params Params, opts ...QueryOptions) (*TypedResult[T], error) {
	var o QueryOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if params == nil {
		params = Params{}
	}
	key := o.IdempotencyKey
	if key == "" {
		key = randomKey()
	}
	headers := map[string]string{"Idempotency-Key": key}
	if o.NoCache {
		headers["Cache-Control"] = "no-cache"
	}
	body := map[string]any{"source": source, "params": params}
	if o.MaxCredits > 0 {
		body["max_credits"] = o.MaxCredits
	}
	var out TypedResult[T]
	err := c.do(ctx, apiRequest{method: http.MethodPost, path: "/v1/query", idempotent: true, headers: headers,
		body: body}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Analytics runs analytics with query-string params (Client.Analytics).
type Analytics struct{ c *Client }

// Get runs an analytic with GET /v1/analytics/<name>; the gateway coerces the values. A slice
// or array value (of any element type) becomes repeated keys; nil values are left out. opts is
// optional: its MaxCredits goes beside the params as max_credits (the gateway reserves the name).
// GetInto decodes the rows into your struct instead of maps.
func (a *Analytics) Get(ctx context.Context, name string, params map[string]any, opts ...QueryOptions) (*Result, error) {
	return GetInto[Row](ctx, a.c, name, params, opts...)
}

// GetInto runs an analytic like Client.Analytics.Get and decodes each row into a T (see QueryInto).
func GetInto[T any](ctx context.Context, c *Client, name string, params map[string]any, opts ...QueryOptions) (*TypedResult[T], error) {
	query := url.Values{}
	if len(opts) > 0 && opts[0].MaxCredits > 0 {
		query.Set("max_credits", fmt.Sprint(opts[0].MaxCredits))
	}
	for k, v := range params {
		if v == nil {
			continue
		}
		if list := reflect.ValueOf(v); list.Kind() == reflect.Slice || list.Kind() == reflect.Array {
			for i := 0; i < list.Len(); i++ {
				query.Add(k, fmt.Sprint(list.Index(i).Interface()))
			}
			continue
		}
		query.Add(k, fmt.Sprint(v))
	}
	var headers map[string]string
	if len(opts) > 0 && opts[0].NoCache {
		headers = map[string]string{"Cache-Control": "no-cache"}
	}
	var out TypedResult[T]
	err := c.do(ctx, apiRequest{method: http.MethodGet, path: "/v1/analytics/" + url.PathEscape(name),
		query: query, headers: headers, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Keys manages your account's API keys (Client.Keys; needs the keys scope).
type Keys struct{ c *Client }

// Create makes a key; its Secret is shown this once. It is not repeated after a failure that
// may have created it (only a rate-limited call is).
func (k *Keys) Create(ctx context.Context, key NewKey) (*APIKey, error) {
	var out struct {
		Key APIKey `json:"key"`
	}
	if err := k.c.do(ctx, apiRequest{method: http.MethodPost, path: "/v1/keys", body: key}, &out); err != nil {
		return nil, err
	}
	return &out.Key, nil
}

// List returns every key of the account, revoked ones included (never a secret).
func (k *Keys) List(ctx context.Context) ([]APIKey, error) {
	var out struct {
		Keys []APIKey `json:"keys"`
	}
	if err := k.c.do(ctx, apiRequest{method: http.MethodGet, path: "/v1/keys", idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// Revoke revokes a key; every gateway instance refuses it within seconds.
func (k *Keys) Revoke(ctx context.Context, id string) (*APIKey, error) {
	var out struct {
		Key APIKey `json:"key"`
	}
	err := k.c.do(ctx, apiRequest{method: http.MethodDelete, path: "/v1/keys/" + url.PathEscape(id), idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out.Key, nil
}

// UsageService reads your account's usage (Client.Usage).
type UsageService struct{ c *Client }

// Get returns one period's usage: period is a UTC month YYYY-MM, "" for the current one.
func (u *UsageService) Get(ctx context.Context, period string) (*Usage, error) {
	query := url.Values{}
	if period != "" {
		query.Set("period", period)
	}
	var out Usage
	err := u.c.do(ctx, apiRequest{method: http.MethodGet, path: "/v1/account/usage", query: query, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}
