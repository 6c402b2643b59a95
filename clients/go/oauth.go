package quarry

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"time"
)

// OAuthCredentials is an OAuth client of your account (POST /v1/oauth/clients shows the
// secret once), used with the client-credentials grant.
type OAuthCredentials struct {
	ClientID     string
	ClientSecret string
	// Scopes to ask for; empty for all of the client's.
	Scopes []string
}

const (
	maxRefreshMargin = 60 * time.Second
	defaultLifetime  = 300 * time.Second
)

// tokenSource caches one bearer token, fetches it again a little before it expires (60 s, or a
// tenth of its life when shorter), and forgets it when the API refuses it. The mutex makes
// concurrent calls share one token request.
type tokenSource struct {
	url   string
	creds OAuthCredentials
	post  func(ctx context.Context, url string, form url.Values, creds OAuthCredentials) (int, []byte, error)
	now   func() time.Time // time.Now; tests move it

	mu        sync.Mutex
	token     string
	refreshAt time.Time
}

func (s *tokenSource) get(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now
	if now == nil {
		now = time.Now
	}
	if s.token != "" && now().Before(s.refreshAt) {
		return s.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(s.creds.Scopes) > 0 {
		form.Set("scope", strings.Join(s.creds.Scopes, " "))
	}
	status, body, err := s.post(ctx, s.url, form, s.creds)
	if err != nil {
		return "", err
	}
	var answer struct {
		AccessToken string   `json:"access_token"`
		TokenType   string   `json:"token_type"`
		ExpiresIn   *float64 `json:"expires_in"`
	}
	if json.Unmarshal(body, &answer) != nil || answer.AccessToken == "" || !strings.EqualFold(answer.TokenType, "bearer") {
		return "", &Error{Family: FamilyOAuth, Code: "invalid_token_response", Status: status,
			Message: "The token endpoint answered without a bearer access_token; check the gateway URL."}
	}
	lifetime := defaultLifetime
	if answer.ExpiresIn != nil && *answer.ExpiresIn > 0 {
		lifetime = time.Duration(*answer.ExpiresIn * float64(time.Second))
	}
	margin := lifetime / 10
	if margin > maxRefreshMargin {
		margin = maxRefreshMargin
	}
	s.token = answer.AccessToken
	s.refreshAt = now().Add(lifetime - margin)
	return s.token, nil
}

func (s *tokenSource) invalidate(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == token {
		s.token = ""
	}
}
