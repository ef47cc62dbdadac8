package httpretry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reconcile/resources"
	"reconcile/resources/httpretry"
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
	var msgs []string
	ctx := resources.WithProgress(context.Background(), func(ev resources.ProgressEvent) {
		if ev.Retry != nil {
			msgs = append(msgs, ev.Message)
		}
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/x", nil)
	start := time.Now()
	resp, err := (&http.Client{Transport: &httpretry.Transport{BaseDelay: time.Millisecond}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("waited %v, want at least the 1s Retry-After", waited)
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "429") {
		t.Errorf("progress messages = %q, want one naming the 429", msgs)
	}
}

func TestDeadlineStopsRetrying(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(503)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := (&http.Client{Transport: &httpretry.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || calls.Load() != 1 {
		t.Errorf("got %d after %d calls; want the 503 returned at once when the hint passes the deadline", resp.StatusCode, calls.Load())
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
