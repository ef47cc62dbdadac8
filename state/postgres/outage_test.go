package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/internal/pgtest"
	"github.com/reconcile-dev/reconcile/state/kv"
	"github.com/reconcile-dev/reconcile/state/postgres"
)

// childEnv, set to a backend's URL, makes the test binary a writer of
// stack prod there (see child).
const childEnv = "RECONCILE_PGTEST_WRITER"

// child holds the lock of stack prod at url, with a TTL of 2 seconds, says
// "locked", then, on a line from its stdin, puts records/a = "stale" and
// says how that went.
func child(url string) int {
	b, err := postgres.New(url, postgres.Options{})
	if err != nil {
		fmt.Println("new:", err)
		return 1
	}
	ctx := context.Background()
	s, err := b.Open(ctx, "prod", kv.Options{Write: true, LockTTL: 2 * time.Second, Holder: []byte("child")})
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	bt := &kv.Batch{}
	bt.Put("records/a", []byte("stale"))
	err = s.Write(ctx, bt)
	fmt.Printf("write: lost %v: %v\n", errors.Is(err, kv.ErrLeaseLost), err)
	return 0
}

// startChild starts a child writer at url and waits until it holds the
// lock; it is killed when t ends.
func startChild(t *testing.T, url string) (cmd *exec.Cmd, stdin io.Writer, out *bufio.Reader) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+url)
	stdin, _ = cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	out = bufio.NewReader(stdout)
	if line, _ := out.ReadString('\n'); line != "locked\n" {
		t.Fatalf("the child writer: %q", line)
	}
	return cmd, stdin, out
}

// TestFrozenWriter: a writer stopped (SIGSTOP) past its lease's TTL, and
// that another took over, writes nothing once it runs again.
func TestFrozenWriter(t *testing.T) {
	w := newWhere(t, "")
	b := open(t, w.url(pgtest.Role{}), postgres.Options{})
	openStore(t, b, "prod", kv.Options{Write: true, Init: meta}).Close()
	cmd, stdin, out := startChild(t, w.url(pgtest.Role{}))
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var waited []byte
	next := openStore(t, b, "prod", kv.Options{Write: true, LockTimeout: 2 * time.Minute, OnWait: func(h []byte) { waited = h }})
	if string(waited) != "child" {
		t.Errorf("OnWait got %q, want the frozen holder", waited)
	}
	bt := &kv.Batch{}
	bt.Put("records/a", []byte("next"))
	if err := next.Write(t.Context(), bt); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGCONT)
	io.WriteString(stdin, "write\n")
	line, _ := out.ReadString('\n')
	if !strings.HasPrefix(line, "write: lost true:") {
		t.Errorf("the thawed writer: %q, want its write refused as its lock was lost", line)
	}
	if v := get(t, next, "records/a"); string(v) != "next" {
		t.Errorf("records/a = %q: the thawed writer wrote", v)
	}
}

// TestKilledHolder: the lock of a writer killed (SIGKILL) frees itself
// once its lease runs out.
func TestKilledHolder(t *testing.T) {
	w := newWhere(t, "")
	b := open(t, w.url(pgtest.Role{}), postgres.Options{})
	openStore(t, b, "prod", kv.Options{Write: true, Init: meta}).Close()
	cmd, _, _ := startChild(t, w.url(pgtest.Role{}))
	cmd.Process.Kill()
	cmd.Wait()
	var waited []byte
	s := openStore(t, b, "prod", kv.Options{Write: true, LockTimeout: 2 * time.Minute, OnWait: func(h []byte) { waited = h }})
	if string(waited) != "child" {
		t.Errorf("OnWait got %q, want the killed holder", waited)
	}
	if err := s.Held(); err != nil {
		t.Error(err)
	}
}

// serialBatch is write i of a stream: the serial from i-1 to i (the
// marker), and a record of its own.
func serialBatch(i int) *kv.Batch {
	b := &kv.Batch{Marker: "meta/serial"}
	b.Expect("meta/serial", []byte(fmt.Sprint(i-1)))
	b.Put("meta/serial", []byte(fmt.Sprint(i)))
	b.Put(fmt.Sprintf("records/r%06d", i), []byte("v"))
	return b
}

// checkStream checks that a stream of n writes is all there, once.
func checkStream(t *testing.T, s kv.Store, n int) {
	t.Helper()
	if v := get(t, s, "meta/serial"); string(v) != fmt.Sprint(n) {
		t.Errorf("meta/serial = %q, want %d", v, n)
	}
	count := 0
	err := s.Read(t.Context(), func(vw kv.View) error {
		return vw.Scan("records/", "", true, func(string, []byte) error { count++; return nil })
	})
	if err != nil || count != n {
		t.Errorf("%d records, %v; want %d", count, err, n)
	}
}

// TestCommitCut: a write whose COMMIT was made but whose answer was lost
// is found made by its marker, and not made twice or refused.
func TestCommitCut(t *testing.T) {
	w := newWhere(t, "")
	p := pgtest.NewProxy(t, w.srv.Addr())
	url := strings.Replace(w.url(pgtest.Role{}), w.srv.Addr(), p.Addr(), 1)
	s := openStore(t, open(t, url, postgres.Options{}), "prod", kv.Options{Write: true, Init: []kv.Op{{Key: "meta/format", Value: []byte("f")}, {Key: "meta/serial", Value: []byte("0")}}})
	for i := 1; i <= 3; i++ {
		p.CutCommits(1)
		if err := s.Write(t.Context(), serialBatch(i)); err != nil {
			t.Fatalf("write %d, its commit's answer lost: %v", i, err)
		}
	}
	if p.Cuts() != 3 {
		t.Fatalf("%d commits cut, want 3", p.Cuts())
	}
	checkStream(t, s, 3)
}

// TestUnknownOutcome: a write whose COMMIT's answer was lost, and that
// cannot reach the server again before its deadline, says its outcome is
// unknown; one that never reached it says nothing was written.
func TestUnknownOutcome(t *testing.T) {
	w := newWhere(t, "")
	p := pgtest.NewProxy(t, w.srv.Addr())
	url := strings.Replace(w.url(pgtest.Role{}), w.srv.Addr(), p.Addr(), 1)
	s := openStore(t, open(t, url, postgres.Options{RequestTimeout: time.Minute}), "prod", kv.Options{Write: true, LockTTL: time.Hour, Init: []kv.Op{{Key: "meta/format", Value: []byte("f")}, {Key: "meta/serial", Value: []byte("0")}}})
	p.CutCommits(1)
	p.AfterCut(func() { p.SetDown(true) })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := s.Write(ctx, serialBatch(1)); !errors.Is(err, kv.ErrUnknownOutcome) {
		t.Errorf("a write cut after its COMMIT: %v, want ErrUnknownOutcome", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	err := s.Write(ctx, serialBatch(2))
	if !errors.Is(err, kv.ErrUnreachable) || errors.Is(err, kv.ErrUnknownOutcome) {
		t.Errorf("a write that never reached the server: %v, want ErrUnreachable alone", err)
	}
	p.SetDown(false)
	if err := s.Write(t.Context(), serialBatch(2)); err != nil {
		t.Errorf("once the server answers again: %v", err)
	}
	checkStream(t, s, 2)
}

// TestServerRestart: a stream of writes from one Store, going on while
// the server restarts and then crashes, loses nothing and makes nothing
// twice.
func TestServerRestart(t *testing.T) {
	srv := pgtest.Start(t)
	b := open(t, srv.AdminURL("postgres"), postgres.Options{RequestTimeout: 2 * time.Minute})
	s := openStore(t, b, "prod", kv.Options{Write: true, LockTTL: 5 * time.Minute, Init: []kv.Op{{Key: "meta/format", Value: []byte("f")}, {Key: "meta/serial", Value: []byte("0")}}})
	var stop atomic.Bool
	wrote := make(chan int, 1<<20)
	done := make(chan error, 1)
	go func() {
		for i := 1; !stop.Load(); i++ {
			if err := s.Write(context.Background(), serialBatch(i)); err != nil {
				done <- fmt.Errorf("write %d: %w", i, err)
				return
			}
			wrote <- i
		}
		done <- nil
	}()
	last := 0 // the last write made
	more := func(n int) {
		t.Helper()
		for target := last + n; last < target; {
			select {
			case last = <-wrote:
			case err := <-done:
				t.Fatalf("the writes stopped: %v", err)
			}
		}
	}
	more(15)
	srv.Restart(t)
	more(10)
	srv.Crash(t)
	srv.Boot(t)
	more(10)
	stop.Store(true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for len(wrote) > 0 {
		last = <-wrote
	}
	checkStream(t, s, last)
}
