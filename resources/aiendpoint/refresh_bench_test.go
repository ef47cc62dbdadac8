package aiendpoint_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/refresh"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/aiendpoint"
	"github.com/reconcile-dev/reconcile/resources/emulator/server"
	"github.com/reconcile-dev/reconcile/state"
)

// endpointsFixture is an emulator holding n endpoints that an apply of
// endpointsSpec(n) made, and the state that apply left.
type endpointsFixture struct {
	srv    *server.Server
	reg    resources.Registry
	driver *aiendpoint.Driver
	spec   *specs.Spec
	st     *state.Store
	recs   []state.Record
}

// newEndpointsFixture applies endpointsSpec(n) to a new emulator without
// latency, 50 creates at once: about a second per 100 endpoints, as each
// create signs three calls and syncs the emulator's and the state's files.
func newEndpointsFixture(b *testing.B, n int) *endpointsFixture {
	b.Helper()
	dir := b.TempDir()
	srv, err := server.Start(server.Options{DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	reg, driver := ociRegistry(srv, dir)
	spec, diags := specs.Load(b.TempDir(), []specs.Source{{Name: "bench.yaml", Data: []byte(endpointsSpec(n))}}, nil)
	if diags.HasErrors() {
		b.Fatal(diags.Err())
	}
	st, err := state.Open(filepath.Join(b.TempDir(), "state.db"), state.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	pl, diags := planner.Plan(b.Context(), spec, st, reg, planner.Options{})
	if diags.HasErrors() {
		b.Fatal(diags.Err())
	}
	res, err := apply.Apply(b.Context(), pl, spec, st, reg, apply.Options{Parallelism: 50, Command: "apply"})
	if err != nil || res.Err() != nil || res.Counts[plan.Create] != n {
		b.Fatalf("apply of %d endpoints: err %v, counts %v, failed %v", n, err, res.Counts, res.Failed)
	}
	recs, err := st.List()
	if err != nil {
		b.Fatal(err)
	}
	return &endpointsFixture{srv: srv, reg: reg, driver: driver, spec: spec, st: st, recs: recs}
}

// planNoChange plans with refresh at parallelism 10, and fails b unless
// the plan changes nothing.
func (f *endpointsFixture) planNoChange(b *testing.B) {
	b.Helper()
	pl, diags := planner.Plan(b.Context(), f.spec, f.st, f.reg, planner.Options{Refresh: true, Parallelism: 10})
	if diags.HasErrors() {
		b.Fatal(diags.Err())
	}
	if pl.HasChanges() || len(pl.Changes) != len(f.recs) {
		b.Fatalf("plan: %d changes (changes: %v), want %d no-ops", len(pl.Changes), pl.HasChanges(), len(f.recs))
	}
	for _, c := range pl.Changes {
		if c.Action != plan.NoOp || len(c.Drift) > 0 || c.DeletedOutside {
			b.Fatalf("%s: %s (drift %v), want a no-op without drift", c.Addr, c.Action, c.Drift)
		}
	}
}

// BenchmarkPlanRefresh10000Endpoints times planner.Plan with refresh (at
// parallelism 10) of 10,000 endpoints that match their specs, on the
// emulator on loopback without added latency: one no-change plan, the
// specs already loaded and the state open. Besides the wall time it
// reports the CPU time of the process, the plan's and the emulator's (the
// emulator keeps the endpoints it decoded while they do not change, as
// from one plan to the next here). Making the fixture (an apply of the
// 10,000 endpoints) takes one to three minutes and is not timed. Run it
// with
//
//	go test ./resources/aiendpoint -run '^$' -bench PlanRefresh10000 -benchtime 5x
func BenchmarkPlanRefresh10000Endpoints(b *testing.B) {
	f := newEndpointsFixture(b, 10000)
	cpu := cpuTime()
	for b.Loop() {
		f.planNoChange(b)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/plan")
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/plan")
}

// BenchmarkDriftLatency2000Endpoints times refresh.Drift of 2,000
// endpoints at parallelism 10, with 50 ms added to every call of the
// emulator, as a remote API would. Read one at a time, 2,000 endpoints
// take 2000/10 x 50 ms = 10 s at best, and 10,000 take 50 s. It reports
// the drift's wall time, and that time times 5 as an estimate for 10,000
// endpoints: both reading one by one and listing a compartment, a page of
// 1,000 after another, grow linearly with the number of endpoints. Making
// the fixture (an apply of the 2,000 endpoints without latency, about 20
// s) is not timed. Run it with
//
//	go test ./resources/aiendpoint -run '^$' -bench DriftLatency2000 -benchtime 3x
func BenchmarkDriftLatency2000Endpoints(b *testing.B) {
	const n, parallelism = 2000, 10
	f := newEndpointsFixture(b, n)
	f.srv.Apply(server.Settings{LatencyMS: 50})
	for b.Loop() {
		rep, err := refresh.Drift(b.Context(), f.spec, f.st, f.reg, parallelism)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Checked != n || rep.HasDrift() || len(rep.Errors) > 0 {
			b.Fatalf("drift: checked %d, %d drifted, errors %v; want %d checked and no drift", rep.Checked, len(rep.Items), rep.Errors, n)
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "s/drift-2000")
	b.ReportMetric(5*per.Seconds(), "s/drift-10000-est")
}
