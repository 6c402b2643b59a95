package quarry

import (
	"math"
	"math/rand"
	"sync"
	"time"
)

// Go 1.19's global math/rand starts from the same seed in every process: jitter needs its own.
var jitter = struct {
	sync.Mutex
	*rand.Rand
}{Rand: rand.New(rand.NewSource(time.Now().UnixNano()))}

func jitterFloat() float64 {
	jitter.Lock()
	defer jitter.Unlock()
	return jitter.Float64()
}

// RetryPolicy says how the client retries. A zero BaseDelay or MaxDelay means its default, so
// RetryPolicy{Retries: 5} is the default policy with 5 retries. Retries is a count: 0 turns
// retries off (DefaultRetryPolicy has 3).
type RetryPolicy struct {
	// Retries after the first attempt (DefaultRetryPolicy: 3; 0: none).
	Retries int
	// BaseDelay bounds the first backoff; it doubles per retry (0: the default 250 ms).
	BaseDelay time.Duration
	// MaxDelay is the largest backoff (0: the default 30 s). A retry_after longer than this is
	// not waited out: the error is returned at once, with its RetryAfter.
	MaxDelay time.Duration
}

// withDefaults fills a zero BaseDelay or MaxDelay with the default.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultRetryPolicy.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultRetryPolicy.MaxDelay
	}
	return p
}

// DefaultRetryPolicy is 3 retries, 250 ms base, 30 s max.
var DefaultRetryPolicy = RetryPolicy{Retries: 3, BaseDelay: 250 * time.Millisecond, MaxDelay: 30 * time.Second}

// Retryable reports whether err may be retried. A rate-limited call was refused before any
// work, so it is retried whatever the call; an unavailable source, a network error and
// 502/503/504 only on idempotent calls. Never another 4xx: not QUOTA_EXCEEDED (it resets
// monthly), nor the client's own timeout.
func Retryable(err *Error, idempotent bool) bool {
	switch {
	case err.Family == FamilyRateLimit:
		return true
	case err.Family == FamilyTimeout || !idempotent:
		return false
	default:
		return err.Family == FamilySourceUnavailable || err.Family == FamilyNetwork ||
			err.Status == 502 || err.Status == 503 || err.Status == 504
	}
}

// RetryDelay is the wait before retry number retry (0 for the first), and false when err must
// be returned instead. Full jitter up to BaseDelay×2^retry (capped at MaxDelay), added on top of
// retry_after, so clients refused together do not come back together and none too early.
func (p RetryPolicy) RetryDelay(err *Error, retry int, idempotent bool, random func() float64) (time.Duration, bool) {
	p = p.withDefaults()
	if retry >= p.Retries || !Retryable(err, idempotent) {
		return 0, false
	}
	floor := time.Duration(err.RetryAfter * float64(time.Second))
	if floor > p.MaxDelay {
		return 0, false
	}
	capDelay := math.Min(float64(p.MaxDelay), float64(p.BaseDelay)*math.Pow(2, float64(retry)))
	if random == nil {
		random = jitterFloat
	}
	return floor + time.Duration(random()*capDelay), true
}
