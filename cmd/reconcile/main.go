// Command reconcile manages cloud resources declared in YAML specs: it
// validates them, plans the changes against a local state file, applies
// them, and reports drift.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
	"github.com/reconcile-dev/reconcile/resources"
)

// exitInterrupted is the exit status of a run stopped at once by a second
// signal (128 + SIGINT, as shells report an interrupted command).
const exitInterrupted = 130

// defaultStopGrace is how long a stopped apply lets its running operations
// go on before it abandons them; RECONCILE_STOP_GRACE overrides it. It is
// shorter than the 30 s most CI systems and Kubernetes wait between SIGTERM
// and SIGKILL, so that state is saved before the kill.
const defaultStopGrace = 20 * time.Second

func main() {
	grace := stopGrace(os.Stderr)
	sc := apply.NewStopControl()
	ctx, cancel := context.WithCancel(context.Background())
	ctx = apply.WithStopControl(ctx, sc)
	ctx = resources.WithProgress(ctx, retryReporter(os.Stderr))
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var forced atomic.Bool
	stdout := &exitGate{w: os.Stdout}
	go watchSignals(sigs, sc, cancel, &forced, os.Stderr, grace, func() {
		stdout.close(2 * time.Second)
		os.Exit(exitInterrupted)
	})
	code := run(ctx, os.Args[1:], os.Stdin, stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	if forced.Load() && code != exitOK {
		code = exitInterrupted
	}
	os.Exit(code)
}

// retryReporter prints the retries of cloud calls made outside an apply's
// operations (plans, refreshes, lookups, drift), which report their own in
// their progress lines, so that throttling and transient faults show.
func retryReporter(w io.Writer) func(resources.ProgressEvent) {
	var mu sync.Mutex
	return func(ev resources.ProgressEvent) {
		if ev.Retry == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "Retrying: %s\n", untrusted.Text(ev.Message))
	}
}

// stopGrace reads RECONCILE_STOP_GRACE.
func stopGrace(stderr io.Writer) time.Duration {
	v := os.Getenv("RECONCILE_STOP_GRACE")
	if v == "" {
		return defaultStopGrace
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		fmt.Fprintf(stderr, "Warning: RECONCILE_STOP_GRACE=%q is not a duration such as 20s; using %s\n", v, defaultStopGrace)
		return defaultStopGrace
	}
	return d
}

// watchSignals carries out the stop on SIGINT and SIGTERM. The first
// signal during an apply (or destroy) stops it gracefully: it starts no new
// operation and the running ones go on for up to grace, after which they
// are abandoned (their context is cancelled); state is saved after each one
// that ends, and the command exits 1 listing what was left undone. A second
// signal abandons them at once, and the command exits 130; if it has not
// ended a few seconds later (or on a third signal) exit is called. A signal
// while no apply runs (validating, planning, drift, emulate) cancels at
// once, as nothing is half done; exit is called on a second signal or 10 s
// later.
func watchSignals(sigs <-chan os.Signal, sc stopper, cancel context.CancelFunc, forced *atomic.Bool, stderr io.Writer, grace time.Duration, exit func()) {
	sig := <-sigs
	applying, running := sc.Stop(signalName(sig))
	if !applying {
		// Nothing is half done: stop at once, in one line rather than one
		// error per node the cancellation reaches.
		fmt.Fprintf(stderr, "\nReceived %s: stopping.\n", signalName(sig))
		cancel()
		// Whatever does not end when its context does (a read blocked
		// on a named pipe) is not waited for long.
		select {
		case <-sigs:
		case <-time.After(10 * time.Second):
		}
		forced.Store(true)
		exit()
		return
	}
	fmt.Fprintf(stderr, "\nReceived %s: starting no new operations; waiting up to %s for the %d running to finish, then abandoning them. Press Ctrl-C again (or send another SIGINT or SIGTERM) to stop at once.\n",
		signalName(sig), grace, running)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case sig = <-sigs:
		forced.Store(true)
		fmt.Fprintf(stderr, "\nReceived %s again: abandoning the running operations now.\n", signalName(sig))
		cancel()
		select {
		case <-sigs:
		case <-time.After(5 * time.Second):
		}
		exit()
	case <-timer.C:
		fmt.Fprintf(stderr, "\nThe running operations did not finish within %s: abandoning them.\n", grace)
		cancel()
		<-sigs
		forced.Store(true)
		exit()
	}
}

// exitGate is stdout as main hands it to run: an exit forced by a signal
// closes it first, so that the process never ends in the middle of a write
// (each event of --output jsonl is one write: every line written is whole).
type exitGate struct {
	mu sync.Mutex
	w  io.Writer
}

func (g *exitGate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.w.Write(p)
}

// close waits for the write under way, if any, up to timeout (a reader of
// stdout may have stopped reading), and lets no other start.
func (g *exitGate) close(timeout time.Duration) {
	locked := make(chan struct{})
	go func() {
		g.mu.Lock() // never unlocked: the process exits
		close(locked)
	}()
	select {
	case <-locked:
	case <-time.After(timeout):
	}
}

// stopper is what watchSignals needs of an apply.StopControl.
type stopper interface {
	Stop(reason string) (applying bool, running int)
}

func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}
