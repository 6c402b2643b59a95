package quarry

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// callsServer plays GET /v1/account/calls: total calls newest first (r0 the newest), paged by a
// cursor; it records each request's path and query string.
func callsServer(t *testing.T, total int) (*Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RequestURI())
		mu.Unlock()
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		start := 0
		if c := q.Get("cursor"); c != "" {
			n, _ := strconv.Atoi(strings.TrimPrefix(c, "after-r"))
			start = n + 1
		}
		end := start + limit
		if end > total {
			end = total
		}
		items := []map[string]any{}
		for i := start; i < end; i++ {
			items = append(items, map[string]any{"request_id": fmt.Sprintf("r%d", i), "analytic": "sales", "status": "ok"})
		}
		var next any
		if end < total {
			next = fmt.Sprintf("after-r%d", end-1)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"items": items, "next_cursor": next})
	}))
	t.Cleanup(server.Close)
	client, err := New(server.URL, WithAPIKey("qry_live_x"))
	if err != nil {
		t.Fatal(err)
	}
	return client, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func TestCallsListAllFollowsNextCursorToTheEnd(t *testing.T) {
	client, requests := callsServer(t, 5)
	it := client.Calls.ListAll(CallsOptions{Analytic: "sales", Status: "ok", Limit: 2})
	var ids []string
	for it.Next(context.Background()) {
		ids = append(ids, it.Call().RequestID)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"r0", "r1", "r2", "r3", "r4"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("calls %v, want %v", ids, want)
	}
	want := []string{
		"/v1/account/calls?analytic=sales&limit=2&status=ok",
		"/v1/account/calls?analytic=sales&cursor=after-r1&limit=2&status=ok",
		"/v1/account/calls?analytic=sales&cursor=after-r3&limit=2&status=ok",
	}
	if got := requests(); !reflect.DeepEqual(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
	if it.Next(context.Background()) || len(requests()) != 3 {
		t.Fatalf("Next after the end fetched again: %v", requests())
	}
}

func TestCallsListAllFetchesLazily(t *testing.T) {
	client, requests := callsServer(t, 250)
	it := client.Calls.ListAll(CallsOptions{})
	if got := requests(); len(got) != 0 {
		t.Fatalf("fetched before Next: %v", got)
	}
	for seen := 0; seen < 150 && it.Next(context.Background()); seen++ {
	}
	// The default page is the largest the gateway gives: 100.
	want := []string{"/v1/account/calls?limit=100", "/v1/account/calls?cursor=after-r99&limit=100"}
	if got := requests(); !reflect.DeepEqual(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
}

func TestCallsListAllNoCallsIsOneRequest(t *testing.T) {
	client, requests := callsServer(t, 0)
	it := client.Calls.ListAll(CallsOptions{Analytic: "none"})
	if it.Next(context.Background()) || it.Err() != nil {
		t.Fatalf("a call or an error from an empty listing: %v", it.Err())
	}
	if got := requests(); len(got) != 1 {
		t.Fatalf("requests %v, want one", got)
	}
}
