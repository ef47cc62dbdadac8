// Package httpretry is an http.RoundTripper that retries throttled and
// transient failures with exponential backoff and full jitter, honouring the
// server's Retry-After and X-RateLimit-Reset hints, within the deadline of
// the request's context. Drivers wrap their vendor's HTTP client with it.
package httpretry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"reconcile/resources"
)

// Transport retries a request while Retryable says so and the context allows.
// Request bodies must be replayable (GetBody set, as http.NewRequest does for
// bytes and strings readers) or are buffered on first use.
type Transport struct {
	// Base performs the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Retryable decides, from a response and its body, whether to retry. Nil
	// means DefaultRetryable. It is not called for connection errors, which
	// are always retried.
	Retryable func(resp *http.Response, body []byte) bool
	// MaxAttempts bounds the attempts; 0 means until the context ends (and at
	// most 12).
	MaxAttempts int
	// BaseDelay and MaxDelay shape the backoff: attempt n waits a random time
	// in [0, min(MaxDelay, BaseDelay*2^n)]. Zero values mean 250ms and 20s.
	BaseDelay, MaxDelay time.Duration
}

// DefaultRetryable retries 429 and every 5xx except 501.
func DefaultRetryable(resp *http.Response, _ []byte) bool {
	return resp.StatusCode == http.StatusTooManyRequests ||
		(resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented)
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	retryable := t.Retryable
	if retryable == nil {
		retryable = DefaultRetryable
	}
	maxAttempts := t.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = 12
	}
	if req.Body != nil && req.GetBody == nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		req.Body, _ = req.GetBody()
	}
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(ctx)
			r.Body = body
		}
		resp, err := base.RoundTrip(r)
		var why string
		var hint time.Duration
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			why = fmt.Sprintf("connection error: %v", err)
		} else {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			if rerr != nil {
				why = fmt.Sprintf("reading response: %v", rerr)
			} else if !retryable(resp, body) {
				return resp, nil
			} else {
				why = resp.Status
				hint = serverHint(resp.Header)
			}
		}
		if attempt+1 >= maxAttempts {
			if err != nil {
				return nil, err
			}
			return resp, nil
		}
		delay := t.backoff(attempt)
		if hint > delay {
			delay = hint
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			if err != nil {
				return nil, err
			}
			return resp, nil
		}
		resources.ReportRetry(ctx, resources.RetryInfo{Method: req.Method, Path: req.URL.Path, Cause: why, Attempt: attempt + 2, Wait: delay})
		if err := sleep(ctx, delay); err != nil {
			if resp != nil {
				return resp, nil
			}
			return nil, errors.Join(err, ctx.Err())
		}
	}
}

func (t *Transport) backoff(attempt int) time.Duration {
	base, maxd := t.BaseDelay, t.MaxDelay
	if base <= 0 {
		base = 250 * time.Millisecond
	}
	if maxd <= 0 {
		maxd = 20 * time.Second
	}
	d := base << min(attempt, 20)
	if d > maxd || d <= 0 {
		d = maxd
	}
	return time.Duration(rand.Int64N(int64(d) + 1))
}

// serverHint reads Retry-After (seconds or an HTTP date) and
// X-RateLimit-Reset (seconds until the window resets).
func serverHint(h http.Header) time.Duration {
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return time.Duration(s) * time.Second
		}
		if at, err := http.ParseTime(v); err == nil {
			return time.Until(at)
		}
	}
	if v := h.Get("X-RateLimit-Reset"); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return time.Duration(s) * time.Second
		}
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
