package main

// Hostile input under -f: each is refused with a clear error, within
// bounded time and memory, measured in-process (this test does not run in
// parallel with others, so the heap it measures is its own).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// usage is what one run cost.
type usage struct {
	elapsed    time.Duration
	peakHeap   uint64 // the largest HeapInuse seen while it ran
	totalAlloc uint64 // bytes allocated while it ran
}

// measure runs f, sampling the heap every millisecond.
func measure(f func()) usage {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	peak.Store(before.HeapInuse)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	start := time.Now()
	f()
	el := time.Since(start)
	close(stop)
	<-done
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return usage{elapsed: el, peakHeap: max(peak.Load(), after.HeapInuse), totalAlloc: after.TotalAlloc - before.TotalAlloc}
}

const mib = 1 << 20

func TestHostileInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	symlink := func(target, name string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Skipf("symlinks: %v", err)
		}
		return p
	}

	// Deeply nested YAML, in flow and in block style.
	deepFlow := write("deep-flow.yaml", []byte("variables:\n  v: "+strings.Repeat("[", 200_000)+strings.Repeat("]", 200_000)+"\n"))
	var block bytes.Buffer
	block.WriteString("variables:\n")
	for i := range 2000 {
		block.WriteString(strings.Repeat("  ", i+1) + "a:\n")
	}
	block.WriteString(strings.Repeat("  ", 2001) + "x\n")
	deepBlock := write("deep-block.yaml", block.Bytes())
	// A file over the 8 MiB limit.
	big := write("big.yaml", append([]byte("# "), bytes.Repeat([]byte("x"), 9*mib)...))
	// Billion laughs: nine levels of nine aliases, 9^9 strings expanded.
	laughs := `variables:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
`
	prev := "a"
	for _, c := range "bcdefghi" {
		laughs += fmt.Sprintf("  %c: &%c [%s]\n", c, c, strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ","))
		prev = string(c)
	}
	laughs += "  z: *i\noutputs:\n  o: ${z}\n"
	bomb := write("laughs.yaml", []byte(laughs))
	// Symlink loops: a spec file, and a spec inside a directory.
	loopFile := symlink("loop-b.yaml", "loop-a.yaml")
	symlink("loop-a.yaml", "loop-b.yaml")
	symlink("y.yaml", "loopdir/x.yaml")
	symlink("x.yaml", "loopdir/y.yaml")
	loopDir := filepath.Join(dir, "loopdir")
	// A named pipe, which blocks whoever opens it.
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// fn::readFile of an endless device.
	zero := write("zero/main.yaml", []byte("variables:\n  v:\n    fn::readFile: /dev/zero\noutputs:\n  o: ${v}\n"))

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nested 200000 deep (flow)", []string{"validate", "-f", deepFlow}, "exceeded max depth"},
		{"nested 2000 deep (block)", []string{"validate", "-f", deepBlock}, "nested more than 64 levels deep"},
		{"9 MiB file", []string{"validate", "-f", big}, "over the limit of 8388608"},
		{"billion laughs", []string{"validate", "-f", bomb}, "YAML aliases that expand exponentially are refused"},
		{"symlink loop", []string{"validate", "-f", loopFile}, "too many levels of symbolic links"},
		{"symlink loop in a directory", []string{"validate", "-f", loopDir}, "too many levels of symbolic links"},
		{"named pipe", []string{"validate", "-f", fifo}, "not a regular file"},
		{"fn::readFile /dev/zero", []string{"plan", "-f", filepath.Dir(zero), "--state", filepath.Join(dir, "state.db")}, "absolute paths must be inside the project directory"},
	} {
		var code int
		var stderr string
		u := measure(func() {
			done := make(chan struct{})
			go func() {
				defer close(done)
				var so, se bytes.Buffer
				code = run(context.Background(), tc.args, strings.NewReader(""), &so, &se)
				stderr = se.String()
			}()
			select {
			case <-done:
			case <-time.After(2 * time.Minute): // a hang, not a speed check
				t.Fatalf("%s: reconcile %v did not end in 2 minutes", tc.name, tc.args)
			}
		})
		t.Logf("%-28s refused in %6.1f ms, peak heap %5.1f MiB, allocated %6.1f MiB: %s", tc.name,
			float64(u.elapsed.Microseconds())/1000, float64(u.peakHeap)/mib, float64(u.totalAlloc)/mib, firstLine(stderr))
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: want exit 1 and %q, got exit %d:\n%s", tc.name, tc.want, code, stderr)
		}
		if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic:") {
			t.Errorf("%s: a stack trace:\n%s", tc.name, stderr)
		}
		// Work is bounded by memory, which does not depend on the load
		// of the machine; the time is logged only (speed is measured by
		// BenchmarkValidate).
		if u.peakHeap > 256*mib || u.totalAlloc > 512*mib {
			t.Errorf("%s: peak heap %d MiB, allocated %d MiB; want under 256 MiB and 512 MiB", tc.name, u.peakHeap/mib, u.totalAlloc/mib)
		}
	}

	// The largest spec accepted, 8 MiB of variables, loads within bounds.
	var large bytes.Buffer
	large.WriteString("variables:\n")
	for i := 0; large.Len() < 8*mib-100; i++ {
		fmt.Fprintf(&large, "  v%d: value-%d-%s\n", i, i, strings.Repeat("y", 40))
	}
	largeFile := write("large.yaml", large.Bytes())
	var code int
	u := measure(func() { code, _, _ = runCLI(t, "validate", "-f", largeFile) })
	t.Logf("%-28s accepted in %6.1f ms, peak heap %5.1f MiB, allocated %6.1f MiB", "8 MiB spec", float64(u.elapsed.Microseconds())/1000, float64(u.peakHeap)/mib, float64(u.totalAlloc)/mib)
	if code != 0 {
		t.Errorf("the 8 MiB spec does not validate")
	}
	if u.peakHeap > 1024*mib {
		t.Errorf("the 8 MiB spec took a peak heap of %d MiB; want under 1 GiB", u.peakHeap/mib)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 110 {
		s = s[:110] + "..."
	}
	return s
}
