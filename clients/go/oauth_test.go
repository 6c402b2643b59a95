package quarry

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"
)

func TestTokenSourceReusesTheTokenAndRefreshesItBeforeItExpires(t *testing.T) {
	clock := time.Unix(0, 0)
	var forms []url.Values
	source := &tokenSource{
		creds: OAuthCredentials{ClientID: "id", ClientSecret: "secret", Scopes: []string{"query", "keys"}},
		post: func(_ context.Context, _ string, form url.Values, _ OAuthCredentials) (int, []byte, error) {
			forms = append(forms, form)
			return 200, []byte(fmt.Sprintf(`{"access_token":"tok-%d","token_type":"Bearer","expires_in":100}`, len(forms))), nil
		},
		now: func() time.Time { return clock },
	}
	get := func() string {
		token, err := source.get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	if got := get(); got != "tok-1" {
		t.Fatalf("first token: %s", got)
	}
	clock = clock.Add(89 * time.Second)
	if got := get(); got != "tok-1" {
		t.Fatalf("at 89 s of 100: %s", got)
	}
	clock = clock.Add(1500 * time.Millisecond) // 90.5 s: within a tenth of its life of expiry
	if got := get(); got != "tok-2" {
		t.Fatalf("at 90.5 s of 100: %s", got)
	}
	source.invalidate("tok-2")
	if got := get(); got != "tok-3" {
		t.Fatalf("after invalidate: %s", got)
	}
	if forms[0].Get("grant_type") != "client_credentials" || forms[0].Get("scope") != "query keys" {
		t.Fatalf("form: %v", forms[0])
	}
}
