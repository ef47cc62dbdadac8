package httpretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/httpretry"
)

func TestRetries(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		statuses  []int // what the server answers, in order; then 200
		header    http.Header
		wantCalls int
		wantCode  int
	}{
		"ok at once":            {statuses: nil, wantCalls: 1, wantCode: 200},
		"429 then ok":           {statuses: []int{429}, header: http.Header{"Retry-After": {"0"}}, wantCalls: 2, wantCode: 200},
		"500 503 then ok":       {statuses: []int{500, 503}, wantCalls: 3, wantCode: 200},
		"400 is final":          {statuses: []int{400}, wantCalls: 1, wantCode: 400},
		"501 is final":          {statuses: []int{501}, wantCalls: 1, wantCode: 501},
		"rate limit reset hint": {statuses: []int{429}, header: http.Header{"X-Ratelimit-Reset": {"0"}}, wantCalls: 2, wantCode: 200},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1))
				body, _ := io.ReadAll(r.Body)
				if string(body) != "payload" {
					t.Errorf("attempt %d body = %q, want %q", n, body, "payload")
				}
				if n <= len(tc.statuses) {
					for k, v := range tc.header {
						w.Header()[k] = v
					}
					w.WriteHeader(tc.statuses[n-1])
					return
				}
				w.WriteHeader(200)
			}))
			defer srv.Close()
			c := &http.Client{Transport: &httpretry.Transport{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}}
			resp, err := c.Post(srv.URL, "text/plain", strings.NewReader("payload"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.wantCode || int(calls.Load()) != tc.wantCalls {
				t.Errorf("got status %d after %d calls, want %d after %d", resp.StatusCode, calls.Load(), tc.wantCode, tc.wantCalls)
			}
		})
	}
}

func TestRetryAfterHonouredAndReported(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			return
		}
	}))
	defer srv.Close()
	var retries []resources.RetryInfo
	ctx := resources.WithProgress(context.Background(), func(ev resources.ProgressEvent) {
		if ev.Retry != nil {
			retries = append(retries, *ev.Retry)
		}
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/x", nil)
	resp, err := (&http.Client{Transport: &httpretry.Transport{BaseDelay: time.Millisecond}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := resources.RetryInfo{Method: "GET", Path: "/x", Cause: "429 Too Many Requests", Attempt: 2}
	if len(retries) != 1 || retries[0].Wait < time.Second {
		t.Fatalf("retries reported = %+v, want one waiting at least the 1s Retry-After", retries)
	}
	if got := retries[0]; got.Method != want.Method || got.Path != want.Path || got.Cause != want.Cause || got.Attempt != want.Attempt {
		t.Errorf("retry reported = %+v, want %+v", got, want)
	}
}

// TestOutageOutlastsAttempts: there is no cap on attempts; an outage is
// waited out within the deadline.
func TestOutageOutlastsAttempts(t *testing.T) {
	t.Parallel()
	const failures = 40
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= failures {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL, strings.NewReader("payload"))
	resp, err := (&http.Client{Transport: &httpretry.Transport{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || calls.Load() != failures+1 {
		t.Errorf("got %d after %d calls, want 200 after %d", resp.StatusCode, calls.Load(), failures+1)
	}
}

// TestThrottledPastDeadline: a server asking to wait past the deadline
// fails the request at once, saying until when; nothing sleeps (a 27-hour
// wait would hang the test).
func TestThrottledPastDeadline(t *testing.T) {
	t.Parallel()
	later := time.Now().Add(27 * time.Hour).UTC().Format(http.TimeFormat)
	for name, tc := range map[string]struct {
		status      int
		header      http.Header
		noDeadline  bool // the request's context has none: DefaultBudget applies
		wantHint    string
		wantService string
	}{
		"Retry-After seconds": {status: 429, header: http.Header{"Retry-After": {"97200"}}, wantHint: "Retry-After 97200s"},
		"Retry-After date":    {status: 503, header: http.Header{"Retry-After": {later}}, wantHint: "Retry-After " + later},
		"X-RateLimit-Reset":   {status: 429, header: http.Header{"X-Ratelimit-Reset": {"97200"}}, wantHint: "X-RateLimit-Reset 97200s"},
		"past DefaultBudget":  {status: 429, header: http.Header{"Retry-After": {"97200"}}, noDeadline: true, wantHint: "Retry-After 97200s"},
		"service named":       {status: 429, header: http.Header{"Retry-After": {"97200"}}, wantHint: "Retry-After 97200s", wantService: "datadog"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				for k, v := range tc.header {
					w.Header()[k] = v
				}
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			ctx := t.Context()
			if !tc.noDeadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Minute)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
			resp, err := (&http.Client{Transport: &httpretry.Transport{Service: tc.wantService}}).Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("got %d, want a throttling error", resp.StatusCode)
			}
			var te *httpretry.ThrottledError
			if !errors.As(err, &te) {
				t.Fatalf("error = %v, want a *httpretry.ThrottledError", err)
			}
			who := "the API"
			if tc.wantService != "" {
				who = tc.wantService + " API"
			}
			want := fmt.Sprintf("%s throttled the request until %s (%s), past the operation's deadline", who, te.Until.UTC().Format(time.RFC3339), tc.wantHint)
			if te.Error() != want || !strings.Contains(err.Error(), want) {
				t.Errorf("error = %q, want it to say %q", err, want)
			}
			if te.Status != tc.status || !te.Until.After(te.Deadline) || te.Until.Before(time.Now().Add(26*time.Hour)) {
				t.Errorf("error = %+v, want status %d and a time 27 hours away, past the deadline", te, tc.status)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("%d calls, want 1", n)
			}
		})
	}
}

// TestRateLimitResetOnlyThrottles429: X-RateLimit-Reset tells when the
// rate-limit window resets, which is a wait only when the answer is 429.
func TestRateLimitResetOnlyThrottles429(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Reset", "97200")
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := (&http.Client{Transport: &httpretry.Transport{BaseDelay: time.Millisecond}}).Do(req)
	if err != nil {
		t.Fatalf("500 carrying X-RateLimit-Reset: %v, want a retry", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || calls.Load() != 2 {
		t.Errorf("got %d after %d calls, want 200 after 2", resp.StatusCode, calls.Load())
	}
}

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	for name, announce := range map[string]bool{"announced length": true, "chunked": false} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				const size = httpretry.MaxBodySize + 1
				if announce {
					w.Header().Set("Content-Length", fmt.Sprint(size))
				}
				w.WriteHeader(http.StatusOK)
				chunk := make([]byte, 64<<10)
				for n := 0; n < size; n += len(chunk) {
					if _, err := w.Write(chunk[:min(len(chunk), size-n)]); err != nil {
						return // the client hung up
					}
				}
			}))
			defer srv.Close()
			resp, err := (&http.Client{Transport: &httpretry.Transport{BaseDelay: time.Millisecond}}).Get(srv.URL + "/big")
			if err == nil {
				resp.Body.Close()
			}
			if !errors.Is(err, httpretry.ErrBodyTooLarge) || !strings.Contains(err.Error(), "GET /big: 200 OK: response body larger than 32 MiB") {
				t.Errorf("error = %v, want a response body larger than 32 MiB", err)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("%d calls, want 1 (a body too large is not retried)", n)
			}
		})
	}
	t.Run("request body", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
		defer srv.Close()
		// A reader http.NewRequest does not know: no GetBody, so the
		// transport must buffer it to replay it.
		body := struct{ io.Reader }{io.LimitReader(zeros{}, httpretry.MaxBodySize+1)}
		req, _ := http.NewRequestWithContext(t.Context(), "PUT", srv.URL+"/up", body)
		_, err := (&http.Client{Transport: &httpretry.Transport{}}).Do(req)
		if !errors.Is(err, httpretry.ErrBodyTooLarge) || !strings.Contains(err.Error(), "PUT /up: request body larger than 32 MiB") {
			t.Errorf("error = %v, want a request body larger than 32 MiB", err)
		}
		if n := calls.Load(); n != 0 {
			t.Errorf("%d requests reached the server, want 0", n)
		}
	})
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// countingTransport counts the attempts made through it.
type countingTransport struct {
	base  http.RoundTripper
	calls atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.calls.Add(1)
	return c.base.RoundTrip(r)
}

// TestUnsendableNotRetried: an error Go's transport raises before sending
// (here an API key ending in a newline) fails at once.
func TestUnsendableNotRetried(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	req.Header.Set("DD-API-KEY", "0123456789abcdef\n")
	base := &countingTransport{base: http.DefaultTransport}
	resp, err := (&http.Client{Transport: &httpretry.Transport{Base: base, BaseDelay: time.Millisecond}}).Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "invalid header field value") {
		t.Errorf("error = %v, want the transport's invalid header error", err)
	}
	if n, m := base.calls.Load(), calls.Load(); n != 1 || m != 0 {
		t.Errorf("%d attempts, %d requests reaching the server; want 1 and 0", n, m)
	}
}

// TestHungAttemptRetried: an attempt without an answer within
// AttemptTimeout is abandoned and retried, within the deadline.
func TestHungAttemptRetried(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	abandoned := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			<-r.Context().Done() // hang until the client gives up
			close(abandoned)
			return
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var retries []resources.RetryInfo
	ctx = resources.WithProgress(ctx, func(ev resources.ProgressEvent) {
		if ev.Retry != nil {
			retries = append(retries, *ev.Retry)
		}
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/slow", nil)
	tr := &httpretry.Transport{AttemptTimeout: 100 * time.Millisecond, BaseDelay: time.Millisecond}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("GET after a hung attempt: %v", err)
	}
	resp.Body.Close()
	<-abandoned
	if resp.StatusCode != 200 || len(retries) == 0 || retries[0].Cause != "no answer within 100ms" {
		t.Errorf("got %d after retries %+v; want 200 after retrying the hung attempt", resp.StatusCode, retries)
	}
}

func TestConnectionErrorsRetried(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
	}))
	defer srv.Close()
	tr := &httpretry.Transport{Base: &http.Transport{DisableKeepAlives: true}, BaseDelay: time.Millisecond}
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || calls.Load() != 2 {
		t.Errorf("got %d after %d calls, want 200 after 2", resp.StatusCode, calls.Load())
	}
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// answer is a response as a base transport gives it, of unknown length.
func answer(code int, body io.Reader) *http.Response {
	return &http.Response{
		StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Header: http.Header{}, Body: io.NopCloser(body), ContentLength: -1,
	}
}

// failingReader fails every read with err.
type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

// hangingReader blocks until ctx ends, then fails with its error.
type hangingReader struct{ ctx context.Context }

func (r hangingReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, r.ctx.Err()
}

// TestUnreplayableBodyBuffered: a body without GetBody is read once and
// sent again on every retry.
func TestUnreplayableBodyBuffered(t *testing.T) {
	t.Parallel()
	var bodies []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if len(bodies) == 1 {
			return answer(503, strings.NewReader("")), nil
		}
		return answer(200, strings.NewReader("ok")), nil
	})
	req, _ := http.NewRequestWithContext(t.Context(), "PUT", "http://api.invalid/up", struct{ io.Reader }{strings.NewReader("payload")})
	resp, err := (&httpretry.Transport{Base: base, BaseDelay: time.Millisecond}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || len(bodies) != 2 || bodies[0] != "payload" || bodies[1] != "payload" {
		t.Errorf("got %d after attempts with bodies %q, want 200 after two with %q", resp.StatusCode, bodies, "payload")
	}
}

// TestGetBodyErrorIsFinal: a body that cannot be made again ends the
// request with GetBody's own error.
func TestGetBodyErrorIsFinal(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	var calls int
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		return answer(503, strings.NewReader("")), nil
	})
	req, _ := http.NewRequestWithContext(t.Context(), "POST", "http://api.invalid/x", strings.NewReader("payload"))
	req.GetBody = func() (io.ReadCloser, error) { return nil, boom }
	resp, err := (&httpretry.Transport{Base: base, BaseDelay: time.Millisecond}).RoundTrip(req)
	if resp != nil || err != boom || calls != 1 {
		t.Errorf("RoundTrip = %v, %v after %d calls; want nil, GetBody's error after 1", resp, err, calls)
	}
}

// TestResponseReadErrors: an answer whose body cannot be read is retried
// when the failure is the connection's or the attempt's time ran out, and
// is otherwise final; the error names the request and the status.
func TestResponseReadErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		first          func(r *http.Request) io.Reader // the body of the first answer; the second is "ok"
		attemptTimeout time.Duration
		ctxTimeout     time.Duration // of the request's context; 0 means a minute
		wantCause      string        // of the retry; "" for none
		wantErr        string        // "" for a 200 "ok" answer
	}{
		"connection cut": {
			first:     func(*http.Request) io.Reader { return failingReader{io.ErrUnexpectedEOF} },
			wantCause: "reading the response: unexpected EOF",
		},
		"attempt timed out": {
			first:          func(r *http.Request) io.Reader { return hangingReader{r.Context()} },
			attemptTimeout: 50 * time.Millisecond,
			wantCause:      "reading the response: not done within 50ms",
		},
		"final error": {
			first:   func(*http.Request) io.Reader { return failingReader{errors.New("boom")} },
			wantErr: "GET /x: 200 OK: reading the response: boom",
		},
		"deadline passed": {
			first:      func(r *http.Request) io.Reader { return hangingReader{r.Context()} },
			ctxTimeout: 50 * time.Millisecond,
			wantErr:    "GET /x: 200 OK: reading the response: context deadline exceeded",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls int
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls++
				if calls == 1 {
					return answer(200, tc.first(r)), nil
				}
				return answer(200, strings.NewReader("ok")), nil
			})
			var causes []string
			ctx, cancel := context.WithTimeout(t.Context(), orDefault(tc.ctxTimeout, time.Minute))
			defer cancel()
			ctx = resources.WithProgress(ctx, func(ev resources.ProgressEvent) {
				if ev.Retry != nil {
					causes = append(causes, ev.Retry.Cause)
				}
			})
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://api.invalid/x", nil)
			tr := &httpretry.Transport{Base: base, BaseDelay: time.Millisecond, AttemptTimeout: tc.attemptTimeout}
			resp, err := tr.RoundTrip(req)
			if tc.wantErr != "" {
				if resp != nil || err == nil || err.Error() != tc.wantErr || calls != 1 || len(causes) != 0 {
					t.Errorf("RoundTrip = %v, %v after %d calls, retries %q; want the error %q after 1", resp, err, calls, causes, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(body) != "ok" || calls != 2 || len(causes) != 1 || causes[0] != tc.wantCause {
				t.Errorf("got %d %q after %d calls, retries %q; want 200 \"ok\" after 2, retrying for %q", resp.StatusCode, body, calls, causes, tc.wantCause)
			}
		})
	}
}

// orDefault returns d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// TestLastAnswerStandsAtDeadline: when the next attempt could not be made
// before the deadline, the last answer, or error, is returned.
func TestLastAnswerStandsAtDeadline(t *testing.T) {
	t.Parallel()
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	for name, tc := range map[string]struct {
		answer   func() (*http.Response, error)
		wantCode int    // 0 for an error
		wantErr  string // the error's text
	}{
		"retryable status": {answer: func() (*http.Response, error) { return answer(503, strings.NewReader("busy")), nil }, wantCode: 503},
		"connection error": {answer: func() (*http.Response, error) { return nil, reset }, wantErr: reset.Error()},
		"read error": {
			answer:  func() (*http.Response, error) { return answer(200, failingReader{io.ErrUnexpectedEOF}), nil },
			wantErr: "GET /x: 200 OK: reading the response: unexpected EOF",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			base := roundTripFunc(func(*http.Request) (*http.Response, error) {
				calls.Add(1)
				return tc.answer()
			})
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://api.invalid/x", nil)
			// A backoff of up to an hour: almost surely past the deadline.
			tr := &httpretry.Transport{Base: base, BaseDelay: time.Hour, MaxDelay: time.Hour}
			resp, err := tr.RoundTrip(req)
			if tc.wantCode != 0 {
				if err != nil || resp == nil || resp.StatusCode != tc.wantCode {
					t.Fatalf("RoundTrip = %v, %v; want the last answer, %d", resp, err, tc.wantCode)
				}
				if body, _ := io.ReadAll(resp.Body); string(body) != "busy" {
					t.Errorf("body of the last answer = %q, want %q", body, "busy")
				}
			} else if resp != nil || err == nil || err.Error() != tc.wantErr {
				t.Errorf("RoundTrip = %v, %v; want the last error %q", resp, err, tc.wantErr)
			}
			if name == "connection error" && err != reset {
				t.Errorf("error = %#v, want the base transport's own", err)
			}
			if calls.Load() < 1 {
				t.Errorf("no attempt made")
			}
		})
	}
}

// TestCancelledWhileWaiting: a context ended during the pause before a
// retry ends the request, saying what was being waited for.
func TestCancelledWhileWaiting(t *testing.T) {
	t.Parallel()
	base := roundTripFunc(func(*http.Request) (*http.Response, error) { return answer(503, strings.NewReader("")), nil })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Hour)
	defer cancel()
	var retries []resources.RetryInfo
	ctx = resources.WithProgress(ctx, func(ev resources.ProgressEvent) {
		if ev.Retry != nil {
			retries = append(retries, *ev.Retry)
			cancel()
		}
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://api.invalid/x", nil)
	resp, err := (&httpretry.Transport{Base: base, BaseDelay: time.Hour, MaxDelay: time.Hour}).RoundTrip(req)
	const want = "context canceled while waiting to retry GET /x (503 Service Unavailable)"
	if resp != nil || err == nil || err.Error() != want || !errors.Is(err, context.Canceled) {
		t.Errorf("RoundTrip = %v, %v; want the error %q", resp, err, want)
	}
	if len(retries) != 1 || retries[0].Attempt != 2 || retries[0].Cause != "503 Service Unavailable" || retries[0].Method != "GET" || retries[0].Path != "/x" {
		t.Errorf("retries reported = %+v, want one, of GET /x, attempt 2, for the 503", retries)
	}
}

// TestSendErrorIsFinal: an error of the base transport that is not the
// connection's ends the request as it is, after one attempt.
func TestSendErrorIsFinal(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	var calls int
	base := roundTripFunc(func(*http.Request) (*http.Response, error) {
		calls++
		return nil, boom
	})
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://api.invalid/x", nil)
	resp, err := (&httpretry.Transport{Base: base, BaseDelay: time.Millisecond}).RoundTrip(req)
	if resp != nil || err != boom || calls != 1 {
		t.Errorf("RoundTrip = %v, %v after %d calls; want nil, the base transport's error after 1", resp, err, calls)
	}
}

// TestFencedRetryNotSent: a request whose fence stops holding while it
// waits to be retried is not sent again, and fails with the fence's
// error; a request whose fence does not hold is never sent at all.
func TestFencedRetryNotSent(t *testing.T) {
	t.Parallel()
	lost := errors.New("the lock is lost")
	var held atomic.Bool
	held.Store(true)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		// The lock is lost while the client waits to retry.
		held.Store(false)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	ctx := resources.WithFence(t.Context(), func() error {
		if held.Load() {
			return nil
		}
		return lost
	})
	c := &http.Client{Transport: &httpretry.Transport{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}}
	req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/policy", strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the fenced request succeeded with %s after the fence fell", resp.Status)
	}
	if !errors.Is(err, lost) || !strings.Contains(err.Error(), "POST /policy not sent") {
		t.Errorf("error = %v, want the fence's, saying the POST was not sent", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d attempts reached the server, want 1: none once the fence fell", n)
	}

	// A fence that does not hold sends nothing.
	req, _ = http.NewRequestWithContext(ctx, "POST", srv.URL+"/policy", strings.NewReader("payload"))
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a request sent with a fallen fence succeeded")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d attempts reached the server, want still 1", n)
	}
}
