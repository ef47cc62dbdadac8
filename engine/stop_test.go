package engine_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/refresh"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// chain is a spec of endpoints, each depending on the one before.
func chain(names ...string) string {
	var rs []string
	for i, n := range names {
		if i == 0 {
			rs = append(rs, endpoint(n, n))
		} else {
			rs = append(rs, endpoint(n, n, "description: ${"+names[i-1]+".id}"))
		}
	}
	return resourcesOf(rs...)
}

// applyCtx plans src and applies it with ctx, in the background.
func (h *harness) applyCtx(ctx context.Context, src string, opts apply.Options) <-chan *report.Apply {
	h.t.Helper()
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		h.t.Fatal(err)
	}
	spec := h.load(src)
	p, diags := planner.Plan(h.t.Context(), spec, st, h.reg, planner.Options{})
	if diags.HasErrors() {
		st.Close()
		h.t.Fatalf("plan: %v", diags.Err())
	}
	done := make(chan *report.Apply, 1)
	go func() {
		res, err := apply.Apply(ctx, p, spec, st, h.reg, opts)
		if err != nil {
			h.t.Error(err)
		}
		st.Close() // before the test reads the state
		done <- res
	}()
	return done
}

// TestApplyGracefulStop: once stopped, apply starts nothing new, lets the
// running create finish and records it, and says what it left undone.
func TestApplyGracefulStop(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	c.block, c.started = make(chan struct{}), make(chan string, 10)
	h.useCloud(c)
	sc := apply.NewStopControl()
	src := chain("a", "b", "c")
	done := h.applyCtx(apply.WithStopControl(t.Context(), sc), src, apply.Options{Command: "apply"})
	if got := <-c.started; got != "a" {
		t.Fatalf("first create = %s, want a", got)
	}
	applying, running := sc.Stop("interrupt")
	if !applying || running != 1 {
		t.Errorf("Stop = applying %v, %d running; want true, 1", applying, running)
	}
	close(c.block) // a's create finishes after the stop
	res := <-done
	if res.Counts[plan.Create] != 1 || !reflect.DeepEqual(res.NotStarted, []string{"b", "c"}) || len(res.Interrupted) != 0 || len(res.Failed) != 0 {
		t.Errorf("result: counts %v, not started %v, interrupted %v, failed %v; want a created, b and c not started", res.Counts, res.NotStarted, res.Interrupted, res.Failed)
	}
	if res.Stopped != "stopped by interrupt" || res.Err() == nil || res.Complete() {
		t.Errorf("Stopped = %q, Err = %v; want stopped by interrupt, an error", res.Stopped, res.Err())
	}
	if r := h.record("a"); r.ID == "" {
		t.Errorf("a's create finished but is not recorded")
	}
	if len(h.intents()) != 0 {
		t.Errorf("intents left: %v", h.intents())
	}
	// The next apply carries on.
	c.block = nil
	h.mustApply(src)
	if n := c.createCount(); n != 3 {
		t.Errorf("%d creates, want 3", n)
	}
}

// TestApplyCancelInterrupts: cancelling the context abandons the running
// create; its intent stays for the next run, which finds it made nothing
// and creates it.
func TestApplyCancelInterrupts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	c.block, c.started = make(chan struct{}), make(chan string, 10)
	h.useCloud(c)
	ctx, cancel := context.WithCancel(t.Context())
	src := resourcesOf(endpoint("a", "a"), endpoint("b", "b", "description: ${a.id}"))
	done := h.applyCtx(ctx, src, apply.Options{Command: "apply"})
	<-c.started
	cancel()
	res := <-done
	if len(res.Interrupted) != 1 || res.Interrupted[0].Addr != "a" || !reflect.DeepEqual(res.NotStarted, []string{"b"}) || res.Stopped != "cancelled" {
		t.Fatalf("result: interrupted %v, not started %v, stopped %q; want a interrupted, b not started, cancelled", res.Interrupted, res.NotStarted, res.Stopped)
	}
	if !strings.Contains(res.Interrupted[0].Err.Error(), "next apply") {
		t.Errorf("a's error %q does not say that the next apply finds out", res.Interrupted[0].Err)
	}
	if ins := h.intents(); len(ins) != 1 || ins[0].Name != "a" {
		t.Fatalf("intents = %v, want a's kept", ins)
	}
	if got := outcomes(h.resolve()); got != "a:cleared" {
		t.Errorf("ResolveIntents = %q, want a:cleared", got)
	}
	c.block = nil
	h.mustApply(src)
	if n := c.createCount(); n != 2 {
		t.Errorf("%d creates, want 2", n)
	}
	hs := h.history()
	if last := hs[0]; last.Counts.Interrupted != 1 || last.Counts.NotStarted != 1 {
		t.Errorf("history of the cancelled apply = %+v, want 1 interrupted, 1 not started", last)
	}
}

// TestApplyRetriesShown: every retry the driver reports shows as a
// progress event at once.
func TestApplyRetriesShown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cloud.failCreate = nil
	var events []report.Event
	h.reg.Drivers[endpointToken] = retryingDriver{h.cloud}
	_, res := h.applyWith(resourcesOf(endpoint("a", "a")), planner.Options{}, apply.Options{Command: "apply",
		Observer: func(e report.Event) { events = append(events, e) }})
	if !res.Complete() {
		t.Fatalf("apply: %v", res.Failed)
	}
	var msgs []string
	var retries []*report.Retry
	for _, e := range events {
		if e.Phase == report.Running {
			msgs = append(msgs, e.Message)
			retries = append(retries, e.Retry)
		}
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "retrying in") {
		t.Errorf("running events %q, want the one retry", msgs)
	}
	// The event carries the retry itself, for the event stream.
	want := report.Retry{Method: "POST", Path: "/20221001/endpoints", Cause: "503 Service Unavailable", Attempt: 2, Wait: 10 * time.Millisecond}
	if len(retries) != 1 || retries[0] == nil || *retries[0] != want {
		t.Errorf("running events carry retries %+v, want one %+v", retries, want)
	}
}

func (h *harness) history() []state.HistoryEntry {
	h.t.Helper()
	var hs []state.HistoryEntry
	var err error
	h.reading(func(st *state.Store) { hs, err = st.History() })
	if err != nil {
		h.t.Fatal(err)
	}
	return hs
}

// retryingDriver reports one retry in each create, as httpretry does.
type retryingDriver struct{ *fakeCloud }

func (d retryingDriver) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	resources.ReportRetry(ctx, resources.RetryInfo{Method: "POST", Path: "/20221001/endpoints", Cause: "503 Service Unavailable", Attempt: 2, Wait: 10 * time.Millisecond})
	return d.fakeCloud.Create(ctx, want)
}

// lapsingStore is a state whose lock lapses when told to, as an etcd
// store's does once its lease expired while the process was stopped.
type lapsingStore struct {
	*state.Store
	lapsed chan struct{}
}

func (s *lapsingStore) Held() error {
	select {
	case <-s.lapsed:
		return state.ErrLockLost
	default:
		return nil
	}
}

// TestApplyStartsNothingOnceLockLost: once the state's lock may have
// lapsed, apply starts no change in the cloud (which no state write could
// fence): the create running goes on to its end, the next one is not
// started and fails naming the lost lock, its intent stays for the run that
// holds the lock now, and nothing after it starts.
func TestApplyStartsNothingOnceLockLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	c.block, c.started = make(chan struct{}), make(chan string, 10)
	h.useCloud(c)
	bolt, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	st := &lapsingStore{Store: bolt, lapsed: make(chan struct{})}
	spec := h.load(resourcesOf(endpoint("a", "a"), endpoint("b", "b", "description: ${a.id}"), endpoint("c", "c", "description: ${b.id}")))
	p, diags := planner.Plan(t.Context(), spec, st, h.reg, planner.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	done := make(chan *report.Apply, 1)
	go func() {
		res, err := apply.Apply(t.Context(), p, spec, st, h.reg, apply.Options{Command: "apply"})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	if got := <-c.started; got != "a" {
		t.Fatalf("first create = %s, want a", got)
	}
	close(st.lapsed)
	close(c.block)
	res := <-done
	ins, err := bolt.Intents()
	bolt.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n := c.createCount(); n != 1 {
		t.Errorf("%d creates reached the cloud, want 1: none after the lock lapsed", n)
	}
	if len(res.Failed) != 1 || res.Failed[0].Addr != "b" || !errors.Is(res.Failed[0].Err, state.ErrLockLost) {
		t.Errorf("failed = %v, want b failing with the lost lock", res.Failed)
	}
	if !reflect.DeepEqual(res.Skipped, []string{"c"}) {
		t.Errorf("skipped = %v, want [c]", res.Skipped)
	}
	if len(ins) != 1 || ins[0].Name != "b" {
		t.Errorf("intents = %+v, want b's, for the run that holds the lock now", ins)
	}
}

// retryingReader reports one retry in each read, as httpretry does.
type retryingReader struct{ *fakeCloud }

func (d retryingReader) Read(ctx context.Context, id string) (resources.Attrs, error) {
	resources.ReportRetry(ctx, resources.RetryInfo{Method: "GET", Path: "/20221001/endpoints/" + id, Cause: "503 Service Unavailable", Attempt: 2})
	return d.fakeCloud.Read(ctx, id)
}

// retryingLookup reports one retry in each call.
type retryingLookup struct{ *fakeFunc }

func (f retryingLookup) Invoke(ctx context.Context, args resources.Attrs) (resources.Attrs, error) {
	resources.ReportRetry(ctx, resources.RetryInfo{Method: "GET", Path: "/api/v2/current_user", Cause: "429 Too Many Requests", Attempt: 2})
	return f.fakeFunc.Invoke(ctx, args)
}

// TestRefreshRetriesNameTheirNode: a retry of a call made outside an
// operation (a plan's refresh of a resource, its lookups; drift's reads)
// names the node the call was for, so that the event stream can say whose
// it is.
func TestRefreshRetriesNameTheirNode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := "variables:\n  me:\n    fn::invoke:\n      function: datadog:getCurrentUser\n" + resourcesOf(endpoint("a", "a"))
	h.mustApply(src)
	h.reg.Drivers[endpointToken] = retryingReader{h.cloud}
	h.reg.Functions[userToken] = retryingLookup{h.user}
	var mu sync.Mutex
	var nodes []string
	ctx := resources.WithProgress(t.Context(), func(ev resources.ProgressEvent) {
		if ev.Retry != nil {
			mu.Lock()
			nodes = append(nodes, ev.Node)
			mu.Unlock()
		}
	})
	h.reading(func(st *state.Store) {
		if _, diags := planner.Plan(ctx, h.load(src), st, h.reg, planner.Options{Refresh: true}); diags.HasErrors() {
			t.Fatal(diags.Err())
		}
	})
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"a", "me"}) {
		t.Errorf("the plan's retries name %q, want the resource and the lookup", nodes)
	}
	nodes = nil
	h.reading(func(st *state.Store) {
		if _, err := refresh.Drift(ctx, h.load(src), st, h.reg, 10); err != nil {
			t.Fatal(err)
		}
	})
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"a", "me"}) {
		t.Errorf("drift's retries name %q, want the resource and the lookup", nodes)
	}
}
