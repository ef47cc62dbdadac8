//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/internal/benchspec"
)

// BenchmarkCLI runs the reconcile binary as a user does, a fresh process
// per run, on n restriction policies in chains of 10 (benchspec.Policies),
// against `reconcile emulate` on loopback with its rate limit off. For
// n = 10,000 and 20,000:
//
//	floor    planfloor on the spec: read, yaml.v3 parse, SHA-256
//	apply    apply --auto-approve of every policy onto an empty state and
//	         an empty emulator
//	plan     plan --refresh=false on the applied state
//	refresh  plan with refresh on the applied state: one read per policy
//
// A plan that finds changes fails the benchmark (--detailed-exitcode).
// Each reports its median wall time (median-ms) and the highest peak
// resident memory of its runs, the child's maxrss (peak-MiB, and
// peak-KiB/resource), with the median of those peaks per resource
// (median-peak-KiB/resource: the peak varies by several percent with
// when the garbage collector happens to run); plan
// reports its median over floor's (x-floor), refresh the emulator's CPU
// time per run (emu-cpu-ms). It is Linux only, for maxrss and the
// emulator's CPU time.
func BenchmarkCLI(b *testing.B) {
	if binPath == "" {
		b.Skip("needs the reconcile binary, which -short does not build")
	}
	if buildErr != nil {
		b.Fatalf("building the reconcile binary failed: %v", buildErr)
	}
	floorBin := filepath.Join(b.TempDir(), "planfloor")
	if out, err := exec.Command(goTool(), "build", "-o", floorBin, "github.com/reconcile-dev/reconcile/internal/planfloor").CombinedOutput(); err != nil {
		b.Fatalf("go build planfloor: %v\n%s", err, out)
	}
	for _, n := range []int{10000, 20000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			w := &cliBench{dir: b.TempDir()}
			w.spec = filepath.Join(w.dir, "Main.yaml")
			if err := os.WriteFile(w.spec, benchspec.Policies(n), 0o600); err != nil {
				b.Fatal(err)
			}
			w.state = filepath.Join(w.dir, "state.db")
			defer w.stopEmulator()
			var floorMs float64
			b.Run("floor", func(b *testing.B) {
				runs := w.loop(b, func() *exec.Cmd { return exec.Command(floorBin, w.spec) })
				floorMs = runs.report(b, n)
			})
			b.Run("apply", func(b *testing.B) {
				var runs cliRuns
				for b.Loop() {
					b.StopTimer()
					w.startEmulator(b) // empty, as is the state
					if err := os.Remove(w.state); err != nil && !os.IsNotExist(err) {
						b.Fatal(err)
					}
					b.StartTimer()
					runs.add(w.run(b, "apply", "--auto-approve"))
				}
				w.emuApplied = true
				runs.report(b, n)
			})
			b.Run("plan", func(b *testing.B) {
				w.applied(b)
				runs := w.loop(b, func() *exec.Cmd { return w.command("plan", "--refresh=false", "--detailed-exitcode") })
				if ms := runs.report(b, n); floorMs > 0 {
					b.ReportMetric(ms/floorMs, "x-floor")
				}
			})
			b.Run("refresh", func(b *testing.B) {
				w.applied(b)
				before := w.emulatorCPU(b)
				runs := w.loop(b, func() *exec.Cmd { return w.command("plan", "--detailed-exitcode") })
				runs.report(b, n)
				b.ReportMetric(float64((w.emulatorCPU(b)-before).Milliseconds())/float64(len(runs)), "emu-cpu-ms")
			})
			b.Run("history", func(b *testing.B) {
				// Last: it changes the workload. A state that has seen
				// three more applies, each updating every policy, keeps
				// four versions of each: the plan reads its records
				// from a file four times their size.
				w.applied(b)
				for i := range 3 {
					spec := benchspec.Policies(n)
					if i%2 == 0 {
						spec = bytes.ReplaceAll(spec, []byte("role:00000000-0000-0000-0000-000000000001"), []byte("role:00000000-0000-0000-0000-000000000002"))
					}
					if err := os.WriteFile(w.spec, spec, 0o600); err != nil {
						b.Fatal(err)
					}
					w.run(b, "apply", "--auto-approve", "--refresh=false")
				}
				runs := w.loop(b, func() *exec.Cmd { return w.command("plan", "--refresh=false", "--detailed-exitcode") })
				runs.report(b, n)
			})
		})
	}
}

// cliBench is one workload of BenchmarkCLI: its spec, state and emulator.
type cliBench struct {
	dir        string
	spec       string
	state      string
	emu        *exec.Cmd     // the running `reconcile emulate`, or nil
	emuExited  chan struct{} // closed when emu has exited
	emuURL     string
	emuApplied bool // the state holds every policy, as the emulator does
}

// cliRun is what one run of a process cost.
type cliRun struct {
	wall   time.Duration
	maxRSS int64 // KiB
}

type cliRuns []cliRun

func (rs *cliRuns) add(r cliRun) { *rs = append(*rs, r) }

// report reports the runs' median wall time, their highest peak resident
// memory and the median of those peaks, and returns the median time in
// milliseconds.
func (rs cliRuns) report(b *testing.B, n int) float64 {
	if len(rs) == 0 {
		return 0
	}
	walls := make([]time.Duration, len(rs))
	peaks := make([]int64, len(rs))
	for i, r := range rs {
		walls[i], peaks[i] = r.wall, r.maxRSS
	}
	ms := float64(median(walls).Microseconds()) / 1000
	peak := slices.Max(peaks)
	b.ReportMetric(ms, "median-ms")
	b.ReportMetric(float64(peak)/1024, "peak-MiB")
	b.ReportMetric(float64(peak)/float64(n), "peak-KiB/resource")
	b.ReportMetric(float64(median(peaks))/float64(n), "median-peak-KiB/resource")
	return ms
}

// median returns the middle of xs, the mean of the two middle ones for an
// even count. It sorts xs.
func median[T time.Duration | int64](xs []T) T {
	slices.Sort(xs)
	if len(xs)%2 == 0 {
		return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	return xs[len(xs)/2]
}

// loop runs the command cmd makes once per iteration of b.
func (w *cliBench) loop(b *testing.B, cmd func() *exec.Cmd) cliRuns {
	var runs cliRuns
	for b.Loop() {
		runs.add(w.exec(b, cmd()))
	}
	return runs
}

// command returns `reconcile ARGS` on the workload's spec, state and
// emulator.
func (w *cliBench) command(args ...string) *exec.Cmd {
	args = append(args, "-f", w.spec, "--state", w.state, "--emulator="+w.emuURL)
	return exec.Command(binPath, args...)
}

// run runs `reconcile ARGS` on the workload, which must succeed.
func (w *cliBench) run(b *testing.B, args ...string) cliRun {
	return w.exec(b, w.command(args...))
}

// exec runs cmd, which must succeed, and returns what it cost.
func (w *cliBench) exec(b *testing.B, cmd *exec.Cmd) cliRun {
	b.Helper()
	var stderr bytes.Buffer
	cmd.Dir, cmd.Stderr = w.dir, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Fatalf("%s: no resource usage", cmd.Args[0])
	}
	return cliRun{wall: wall, maxRSS: ru.Maxrss}
}

// applied makes sure the state holds every policy, as the emulator does,
// applying them if the apply benchmark did not.
func (w *cliBench) applied(b *testing.B) {
	if w.emuApplied {
		return
	}
	w.startEmulator(b)
	if err := os.Remove(w.state); err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
	w.run(b, "apply", "--auto-approve")
	w.emuApplied = true
}

var emulatorURL = regexp.MustCompile(`--emulator=(http://127\.0\.0\.1:\d+)`)

// startEmulator starts `reconcile emulate` on an empty data directory, its
// Datadog rate limit off, in place of the one running, and waits for it to
// print its URL.
func (w *cliBench) startEmulator(b *testing.B) {
	w.stopEmulator()
	data, err := os.MkdirTemp(w.dir, "emulator-")
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(binPath, "emulate", "--listen", "127.0.0.1:0", "--data", data, "--datadog-rate-limit", "1000000000")
	watch := &urlWatcher{found: make(chan string, 1)}
	cmd.Dir, cmd.Stdout = w.dir, watch
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait() // its exit is all that is waited for
		close(exited)
	}()
	w.emu, w.emuExited, w.emuApplied = cmd, exited, false
	select {
	case w.emuURL = <-watch.found:
	case <-exited:
		b.Fatal("reconcile emulate ended before printing its URL")
	case <-time.After(time.Minute):
		b.Fatal("reconcile emulate printed no URL within a minute")
	}
}

// urlWatcher is the emulator's standard output: it sends the URL the
// emulator prints on found, once.
type urlWatcher struct {
	mu    sync.Mutex
	buf   []byte
	found chan string
}

func (u *urlWatcher) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.found == nil {
		return len(p), nil
	}
	u.buf = append(u.buf, p...)
	if m := emulatorURL.FindSubmatch(u.buf); m != nil {
		u.found <- string(m[1])
		u.found, u.buf = nil, nil
	}
	return len(p), nil
}

// stopEmulator stops the running emulator, if any.
func (w *cliBench) stopEmulator() {
	if w.emu == nil {
		return
	}
	w.emu.Process.Kill()
	<-w.emuExited
	w.emu = nil
}

// emulatorCPU returns the CPU time the running emulator has used so far.
func (w *cliBench) emulatorCPU(b *testing.B) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", w.emu.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// utime and stime are fields 14 and 15, counted after the command
	// name, which is in parentheses and may hold spaces.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	var ticks int64
	for _, f := range fields[11:13] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", w.emu.Process.Pid, err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
