package quarry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiRequest is one API call; path is from the API root with segments already escaped.
type apiRequest struct {
	method  string
	path    string
	query   url.Values
	body    any
	headers map[string]string
	// idempotent: safe to send more than once (GET, DELETE, a query with its Idempotency-Key).
	idempotent bool
}

// decodeJSON decodes an answer keeping numbers exact: a number in an `any` (a row of the map
// form, insights) is a json.Number with the digits as sent, never a rounded float64.
func decodeJSON(body []byte, out any) error {
	decoder := json.NewDecoder(bytes.NewReader(body))
	decoder.UseNumber()
	if err := decoder.Decode(out); err != nil {
		return err
	}
	if decoder.More() {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// errTokenRefused: the API refused an OAuth token; one fresh token is fetched before giving up.
type errTokenRefused struct{ apiErr *Error }

func (e *errTokenRefused) Error() string { return e.apiErr.Error() }

// do sends req with the credential, retries and the overall timeout, and decodes a JSON answer
// into out (unless nil).
func (c *Client) do(ctx context.Context, req apiRequest, out any) error {
	parent := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	target := c.baseURL + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	var payload []byte
	if req.body != nil {
		var err error
		if payload, err = json.Marshal(req.body); err != nil {
			return fmt.Errorf("quarry: encoding the request body: %w", err)
		}
	}
	reauthorized := false
	var last *Error
	for retry := 0; ; {
		body, err := c.attempt(ctx, req, target, payload)
		if err == nil {
			if out == nil || len(body) == 0 {
				return nil
			}
			if jsonErr := decodeJSON(body, out); jsonErr != nil {
				return &Error{Family: FamilyOther, Code: "INVALID_RESPONSE", Message: fmt.Sprintf(
					"The gateway answered %s %s with a body that is not the expected JSON; check the base URL.", req.method, req.path), cause: jsonErr}
			}
			return nil
		}
		if ctxErr := c.contextError(parent, ctx, req, last); ctxErr != nil {
			return ctxErr
		}
		var refused *errTokenRefused
		if errors.As(err, &refused) {
			if !reauthorized {
				reauthorized = true
				continue
			}
			return refused.apiErr
		}
		var apiErr *Error
		if !errors.As(err, &apiErr) {
			return err
		}
		last = apiErr
		delay, ok := c.retry.RetryDelay(apiErr, retry, req.idempotent, nil)
		if deadline, has := ctx.Deadline(); !ok || (has && time.Now().Add(delay).After(deadline)) {
			return apiErr
		}
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return c.contextError(parent, ctx, req, last)
		}
		retry++
	}
}

// contextError: the caller's own cancellation as its ctx.Err(), our timeout as FamilyTimeout.
func (c *Client) contextError(parent, ctx context.Context, req apiRequest, last *Error) error {
	if parent.Err() != nil {
		return parent.Err()
	}
	if ctx.Err() == nil {
		return nil
	}
	msg := fmt.Sprintf("%s %s did not finish within %s", req.method, req.path, c.timeout)
	if last != nil {
		msg += fmt.Sprintf(" (last error: %s)", last.Code)
	}
	return &Error{Family: FamilyTimeout, Code: "TIMEOUT", Message: msg + ".", cause: ctx.Err()}
}

func (c *Client) attempt(ctx context.Context, req apiRequest, target string, payload []byte) ([]byte, error) {
	token := c.apiKey
	if c.tokens != nil {
		var err error
		if token, err = c.tokens.get(ctx); err != nil {
			return nil, err
		}
	}
	var reader io.Reader
	if payload != nil {
		reader = bytes.NewReader(payload)
	}
	httpReq, err := http.NewRequestWithContext(ctx, req.method, target, reader)
	if err != nil {
		return nil, fmt.Errorf("quarry: building the request: %w", err)
	}
	httpReq.Header.Set("Accept", "application/json")
	httpReq.Header.Set("User-Agent", c.userAgent)
	if token != "" { // sign-up is the one call without a credential
		httpReq.Header.Set("Authorization", "Bearer "+token)
	}
	if payload != nil {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.headers {
		httpReq.Header.Set(k, v)
	}
	status, header, body, err := c.exchange(httpReq)
	if err != nil {
		return nil, err
	}
	if status == http.StatusUnauthorized && c.tokens != nil {
		// The token may have been revoked or rotated early: one fresh token, then the API decides.
		c.tokens.invalidate(token)
		return nil, &errTokenRefused{apiErr: errorFromResponse(status, header, body)}
	}
	if status < 200 || status >= 300 {
		return nil, errorFromResponse(status, header, body)
	}
	return body, nil
}

// exchange sends one request and reads the whole answer; no answer is a FamilyNetwork error.
func (c *Client) exchange(httpReq *http.Request) (int, http.Header, []byte, error) {
	resp, err := c.http.Do(httpReq)
	if err == nil {
		defer resp.Body.Close()
		var body []byte
		if body, err = io.ReadAll(resp.Body); err == nil {
			return resp.StatusCode, resp.Header, body, nil
		}
	}
	if httpReq.Context().Err() != nil {
		return 0, nil, nil, httpReq.Context().Err()
	}
	return 0, nil, nil, &Error{Family: FamilyNetwork, Code: "NETWORK_ERROR", cause: err,
		Message: fmt.Sprintf("No answer from %s (%s %s): %v", c.baseURL, httpReq.Method, httpReq.URL.Path, err)}
}

// postToken sends the client-credentials grant with HTTP Basic client authentication.
func (c *Client) postToken(ctx context.Context, tokenURL string, form url.Values, creds OAuthCredentials) (int, []byte, error) {
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, fmt.Errorf("quarry: building the token request: %w", err)
	}
	// RFC 6749 §2.3.1: id and secret are form-encoded before they are joined for HTTP Basic.
	httpReq.SetBasicAuth(url.QueryEscape(creds.ClientID), url.QueryEscape(creds.ClientSecret))
	httpReq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	httpReq.Header.Set("Accept", "application/json")
	httpReq.Header.Set("User-Agent", c.userAgent)
	status, header, body, err := c.exchange(httpReq)
	if err != nil {
		return 0, nil, err
	}
	if status < 200 || status >= 300 {
		return status, nil, errorFromResponse(status, header, body)
	}
	return status, body, nil
}
