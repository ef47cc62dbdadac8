package main

// Shared state under duress, end to end: a state migrate killed part way,
// and records too large for the backend.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"reconcile/state"
	"reconcile/state/etcdstate"
	"reconcile/state/etcdstate/etcdtest"
)

// fullPipe returns a pipe whose write end is full: a process given it as
// its stderr blocks at its first write there, until the read end is read,
// which the test never does. Both ends are closed at the end of t.
func fullPipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	const getPipeSize = 1032 // F_GETPIPE_SZ
	size, _, errno := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), getPipeSize, 0)
	if errno != 0 {
		t.Fatalf("F_GETPIPE_SZ: %v", errno)
	}
	if _, err := w.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestE2EEtcdMigrateKilled: a state migrate to etcd killed (SIGKILL) part
// way, with some records copied, leaves a stack that every command
// refuses, naming the migrate to run again; run again, the migrate
// completes the copy, which then reads exactly as the source.
func TestE2EEtcdMigrateKilled(t *testing.T) {
	needBinary(t)
	if runtime.GOOS != "linux" {
		t.Skip("fills a pipe with Linux's F_GETPIPE_SZ")
	}
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	const prefix = "/reconcile/killed"
	url := etcdStateURL(eps, prefix)
	w := newWS(t, e)
	w.write("main.yaml", spec(policySpec("pol", rid(t, "a"), "", ""), policySpec("other", rid(t, "b"), "", "")))
	w.must(0, "apply", "--auto-approve")
	// More history than one etcd transaction holds (128 operations): the
	// copy takes several writes.
	st, err := state.Open(w.path(".reconcile/state.db"), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 300 {
		if err := st.AddHistory(state.HistoryEntry{Command: "plan"}); err != nil {
			t.Fatal(err)
		}
	}
	want, err := st.Dump()
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	// The migrate's stderr is a full pipe: the notice it prints after its
	// first write blocks it there, the rest of the copy unwritten, until
	// it is killed. The first write is seen in etcd.
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	base := prefix + "/default/"
	copied := cli.Watch(ctx, base+"records/", clientv3.WithPrefix())
	cmd := exec.Command(binPath, "state", "migrate", "--to", url, "--lock-ttl", "5s")
	cmd.Dir, cmd.Env = w.dir, w.env()
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, fullPipe(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-copied:
	case <-ctx.Done():
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the migrate wrote no record to etcd:\n%s", stdout.String())
	}
	cmd.Process.Kill()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the migrate ended before it was killed (%v):\n%s", err, stdout.String())
	}
	if got, err := cli.Get(t.Context(), base+"history/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || got.Count >= int64(len(want.History)) {
		t.Fatalf("etcd holds %v history entries after the kill (%v), want fewer than %d: the copy was not stopped part way", got, err, len(want.History))
	}

	// Every command refuses the partial copy, naming the migrate to run
	// again.
	onEtcd := newWS(t, e)
	onEtcd.extraEnv = []string{"RECONCILE_STATE=" + url}
	onEtcd.write("main.yaml", spec(policySpec("pol", rid(t, "a"), "", ""), policySpec("other", rid(t, "b"), "", "")))
	for _, args := range [][]string{{"plan"}, {"apply", "--auto-approve"}, {"drift"}, {"destroy", "--auto-approve"}, {"state", "list"}, {"output"}} {
		r := onEtcd.run(args...)
		if r.code != 1 {
			t.Errorf("on a partial copy: want exit 1, got:\n%s", r)
		}
		wantStderr(t, r, "is incomplete", "reconcile state migrate --state "+w.path(".reconcile/state.db")+" --stack default --to "+url)
	}

	// Run again, the migrate completes the copy.
	// (It waits for the killed one's lock to expire.)
	r := w.must(0, "state", "migrate", "--to", url, "--lock-timeout", "1m")
	wantStdout(t, r, "Copied stack default", fmt.Sprintf("%d history entries", len(want.History)))
	es, err := etcdstate.Open(t.Context(), etcdstate.Options{Endpoints: eps, Prefix: prefix, Stack: "default", Options: state.Options{ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := es.Dump()
	es.Close()
	if err != nil || !got.Equal(want) {
		t.Errorf("the completed copy = %v, %v, want the source %v", got, err, want)
	}
	onEtcd.must(0, "plan", "--detailed-exitcode")
	onEtcd.must(0, "drift")
}
