// Package httpretry is an http.RoundTripper that retries throttled and
// transient failures with exponential backoff and full jitter, honouring the
// server's Retry-After and X-RateLimit-Reset hints, until the deadline of
// the request's context (or DefaultBudget). Drivers wrap their vendor's HTTP
// client with it. A request whose context carries a fence
// (resources.WithFence) is sent, and sent again, only while the fence
// holds.
package httpretry

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/reconcile-dev/reconcile/resources"
)

// DefaultBudget bounds a request whose context has no deadline, retries
// included: it serves as the deadline, DefaultBudget after the request
// began. It is the default operation timeout of the drivers (as in the
// Terraform providers), so that a call outside an operation gives up no
// sooner than one inside.
const DefaultBudget = 20 * time.Minute

// MaxBodySize bounds the response bodies Transport reads and the request
// bodies it buffers to send again. A larger body fails the request with an
// error matching ErrBodyTooLarge.
const MaxBodySize = 32 << 20

// ErrBodyTooLarge is matched by the error of a request whose request or
// response body exceeds MaxBodySize.
var ErrBodyTooLarge = errors.New("body larger than 32 MiB")

// Transport retries a request while Retryable says so and the deadline
// allows. There is no cap on the number of attempts: an outage is waited
// out for as long as the request's context lets it. Request bodies must be
// replayable (GetBody set, as http.NewRequest does for bytes and strings
// readers) or are buffered on first use.
type Transport struct {
	// Base performs the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Retryable decides, from a response and its body, whether to retry. Nil
	// means DefaultRetryable. Errors from Base are retried when they come
	// from the connection (refused, reset, closed early, timed out), never
	// when the request could not be sent at all (an invalid header value).
	Retryable func(resp *http.Response, body []byte) bool
	// BaseDelay and MaxDelay shape the backoff: attempt n waits a random time
	// in [0, min(MaxDelay, BaseDelay*2^n)]. Zero values mean 250ms and 20s.
	BaseDelay, MaxDelay time.Duration
	// AttemptTimeout, when positive, bounds each attempt (sending the
	// request and reading the answer): an attempt that takes longer, a
	// server that hangs, is abandoned and retried. Unlike http.Client's
	// Timeout, which bounds the whole request, retries included, it leaves
	// the deadline to the context.
	AttemptTimeout time.Duration
	// Service names the API in errors, as in "datadog API throttled the
	// request"; empty means "the API".
	Service string
}

// DefaultRetryable retries 429 and every 5xx except 501.
func DefaultRetryable(resp *http.Response, _ []byte) bool {
	return resp.StatusCode == http.StatusTooManyRequests ||
		(resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented)
}

// ThrottledError is the error of a request whose server asked to be called
// again (Retry-After, or X-RateLimit-Reset on a 429) later than the deadline
// of the request's context, or than DefaultBudget allows: no retry could be
// made in time, so the request fails at once rather than wait in vain.
type ThrottledError struct {
	Service  string    // Transport.Service; may be empty
	Status   int       // the HTTP status of the answer
	Hint     string    // the header and its value, e.g. "Retry-After 97200s"
	Until    time.Time // when the server asked to be called again
	Deadline time.Time // the deadline the wait would have passed
}

func (e *ThrottledError) Error() string {
	who := "the API"
	if e.Service != "" {
		who = e.Service + " API"
	}
	return fmt.Sprintf("%s throttled the request until %s (%s), past the operation's deadline",
		who, e.Until.UTC().Format(time.RFC3339), e.Hint)
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base, retryable := t.baseOrDefault(), t.retryableOrDefault()
	ctx, deadline, cancel := withBudget(req.Context())
	defer cancel()
	if err := bufferBody(req); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		// A fenced request leaves only while the fence holds: checked
		// right before each attempt, the first and every retry, so that
		// a run that lost its state's lock while it waited (a backoff, a
		// freeze) sends nothing more.
		if err := resources.CheckFence(ctx); err != nil {
			return nil, fmt.Errorf("%s %s not sent: %w", req.Method, req.URL.Path, err)
		}
		res, err := t.attempt(ctx, base, req, attempt)
		if err != nil {
			return nil, err
		}
		next, resp, err := t.judge(ctx, req, res, retryable)
		if next == nil {
			return resp, err
		}
		now := time.Now()
		if next.hint != "" && now.Add(next.wait).After(deadline) {
			return nil, &ThrottledError{Service: t.Service, Status: next.resp.StatusCode, Hint: next.hint, Until: now.Add(next.wait), Deadline: deadline}
		}
		delay := max(t.backoff(attempt-1), next.wait)
		if now.Add(delay).After(deadline) {
			// No attempt can be made in time: the last answer stands.
			return next.last()
		}
		resources.ReportRetry(ctx, resources.RetryInfo{Method: req.Method, Path: req.URL.Path, Cause: next.cause, Attempt: attempt + 1, Wait: delay})
		if err := sleep(ctx, delay); err != nil {
			return nil, fmt.Errorf("%w while waiting to retry %s %s (%s)", err, req.Method, req.URL.Path, next.cause)
		}
	}
}

// baseOrDefault returns Base, or http.DefaultTransport when it is nil.
func (t *Transport) baseOrDefault() http.RoundTripper {
	if t.Base == nil {
		return http.DefaultTransport
	}
	return t.Base
}

// retryableOrDefault returns Retryable, or DefaultRetryable when it is nil.
func (t *Transport) retryableOrDefault() func(*http.Response, []byte) bool {
	if t.Retryable == nil {
		return DefaultRetryable
	}
	return t.Retryable
}

// withBudget returns ctx with its deadline. A ctx without one is given
// DefaultBudget from now, and cancel releases it; otherwise cancel does
// nothing.
func withBudget(ctx context.Context) (_ context.Context, deadline time.Time, cancel context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return ctx, d, func() {}
	}
	deadline = time.Now().Add(DefaultBudget)
	ctx, cancel = context.WithDeadline(ctx, deadline)
	return ctx, deadline, cancel
}

// bufferBody makes the body of req replayable when it is not (it has no
// GetBody): it reads it, up to MaxBodySize, closes it, and sets Body and
// GetBody to copies of what it read.
func bufferBody(req *http.Request) error {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return nil
	}
	b, err := readBounded(req.Body, -1)
	req.Body.Close()
	if err != nil {
		return fmt.Errorf("%s %s: request %w", req.Method, req.URL.Path, err)
	}
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	req.Body, _ = req.GetBody()
	return nil
}

// attemptResult is what one attempt gave: an answer, its body read into
// body (and resp.Body replaced by a reader of it), or the error of sending
// the request.
type attemptResult struct {
	resp     *http.Response
	body     []byte
	err      error // from sending the request; resp is then Base's, normally nil
	readErr  error // from reading the answer's body
	timedOut bool  // the attempt outlived AttemptTimeout, not the request's context
}

// attempt sends attempt number n of req, within ctx and AttemptTimeout,
// and reads the answer. Its error, that of making the body again, is
// final.
func (t *Transport) attempt(ctx context.Context, base http.RoundTripper, req *http.Request, n int) (attemptResult, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if t.AttemptTimeout > 0 {
		actx, cancel = context.WithTimeout(ctx, t.AttemptTimeout)
	}
	defer cancel()
	r, err := attemptRequest(actx, req, n)
	if err != nil {
		return attemptResult{}, err
	}
	var res attemptResult
	res.resp, res.err = base.RoundTrip(r)
	if res.err == nil {
		res.body, res.readErr = readBounded(res.resp.Body, res.resp.ContentLength)
		res.resp.Body.Close()
		res.resp.Body = io.NopCloser(bytes.NewReader(res.body))
	}
	// An attempt that outlived AttemptTimeout is retried, whatever
	// error its end gave.
	res.timedOut = actx.Err() != nil && ctx.Err() == nil
	return res, nil
}

// attemptRequest returns req to send as attempt number n within actx:
// from the second attempt on, with a fresh copy of its body.
func attemptRequest(actx context.Context, req *http.Request, n int) (*http.Request, error) {
	if n == 1 || req.GetBody == nil {
		return req.WithContext(actx), nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := req.Clone(actx)
	r.Body = body
	return r, nil
}

// judge decides what the attempt res calls for: a retry, or nil and the
// answer RoundTrip returns. An error is retried when it is the
// connection's, or the attempt's time ran out, while ctx lives; an answer
// is retried when retryable says so, unless its body is too large.
func (t *Transport) judge(ctx context.Context, req *http.Request, res attemptResult, retryable func(*http.Response, []byte) bool) (*retry, *http.Response, error) {
	if res.err != nil {
		return t.judgeSendError(ctx, res)
	}
	switch {
	case errors.Is(res.readErr, ErrBodyTooLarge):
		return nil, nil, fmt.Errorf("%s %s: %s: response %w", req.Method, req.URL.Path, res.resp.Status, res.readErr)
	case res.readErr != nil:
		return t.judgeReadError(ctx, req, res)
	case !retryable(res.resp, res.body):
		return nil, res.resp, nil
	}
	wait, hint := serverHint(res.resp)
	return &retry{cause: res.resp.Status, wait: wait, hint: hint, resp: res.resp}, nil, nil
}

// judgeSendError decides what an attempt that could not be sent, or got
// no answer, calls for: see judge.
func (t *Transport) judgeSendError(ctx context.Context, res attemptResult) (*retry, *http.Response, error) {
	if ctx.Err() != nil || !res.timedOut && !retryableError(res.err) {
		return nil, nil, res.err
	}
	cause := fmt.Sprintf("connection error: %v", res.err)
	if res.timedOut {
		cause = fmt.Sprintf("no answer within %s", t.AttemptTimeout)
	}
	return &retry{cause: cause, resp: res.resp, err: res.err}, nil, nil
}

// judgeReadError decides what an answer whose body could not be read
// calls for: see judge. The answer itself is dropped.
func (t *Transport) judgeReadError(ctx context.Context, req *http.Request, res attemptResult) (*retry, *http.Response, error) {
	err := fmt.Errorf("%s %s: %s: reading the response: %w", req.Method, req.URL.Path, res.resp.Status, res.readErr)
	if ctx.Err() != nil || !res.timedOut && !retryableError(res.readErr) {
		return nil, nil, err
	}
	cause := fmt.Sprintf("reading the response: %v", res.readErr)
	if res.timedOut {
		cause = fmt.Sprintf("reading the response: not done within %s", t.AttemptTimeout)
	}
	return &retry{cause: cause, err: err}, nil, nil
}

// retry is an attempt to be made again: why, how long the server asked to
// wait, and the answer that stands if no retry can be made in time.
type retry struct {
	cause string        // for the retry report, as "503 Service Unavailable"
	wait  time.Duration // asked by the server
	hint  string        // the header that asked for wait, and its value; "" for none
	resp  *http.Response
	err   error // when resp is nil
}

// last returns the answer of the attempt, which stands when no other can
// be made.
func (r *retry) last() (*http.Response, error) {
	if r.resp != nil {
		return r.resp, nil
	}
	return nil, r.err
}

func (t *Transport) backoff(retry int) time.Duration {
	base, maxd := t.BaseDelay, t.MaxDelay
	if base <= 0 {
		base = 250 * time.Millisecond
	}
	if maxd <= 0 {
		maxd = 20 * time.Second
	}
	d := base << min(retry, 20)
	if d > maxd || d <= 0 {
		d = maxd
	}
	return time.Duration(rand.Int64N(int64(d) + 1))
}

// readBounded reads r to its end, failing with ErrBodyTooLarge beyond
// MaxBodySize bytes. size, when not negative, is the announced length: a
// larger one fails before anything is read.
func readBounded(r io.Reader, size int64) ([]byte, error) {
	if size > MaxBodySize {
		return nil, ErrBodyTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxBodySize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBodySize {
		return nil, ErrBodyTooLarge
	}
	return b, nil
}

// retryableError reports whether err, from sending a request or reading
// its answer, may go away on another attempt: a connection refused, reset,
// closed early or timed out. Errors raised before anything was sent (an
// invalid header value), certificate errors and names that do not resolve
// are final.
func retryableError(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTimeout || dnsErr.IsTemporary
	}
	var (
		certErr      *tls.CertificateVerificationError
		authorityErr x509.UnknownAuthorityError
		hostErr      x509.HostnameError
		invalidErr   x509.CertificateInvalidError
		recordErr    tls.RecordHeaderError
	)
	if errors.As(err, &certErr) || errors.As(err, &authorityErr) || errors.As(err, &hostErr) ||
		errors.As(err, &invalidErr) || errors.As(err, &recordErr) {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	// Other failures of the socket (dial, read, write) are the network's.
	var opErr *net.OpError
	return errors.As(err, &opErr)
}

// serverHint reads how long the server asks to wait: Retry-After (seconds
// or an HTTP date) on any retried answer, X-RateLimit-Reset (seconds until
// the rate-limit window resets) on a 429, where it is the throttle's end.
// hint names the header and its value, "" when there is none.
func serverHint(resp *http.Response) (wait time.Duration, hint string) {
	const maxSeconds = 1 << 32 // beyond any real hint; keeps the Duration from overflowing
	seconds := func(v string) (time.Duration, bool) {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil || s < 0 {
			return 0, false
		}
		return time.Duration(min(s, maxSeconds)) * time.Second, true
	}
	if v := resp.Header.Get("Retry-After"); v != "" {
		if d, ok := seconds(v); ok {
			return d, fmt.Sprintf("Retry-After %ss", v)
		}
		if at, err := http.ParseTime(v); err == nil {
			return max(time.Until(at), 0), "Retry-After " + v
		}
	}
	if v := resp.Header.Get("X-RateLimit-Reset"); v != "" && resp.StatusCode == http.StatusTooManyRequests {
		if d, ok := seconds(v); ok {
			return d, fmt.Sprintf("X-RateLimit-Reset %ss", v)
		}
	}
	return 0, ""
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
