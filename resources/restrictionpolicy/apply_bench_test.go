package restrictionpolicy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/emulator/server"
	"github.com/reconcile-dev/reconcile/resources/restrictionpolicy"
	"github.com/reconcile-dev/reconcile/state"
)

// policiesSpec declares n independent restriction policies, each giving
// editor to roleA, the caller's role in the seed file benchSeed (Datadog
// refuses a policy that takes away the caller's own access).
func policiesSpec(n int) string {
	var b strings.Builder
	b.WriteString("resources:\n")
	for i := range n {
		fmt.Fprintf(&b, "  pol%d:\n    type: datadog:RestrictionPolicy\n    properties:\n      resourceId: dashboard:bench-%d\n      bindings:\n        - relation: editor\n          principals: [%q]\n", i, i, roleA)
	}
	return b.String()
}

// benchSeed makes roleA the role of the emulator's current user.
const benchSeed = `{"datadog": {"user": {"roleId": "00000000-0000-0000-0000-000000000001"}}}`

// loadPolicies loads policiesSpec(n) and writes benchSeed to a file,
// whose path it returns.
func loadPolicies(b *testing.B, n int) (*specs.Spec, string) {
	b.Helper()
	spec, diags := specs.Load(b.TempDir(), []specs.Source{{Name: "bench.yaml", Data: []byte(policiesSpec(n))}}, nil)
	if diags.HasErrors() {
		b.Fatal(diags.Err())
	}
	seed := filepath.Join(b.TempDir(), "seed.json")
	if err := os.WriteFile(seed, []byte(benchSeed), 0o600); err != nil {
		b.Fatal(err)
	}
	return spec, seed
}

// startPolicyEmulator starts an emulator keeping its data in dir, seeded
// from seed, its Datadog rate limit off, and returns it with a registry of
// the restriction-policy driver on it. The caller closes it.
func startPolicyEmulator(b *testing.B, dir, seed string) (*server.Server, resources.Registry) {
	b.Helper()
	srv, err := server.Start(server.Options{DataDir: dir, DatadogRateLimit: -1, SeedFile: seed})
	if err != nil {
		b.Fatal(err)
	}
	return srv, resources.Registry{Drivers: map[string]resources.Driver{
		"datadog:RestrictionPolicy": restrictionpolicy.New(restrictionpolicy.Config{BaseURL: srv.URL, APIKey: srv.Creds.DatadogAPIKey, AppKey: srv.Creds.DatadogAppKey}),
	}}
}

// BenchmarkApply10000Policies applies 10,000 new restriction policies at
// the default parallelism (10) against the emulator on loopback, its rate
// limit off and no added latency: the engine's, the store's and the
// driver's own cost per create, each create a check that no policy exists
// and the write. Only the apply is timed.
func BenchmarkApply10000Policies(b *testing.B) {
	const n = 10000
	spec, seed := loadPolicies(b, n)
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		srv, reg := startPolicyEmulator(b, dir, seed)
		st, err := state.Open(filepath.Join(dir, "state.db"), state.Options{Create: true})
		if err != nil {
			b.Fatal(err)
		}
		pl, diags := planner.Plan(b.Context(), spec, st, reg, planner.Options{})
		if diags.HasErrors() {
			b.Fatal(diags.Err())
		}
		b.StartTimer()
		start := time.Now()
		res, err := apply.Apply(b.Context(), pl, spec, st, reg, apply.Options{Command: "apply"})
		elapsed += time.Since(start)
		b.StopTimer()
		if err != nil || res.Err() != nil || res.Counts[plan.Create] != n {
			b.Fatalf("apply of %d policies: err %v, counts %v, failed %v", n, err, res.Counts, res.Failed[:min(3, len(res.Failed))])
		}
		st.Close()
		srv.Close()
		b.StartTimer()
	}
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/apply")
}

// BenchmarkPlanRefresh10000Policies times planner.Plan with refresh (at
// parallelism 10) of 10,000 restriction policies that match their specs, on
// the emulator on loopback, its rate limit off and no added latency: one
// read per policy (Datadog has no call that lists them), its comparison
// with state and the specs, and the no-op planned. The specs are loaded and
// the state open; making them (an apply of the 10,000 policies) is not
// timed. Run it with
//
//	go test ./resources/restrictionpolicy -run '^$' -bench PlanRefresh -benchmem -benchtime 3x
func BenchmarkPlanRefresh10000Policies(b *testing.B) {
	const n = 10000
	spec, seed := loadPolicies(b, n)
	dir := b.TempDir()
	srv, reg := startPolicyEmulator(b, dir, seed)
	defer srv.Close()
	st, err := state.Open(filepath.Join(dir, "state.db"), state.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	pl, diags := planner.Plan(b.Context(), spec, st, reg, planner.Options{})
	if diags.HasErrors() {
		b.Fatal(diags.Err())
	}
	if res, err := apply.Apply(b.Context(), pl, spec, st, reg, apply.Options{Command: "apply"}); err != nil || res.Err() != nil || res.Counts[plan.Create] != n {
		b.Fatalf("apply of %d policies: err %v, counts %v", n, err, res.Counts)
	}
	for b.Loop() { // the first call resets the timer
		pl, diags := planner.Plan(b.Context(), spec, st, reg, planner.Options{Refresh: true, Parallelism: 10})
		if diags.HasErrors() {
			b.Fatal(diags.Err())
		}
		if pl.HasChanges() || len(pl.Changes) != n {
			b.Fatalf("plan: %d changes (changes: %v), want %d no-ops", len(pl.Changes), pl.HasChanges(), n)
		}
		for _, c := range pl.Changes {
			if len(c.Drift) > 0 || c.DeletedOutside {
				b.Fatalf("%s: drift %v, want none", c.Addr, c.Drift)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/resource")
}
