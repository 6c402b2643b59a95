package quarry_test

// The shared conformance cases (clients/conformance/cases; rules in its README), one subtest
// each, run by test/clients-conformance.test.ts with QUARRY_CONFORMANCE set; skipped without it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	quarry "quarry.dev/quarry-go"
)

type fixture struct {
	BaseURL     string                       `json:"base_url"`
	CheckURL    string                       `json:"check_url"`
	Credentials map[string]map[string]string `json:"credentials"`
}

type step struct {
	Op         string         `json:"op"`
	Input      map[string]any `json:"input"`
	Client     map[string]any `json:"client"`
	Credential string         `json:"credential"`
	Save       string         `json:"save"`
	MaxSeconds float64        `json:"max_seconds"`
	Expect     map[string]any `json:"expect"`
}

type conformanceCase struct {
	Name        string
	Description string         `json:"description"`
	Credential  string         `json:"credential"`
	Client      map[string]any `json:"client"`
	Steps       []step         `json:"steps"`
}

var families = map[string]error{
	"InvalidRequest": quarry.ErrInvalidRequest, "InvalidParams": quarry.ErrInvalidParams,
	"Unauthenticated": quarry.ErrUnauthenticated, "Forbidden": quarry.ErrForbidden, "NotFound": quarry.ErrNotFound,
	"Conflict": quarry.ErrConflict, "PriceAboveLimit": quarry.ErrPriceAboveLimit, "RateLimit": quarry.ErrRateLimit, "QuotaExceeded": quarry.ErrQuotaExceeded,
	"ResultTooLarge": quarry.ErrResultTooLarge, "Upstream": quarry.ErrUpstream,
	"SourceUnavailable": quarry.ErrSourceUnavailable, "QueryTimeout": quarry.ErrQueryTimeout,
	"Internal": quarry.ErrInternal, "Network": quarry.ErrNetwork, "Timeout": quarry.ErrTimeout, "OAuth": quarry.ErrOAuth,
}

func loadCases(t *testing.T) []conformanceCase {
	files, err := filepath.Glob(filepath.Join("..", "conformance", "cases", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance cases found: %v", err)
	}
	sort.Strings(files)
	var cases []conformanceCase
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var c conformanceCase
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		c.Name = strings.TrimSuffix(filepath.Base(file), ".json")
		cases = append(cases, c)
	}
	return cases
}

func TestConformance(t *testing.T) {
	cases := loadCases(t)
	raw := os.Getenv("QUARRY_CONFORMANCE")
	if raw == "" {
		t.Skip("QUARRY_CONFORMANCE is not set: run test/clients-conformance.test.ts")
	}
	var fx fixture
	var fxValue map[string]any // cases name a runner's own analytics as "$fixture.sources.<name>"
	if err := json.Unmarshal([]byte(raw), &fx); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &fxValue); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			problems := (&caseRunner{fx: fx, c: c, saved: map[string]any{"fixture": fxValue}}).run()
			if len(problems) > 0 {
				t.Fatalf("%s: %s\n  %s", c.Name, c.Description, strings.Join(problems, "\n  "))
			}
			fmt.Printf("\nCONFORMANCE PASS %s\n", c.Name)
		})
	}
}

type caseRunner struct {
	fx    fixture
	c     conformanceCase
	saved map[string]any
}

func (r *caseRunner) client(credential map[string]string, settings map[string]any) *quarry.Client {
	retries, timeout := 3, 10.0
	if v, ok := settings["retries"].(float64); ok {
		retries = int(v)
	}
	if v, ok := settings["timeout_seconds"].(float64); ok {
		timeout = v
	}
	policy := quarry.DefaultRetryPolicy
	policy.Retries = retries
	opts := []quarry.Option{quarry.WithRetry(policy), quarry.WithTimeout(time.Duration(timeout * float64(time.Second)))}
	if key, ok := credential["api_key"]; ok {
		opts = append(opts, quarry.WithAPIKey(key))
	} else {
		opts = append(opts, quarry.WithOAuth(quarry.OAuthCredentials{ClientID: credential["client_id"], ClientSecret: credential["client_secret"]}))
	}
	client, err := quarry.New(r.fx.BaseURL+"/"+r.c.Name, opts...)
	if err != nil {
		panic(err)
	}
	return client
}

func (r *caseRunner) perform(client *quarry.Client, s step, input map[string]any) (any, error) {
	ctx := context.Background()
	switch s.Op {
	case "query":
		params, _ := input["params"].(map[string]any)
		if limit, ok := input["max_credits"].(float64); ok {
			return client.Query(ctx, input["source"].(string), params, quarry.QueryOptions{MaxCredits: int(limit)})
		}
		return client.Query(ctx, input["source"].(string), params)
	case "analytics.get":
		params, _ := input["params"].(map[string]any)
		return client.Analytics.Get(ctx, input["name"].(string), params)
	case "keys.create":
		var scopes []string
		for _, s := range input["scopes"].([]any) {
			scopes = append(scopes, s.(string))
		}
		return client.Keys.Create(ctx, quarry.NewKey{Name: input["name"].(string), Scopes: scopes})
	case "keys.list":
		return client.Keys.List(ctx)
	case "keys.revoke":
		return client.Keys.Revoke(ctx, input["id"].(string))
	case "usage":
		return client.Usage.Get(ctx, "")
	case "marketplace.search":
		q, _ := input["q"].(string)
		category, _ := input["category"].(string)
		return client.Marketplace.Search(ctx, quarry.SearchOptions{Q: q, Category: category})
	case "marketplace.searchAll":
		q, _ := input["q"].(string)
		category, _ := input["category"].(string)
		pageSize, _ := input["page_size"].(float64)
		it := client.Marketplace.SearchAll(quarry.SearchOptions{Q: q, Category: category, Limit: int(pageSize)})
		all := []quarry.Listing{}
		for it.Next(ctx) {
			all = append(all, it.Listing())
		}
		return all, it.Err()
	case "marketplace.get":
		return client.Marketplace.Get(ctx, input["name"].(string))
	case "marketplace.tryToken":
		ttl, _ := input["ttl_seconds"].(float64)
		return client.Marketplace.TryToken(ctx, input["source"].(string), int(ttl))
	case "connections.create":
		return client.Connections.Create(ctx, decodeInto[quarry.NewConnection](input), true)
	case "analytics.deploy":
		return client.Analytics.Deploy(ctx, decodeInto[quarry.AnalyticDefinition](input["definition"]))
	case "listings.publish":
		return client.Listings.Publish(ctx, input["name"].(string), decodeInto[quarry.ListingInput](input["listing"]))
	case "statements.get":
		period, _ := input["period"].(string)
		return client.Statements.Get(ctx, period)
	case "budget.get":
		return client.Budget.Get(ctx)
	case "budget.set":
		return client.Budget.Set(ctx, input["budget_usd"].(float64))
	case "tools.list":
		return client.Tools.List(ctx)
	case "tools.add":
		return client.Tools.Add(ctx, input["name"].(string))
	case "tools.remove":
		return nil, client.Tools.Remove(ctx, input["name"].(string))
	case "mcp.get":
		return client.MCP.Get(ctx)
	case "mcp.set":
		var maxCredits *int64
		if n, ok := input["max_credits"].(float64); ok {
			maxCredits = quarry.Ptr(int64(n))
		}
		return client.MCP.Set(ctx, maxCredits)
	case "account.get":
		return client.Account.Get(ctx)
	case "account.setPassword":
		return nil, client.Account.SetPassword(ctx, input["password"].(string), "")
	case "plans.list":
		return client.Plans.List(ctx)
	case "billing.get":
		return client.Billing.Get(ctx)
	case "billing.checkout":
		return client.Billing.Checkout(ctx, input["plan"].(string), "")
	case "billing.portal":
		return client.Billing.Portal(ctx, "")
	case "payouts.onboarding":
		return client.Payouts.Onboarding(ctx, "")
	case "payouts.account":
		return client.Payouts.Account(ctx)
	case "payouts.list":
		return client.Payouts.List(ctx)
	case "embedTokens.create":
		return client.EmbedTokens.Create(ctx, decodeInto[quarry.NewEmbedToken](input))
	case "embedSecrets.create":
		return client.EmbedSecrets.Create(ctx, input["name"].(string))
	case "embedSecrets.list":
		return client.EmbedSecrets.List(ctx)
	case "embedSecrets.rotate":
		var overlap *int
		if n, ok := input["overlap_seconds"].(float64); ok {
			overlap = quarry.Ptr(int(n))
		}
		return client.EmbedSecrets.Rotate(ctx, input["id"].(string), overlap)
	case "embedSecrets.revoke":
		return client.EmbedSecrets.Revoke(ctx, input["id"].(string))
	case "cors.get":
		return client.CORS.Get(ctx)
	case "cors.set":
		return client.CORS.Set(ctx, input["allow_keys_from_browsers"].(bool))
	case "oauthClients.create":
		return client.OAuthClients.Create(ctx, input["name"].(string), decodeInto[[]string](input["scopes"]))
	case "oauthClients.list":
		return client.OAuthClients.List(ctx)
	case "oauthClients.revoke":
		return nil, client.OAuthClients.Revoke(ctx, input["id"].(string))
	case "connectors.list":
		types, err := client.Connectors.List(ctx)
		if err != nil {
			return nil, err
		}
		return types.Connectors, nil
	case "connections.list":
		return client.Connections.List(ctx)
	case "connections.get":
		return client.Connections.Get(ctx, input["id"].(string))
	case "connections.test":
		return client.Connections.Test(ctx, input["id"].(string))
	case "connections.update":
		return client.Connections.Update(ctx, input["id"].(string), input["config"].(map[string]any), true)
	case "connections.delete":
		return client.Connections.Delete(ctx, input["id"].(string), false)
	case "analytics.dryRun":
		return client.Analytics.DryRun(ctx, decodeInto[quarry.AnalyticDefinition](input["definition"]))
	case "analytics.create":
		return client.Analytics.Create(ctx, decodeInto[quarry.AnalyticDefinition](input["definition"]), true)
	case "analytics.update":
		return client.Analytics.Update(ctx, input["name"].(string), decodeInto[quarry.AnalyticDefinition](input["definition"]))
	case "analytics.describe":
		version, _ := input["version"].(float64)
		return client.Analytics.Describe(ctx, input["name"].(string), int(version))
	case "calls.list":
		limit, _ := input["limit"].(float64)
		analytic, _ := input["analytic"].(string)
		status, _ := input["status"].(string)
		return client.Calls.List(ctx, quarry.CallsOptions{Analytic: analytic, Status: status, Limit: int(limit)})
	case "calls.listAll":
		pageSize, _ := input["page_size"].(float64)
		analytic, _ := input["analytic"].(string)
		status, _ := input["status"].(string)
		it := client.Calls.ListAll(quarry.CallsOptions{Analytic: analytic, Status: status, Limit: int(pageSize)})
		all := []quarry.Call{}
		for it.Next(ctx) {
			all = append(all, it.Call())
		}
		return all, it.Err()
	case "analytics.versions":
		return client.Analytics.Versions(ctx, input["name"].(string))
	case "analytics.deprecate":
		sunset, err := time.Parse(time.RFC3339Nano, input["sunset"].(string))
		if err != nil {
			return nil, err
		}
		return client.Analytics.Deprecate(ctx, input["name"].(string), int(input["version"].(float64)), sunset)
	case "analytics.undeprecate":
		return nil, client.Analytics.Undeprecate(ctx, input["name"].(string), int(input["version"].(float64)))
	case "analytics.list":
		return client.Analytics.List(ctx)
	case "analytics.purgeCache":
		return nil, client.Analytics.PurgeCache(ctx, input["name"].(string))
	case "analytics.delete":
		return nil, client.Analytics.Delete(ctx, input["name"].(string))
	case "listings.get":
		return client.Listings.Get(ctx, input["name"].(string))
	case "listings.unpublish":
		return client.Listings.Unpublish(ctx, input["name"].(string))
	case "signUp":
		return quarry.SignUp(ctx, r.fx.BaseURL+"/"+r.c.Name, input["email"].(string), input["name"].(string))
	case "sleep":
		time.Sleep(time.Duration(input["seconds"].(float64) * float64(time.Second)))
		return nil, nil
	}
	return nil, fmt.Errorf("unknown op %s", s.Op)
}

func (r *caseRunner) run() []string {
	var problems []string
	shared := r.client(r.fx.Credentials[r.c.Credential], r.c.Client)
	for i, s := range r.c.Steps {
		client := shared
		if s.Client != nil || s.Credential != "" {
			credential := r.fx.Credentials[r.c.Credential]
			if s.Credential != "" {
				credential = map[string]string{"api_key": fmt.Sprint(resolve(s.Credential, r.saved))}
			}
			settings := map[string]any{}
			for k, v := range r.c.Client {
				settings[k] = v
			}
			for k, v := range s.Client {
				settings[k] = v
			}
			client = r.client(credential, settings)
		}
		input, _ := resolve(s.Input, r.saved).(map[string]any)
		started := time.Now()
		result, err := r.perform(client, s, input)
		var found []string
		if err != nil {
			if want, ok := s.Expect["error"].(map[string]any); ok {
				found = checkError(want, err)
			} else {
				found = []string{fmt.Sprintf("unexpected error %v", err)}
			}
		} else {
			value := plain(result)
			if s.Save != "" {
				r.saved[s.Save] = value
			}
			found = r.checkResult(s.Expect, value)
		}
		if elapsed := time.Since(started).Seconds(); s.MaxSeconds > 0 && elapsed > s.MaxSeconds {
			found = append(found, fmt.Sprintf("took %.2f s, more than %v s", elapsed, s.MaxSeconds))
		}
		for _, p := range found {
			problems = append(problems, fmt.Sprintf("step %d (%s): %s", i, s.Op, p))
		}
	}
	resp, err := http.Get(r.fx.CheckURL + "/" + r.c.Name)
	if err != nil {
		return append(problems, "traffic check: "+err.Error())
	}
	defer resp.Body.Close()
	var check struct {
		Problems []string `json:"problems"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&check); err != nil {
		return append(problems, "traffic check: "+err.Error())
	}
	for _, p := range check.Problems {
		problems = append(problems, "traffic: "+p)
	}
	return problems
}

func checkError(want map[string]any, err error) []string {
	var qe *quarry.Error
	if !errors.As(err, &qe) {
		return []string{fmt.Sprintf("expected a %v error, got %v", want["family"], err)}
	}
	var problems []string
	if sentinel, ok := families[want["family"].(string)]; !ok || !errors.Is(err, sentinel) {
		problems = append(problems, fmt.Sprintf("expected the %v family, got %s %s: %s", want["family"], qe.Family, qe.Code, qe.Message))
	}
	if code, ok := want["code"].(string); ok && qe.Code != code {
		problems = append(problems, "code "+qe.Code)
	}
	if status, ok := want["status"].(float64); ok && qe.Status != int(status) {
		problems = append(problems, fmt.Sprintf("status %d", qe.Status))
	}
	if qe.Message == "" {
		problems = append(problems, "an empty message")
	}
	if want["request_id"] == true && qe.RequestID == "" {
		problems = append(problems, "no request id")
	}
	if want["retry_after"] == "positive" && !(qe.RetryAfter > 0) {
		problems = append(problems, fmt.Sprintf("retry_after %v", qe.RetryAfter))
	}
	if params, ok := want["detail_params"].([]any); ok {
		for _, p := range params {
			found := false
			for _, d := range qe.Details {
				found = found || d.Param == p
			}
			if !found {
				problems = append(problems, fmt.Sprintf("no detail for param %v", p))
			}
		}
	}
	if values, ok := want["detail_values"].(map[string]any); ok {
		for name, value := range values {
			var found *float64
			for _, d := range qe.Details {
				if d.Field == name || d.Param == name {
					found = d.Value
				}
			}
			if found == nil || *found != value.(float64) {
				problems = append(problems, fmt.Sprintf("detail %s: value %v, expected %v", name, found, value))
			}
		}
	}
	if want["text_names_code_and_request_id"] == true {
		if text := err.Error(); !strings.Contains(text, qe.Code) || qe.RequestID == "" || !strings.Contains(text, qe.RequestID) {
			problems = append(problems, "the error's text names not its code and request id: "+text)
		}
	}
	return problems
}

// decodeInto turns a case's JSON input into a request type through its JSON form.
func decodeInto[T any](value any) T {
	var out T
	raw, err := json.Marshal(value)
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	if err != nil {
		panic(err)
	}
	return out
}

func (r *caseRunner) checkResult(expect map[string]any, value any) []string {
	if want, ok := expect["error"].(map[string]any); ok {
		return []string{fmt.Sprintf("expected a %v error, got a result", want["family"])}
	}
	var problems []string
	if want, ok := expect["result"]; ok {
		problems = append(problems, match(resolve(want, r.saved), value, "$")...)
	}
	list, _ := value.([]any)
	if want, ok := expect["contains"]; ok {
		wanted, found := resolve(want, r.saved), false
		for _, item := range list {
			found = found || len(match(wanted, item, "$")) == 0
		}
		if !found {
			problems = append(problems, fmt.Sprintf("no item matches %v in %v", wanted, value))
		}
	}
	if field, ok := expect["absent_field"].(string); ok {
		for _, item := range list {
			if m, ok := item.(map[string]any); ok && m[field] != nil {
				problems = append(problems, "an item has the field "+field)
			}
		}
	}
	if since, ok := expect["usage_since"].(map[string]any); ok {
		before := r.saved[since["saved"].(string)].(map[string]any)["totals"].(map[string]any)
		now := value.(map[string]any)["totals"].(map[string]any)
		calls := now["calls"].(float64) - before["calls"].(float64)
		credits := now["credits"].(float64) - before["credits"].(float64)
		if calls != since["calls"].(float64) || credits != since["credits"].(float64) {
			problems = append(problems, fmt.Sprintf("usage grew by %v calls and %v credits", calls, credits))
		}
	}
	return problems
}

// plain turns a typed result into JSON-like values through its JSON form.
func plain(value any) any {
	raw, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

func resolve(value any, saved map[string]any) any {
	switch v := value.(type) {
	case string:
		if !strings.HasPrefix(v, "$") {
			return v
		}
		parts := strings.Split(v[1:], ".")
		var current any = saved[parts[0]]
		for _, field := range parts[1:] {
			m, _ := current.(map[string]any)
			current = m[field]
		}
		return current
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = resolve(item, saved)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, item := range v {
			out[k] = resolve(item, saved)
		}
		return out
	}
	return value
}

func match(expected, actual any, path string) []string {
	fail := func() []string { return []string{fmt.Sprintf("%s: expected %#v, got %#v", path, expected, actual)} }
	switch want := expected.(type) {
	case string:
		got, ok := actual.(string)
		switch {
		case want == "<number>":
			if _, isNumber := actual.(float64); isNumber {
				return nil
			}
			return fail()
		case want == "<nonempty>" && ok && got != "":
			return nil
		case want == "<nonempty>":
			return fail()
		case ok && got == want:
			return nil
		}
		return fail()
	case []any:
		got, ok := actual.([]any)
		if !ok || len(got) != len(want) {
			return fail()
		}
		var problems []string
		for i := range want {
			problems = append(problems, match(want[i], got[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return problems
	case map[string]any:
		got, ok := actual.(map[string]any)
		if !ok {
			return fail()
		}
		var problems []string
		for k, v := range want {
			if item, present := got[k]; present {
				problems = append(problems, match(v, item, path+"."+k)...)
			} else {
				problems = append(problems, path+"."+k+": missing")
			}
		}
		return problems
	}
	if !reflect.DeepEqual(expected, actual) {
		return fail()
	}
	return nil
}
