package quarry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A policy that sets only some fields keeps the defaults of the others: RetryPolicy{Retries: 5}
// retries a 429 (a zero MaxDelay is the 30 s default, not "no wait allowed").
func TestRetryPolicyZeroFieldsMeanDefaults(t *testing.T) {
	limited := &Error{Family: FamilyRateLimit, Status: 429, RetryAfter: 1}
	d, ok := RetryPolicy{Retries: 5}.RetryDelay(limited, 0, true, func() float64 { return 1 })
	if !ok || d != 1250*time.Millisecond {
		t.Fatalf("RetryPolicy{Retries: 5} on a 429 with retry_after 1: got %v %v, want 1.25s true", d, ok)
	}
	var calls int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if atomic.AddInt32(&calls, 1) < 3 {
			w.WriteHeader(429)
			_, _ = w.Write([]byte(`{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"slow down","retry_after":0.01,"request_id":"req_1"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"source":"s","results":[],"columns":[],"meta":{"row_count":0}}`))
	}))
	defer server.Close()
	client, err := New(server.URL, WithAPIKey("qry_live_x"), WithRetry(RetryPolicy{Retries: 5}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Query(context.Background(), "s", nil); err != nil {
		t.Fatalf("two 429s then 200 with RetryPolicy{Retries: 5}: %v", err)
	}
	if n := atomic.LoadInt32(&calls); n != 3 {
		t.Fatalf("expected 3 attempts, got %d", n)
	}
}

const numbersAnswer = `{"source":"sales","results":[{"region":"EU","revenue":1377206.69,"orders":9007199254740993,"big_id":"9007199254740993"}],` +
	`"columns":[{"name":"region","type":"string"},{"name":"revenue","type":"decimal"}],"meta":{"row_count":1,"credits":1}}`

func numbersServer(t *testing.T, seen *string) *Client {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*seen = r.Method + " " + r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(numbersAnswer))
	}))
	t.Cleanup(server.Close)
	client, err := New(server.URL, WithAPIKey("qry_live_x"))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// Map rows keep numbers exact: json.Number, printed as sent, never 1.37720669e+06.
func TestRowsKeepNumbersExact(t *testing.T) {
	var seen string
	client := numbersServer(t, &seen)
	res, err := client.Query(context.Background(), "sales", nil)
	if err != nil {
		t.Fatal(err)
	}
	row := res.Results[0]
	if got := fmt.Sprint(row["revenue"]); got != "1377206.69" {
		t.Fatalf("revenue printed as %s", got)
	}
	orders, ok := row["orders"].(json.Number)
	if !ok {
		t.Fatalf("orders is %T, want json.Number", row["orders"])
	}
	if n, err := orders.Int64(); err != nil || n != 9007199254740993 {
		t.Fatalf("orders lost digits: %v %v", n, err)
	}
}

type sale struct {
	Region  string      `json:"region"`
	Revenue json.Number `json:"revenue"`
	Orders  int64       `json:"orders"`
	BigID   string      `json:"big_id"`
}

// QueryInto and GetInto decode rows into the caller's struct.
func TestQueryIntoAndGetIntoDecodeRowsIntoAStruct(t *testing.T) {
	var seen string
	client := numbersServer(t, &seen)
	res, err := QueryInto[sale](context.Background(), client, "sales", Params{"year": 2024})
	if err != nil {
		t.Fatal(err)
	}
	want := sale{Region: "EU", Revenue: "1377206.69", Orders: 9007199254740993, BigID: "9007199254740993"}
	if seen != "POST /v1/query" || len(res.Results) != 1 || res.Results[0] != want || res.Meta.Credits != 1 || res.Columns[1].Type != "decimal" {
		t.Fatalf("QueryInto: %s %+v", seen, res)
	}
	got, err := GetInto[sale](context.Background(), client, "sales", map[string]any{"year": 2024})
	if err != nil {
		t.Fatal(err)
	}
	if seen != "GET /v1/analytics/sales" || len(got.Results) != 1 || got.Results[0] != want {
		t.Fatalf("GetInto: %s %+v", seen, got)
	}
}

// A proxy's HTML error page (no Quarry envelope) is the upstream or unavailable family with its status.
func TestProxyErrorPagesMapToUpstreamAndUnavailable(t *testing.T) {
	page := []byte("<html><body><h1>502 Bad Gateway</h1></body></html>")
	for status, want := range map[int]error{502: ErrUpstream, 503: ErrSourceUnavailable, 504: ErrUpstream} {
		e := errorFromResponse(status, http.Header{"X-Request-Id": {"req_proxy"}}, page)
		if !errors.Is(e, want) || e.Status != status {
			t.Fatalf("HTTP %d HTML page: family %s status %d, want %v", status, e.Family, e.Status, want)
		}
	}
	if e := errorFromResponse(500, http.Header{}, page); !errors.Is(e, ErrInternal) && e.Family != FamilyOther {
		t.Fatalf("HTTP 500 HTML page: %s", e.Family)
	}
}

// The error's text names the code and the request id.
func TestErrorMessageHasCodeAndRequestID(t *testing.T) {
	e := errorFromResponse(429, http.Header{}, []byte(`{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"slow down","request_id":"req_42"}}`))
	if text := e.Error(); !strings.Contains(text, "RATE_LIMIT_EXCEEDED") || !strings.Contains(text, "req_42") {
		t.Fatalf("error text %q lacks the code or the request id", text)
	}
}

// The generated models decode with the same decoder: typed fields stay typed (int64, float64),
// and a field typed any (a listing's example_params) holds numbers as json.Number.
func TestGeneratedModelsDecodeWithNumbers(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name":"sales","version":3,"calls_30d":12,"callers_30d":2,"previews":true,`+
			`"example_params":{"year":2024,"rate":0.125},"owner":{"name":"Acme"}}`)
	}))
	t.Cleanup(server.Close)
	client, err := New(server.URL, WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	detail, err := client.Marketplace.Get(context.Background(), "sales")
	if err != nil {
		t.Fatal(err)
	}
	if detail.Version != 3 || detail.Calls30d != 12 || !detail.Previews {
		t.Fatalf("typed fields: %+v", detail)
	}
	year, ok := detail.ExampleParams["year"].(json.Number)
	if !ok || year.String() != "2024" {
		t.Fatalf("example_params.year is %T %v, want json.Number 2024", detail.ExampleParams["year"], detail.ExampleParams["year"])
	}
	if rate := fmt.Sprint(detail.ExampleParams["rate"]); rate != "0.125" {
		t.Fatalf("example_params.rate printed as %s", rate)
	}
}
