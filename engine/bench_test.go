package engine_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/internal/benchspec"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
)

// chainDepth is how many resources each generated chain holds.
const chainDepth = benchspec.ChainDepth

// benchSizes are the resource counts of the plan and validate benchmarks.
var benchSizes = []int{1000, 10000, 20000}

// genName is the name of the i-th generated resource.
func genName(i int) string { return fmt.Sprintf("ep%05d", i) }

// genSpec returns a spec of n oci:AiLanguage:Endpoint resources in chains
// of chainDepth: each resource but the first of its chain refers to the
// one before it with ${prev.id} in its description.
func genSpec(n int) []byte {
	var b strings.Builder
	b.Grow(n * 256)
	b.WriteString("config:\n  compartment:\n    type: string\n    default: ocid1.compartment.oc1..bench\nresources:\n")
	for i := range n {
		fmt.Fprintf(&b, "  %s:\n    type: oci:AiLanguage:Endpoint\n    properties:\n", genName(i))
		b.WriteString("      compartmentId: ${compartment}\n      modelId: ocid1.ailanguagemodel.oc1..bench\n")
		fmt.Fprintf(&b, "      displayName: endpoint-%d\n", i)
		if i%chainDepth != 0 {
			fmt.Fprintf(&b, "      description: ${%s.id}\n", genName(i-1))
		}
	}
	return []byte(b.String())
}

// genID is the id the benchmarks give the i-th generated resource.
func genID(i int) string { return "ocid1.ailanguageendpoint.oc1..bench" + fmt.Sprint(i) }

// genRecords returns the state records of genSpec(n) as an apply would
// leave them.
func genRecords(n int) []state.Record {
	recs := make([]state.Record, n)
	for i := range n {
		in := map[string]any{
			"compartmentId":  "ocid1.compartment.oc1..bench",
			"modelId":        "ocid1.ailanguagemodel.oc1..bench",
			"displayName":    fmt.Sprintf("endpoint-%d", i),
			"inferenceUnits": int64(1),
		}
		var deps []string
		if i%chainDepth != 0 {
			in["description"] = genID(i - 1)
			deps = []string{genName(i - 1)}
		}
		recs[i] = state.Record{Name: genName(i), Type: endpointToken, Kind: kind.Resource, ID: genID(i),
			Inputs: in, Outputs: map[string]any{"id": genID(i), "state": "ACTIVE", "projectId": "ocid1.project"}, Dependencies: deps}
	}
	return recs
}

// benchStates numbers the states the benchmarks make, so that each is new.
var benchStates atomic.Int64

// backend is a kind of state store the benchmarks run on.
type backend struct {
	name string
	// open opens the state named name, the same one for the same name.
	open func(tb testing.TB, name string, opts state.Options) benchStore
}

// benchStore is a state the benchmarks open and close.
type benchStore interface {
	state.Backend
	Close() error
}

// benchBackends returns the backends to run a benchmark on: a bbolt file
// in a temporary directory, and a stack on a one-member etcd started for
// the benchmark, in this process, on loopback.
func benchBackends(b *testing.B) []backend {
	dir := b.TempDir()
	var endpoints []string
	return []backend{
		{"bbolt", func(tb testing.TB, name string, opts state.Options) benchStore {
			st, err := state.Open(filepath.Join(dir, name+".db"), opts)
			if err != nil {
				tb.Fatal(err)
			}
			return st
		}},
		{"etcd", func(tb testing.TB, name string, opts state.Options) benchStore {
			if endpoints == nil {
				endpoints = etcdtest.Start(b)
			}
			st, err := etcdstate.Open(tb.Context(), etcdstate.Options{Endpoints: endpoints, Prefix: "/bench", Stack: name, Options: opts})
			if err != nil {
				tb.Fatal(err)
			}
			return st
		}},
	}
}

// writeRecords puts recs into a new state, from many goroutines so that
// the store commits them in groups.
func writeRecords(tb testing.TB, st state.Backend, recs []state.Record) {
	tb.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	work := make(chan state.Record)
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				if _, err := st.Put(r); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for _, r := range recs {
		work <- r
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		tb.Fatal(err)
	default:
	}
}

func loadGenerated(tb testing.TB, src []byte) *specs.Spec {
	tb.Helper()
	spec, diags := specs.Load(tb.TempDir(), []specs.Source{{Name: "bench.yaml", Data: src}}, nil)
	if diags.HasErrors() {
		tb.Fatalf("load: %v", diags.Err())
	}
	return spec
}

// peakHeap samples HeapInuse while it runs, for a benchmark to report the
// highest value seen (and the value at start) in MiB.
type peakHeap struct {
	stop chan struct{}
	done chan struct{}
	peak atomic.Uint64
}

func startPeakHeap() *peakHeap {
	p := &peakHeap{stop: make(chan struct{}), done: make(chan struct{})}
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		for {
			old := p.peak.Load()
			if ms.HeapInuse <= old || p.peak.CompareAndSwap(old, ms.HeapInuse) {
				return
			}
		}
	}
	sample()
	go func() {
		defer close(p.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				sample()
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return p
}

// cpuMeter measures the CPU time the process uses (user and system, every
// thread) from its start: on a shared machine it moves less than the time
// between start and end, which counts the time other processes run.
type cpuMeter struct{ start time.Duration }

func startCPU() cpuMeter { return cpuMeter{start: cpuUsed()} }

func cpuUsed() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report reports the CPU time per op as "cpu-ns/op".
func (c cpuMeter) report(b *testing.B) {
	b.ReportMetric(float64((cpuUsed()-c.start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// heapLive returns the bytes the heap holds after a full collection.
func heapLive() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// reportLive reports as "live-heap-MiB" what the heap holds now beyond
// base, with keep (the specs and the plan) still reachable: unlike the
// peak, it does not depend on when the collector ran.
func reportLive(b *testing.B, base uint64, keep ...any) {
	live := heapLive()
	runtime.KeepAlive(keep)
	b.ReportMetric(float64(live-min(live, base))/(1<<20), "live-heap-MiB")
}

// report stops sampling and reports the peak as "peak-heap-MiB".
func (p *peakHeap) report(b *testing.B) {
	close(p.stop)
	<-p.done
	b.ReportMetric(float64(p.peak.Load())/(1<<20), "peak-heap-MiB")
}

func BenchmarkValidate(b *testing.B) { benchValidate(b, genSpec) }

// BenchmarkValidatePolicies is BenchmarkValidate of restriction policies,
// whose bindings are lists of objects.
func BenchmarkValidatePolicies(b *testing.B) { benchValidate(b, benchspec.Policies) }

func benchValidate(b *testing.B, gen func(n int) []byte) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			src := gen(n)
			dir := b.TempDir()
			srcs := []specs.Source{{Name: "bench.yaml", Data: src}}
			runtime.GC()
			peak := startPeakHeap()
			cpu := startCPU()
			b.ResetTimer()
			for b.Loop() {
				spec, diags := specs.Load(dir, srcs, nil)
				if diags.HasErrors() || len(spec.Resources) != n {
					b.Fatalf("load: %v, %d resources", diags.Err(), len(spec.Resources))
				}
			}
			b.StopTimer()
			cpu.report(b)
			peak.report(b)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/resource")
		})
	}
}

func BenchmarkPlanNoRefresh(b *testing.B) {
	for _, be := range benchBackends(b) {
		for _, n := range benchSizes {
			if be.name == "etcd" && n > 10000 {
				continue // writing the state would take most of make bench's time
			}
			b.Run(fmt.Sprintf("%s/N=%d", be.name, n), func(b *testing.B) { benchPlanNoRefresh(b, be, n) })
		}
	}
}

func benchPlanNoRefresh(b *testing.B, be backend, n int) {
	base := heapLive()
	name := fmt.Sprintf("plan%d", benchStates.Add(1))
	w := be.open(b, name, state.Options{Create: true})
	writeRecords(b, w, genRecords(n))
	w.Close()
	spec := loadGenerated(b, genSpec(n))
	st := be.open(b, name, state.Options{ReadOnly: true})
	defer st.Close()
	reg := resources.Registry{Drivers: map[string]resources.Driver{endpointToken: newBenchDriver()}}
	opts := planner.Options{Refresh: false}

	// Outside the timer: the state is up to date, so every change
	// is a no-op.
	p, diags := planner.Plan(b.Context(), spec, st, reg, opts)
	if diags.HasErrors() {
		b.Fatalf("plan: %v", diags.Err())
	}
	if len(p.Changes) != n || p.HasChanges() {
		b.Fatalf("plan has %d changes (changes: %v), want %d no-ops", len(p.Changes), p.HasChanges(), n)
	}
	for _, c := range p.Changes {
		if c.Action != plan.NoOp {
			b.Fatalf("%s: %s, want no-op", c.Addr, c.Action)
		}
	}
	p = nil
	runtime.GC()
	peak := startPeakHeap()
	cpu := startCPU()
	b.ResetTimer()
	for b.Loop() {
		if p, diags = planner.Plan(b.Context(), spec, st, reg, opts); diags.HasErrors() {
			b.Fatal(diags.Err())
		}
	}
	b.StopTimer()
	cpu.report(b)
	peak.report(b)
	reportLive(b, base, spec, p)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/resource")
}

// BenchmarkPlanFloor measures what no plan can avoid: reading the spec
// file of genSpec(n) from disk, parsing it with yaml.v3 into nodes (as the
// loader does) and hashing it. BenchmarkPlanNoRefresh and
// BenchmarkLoadPlanNoRefresh are read against it.
func BenchmarkPlanFloor(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			file := filepath.Join(b.TempDir(), "bench.yaml")
			if err := os.WriteFile(file, genSpec(n), 0o600); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			peak := startPeakHeap()
			cpu := startCPU()
			b.ResetTimer()
			for b.Loop() {
				data, err := os.ReadFile(file)
				if err != nil {
					b.Fatal(err)
				}
				dec := yaml.NewDecoder(bytes.NewReader(data))
				docs := 0
				for {
					var doc yaml.Node
					if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					docs++
				}
				sum := sha256.Sum256(data)
				if docs != 1 || sum == [sha256.Size]byte{} {
					b.Fatalf("%d documents", docs)
				}
			}
			b.StopTimer()
			cpu.report(b)
			peak.report(b)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/resource")
		})
	}
}

// BenchmarkLoadPlanNoRefresh is what `reconcile plan --refresh=false`
// does in the engine, on a bbolt state that is up to date: read the spec
// file, load it and plan.
func BenchmarkLoadPlanNoRefresh(b *testing.B) {
	be := benchBackends(b)[0]
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("%s/N=%d", be.name, n), func(b *testing.B) {
			name := fmt.Sprintf("loadplan%d", benchStates.Add(1))
			w := be.open(b, name, state.Options{Create: true})
			writeRecords(b, w, genRecords(n))
			w.Close()
			dir := b.TempDir()
			file := filepath.Join(dir, "bench.yaml")
			if err := os.WriteFile(file, genSpec(n), 0o600); err != nil {
				b.Fatal(err)
			}
			st := be.open(b, name, state.Options{ReadOnly: true})
			defer st.Close()
			reg := resources.Registry{Drivers: map[string]resources.Driver{endpointToken: newBenchDriver()}}
			base := heapLive()
			peak := startPeakHeap()
			cpu := startCPU()
			b.ResetTimer()
			var spec *specs.Spec
			var p *plan.Plan
			for b.Loop() {
				data, err := os.ReadFile(file)
				if err != nil {
					b.Fatal(err)
				}
				var diags diag.Diagnostics
				if spec, diags = specs.Load(dir, []specs.Source{{Name: "bench.yaml", Data: data}}, nil); diags.HasErrors() {
					b.Fatal(diags.Err())
				}
				p, diags = planner.Plan(b.Context(), spec, st, reg, planner.Options{Refresh: false})
				if diags.HasErrors() || len(p.Changes) != n || p.HasChanges() {
					b.Fatalf("plan: %v, %d changes", diags.Err(), len(p.Changes))
				}
			}
			b.StopTimer()
			cpu.report(b)
			peak.report(b)
			reportLive(b, base, spec, p)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/resource")
		})
	}
}

// BenchmarkPlanText renders a plan of n creates as text, as `reconcile
// plan` prints it.
func BenchmarkPlanText(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			st := benchBackends(b)[0].open(b, fmt.Sprintf("text%d", benchStates.Add(1)), state.Options{Create: true})
			defer st.Close()
			reg := resources.Registry{Drivers: map[string]resources.Driver{endpointToken: newBenchDriver()}}
			p, diags := planner.Plan(b.Context(), loadGenerated(b, genSpec(n)), st, reg, planner.Options{Refresh: false})
			if diags.HasErrors() || len(p.Changes) != n || p.Changes[n-1].Action != plan.Create {
				b.Fatalf("plan: %v, %d changes", diags.Err(), len(p.Changes))
			}
			runtime.GC()
			peak := startPeakHeap()
			cpu := startCPU()
			b.ResetTimer()
			for b.Loop() {
				var w countingWriter
				if err := render.PlanText(&w, p, render.Options{}); err != nil || w < countingWriter(n)*100 {
					b.Fatalf("wrote %d bytes: %v", w, err)
				}
			}
			b.StopTimer()
			cpu.report(b)
			peak.report(b)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/resource")
		})
	}
}

// countingWriter counts what is written to it.
type countingWriter int

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

// BenchmarkApply applies 1000 creates with a zero-latency driver at the
// default parallelism (10): what is measured is the engine's and the
// store's overhead per resource.
func BenchmarkApply(b *testing.B) {
	const n = 1000
	for _, be := range benchBackends(b) {
		b.Run(fmt.Sprintf("%s/N=%d", be.name, n), func(b *testing.B) { benchApply(b, be, n) })
	}
}

func benchApply(b *testing.B, be backend, n int) {
	spec := loadGenerated(b, genSpec(n))
	var elapsed time.Duration
	var syncs int64
	var peak *peakHeap
	for b.Loop() {
		b.StopTimer()
		st := be.open(b, fmt.Sprintf("apply%d", benchStates.Add(1)), state.Options{Create: true})
		reg := resources.Registry{Drivers: map[string]resources.Driver{endpointToken: newBenchDriver()}}
		p, diags := planner.Plan(b.Context(), spec, st, reg, planner.Options{})
		if diags.HasErrors() {
			b.Fatal(diags.Err())
		}
		if peak == nil {
			runtime.GC()
			peak = startPeakHeap()
		}
		var before int64
		if c, ok := st.(interface{ Commits() int64 }); ok {
			before = c.Commits()
		}
		b.StartTimer()
		start := time.Now()
		res, err := apply.Apply(b.Context(), p, spec, st, reg, apply.Options{})
		elapsed += time.Since(start)
		b.StopTimer()
		if c, ok := st.(interface{ Commits() int64 }); ok {
			syncs += c.Commits() - before
		}
		if err != nil || res.Err() != nil || res.Counts[plan.Create] != n {
			b.Fatalf("apply: %v, %v, counts %v", err, res.Failed, res.Counts)
		}
		st.Close()
		b.StartTimer()
	}
	b.StopTimer()
	peak.report(b)
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N)/float64(n), "ns/resource")
	if syncs > 0 {
		b.ReportMetric(float64(syncs)/float64(b.N)/float64(n), "syncs/create")
	}
}

// benchDriver is a zero-latency driver for benchmarks: it keeps objects
// in a sync.Map and records nothing else.
type benchDriver struct {
	next    atomic.Int64
	objects sync.Map
}

func newBenchDriver() *benchDriver { return &benchDriver{} }

func (d *benchDriver) Read(_ context.Context, id string) (resources.Attrs, error) {
	o, ok := d.objects.Load(id)
	if !ok {
		return nil, resources.ErrNotFound
	}
	return o.(resources.Attrs), nil
}

func (d *benchDriver) Create(_ context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	id := fmt.Sprintf("ocid1.ailanguageendpoint.oc1..b%d", d.next.Add(1))
	o := make(resources.Attrs, len(want)+3)
	for k, v := range want {
		o[k] = v
	}
	o["id"], o["state"], o["projectId"] = id, "ACTIVE", "ocid1.project"
	d.objects.Store(id, o)
	return id, o, nil
}

func (d *benchDriver) Update(_ context.Context, id string, _, want resources.Attrs) (resources.Attrs, error) {
	o := make(resources.Attrs, len(want)+3)
	for k, v := range want {
		o[k] = v
	}
	o["id"] = id
	d.objects.Store(id, o)
	return o, nil
}

func (d *benchDriver) Delete(_ context.Context, id string) error {
	d.objects.Delete(id)
	return nil
}

// BenchmarkApplyOneChange applies a plan with one update on a state of N
// resources, as applying a saved plan on merge does: the work should be
// that of the change, not of the state.
func BenchmarkApplyOneChange(b *testing.B) {
	for _, be := range benchBackends(b) {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/N=%d", be.name, n), func(b *testing.B) { benchApplyOneChange(b, be, n) })
		}
	}
}

func benchApplyOneChange(b *testing.B, be backend, n int) {
	name := fmt.Sprintf("one%d", benchStates.Add(1))
	st := be.open(b, name, state.Options{Create: true})
	defer st.Close()
	writeRecords(b, st, genRecords(n))
	key, err := st.SecretKey()
	if err != nil {
		b.Fatal(err)
	}
	reg := resources.Registry{Drivers: map[string]resources.Driver{endpointToken: newBenchDriver()}}
	// The last resource of the first chain changes its display name, back
	// and forth: one update in place, the rest no-ops.
	last := genName(chainDepth - 1)
	var srcs [2][]byte
	for i, dn := range []string{"changed", fmt.Sprintf("endpoint-%d", chainDepth-1)} {
		srcs[i] = bytes.Replace(genSpec(n), fmt.Appendf(nil, "displayName: endpoint-%d\n", chainDepth-1), fmt.Appendf(nil, "displayName: %s\n", dn), 1)
	}
	dir := b.TempDir()
	var applyOnly, saved, cpu time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		src := srcs[i%2]
		i++
		p, diags := planner.Plan(b.Context(), loadGenerated(b, src), st, reg, planner.Options{})
		if diags.HasErrors() {
			b.Fatal(diags.Err())
		}
		if c := p.Changes; !p.HasChanges() {
			b.Fatalf("plan has no change (%d nodes)", len(c))
		}
		var buf bytes.Buffer
		runs, cuts := apply.Hints(loadGenerated(b, src), p)
		if err := plan.WriteFile(&buf, plan.File{Plan: p, Schemas: schemas.Digest(), Runs: runs, Cuts: cuts}, "bench", key); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		// What 'reconcile apply PLANFILE' does once the files are read and
		// the state is open: read the plan, load what the specs it vouches
		// for hold of what it runs, check it, apply it.
		start, startCPU := time.Now(), cpuUsed()
		pf, err := plan.ReadFileToApply(&buf)
		if err != nil {
			b.Fatal(err)
		}
		spec, diags := specs.LoadWith(dir, []specs.Source{{Name: "bench.yaml", Data: src}}, nil, specs.LoadOptions{Checked: pf.Plan.SpecHash, Skip: apply.Skip(pf.Cuts)})
		if diags.HasErrors() {
			b.Fatal(diags.Err())
		}
		meta, err := st.Meta()
		if err != nil {
			b.Fatal(err)
		}
		if err := apply.CheckPlan(&pf, meta, key, spec); err != nil {
			b.Fatal(err)
		}
		if !spec.Partial {
			b.Fatal("the specs were loaded whole")
		}
		applyStart := time.Now()
		res, err := apply.Apply(b.Context(), pf.Plan, spec, st, reg, apply.Options{})
		applyOnly += time.Since(applyStart)
		saved += time.Since(start)
		cpu += cpuUsed() - startCPU
		if err != nil || res.Err() != nil || res.Counts[plan.Update] != 1 {
			b.Fatalf("apply of %s: %v, %v, counts %v", last, err, res.Failed, res.Counts)
		}
	}
	b.ReportMetric(float64(applyOnly.Microseconds())/float64(b.N)/1000, "ms/apply")
	b.ReportMetric(float64(saved.Microseconds())/float64(b.N)/1000, "ms/saved-plan")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/saved-plan")
}
