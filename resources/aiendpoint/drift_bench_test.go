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

// ociRegistry is the registry of the endpoint driver pointed at srv.
func ociRegistry(srv *server.Server, dataDir string) (resources.Registry, *aiendpoint.Driver) {
	d := aiendpoint.New(aiendpoint.Config{
		ConfigFile: filepath.Join(dataDir, "credentials", "oci_config"), Host: srv.URL, PollInterval: 100 * time.Millisecond,
	})
	return resources.Registry{Drivers: map[string]resources.Driver{"oci:AiLanguage:Endpoint": d}}, d
}

// noBulk is a driver with every capability of the endpoint driver but
// BulkReader.
type noBulk struct {
	resources.Driver
	resources.Normalizer
	resources.VendorKeys
	resources.Recoverer
}

// BenchmarkDrift1000Endpoints applies 1,000 endpoints (endpointsSpec) to
// the emulator without latency, then adds 50 ms to every call and times
// refresh.Drift over them at parallelism 10, reading each endpoint alone:
// the driver's bulk read is hidden, as for objects that cannot be listed
// (BenchmarkDriftLatency2000Endpoints times it). It reports one read's own
// time (the best of three), the drift's wall time, and how far that is
// from the ideal 1000/10 x one read (ratio 1.00 is ideal). Run it with
//
//	go test ./resources/aiendpoint -run '^$' -bench Drift1000 -benchtime 1x
func BenchmarkDrift1000Endpoints(b *testing.B) {
	const n, parallelism = 1000, 10
	for b.Loop() {
		dir := b.TempDir()
		srv, err := server.Start(server.Options{DataDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		reg, driver := ociRegistry(srv, dir)
		reg.Drivers["oci:AiLanguage:Endpoint"] = noBulk{driver, driver, driver, driver}
		spec, diags := specs.Load(b.TempDir(), []specs.Source{{Name: "bench.yaml", Data: []byte(endpointsSpec(n))}}, nil)
		if diags.HasErrors() {
			b.Fatal(diags.Err())
		}
		st, err := state.Open(filepath.Join(b.TempDir(), "state.db"), state.Options{Create: true})
		if err != nil {
			b.Fatal(err)
		}
		pl, diags := planner.Plan(b.Context(), spec, st, reg, planner.Options{})
		if diags.HasErrors() {
			b.Fatal(diags.Err())
		}
		res, err := apply.Apply(b.Context(), pl, spec, st, reg, apply.Options{Parallelism: 20, Command: "apply"})
		if err != nil || res.Err() != nil || res.Counts[plan.Create] != n {
			b.Fatalf("apply of %d endpoints: err %v, counts %v, failed %v", n, err, res.Counts, res.Failed)
		}
		recs, err := st.List()
		if err != nil {
			b.Fatal(err)
		}

		srv.Apply(server.Settings{LatencyMS: 50})
		var one time.Duration
		for i := range 3 {
			start := time.Now()
			if _, err := driver.Read(b.Context(), recs[i].ID); err != nil {
				b.Fatal(err)
			}
			if d := time.Since(start); one == 0 || d < one {
				one = d
			}
		}
		start := time.Now()
		rep, err := refresh.Drift(b.Context(), spec, st, reg, parallelism)
		all := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Checked != n || rep.HasDrift() || len(rep.Errors) > 0 {
			b.Fatalf("drift: checked %d, %d drifted, errors %v; want %d checked and no drift", rep.Checked, len(rep.Items), rep.Errors, n)
		}
		ideal := time.Duration(n/parallelism) * one
		b.ReportMetric(one.Seconds(), "s/one-read")
		b.ReportMetric(all.Seconds(), "s/drift-1000")
		b.ReportMetric(float64(all)/float64(ideal), "ratio-to-ideal")
		st.Close()
		srv.Close()
	}
}
