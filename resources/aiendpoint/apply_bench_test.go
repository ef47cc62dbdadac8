package aiendpoint_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/aiendpoint"
	"github.com/reconcile-dev/reconcile/resources/emulator/server"
	"github.com/reconcile-dev/reconcile/state"
)

// endpointsSpec declares n independent endpoints in the emulator's tenancy.
func endpointsSpec(n int) string {
	var b strings.Builder
	b.WriteString("resources:\n")
	for i := range n {
		fmt.Fprintf(&b, "  ep%d:\n    type: oci:AiLanguage:Endpoint\n    properties:\n      compartmentId: %s\n      modelId: ocid1.ailanguagemodel.oc1.iad.emulatoractivemodel\n      displayName: ep-%d\n", i, server.Tenancy, i)
	}
	return b.String()
}

// applyEndpoints applies n new endpoints at the given parallelism and
// returns the wall time of the apply alone.
func applyEndpoints(tb testing.TB, srv *server.Server, dataDir string, n, parallelism int) time.Duration {
	tb.Helper()
	reg := resources.Registry{Drivers: map[string]resources.Driver{
		"oci:AiLanguage:Endpoint": aiendpoint.New(aiendpoint.Config{
			ConfigFile: filepath.Join(dataDir, "credentials", "oci_config"), Host: srv.URL, PollInterval: 100 * time.Millisecond,
		}),
	}}
	spec, diags := specs.Load(tb.TempDir(), []specs.Source{{Name: "bench.yaml", Data: []byte(endpointsSpec(n))}}, nil)
	if diags.HasErrors() {
		tb.Fatal(diags.Err())
	}
	st, err := state.Open(filepath.Join(tb.TempDir(), "state.db"), state.Options{Create: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	pl, diags := planner.Plan(tb.Context(), spec, st, reg, planner.Options{})
	if diags.HasErrors() {
		tb.Fatal(diags.Err())
	}
	start := time.Now()
	res, err := apply.Apply(tb.Context(), pl, spec, st, reg, apply.Options{Parallelism: parallelism, Command: "apply"})
	elapsed := time.Since(start)
	if err != nil || res.Err() != nil || res.Counts[plan.Create] != n {
		tb.Fatalf("apply of %d endpoints: err %v, counts %v, failed %v", n, err, res.Counts, res.Failed)
	}
	return elapsed
}

// BenchmarkApplyEndpointsEmulator applies 200 endpoints at parallelism 10
// against the emulator with 50 ms added to every call and a 500 ms
// CREATING phase, and reports how far the wall time is from the ideal
// 200/10 x the time one endpoint takes alone (ratio 1.00 is ideal).
func BenchmarkApplyEndpointsEmulator(b *testing.B) {
	const n, parallelism = 200, 10
	for b.Loop() {
		dir := b.TempDir()
		srv, err := server.Start(server.Options{DataDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		srv.Apply(server.Settings{LatencyMS: 50, CreateDelayMS: 500})
		var one time.Duration
		for range 3 { // the best of three single creates is one endpoint's own time
			d := applyEndpoints(b, srv, dir, 1, 1)
			if one == 0 || d < one {
				one = d
			}
		}
		all := applyEndpoints(b, srv, dir, n, parallelism)
		ideal := time.Duration(n/parallelism) * one
		b.ReportMetric(one.Seconds(), "s/one-endpoint")
		b.ReportMetric(all.Seconds(), "s/200-endpoints")
		b.ReportMetric(float64(all)/float64(ideal), "ratio-to-ideal")
		srv.Close()
	}
}
