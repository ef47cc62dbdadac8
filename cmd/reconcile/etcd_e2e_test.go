package main

// State on etcd, end to end: the real binary, several working directories
// as several CI runners, and a real etcd started in the test process.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
)

// etcdStateURL is the state URL of the cluster at endpoints, under prefix.
func etcdStateURL(endpoints []string, prefix string) string {
	return "etcd://" + strings.Join(endpoints, ",") + prefix
}

// useEtcd points w at stack under prefix on the cluster at endpoints, as a
// CI runner does with RECONCILE_STATE and RECONCILE_STACK.
func (w *ws) useEtcd(endpoints []string, prefix, stack string) {
	w.etcd = &etcdstate.Options{Endpoints: endpoints, Prefix: prefix, Stack: stack}
	w.extraEnv = append(w.extraEnv, "RECONCILE_STATE="+etcdStateURL(endpoints, prefix), "RECONCILE_STACK="+stack)
}

// runner is a working directory on stack of the etcd cluster, with spec as
// its main.yaml and the stack's settings file, as a repository holds them:
// the stack is declared, so its first plan or apply may start it.
func runner(t *testing.T, e *emu, endpoints []string, prefix, stack, spec string) *ws {
	w := newWS(t, e)
	w.useEtcd(endpoints, prefix, stack)
	w.write("main.yaml", spec)
	w.write("Pulumi."+stack+".yaml", "config: {}\n")
	return w
}

// TestE2EEtcdRunners: three runners share one stack on etcd: an apply in
// the first is what the second plans against and the third checks for
// drift; a plan file made on one runner applies on another; a second stack
// on the same etcd stays apart.
func TestE2EEtcdRunners(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	const prefix = "/reconcile/orders"
	src := spec(policySpec("pol", rid(t, "")+"-${pulumi.stack}", "", ""))
	w1 := runner(t, e, eps, prefix, "prod", src)
	w2 := runner(t, e, eps, prefix, "prod", src)
	w3 := runner(t, e, eps, prefix, "prod", src)

	// No stack yet: a drift or a state list fails, a plan starts nothing.
	r := w3.must(1, "drift")
	wantStderr(t, r, "does not exist", "only apply, import and 'reconcile stack init prod' start a new stack on etcd")
	w1.must(0, "apply", "--auto-approve")
	w2.must(0, "plan", "--detailed-exitcode")
	w3.must(0, "drift")
	if got := w3.stateList(); got["pol"].ID != rid(t, "")+"-prod" {
		t.Errorf("the third runner's state list = %+v, want pol as applied by the first", got)
	}

	// Reviewed on one runner, applied on another: exactly the plan file.
	changed := spec(policySpec("pol", rid(t, "")+"-${pulumi.stack}", `
        - relation: viewer
          principals: ["`+role2+`"]`, ""))
	w2.write("main.yaml", changed)
	w2.must(2, "plan", "--detailed-exitcode", "--out", "reviewed.plan")
	data, err := os.ReadFile(w2.path("reviewed.plan"))
	if err != nil {
		t.Fatal(err)
	}
	w3.write("reviewed.plan", string(data))
	w3.write("main.yaml", changed)
	r = w3.must(0, "apply", "reviewed.plan")
	wantStdout(t, r, "1 updated")
	w1.write("main.yaml", changed)
	w1.must(0, "plan", "--detailed-exitcode")
	// The plan file names its backend: pointed elsewhere, it is refused.
	r = w3.rc("apply", "reviewed.plan", "--state", w3.path("local.db"), "--emulator="+e.URL)
	if r.code != 1 || !strings.Contains(r.stderr, "etcd://") {
		t.Errorf("apply of an etcd plan file against a local state: want exit 1 naming the plan's backend, got:\n%s", r)
	}

	// Another stack on the same etcd is another state.
	dev := runner(t, e, eps, prefix, "dev", src)
	r = dev.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "1 to create")
	dev.must(0, "apply", "--auto-approve")
	if got := dev.stateList(); got["pol"].ID != rid(t, "")+"-dev" {
		t.Errorf("dev's state = %+v, want its own pol", got)
	}
	w1.must(0, "plan", "--detailed-exitcode")
	r = w1.must(0, "stack", "ls")
	if r.stdout != "  dev\n* prod\n" {
		t.Errorf("stack ls = %q, want dev, and prod marked current", r.stdout)
	}
}

// TestE2EEtcdMigrate: a stack's state moves from a local file to etcd and
// back, whole: lineage, serial, history and records; a target holding
// another state is refused.
func TestE2EEtcdMigrate(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	url := etcdStateURL(eps, "/reconcile/migrate")
	w := newWS(t, e)
	w.write("main.yaml", spec(policySpec("pol", rid(t, "a"), "", ""), policySpec("other", rid(t, "b"), "", "")))
	w.must(0, "apply", "--auto-approve")
	w.must(0, "state", "rm", "other")
	before := w.must(0, "state", "history", "--output", "json").stdout
	list := w.must(0, "state", "list", "--output", "json").stdout

	r := w.must(0, "state", "migrate", "--to", url)
	wantStdout(t, r, "Copied stack default", "2 history entries")
	onEtcd := newWS(t, e)
	onEtcd.extraEnv = []string{"RECONCILE_STATE=" + url}
	onEtcd.write("main.yaml", spec(policySpec("pol", rid(t, "a"), "", "")))
	if got := onEtcd.must(0, "state", "history", "--output", "json").stdout; got != before {
		t.Errorf("history on etcd:\n%s\nwant as in the file:\n%s", got, before)
	}
	if got := onEtcd.must(0, "state", "list", "--output", "json").stdout; got != list {
		t.Errorf("records on etcd:\n%s\nwant as in the file:\n%s", got, list)
	}
	onEtcd.must(0, "plan", "--detailed-exitcode")
	// Run again, it finds the copy made.
	r = w.must(0, "state", "migrate", "--to", url)
	wantStdout(t, r, "Already copied: stack default")

	// Back to another file, after one more apply on etcd.
	onEtcd.write("main.yaml", spec(policySpec("pol", rid(t, "a"), `
        - relation: viewer
          principals: ["`+role2+`"]`, "")))
	onEtcd.must(0, "apply", "--auto-approve")
	r = onEtcd.must(0, "state", "migrate", "--to", onEtcd.path("back.db"), "--output", "json")
	checkJSONDoc(t, "state migrate --output json", r.stdout, "1.0")
	var out struct {
		Stacks []struct {
			Serial int64 `json:"serial"`
			Copied bool  `json:"copied"`
		} `json:"stacks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Stacks) != 1 || out.Stacks[0].Serial == 0 || !out.Stacks[0].Copied {
		t.Errorf("migrate --output json = %s (%v), want one stack copied", r.stdout, err)
	}
	back := onEtcd.rc("state", "history", "--state", onEtcd.path("back.db"))
	if back.code != 0 || strings.Count(back.stdout, "\n") != 4 { // header and 3 entries
		t.Errorf("history of the copy back:\n%s", back)
	}
	// The original file holds an older state of the same lineage: refused.
	r = onEtcd.rc("state", "migrate", "--to", w.path(".reconcile/state.db"))
	if r.code != 1 || !strings.Contains(r.stderr, "nothing was written") {
		t.Errorf("migrate onto an older copy: want exit 1 saying nothing was written, got:\n%s", r)
	}
}

// TestE2EEtcdLockContention: two runners apply one stack at once: one
// proceeds, the other names the holder, CI job included; with a lock
// timeout it waits for the first to finish and then goes on.
func TestE2EEtcdLockContention(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	model := e.activeModel(t.TempDir())
	e.settings(server.Settings{CreateDelayMS: 500})
	src := crashSpec("lock", model, false)
	first := runner(t, e, eps, "/reconcile/lock", "prod", src)
	second := runner(t, e, eps, "/reconcile/lock", "prod", src)

	p := first.startProc([]string{"GITHUB_ACTIONS=true", "GITHUB_SERVER_URL=https://github.com", "GITHUB_REPOSITORY=acme/infra", "GITHUB_RUN_ID=4242"}, "apply", "--auto-approve")
	if !p.waitFor(&p.out, ": Creating...", 1) {
		t.Fatalf("the first apply never started a create:\n%s", p.wait(time.Minute))
	}
	r := second.run("apply", "--auto-approve")
	if r.code != 1 {
		t.Fatalf("a second apply while the first holds the lock: want exit 1, got:\n%s", r)
	}
	host, _ := os.Hostname()
	wantStderr(t, r, fmt.Sprint(p.cmd.Process.Pid), host, "reconcile apply", "https://github.com/acme/infra/actions/runs/4242")
	// With a lock timeout, it waits for the first to end.
	waiting := second.startProc(nil, "apply", "--auto-approve", "--lock-timeout", "2m")
	if !waiting.waitFor(&waiting.err, "Waiting up to 2m0s (--lock-timeout) for the lock", 1) {
		t.Errorf("the waiting apply did not say it waits:\n%s", waiting.wait(2*time.Minute))
	} else if line := waiting.err.String(); !strings.Contains(line, fmt.Sprintf("pid %d", p.cmd.Process.Pid)) {
		t.Errorf("the notice of the wait does not name the holder: %q", line)
	}
	if res := p.wait(2 * time.Minute); res.code != 0 {
		t.Fatalf("the first apply:\n%s", res)
	}
	res := waiting.wait(2 * time.Minute)
	if res.code != 0 || !strings.Contains(res.stdout, "No changes") {
		t.Fatalf("the waiting apply, once the first ended: want exit 0 and no changes, got:\n%s", res)
	}
	checkConverged(t, e, second, "lock")
}

// TestE2EEtcdTenStacks: ten runners apply ten stacks of one etcd at once,
// and all complete, each with its own state.
func TestE2EEtcdTenStacks(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	var wg sync.WaitGroup
	runners := make([]*ws, 10)
	results := make([]result, 10)
	for i := range runners {
		stack := fmt.Sprintf("team%d", i)
		runners[i] = runner(t, e, eps, "/reconcile/ten", stack, spec(
			policySpec("a", rid(t, stack+"-a"), "", ""),
			policySpec("b", rid(t, stack+"-b"), "", ""),
			policySpec("c", rid(t, stack+"-c"), "", "")))
	}
	for i, w := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = w.run("apply", "--auto-approve", "--lock-timeout", "1m")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("stack team%d:\n%s", i, r)
		}
	}
	for i, w := range runners {
		stack := fmt.Sprintf("team%d", i)
		got := w.stateList()
		if len(got) != 5 || got["a"].ID != rid(t, stack+"-a") { // and the spec's two lookups
			t.Errorf("state of %s = %+v, want its own a, b and c", stack, got)
		}
	}
	r := runners[0].must(0, "stack", "ls", "--output", "json")
	checkJSONDoc(t, "stack ls --output json", r.stdout, "1.0")
	if n := strings.Count(r.stdout, `"name"`); n != 10 {
		t.Errorf("stack ls lists %d stacks, want 10:\n%s", n, r.stdout)
	}
}

// TestE2EEtcdSIGKILL kills an apply with SIGKILL at random moments; another
// runner then gets the lock once the dead one's lease expires, resolves
// its interrupted creates, and the cloud holds every declared object once.
func TestE2EEtcdSIGKILL(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	n := trialCount(t, 20)
	var stats crashStats
	var waits []time.Duration
	var mu sync.Mutex
	runTrials(t, n, 4, server.Settings{CreateDelayMS: 300, LatencyMS: 30}, func(t *testing.T, e *emu, model string, i int, rng *rand.Rand) {
		prefix := fmt.Sprintf("ekill%02d-%d", i, rng.IntN(1e6))
		src := crashSpec(prefix, model, i%5 == 4)
		stack := fmt.Sprintf("trial%02d", i)
		dead := runner(t, e, eps, "/reconcile/kill", stack, src)
		next := runner(t, e, eps, "/reconcile/kill", stack, src)
		k := 1 + rng.IntN(crashEndpoints+crashPolicies)
		p := dead.startProc(nil, "apply", "--auto-approve", "--lock-ttl", "5s")
		p.waitFor(&p.out, ": Creating...", k)
		killed := p.signal(syscall.SIGKILL)
		r := p.wait(time.Minute)
		if killed && p.signaled != syscall.SIGKILL {
			killed = false
		}
		if !killed && r.code != 0 {
			t.Fatalf("the first apply failed without being killed:\n%s", r)
		}
		pending := len(next.stateIntents())
		// It waits for the dead runner's lease to expire: at most its TTL.
		r = next.must(0, "apply", "--auto-approve", "--lock-timeout", "1m")
		mu.Lock()
		waits = append(waits, r.elapsed)
		mu.Unlock()
		if pending > 0 && !strings.Contains(r.stdout, "Resolving") {
			t.Errorf("%d intents were pending but the next runner did not resolve them:\n%s", pending, r)
		}
		stats.add(func(s *crashStats) {
			s.trials++
			if killed {
				s.killedMidway++
			} else {
				s.finishedFirst++
			}
			if pending > 0 {
				s.withIntents++
				s.intentsAtKill += pending
			}
			for k, v := range resolveOutcomes(r.stdout + r.stderr) {
				s.outcomes[k] += v
			}
		})
		checkConverged(t, e, next, prefix)
		next.must(0, "plan", "--detailed-exitcode")
	})
	t.Logf("etcd SIGKILL trials: %d (%d killed mid-apply, %d finished first); %d killed with creates in flight (%d intents in all); resolved: %v; next runner's apply took %v",
		stats.trials, stats.killedMidway, stats.finishedFirst, stats.withIntents, stats.intentsAtKill, stats.outcomes, waits)
	if stats.trials == n && n >= 20 && stats.withIntents == 0 {
		t.Errorf("no trial killed an apply with a create in flight: the harness does not exercise intents")
	}
}

// TestE2EEtcdFrozenWriter: a writer frozen (SIGSTOP) past its lock's TTL
// loses the lock to another runner, which completes the apply; continued,
// the frozen one writes nothing more, says why, and exits 1; the other's
// result is intact.
func TestE2EEtcdFrozenWriter(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	model := e.activeModel(t.TempDir())
	e.settings(server.Settings{CreateDelayMS: 1000})
	src := crashSpec("frozen", model, false)
	frozen := runner(t, e, eps, "/reconcile/frozen", "prod", src)
	other := runner(t, e, eps, "/reconcile/frozen", "prod", src)

	p := frozen.startProc(nil, "apply", "--auto-approve", "--lock-ttl", "5s")
	if !p.waitFor(&p.out, ": Creating...", 3) {
		t.Fatalf("the apply never started its creates:\n%s", p.wait(time.Minute))
	}
	if !p.signal(syscall.SIGSTOP) {
		t.Fatalf("the apply ended before it could be frozen:\n%s", p.wait(time.Minute))
	}
	r := other.must(0, "apply", "--auto-approve", "--lock-timeout", "1m")
	wantStdout(t, r, "Resolving")
	serial := other.meta().Serial
	p.signal(syscall.SIGCONT)
	res := p.wait(time.Minute)
	if res.code != 1 || !strings.Contains(res.stderr, "was lost") {
		t.Errorf("the continued apply: want exit 1 saying its lock was lost, got:\n%s", res)
	}
	if got := other.meta().Serial; got != serial {
		t.Errorf("serial = %d after the frozen writer continued, want %d: it wrote", got, serial)
	}
	checkConverged(t, e, other, "frozen")
	other.must(0, "plan", "--detailed-exitcode")
}

// TestE2EEtcdLeaderLoss: the leader of a 3-member cluster stops during an
// apply; the apply goes on or fails cleanly, and the next run converges
// with nothing lost.
func TestE2EEtcdLeaderLoss(t *testing.T) {
	needBinary(t)
	t.Parallel()
	members := etcdtest.StartCluster(t, 3)
	var eps []string
	for _, m := range members {
		eps = append(eps, m.Endpoint)
	}
	e := startEmulator(t)
	model := e.activeModel(t.TempDir())
	e.settings(server.Settings{CreateDelayMS: 300})
	w := runner(t, e, eps, "/reconcile/leader", "prod", crashSpec("leader", model, false))
	p := w.startProc(nil, "apply", "--auto-approve")
	p.waitFor(&p.out, "Creation complete", 5)
	var leader *etcdtest.Member
	for _, m := range members {
		if m.IsLeader() {
			leader = m
		}
	}
	if leader == nil {
		t.Fatal("no member is the leader")
	}
	leader.Stop()
	<-leader.Stopped()
	res := p.wait(2 * time.Minute)
	t.Logf("the apply during the leader's loss: exit %d", res.code)
	if res.code != 0 {
		w.must(0, "apply", "--auto-approve", "--lock-timeout", "1m")
	}
	checkConverged(t, e, w, "leader")
	w.must(0, "plan", "--detailed-exitcode")
}

// TestE2EEtcdPlanSnapshot: a plan made during an apply reads one state, as
// it stood at one serial: exactly the nodes recorded by then are in it.
func TestE2EEtcdPlanSnapshot(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	model := e.activeModel(t.TempDir())
	// Two at a time, endpoints taking a second each: the apply lasts
	// five seconds at least, and the plan falls in the middle.
	e.settings(server.Settings{CreateDelayMS: 1000})
	src := crashSpec("snap", model, false)
	applying := runner(t, e, eps, "/reconcile/snap", "prod", src)
	planning := runner(t, e, eps, "/reconcile/snap", "prod", src)
	p := applying.startProc(nil, "apply", "--auto-approve", "--parallelism", "2")
	p.waitFor(&p.out, "Creation complete", 4)
	r := planning.must(2, "plan", "--refresh=false", "--detailed-exitcode", "--output", "json")
	if res := p.wait(2 * time.Minute); res.code != 0 {
		t.Fatalf("the apply:\n%s", res)
	}
	var pl struct {
		Serial  int64 `json:"serial"`
		Changes []struct {
			Address string `json:"address"`
			Action  string `json:"action"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &pl); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, r.stdout)
	}
	if len(pl.Changes) != crashEndpoints+crashPolicies {
		t.Fatalf("the plan has %d changes, want %d:\n%s", len(pl.Changes), crashEndpoints+crashPolicies, r.stdout)
	}
	recorded := 0
	for _, c := range pl.Changes {
		inPlan := c.Action != "create"
		s := planning.rc("state", "show", c.Address, "--serial", fmt.Sprint(pl.Serial))
		if inPlan != (s.code == 0) {
			t.Errorf("%s: planned as in state %v, but in state at serial %d: %v", c.Address, inPlan, pl.Serial, s.code == 0)
		}
		if inPlan {
			recorded++
		}
	}
	t.Logf("the plan, at serial %d, saw %d of %d nodes recorded", pl.Serial, recorded, len(pl.Changes))
}

// meta reads the lineage and serial of w's state on etcd.
func (w *ws) meta() state.Meta {
	w.t.Helper()
	st := w.openEtcd()
	defer st.Close()
	m, err := st.Meta()
	if err != nil {
		w.t.Fatal(err)
	}
	return m
}

// openEtcd opens w's stack on etcd, read-only.
func (w *ws) openEtcd() *etcdstate.Store {
	w.t.Helper()
	o := *w.etcd
	o.ReadOnly = true
	st, err := etcdstate.Open(w.t.Context(), o)
	if err != nil {
		w.t.Fatalf("open the state on etcd: %v", err)
	}
	return st
}

// TestE2EEtcdCredentials: etcd's user name and password come from
// etcdctl's variables, in either form, and never show in output, plan
// files or the state.
func TestE2EEtcdCredentials(t *testing.T) {
	needBinary(t)
	t.Parallel()
	const (
		user     = "ci-deployer-e2e"
		password = "pw-e2e-Kx93-never-shown"
	)
	eps := etcdtest.Start(t)
	admin, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx := t.Context()
	for _, step := range []func() error{
		func() error { _, err := admin.RoleAdd(ctx, "root"); return err },
		func() error { _, err := admin.UserAdd(ctx, "root", "root-pw"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := admin.UserAdd(ctx, user, password); return err },
		func() error { _, err := admin.UserGrantRole(ctx, user, "root"); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("set up authentication: %v", err)
		}
	}
	e := startEmulator(t)
	w := runner(t, e, eps, "/reconcile/auth", "prod", spec(policySpec("pol", rid(t, ""), "", "")))

	r := w.must(1, "plan")
	wantStderr(t, r, "etcd://", "ETCDCTL_USER and ETCDCTL_PASSWORD")
	w.extraEnv = append(w.extraEnv, "ETCDCTL_USER="+user, "ETCDCTL_PASSWORD=wrong-"+password)
	r = w.must(1, "plan")
	wantStderr(t, r, "authentication failed", "ETCDCTL_USER and ETCDCTL_PASSWORD")
	w.extraEnv[len(w.extraEnv)-1] = "ETCDCTL_PASSWORD=" + password
	w.must(0, "apply", "--auto-approve")
	w.extraEnv = append(w.extraEnv[:len(w.extraEnv)-2], "ETCDCTL_USER="+user+":"+password)
	w.must(0, "plan", "--detailed-exitcode", "--out", "p.plan")
	w.must(0, "stack", "ls")
	w.must(0, "state", "history")

	shown := func(what, text string) {
		t.Helper()
		if strings.Contains(text, password) {
			t.Errorf("%s shows the etcd password", what)
		}
	}
	w.mu.Lock()
	for _, r := range w.runs {
		shown("reconcile "+strings.Join(r.args, " "), r.stdout+r.stderr)
	}
	w.mu.Unlock()
	pl, err := os.ReadFile(w.path("p.plan"))
	if err != nil {
		t.Fatal(err)
	}
	shown("the plan file", string(pl))
	root, err := clientv3.New(clientv3.Config{Endpoints: eps, Username: "root", Password: "root-pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	resp, err := root.Get(ctx, "", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("read every key: %d keys, %v", len(resp.Kvs), err)
	}
	for _, kv := range resp.Kvs {
		shown("the etcd key "+string(kv.Key), string(kv.Key)+string(kv.Value))
	}
}

// TestE2EEtcdFrozenWriterCloud: a writer frozen (SIGSTOP) past its lock's
// TTL while one of its changes waits to be retried (the API is
// unavailable) loses the lock to another runner, which applies newer
// specs. Continued, the frozen writer sends nothing more to the cloud: not
// the Datadog upsert it was retrying, nor the GCP read-modify-write of an
// IAM binding with a freshly read etag. The cloud ends at the newer specs,
// as state records them, and the frozen writer exits 1 saying its lock was
// lost.
func TestE2EEtcdFrozenWriterCloud(t *testing.T) {
	needBinary(t)
	t.Parallel()
	const service = "inventory.endpoints.acme-prod.cloud.goog"
	for name, tc := range map[string]struct {
		spec func(t *testing.T, version string) string
		path string // of the calls the outage refuses
		live func(t *testing.T, e *emu) string
		want string // what live says of version 3
	}{
		"datadog upsert": {
			spec: func(t *testing.T, version string) string {
				return spec(policySpec("pol", rid(t, ""), "        - relation: viewer\n          principals: [\"team:00000000-0000-0000-0000-00000000000"+version+"\"]\n", ""))
			},
			path: "/api/v2/restriction_policy/",
			live: func(t *testing.T, e *emu) string {
				for _, b := range e.policy(rid(t, "")) {
					if b.Relation == "viewer" {
						return strings.Join(b.Principals, ",")
					}
				}
				return ""
			},
			want: "team:00000000-0000-0000-0000-000000000003",
		},
		"gcp read-modify-write": {
			spec: func(t *testing.T, version string) string {
				return `resources:
  binding:
    type: gcp:endpoints:ServiceIamBinding
    properties:
      serviceName: ` + service + `
      role: roles/custom.frozen
      members: ["user:v` + version + `@acme.example"]
`
			},
			path: ":setIamPolicy",
			live: func(t *testing.T, e *emu) string {
				return strings.Join(e.iamPolicy("services/"+service).members("roles/custom.frozen"), ",")
			},
			want: "user:v3@acme.example",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			eps := etcdtest.Start(t)
			e := startEmulator(t)
			const prefix = "/reconcile/frozen-cloud"
			other := runner(t, e, eps, prefix, "prod", tc.spec(t, "1"))
			frozen := runner(t, e, eps, prefix, "prod", tc.spec(t, "2"))
			other.must(0, "apply", "--auto-approve")

			e.setUnavailable(func(r *http.Request) bool {
				return r.Method == "POST" && strings.Contains(r.URL.Path, tc.path)
			})
			p := frozen.startProc(nil, "apply", "--auto-approve", "--lock-ttl", "5s")
			if !p.waitFor(&p.out, "retrying in", 1) {
				t.Fatalf("the apply never retried its change:\n%s", p.wait(time.Minute))
			}
			if !p.signal(syscall.SIGSTOP) {
				t.Fatalf("the apply ended before it could be frozen:\n%s", p.wait(time.Minute))
			}
			e.setUnavailable(nil)
			other.write("main.yaml", tc.spec(t, "3"))
			other.must(0, "apply", "--auto-approve", "--lock-timeout", "1m")
			if got := tc.live(t, e); got != tc.want {
				t.Fatalf("after the second runner's apply the cloud holds %q, want %q", got, tc.want)
			}
			mark := e.mark()
			p.signal(syscall.SIGCONT)
			res := p.wait(time.Minute)
			if res.code != 1 || !strings.Contains(res.stderr, "was lost") {
				t.Errorf("the continued apply: want exit 1 saying its lock was lost, got:\n%s", res)
			}
			if calls := e.callsSince(mark, tc.path); len(calls) != 0 {
				t.Errorf("the continued writer sent %v to the cloud after it lost its lock", calls)
			}
			if got := tc.live(t, e); got != tc.want {
				t.Errorf("the cloud holds %q once the frozen writer continued, want the newer specs' %q", got, tc.want)
			}
			other.must(0, "plan", "--detailed-exitcode")
		})
	}
}
