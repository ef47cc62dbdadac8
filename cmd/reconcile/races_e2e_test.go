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
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
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

// bigPrincipals returns n principals of users, each a valid id.
func bigPrincipals(n int) []string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("user:%08x-0000-4000-8000-%012x", i, i)
	}
	return ps
}

// bigPolicySpec is a policy named name on rid whose viewers are ps: with
// 20,000 of them its record is about 860 KiB, more than a record on etcd
// can take (764 KiB), and its request to Datadog less than the 1 MiB the
// API takes.
func bigPolicySpec(name, rid string, ps []string) string {
	return policySpec(name, rid, "        - relation: viewer\n          principals: [\""+strings.Join(ps, `", "`)+"\"]\n", "")
}

// TestE2EEtcdRecordTooLarge: a resource whose record etcd could not hold
// in one transaction is refused at plan, naming it, its size and the
// limit, and never created; an apply refuses it too, and creates the rest.
func TestE2EEtcdRecordTooLarge(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	big := rid(t, "big")
	src := spec(policySpec("small", rid(t, "small"), "", ""), bigPolicySpec("big", big, bigPrincipals(20000)))
	w := runner(t, e, eps, "/reconcile/large", "prod", src)

	r := w.run("plan")
	if r.code != 1 {
		t.Errorf("plan of a resource too large to record: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, `main.yaml:`, `datadog:RestrictionPolicy "big" cannot be recorded in state: its record would be`, "more than the 764 KiB a record can take",
		"--max-request-bytes", "Make its inputs smaller")
	mark := e.mark()
	r = w.run("apply", "--auto-approve")
	if r.code != 1 {
		t.Errorf("apply of a resource too large to record: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, `"big" cannot be recorded in state`)
	if calls := e.callsSince(mark, "restriction_policy/"+big); len(calls) > 0 {
		t.Errorf("the apply called Datadog for the policy it cannot record: %+v", calls)
	}
	if got := e.policy(big); len(got) > 0 {
		t.Errorf("the policy too large to record exists: %d bindings", len(got))
	}

	// Made smaller, it is created and recorded.
	w.write("main.yaml", spec(policySpec("small", rid(t, "small"), "", ""), bigPolicySpec("big", big, bigPrincipals(5000))))
	w.must(0, "apply", "--auto-approve")
	w.must(0, "plan", "--detailed-exitcode")
}

// TestE2EEtcdRecordTooLargeLeftBehind: a create that an earlier reconcile
// made although its record could not be written left an intent and an
// object: the next apply and the next destroy record the object by its id
// (they cannot record it whole) instead of failing on it for ever, and
// delete it.
func TestE2EEtcdRecordTooLargeLeftBehind(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	const prefix = "/reconcile/leftover"
	ps := bigPrincipals(20000)
	for _, cmd := range []string{"apply", "destroy"} {
		t.Run(cmd, func(t *testing.T) {
			big := rid(t, "big")
			// What was left: the object, made, and the intent of its create.
			bindings := []binding{{Relation: "viewer", Principals: ps}}
			e.setPolicy(big, bindings)
			st, err := etcdstate.Open(t.Context(), etcdstate.Options{Endpoints: eps, Prefix: prefix, Stack: cmd, Options: state.Options{Create: true}})
			if err != nil {
				t.Fatal(err)
			}
			inputs := map[string]any{"resourceId": big, "bindings": []any{map[string]any{"relation": "viewer", "principals": anySlice(ps)}}}
			err = st.PutIntent(state.Intent{Name: "big", Type: "datadog:RestrictionPolicy", Token: "t-" + cmd, Inputs: inputs, Time: time.Now().Add(-time.Hour).UTC()})
			st.Close()
			if err != nil {
				t.Fatal(err)
			}

			w := runner(t, e, eps, prefix, cmd, spec(policySpec("small", rid(t, "small"), "", "")))
			if cmd == "apply" {
				// The specs no longer declare it: the apply deletes it.
				r := w.must(0, "apply", "--auto-approve")
				wantStdout(t, r, "1 created", "1 destroyed")
			} else {
				w.must(0, "destroy", "--auto-approve")
			}
			if got := e.policy(big); len(got) > 0 {
				t.Errorf("after %s, the policy left behind still exists: %d bindings", cmd, len(got))
			}
			got := w.stateList()
			if _, ok := got["big"]; ok {
				t.Errorf("state after %s still records big: %+v", cmd, got)
			}
			if _, ok := got["small"]; ok != (cmd == "apply") {
				t.Errorf("state after %s = %+v, want small recorded only after the apply", cmd, got)
			}
		})
	}
}

// anySlice returns ss as a []any.
func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestE2EEtcdRecordDeletedOutside: a record key deleted with etcdctl (by
// anyone with write access) is found missing by the record count: plan
// and apply refuse the stack, naming the record, and create nothing a
// second time.
func TestE2EEtcdRecordDeletedOutside(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	const prefix = "/reconcile/deleted"
	src := spec(policySpec("pol", rid(t, "a"), "", ""), policySpec("other", rid(t, "b"), "", ""))
	w := runner(t, e, eps, prefix, "prod", src)
	w.must(0, "apply", "--auto-approve")
	pol := w.stateShow("pol")

	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if resp, err := cli.Delete(t.Context(), prefix+"/prod/records/pol"); err != nil || resp.Deleted != 1 {
		t.Fatalf("etcdctl del of the record pol: %v, %v", resp, err)
	}

	mark := e.mark()
	for _, args := range [][]string{{"plan"}, {"apply", "--auto-approve"}, {"drift"}} {
		r := w.run(args...)
		if r.code != 1 {
			t.Errorf("with a record deleted outside: want exit 1, got:\n%s", r)
		}
		wantStderr(t, r, "not a valid reconcile state", `missing: "pol"`, fmt.Sprintf("at serial %d", pol.Serial), "Restore the deleted keys")
	}
	if calls := e.callsSince(mark, "restriction_policy/"+rid(t, "a")); len(calls) > 0 {
		t.Errorf("with its record deleted, pol's policy was written again: %+v", calls)
	}
}
