package quarry

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Family groups error codes that a caller handles alike; compare with errors.Is and the Err*
// sentinels (errors.Is(err, quarry.ErrRateLimit)).
type Family string

// The error families, mirroring the gateway's error envelope codes (docs/design.md §2).
const (
	FamilyInvalidRequest  Family = "InvalidRequest"
	FamilyInvalidParams   Family = "InvalidParams"
	FamilyUnauthenticated Family = "Unauthenticated"
	FamilyForbidden       Family = "Forbidden"
	FamilyNotFound        Family = "NotFound"
	FamilyConflict        Family = "Conflict"
	FamilyRateLimit       Family = "RateLimit"
	FamilyQuotaExceeded   Family = "QuotaExceeded"
	// FamilyPriceAboveLimit: the call would cost more than its MaxCredits; nothing run or charged.
	FamilyPriceAboveLimit   Family = "PriceAboveLimit"
	FamilyResultTooLarge    Family = "ResultTooLarge"
	FamilyUpstream          Family = "Upstream"
	FamilySourceUnavailable Family = "SourceUnavailable"
	FamilyQueryTimeout      Family = "QueryTimeout"
	FamilyInternal          Family = "Internal"
	// FamilyNetwork: no response arrived (connection refused or reset, body cut off).
	FamilyNetwork Family = "Network"
	// FamilyTimeout: the client's own overall timeout passed.
	FamilyTimeout Family = "Timeout"
	// FamilyOAuth: the token endpoint refused the client; Code is the OAuth error.
	FamilyOAuth Family = "OAuth"
	// FamilyOther: an error outside the known codes.
	FamilyOther Family = "Quarry"
)

// Sentinels for errors.Is, one per family.
var (
	ErrInvalidRequest    = errors.New("quarry: invalid request")
	ErrInvalidParams     = errors.New("quarry: invalid params")
	ErrUnauthenticated   = errors.New("quarry: unauthenticated")
	ErrForbidden         = errors.New("quarry: forbidden")
	ErrNotFound          = errors.New("quarry: not found")
	ErrConflict          = errors.New("quarry: conflict")
	ErrRateLimit         = errors.New("quarry: rate limit exceeded")
	ErrQuotaExceeded     = errors.New("quarry: quota exceeded")
	ErrPriceAboveLimit   = errors.New("quarry: price above limit")
	ErrResultTooLarge    = errors.New("quarry: result too large")
	ErrUpstream          = errors.New("quarry: upstream error")
	ErrSourceUnavailable = errors.New("quarry: source unavailable")
	ErrQueryTimeout      = errors.New("quarry: query timeout")
	ErrInternal          = errors.New("quarry: internal error")
	ErrNetwork           = errors.New("quarry: network error")
	ErrTimeout           = errors.New("quarry: client timeout")
	ErrOAuth             = errors.New("quarry: oauth error")
)

var sentinelByFamily = map[Family]error{
	FamilyInvalidRequest: ErrInvalidRequest, FamilyInvalidParams: ErrInvalidParams,
	FamilyUnauthenticated: ErrUnauthenticated, FamilyForbidden: ErrForbidden, FamilyNotFound: ErrNotFound,
	FamilyConflict: ErrConflict, FamilyPriceAboveLimit: ErrPriceAboveLimit, FamilyRateLimit: ErrRateLimit, FamilyQuotaExceeded: ErrQuotaExceeded,
	FamilyResultTooLarge: ErrResultTooLarge, FamilyUpstream: ErrUpstream,
	FamilySourceUnavailable: ErrSourceUnavailable, FamilyQueryTimeout: ErrQueryTimeout,
	FamilyInternal: ErrInternal, FamilyNetwork: ErrNetwork, FamilyTimeout: ErrTimeout, FamilyOAuth: ErrOAuth,
}

var familyByCode = map[string]Family{
	"INVALID_REQUEST": FamilyInvalidRequest, "METHOD_NOT_ALLOWED": FamilyInvalidRequest,
	"PAYLOAD_TOO_LARGE": FamilyInvalidRequest, "UNSUPPORTED_MEDIA_TYPE": FamilyInvalidRequest,
	"INVALID_PARAMS": FamilyInvalidParams, "UNAUTHENTICATED": FamilyUnauthenticated,
	"FORBIDDEN": FamilyForbidden, "SOURCE_NOT_FOUND": FamilyNotFound, "NOT_FOUND": FamilyNotFound,
	"CONFLICT": FamilyConflict, "PRICE_ABOVE_LIMIT": FamilyPriceAboveLimit, "RATE_LIMIT_EXCEEDED": FamilyRateLimit, "QUOTA_EXCEEDED": FamilyQuotaExceeded,
	"RESULT_TOO_LARGE": FamilyResultTooLarge, "UPSTREAM_ERROR": FamilyUpstream,
	"SOURCE_UNAVAILABLE": FamilySourceUnavailable, "QUERY_TIMEOUT": FamilyQueryTimeout, "INTERNAL": FamilyInternal,
}

// familyByProxyStatus: the family of a non-JSON answer of a proxy in front of the gateway.
var familyByProxyStatus = map[int]Family{502: FamilyUpstream, 503: FamilySourceUnavailable, 504: FamilyUpstream}

// ErrorDetail is one item of an error's details: the param or field and what is wrong with it.
type ErrorDetail struct {
	Param string `json:"param,omitempty"`
	Field string `json:"field,omitempty"`
	// Value is a number the detail is about (QUOTA_EXCEEDED: credits_needed, credits_left).
	Value   *float64 `json:"value,omitempty"`
	Message string   `json:"message"`
}

// Error is every failed call: an error the gateway answered with (its envelope
// {"error":{"code","message","retry_after","request_id","details"}}), or the client's own.
type Error struct {
	// Family groups the code; errors.Is(err, ErrRateLimit) and friends test it.
	Family Family
	// Code is the envelope's code (RATE_LIMIT_EXCEEDED …), the client's own (NETWORK_ERROR,
	// TIMEOUT), or for FamilyOAuth the OAuth error (invalid_client …).
	Code string
	// Status is the HTTP status; 0 when no response arrived.
	Status int
	// Message says what went wrong, for people.
	Message string
	// RequestID is the gateway's request id (quote it when reporting a problem).
	RequestID string
	// RetryAfter is the seconds until a retry may succeed (fractional); 0 when not given.
	RetryAfter float64
	// Details lists per-param or per-field problems.
	Details []ErrorDetail
	cause   error
}

// Error formats the code, message and request id.
func (e *Error) Error() string {
	if e.RequestID != "" {
		return fmt.Sprintf("quarry: %s: %s (request %s)", e.Code, e.Message, e.RequestID)
	}
	return fmt.Sprintf("quarry: %s: %s", e.Code, e.Message)
}

// Is reports whether target is the sentinel of e's family.
func (e *Error) Is(target error) bool {
	sentinel, ok := sentinelByFamily[e.Family]
	return ok && sentinel == target
}

// Unwrap returns the underlying cause (a network error, context.DeadlineExceeded), if any.
func (e *Error) Unwrap() error { return e.cause }

func errorFromResponse(status int, header http.Header, body []byte) *Error {
	headerRetry := 0.0
	if v, err := strconv.ParseFloat(strings.TrimSpace(header.Get("Retry-After")), 64); err == nil {
		headerRetry = v
	}
	requestID := header.Get("X-Request-Id")
	var envelope struct {
		Error json.RawMessage `json:"error"`
		Desc  string          `json:"error_description"`
	}
	if json.Unmarshal(body, &envelope) == nil && len(envelope.Error) > 0 {
		var e struct {
			Code       *string       `json:"code"`
			Message    string        `json:"message"`
			RequestID  string        `json:"request_id"`
			RetryAfter *float64      `json:"retry_after"`
			Details    []ErrorDetail `json:"details"`
		}
		if json.Unmarshal(envelope.Error, &e) == nil && e.Code != nil {
			family, ok := familyByCode[*e.Code]
			if !ok {
				family = FamilyOther
			}
			out := &Error{Family: family, Code: *e.Code, Status: status, Message: e.Message,
				RequestID: e.RequestID, RetryAfter: headerRetry, Details: e.Details}
			if out.Message == "" {
				out.Message = fmt.Sprintf("%s (HTTP %d)", *e.Code, status)
			}
			if out.RequestID == "" {
				out.RequestID = requestID
			}
			if e.RetryAfter != nil {
				out.RetryAfter = *e.RetryAfter
			}
			return out
		}
		var oauthCode string
		if json.Unmarshal(envelope.Error, &oauthCode) == nil {
			msg := envelope.Desc
			if msg == "" {
				msg = fmt.Sprintf("The token endpoint answered %s (HTTP %d).", oauthCode, status)
			}
			return &Error{Family: FamilyOAuth, Code: oauthCode, Status: status, Message: msg,
				RequestID: requestID, RetryAfter: headerRetry}
		}
	}
	text := string(body)
	if len(text) > 200 {
		text = text[:200]
	}
	// A proxy or load balancer in front of the gateway answers 502/503/504 with its own page:
	// the same family as the gateway's own upstream failure, so callers handle (and retry) it alike.
	family, where := FamilyOther, ""
	if proxyFamily, ok := familyByProxyStatus[status]; ok {
		family, where = proxyFamily, " (from a proxy in front of the gateway)"
	}
	return &Error{Family: family, Code: "HTTP_ERROR", Status: status, RequestID: requestID,
		RetryAfter: headerRetry, Message: fmt.Sprintf("HTTP %d without a Quarry error body%s: %s", status, where, text)}
}
