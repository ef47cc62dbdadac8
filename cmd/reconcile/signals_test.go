package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeStopper stands for the engine's StopControl.
type fakeStopper struct {
	applying bool
	reason   atomic.Value
}

func (f *fakeStopper) Stop(reason string) (bool, int) {
	f.reason.Store(reason)
	return f.applying, 3
}

// TestWatchSignals checks the stop protocol of main: graceful on the first
// signal during an apply, at once on the second or after the grace period;
// at once when no apply runs.
func TestWatchSignals(t *testing.T) {
	t.Parallel()
	type run struct {
		sigs   chan os.Signal
		sc     *fakeStopper
		ctx    context.Context
		forced *atomic.Bool
		exited chan struct{}
		stderr *syncBuffer
	}
	start := func(applying bool, grace time.Duration) *run {
		r := &run{sigs: make(chan os.Signal, 4), sc: &fakeStopper{applying: applying}, forced: new(atomic.Bool), exited: make(chan struct{}), stderr: &syncBuffer{}}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		r.ctx = ctx
		go watchSignals(r.sigs, r.sc, cancel, r.forced, r.stderr, grace, func() { close(r.exited) })
		return r
	}
	cancelled := func(r *run, within time.Duration) bool {
		select {
		case <-r.ctx.Done():
			return true
		case <-time.After(within):
			return false
		}
	}

	t.Run("no apply: at once", func(t *testing.T) {
		t.Parallel()
		r := start(false, time.Hour)
		r.sigs <- syscall.SIGTERM
		if !cancelled(r, time.Minute) {
			t.Fatal("not cancelled")
		}
		if got := r.sc.reason.Load(); got != "SIGTERM" {
			t.Errorf("reason = %v, want SIGTERM", got)
		}
		if got := r.stderr.String(); !strings.Contains(got, "Received SIGTERM: stopping") {
			t.Errorf("message: %q", got)
		}
		r.sigs <- syscall.SIGINT
		<-r.exited
		if !r.forced.Load() {
			t.Errorf("the second signal did not force the exit")
		}
	})
	t.Run("apply: graceful, then at once", func(t *testing.T) {
		t.Parallel()
		r := start(true, time.Hour)
		r.sigs <- os.Interrupt
		if cancelled(r, 200*time.Millisecond) {
			t.Fatal("the first signal cancelled the running operations")
		}
		if got := r.stderr.String(); !strings.Contains(got, "Received SIGINT: starting no new operations; waiting up to 1h0m0s for the 3 running") {
			t.Errorf("message: %q", got)
		}
		r.sigs <- syscall.SIGTERM
		if !cancelled(r, time.Minute) {
			t.Fatal("the second signal did not cancel")
		}
		if !r.forced.Load() || !strings.Contains(r.stderr.String(), "Received SIGTERM again") {
			t.Errorf("forced %v, message %q", r.forced.Load(), r.stderr.String())
		}
		r.sigs <- syscall.SIGTERM // a third: exit now
		<-r.exited
	})
	t.Run("apply: grace period ends", func(t *testing.T) {
		t.Parallel()
		r := start(true, 100*time.Millisecond)
		r.sigs <- syscall.SIGTERM
		if !cancelled(r, time.Minute) {
			t.Fatal("not cancelled after the grace period")
		}
		if r.forced.Load() || !strings.Contains(r.stderr.String(), "did not finish within 100ms") {
			t.Errorf("forced %v, message %q", r.forced.Load(), r.stderr.String())
		}
	})
}

func TestStopGraceEnv(t *testing.T) {
	for v, want := range map[string]time.Duration{"": defaultStopGrace, "5s": 5 * time.Second, "nonsense": defaultStopGrace, "-1s": defaultStopGrace} {
		t.Setenv("RECONCILE_STOP_GRACE", v)
		var b bytes.Buffer
		if got := stopGrace(&b); got != want {
			t.Errorf("RECONCILE_STOP_GRACE=%q: %s, want %s", v, got, want)
		}
		if (v == "nonsense" || v == "-1s") != strings.Contains(b.String(), "Warning") {
			t.Errorf("RECONCILE_STOP_GRACE=%q: warning %q", v, b.String())
		}
	}
}

// blockingWriter signals each write it enters, and finishes it when told.
type blockingWriter struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.entered <- struct{}{}
	<-b.release
	return len(p), nil
}

// TestExitGate: once closed, the gate lets no write start, so that a forced
// exit never cuts a line; a write stuck (a reader that stopped reading)
// delays the close only up to its timeout.
func TestExitGate(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	g := &exitGate{w: &b}
	if _, err := g.Write([]byte("{\"type\":\"version\"}\n")); err != nil {
		t.Fatal(err)
	}
	g.close(time.Minute)
	if g.mu.TryLock() {
		t.Fatal("a write may start after the gate closed")
	}
	if b.String() != "{\"type\":\"version\"}\n" {
		t.Errorf("wrote %q", b.String())
	}

	bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	g = &exitGate{w: bw}
	go g.Write([]byte("a line being written\n"))
	<-bw.entered
	g.close(10 * time.Millisecond) // returns although the write never ends
	close(bw.release)
}
