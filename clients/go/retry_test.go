package quarry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestRetryDelayHonoursRetryAfterAndNeverRetriesQuota(t *testing.T) {
	p := RetryPolicy{Retries: 3, BaseDelay: 250 * time.Millisecond, MaxDelay: 30 * time.Second}
	limited := &Error{Family: FamilyRateLimit, Status: 429, RetryAfter: 1.5}
	if d, ok := p.RetryDelay(limited, 0, false, func() float64 { return 0 }); !ok || d != 1500*time.Millisecond {
		t.Fatalf("rate limit: %v %v", d, ok)
	}
	if d, ok := p.RetryDelay(limited, 2, false, func() float64 { return 1 }); !ok || d != 2500*time.Millisecond {
		t.Fatalf("rate limit, third retry: %v %v", d, ok)
	}
	for _, err := range []*Error{
		{Family: FamilyQuotaExceeded, Status: 429, RetryAfter: 10},
		{Family: FamilyInvalidParams, Status: 400},
		{Family: FamilyRateLimit, Status: 429, RetryAfter: 31},
	} {
		if _, ok := p.RetryDelay(err, 0, true, nil); ok {
			t.Fatalf("%s was retried", err.Family)
		}
	}
	if _, ok := p.RetryDelay(&Error{Family: FamilyNetwork}, 0, false, nil); ok {
		t.Fatal("a network error on a call that is not idempotent was retried")
	}
}

func TestContextCancellationStopsTheCallAndItsWait(t *testing.T) {
	var calls int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atomic.AddInt32(&calls, 1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		_, _ = w.Write([]byte(`{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"slow down","retry_after":5,"request_id":"req_1"}}`))
	}))
	defer server.Close()
	client, err := New(server.URL, WithAPIKey("qry_live_x"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	started := time.Now()
	_, err = client.Query(ctx, "sales-by-region", Params{"year": 2024})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("expected context.Canceled, got %v", err)
	}
	if elapsed := time.Since(started); elapsed > 2*time.Second {
		t.Fatalf("the 5 s retry wait was not cut short: %v", elapsed)
	}
	if n := atomic.LoadInt32(&calls); n != 1 {
		t.Fatalf("expected one request before the cancellation, got %d", n)
	}
}

func TestErrorFromResponseMapsEnvelopeAndOAuthBodies(t *testing.T) {
	e := errorFromResponse(400, http.Header{}, []byte(`{"error":{"code":"INVALID_PARAMS","message":"m","request_id":"req_1","details":[{"param":"year","message":"bad"}]}}`))
	if !errors.Is(e, ErrInvalidParams) || e.RequestID != "req_1" || len(e.Details) != 1 || e.Details[0].Param != "year" {
		t.Fatalf("envelope: %+v", e)
	}
	o := errorFromResponse(401, http.Header{}, []byte(`{"error":"invalid_client"}`))
	if !errors.Is(o, ErrOAuth) || o.Code != "invalid_client" {
		t.Fatalf("oauth: %+v", o)
	}
}

func TestAnalyticsGetSendsSlicesAsRepeatedKeys(t *testing.T) {
	var got string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"source":"s","results":[{"id":"9007199254740993"}],"columns":[],"meta":{"row_count":1}}`))
	}))
	defer server.Close()
	client, err := New(server.URL, WithAPIKey("qry_live_x"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Analytics.Get(context.Background(), "s", map[string]any{"ids": []int{1, 2}, "tags": []string{"a b"}, "skip": nil, "year": 2024})
	if err != nil {
		t.Fatal(err)
	}
	if got != "ids=1&ids=2&tags=a+b&year=2024" {
		t.Fatalf("query string %q", got)
	}
	if res.Results[0]["id"] != "9007199254740993" {
		t.Fatalf("big id %#v", res.Results[0]["id"])
	}
}
