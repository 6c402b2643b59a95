package quarry

// Verifying a webhook delivery from Quarry (docs/webhooks.md): Standard Webhooks signatures, an
// HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" keyed with the endpoint's secret
// ("whsec_" + base64), sent as space-separated "v1,<base64>" entries (two during a rotation).

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WebhookTolerance is how far a delivery's timestamp may be from now (a replayed capture is refused).
const WebhookTolerance = 5 * time.Minute

// ErrWebhookVerification is a delivery that is not Quarry's, or too old: do not act on it.
var ErrWebhookVerification = errors.New("quarry: webhook verification failed")

// WebhookEvent is an event as Quarry delivers it.
type WebhookEvent struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// VerifyWebhook checks a delivery's signature and age against the endpoint's secret and returns
// its event; the error wraps ErrWebhookVerification otherwise. Pass the raw body as received.
func VerifyWebhook(secret string, body []byte, headers http.Header) (*WebhookEvent, error) {
	return verifyWebhookAt(secret, body, headers, time.Now())
}

func verifyWebhookAt(secret string, body []byte, headers http.Header, now time.Time) (*WebhookEvent, error) {
	fail := func(why string) (*WebhookEvent, error) {
		return nil, fmt.Errorf("%w: %s", ErrWebhookVerification, why)
	}
	id, timestamp, signatures := headers.Get("webhook-id"), headers.Get("webhook-timestamp"), headers.Get("webhook-signature")
	if id == "" || timestamp == "" || signatures == "" {
		return fail("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	seconds, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || absDuration(now.Sub(time.Unix(seconds, 0))) > WebhookTolerance {
		return fail("the webhook-timestamp is missing or too far from now")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return fail("the secret is not whsec_ and base64")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	expected := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, entry := range strings.Split(signatures, " ") {
		version, signature, ok := strings.Cut(entry, ",")
		if ok && version == "v1" && hmac.Equal([]byte(signature), expected) {
			var event WebhookEvent
			if err := json.Unmarshal(body, &event); err != nil {
				return fail("the body is not JSON")
			}
			return &event, nil
		}
	}
	return fail("no signature matches this secret")
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
