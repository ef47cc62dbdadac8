package main

// Crash safety, end to end: the real binary is killed (SIGKILL), stopped
// (SIGINT, SIGTERM, twice) at random moments of applies of specs with 20 or
// more resources; the next apply must complete, and the emulator must then
// hold exactly the declared objects, each once, with state naming them.
//
// RECONCILE_CRASH_TRIALS sets the number of SIGKILL trials (default 50);
// RECONCILE_CRASH_SEED fixes the random kill moments (the seed used is
// logged).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
	"github.com/reconcile-dev/reconcile/state"
)

// Shape of the crash specs: endpoints and policies, half of the policies
// depending on an endpoint.
const (
	crashEndpoints = 10
	crashPolicies  = 12
)

// crashSpec declares the endpoints and policies of one trial, all named
// after prefix; with secret, each endpoint's description is an fn::secret,
// which state keeps only as a digest.
func crashSpec(prefix, model string, secret bool) string {
	var b strings.Builder
	b.WriteString("resources:\n")
	for i := range crashEndpoints {
		fmt.Fprintf(&b, `  ep%02d:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: %s
      modelId: %s
      displayName: %s-ep%02d
`, i, server.Tenancy, model, prefix, i)
		if secret {
			fmt.Fprintf(&b, "      description: {fn::secret: secret-of-%s-ep%02d}\n", prefix, i)
		}
	}
	for i := range crashPolicies {
		fmt.Fprintf(&b, `  pol%02d:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:%s-pol%02d
      bindings:
        - relation: editor
          principals: [%q]
`, i, prefix, i, role1)
		if i%2 == 1 {
			fmt.Fprintf(&b, "    options:\n      dependsOn: [\"${ep%02d}\"]\n", i%crashEndpoints)
		}
	}
	return b.String()
}

// proc is a run of the binary that the test may signal.
type proc struct {
	w        *ws
	args     []string
	cmd      *exec.Cmd
	out, err watchedBuffer
	start    time.Time
	done     chan struct{}
	res      result
	signaled syscall.Signal // the signal that ended it, if any
}

// startProc starts the binary with args and --emulator=URL, with extra
// environment variables.
func (w *ws) startProc(env []string, args ...string) *proc {
	w.t.Helper()
	args = append(args, "--emulator="+w.emu.URL)
	p := &proc{w: w, args: args, done: make(chan struct{})}
	p.cmd = exec.Command(binPath, args...)
	p.cmd.Dir = w.dir
	p.cmd.Env = append(w.env(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		p.res = result{args: args, stdout: p.out.String(), stderr: p.err.String(), elapsed: time.Since(p.start)}
		if ee, ok := err.(*exec.ExitError); ok {
			p.res.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.signaled = ws.Signal()
			}
		}
		w.mu.Lock()
		w.runs = append(w.runs, p.res)
		w.mu.Unlock()
		close(p.done)
	}()
	return p
}

// watchedBuffer collects a process's output and lets a test wait for what
// it prints: the observable events a signal test waits for, rather than a
// fixed sleep.
type watchedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced at every write
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	if w.changed != nil {
		close(w.changed)
		w.changed = nil
	}
	return n, err
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// next returns what has been written so far and a channel closed at the
// next write.
func (w *watchedBuffer) next() (string, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed == nil {
		w.changed = make(chan struct{})
	}
	return w.b.String(), w.changed
}

// waitFor waits until the output holds n lines containing text, or the
// process ends; it reports whether they appeared.
func (p *proc) waitFor(out *watchedBuffer, text string, n int) bool {
	for {
		s, changed := out.next()
		if count := strings.Count(s, text); count >= n {
			return true
		}
		select {
		case <-changed:
		case <-p.done:
			return strings.Count(out.String(), text) >= n
		}
	}
}

// signal sends sig unless the process has ended; it reports whether it sent it.
func (p *proc) signal(sig syscall.Signal) bool {
	select {
	case <-p.done:
		return false
	default:
	}
	return p.cmd.Process.Signal(sig) == nil
}

// wait waits for the end of the process, at most timeout.
func (p *proc) wait(timeout time.Duration) result {
	p.w.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		p.w.t.Fatalf("reconcile %s did not end within %s\n%s", strings.Join(p.args, " "), timeout, p.res)
	}
	if strings.Contains(p.res.stderr, "goroutine ") || strings.Contains(p.res.stderr, "panic:") {
		p.w.t.Errorf("reconcile printed a stack trace:\n%s", p.res)
	}
	return p.res
}

// cloudCheck is what the emulator holds of one trial.
type cloudCheck struct {
	endpoints map[string][]string // displayName → ids of live endpoints
	policies  map[string]int      // resource id → number of bindings
}

// sdkClient is an OCI SDK client of the emulator, straight (not through the
// recording proxy), its key kept in memory.
func (e *emu) sdkClient(t *testing.T) ailanguage.AIServiceLanguageClient {
	t.Helper()
	cr := e.srv.Creds
	c, err := ailanguage.NewAIServiceLanguageClientWithConfigurationProvider(
		common.NewRawConfigurationProvider(cr.OCITenancy, cr.OCIUser, cr.OCIRegion, cr.OCIFingerprint, cr.OCIPrivateKey, nil))
	if err != nil {
		t.Fatal(err)
	}
	c.Host = e.srv.URL
	return c
}

// cloudOf lists the live endpoints named prefix-* with the official SDK and
// reads the policies of the trial.
func (e *emu) cloudOf(t *testing.T, prefix string) cloudCheck {
	t.Helper()
	out := cloudCheck{endpoints: map[string][]string{}, policies: map[string]int{}}
	c := e.sdkClient(t)
	comp := server.Tenancy
	var page *string
	for {
		resp, err := c.ListEndpoints(context.Background(), ailanguage.ListEndpointsRequest{CompartmentId: &comp, Page: page, Limit: common.Int(100)})
		if err != nil {
			t.Fatalf("OCI list endpoints: %v", err)
		}
		for _, ep := range resp.Items {
			name := strOf(ep.DisplayName)
			if !strings.HasPrefix(name, prefix+"-") {
				continue
			}
			switch ep.LifecycleState {
			case ailanguage.EndpointLifecycleStateDeleted, ailanguage.EndpointLifecycleStateDeleting:
				continue
			}
			out.endpoints[name] = append(out.endpoints[name], strOf(ep.Id))
		}
		if resp.OpcNextPage == nil {
			break
		}
		page = resp.OpcNextPage
	}
	for i := range crashPolicies {
		rid := fmt.Sprintf("dashboard:%s-pol%02d", prefix, i)
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/v2/restriction_policy/"+url.PathEscape(rid), nil)
		for k, v := range e.ddHeaders() {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Data struct {
				Attributes struct {
					Bindings []binding `json:"bindings"`
				} `json:"attributes"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET policy %s: %s %v", rid, resp.Status, err)
		}
		out.policies[rid] = len(doc.Data.Attributes.Bindings)
	}
	return out
}

func strOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkConverged checks that the emulator holds exactly the declared
// objects of the trial, each once, that state names each of them and
// nothing else, and that no intent is left.
func checkConverged(t *testing.T, e *emu, w *ws, prefix string) {
	t.Helper()
	cloud := e.cloudOf(t, prefix)
	st := w.stateList()
	for i := range crashEndpoints {
		node, name := fmt.Sprintf("ep%02d", i), fmt.Sprintf("%s-ep%02d", prefix, i)
		ids := cloud.endpoints[name]
		if len(ids) != 1 {
			t.Errorf("the emulator holds %d live endpoints named %s, want exactly 1: %v", len(ids), name, ids)
		} else if st[node].ID != ids[0] {
			t.Errorf("state has %s = %q, the emulator %q", node, st[node].ID, ids[0])
		}
		delete(cloud.endpoints, name)
		delete(st, node)
	}
	for name, ids := range cloud.endpoints {
		t.Errorf("the emulator holds undeclared endpoints %s: %v", name, ids)
	}
	for i := range crashPolicies {
		node, rid := fmt.Sprintf("pol%02d", i), fmt.Sprintf("dashboard:%s-pol%02d", prefix, i)
		if n := cloud.policies[rid]; n != 1 {
			t.Errorf("policy %s has %d bindings in the emulator, want 1", rid, n)
		}
		if st[node].ID != rid {
			t.Errorf("state has %s = %q, want %q", node, st[node].ID, rid)
		}
		delete(st, node)
	}
	for name, ent := range st {
		t.Errorf("state holds undeclared %s = %+v", name, ent)
	}
	if ins := w.stateIntents(); len(ins) != 0 {
		t.Errorf("intents left after a complete apply: %+v", ins)
	}
}

// stateIntents reads the intents of the working directory's state.
func (w *ws) stateIntents() []state.Intent {
	w.t.Helper()
	var st interface {
		Intents() ([]state.Intent, error)
		Close() error
	}
	if w.etcd != nil {
		st = w.openEtcd()
	} else {
		bolt, err := state.Open(w.path(".reconcile/state.db"), state.Options{ReadOnly: true, LockTimeout: 5 * time.Second})
		if err != nil {
			w.t.Fatalf("open the state: %v", err)
		}
		st = bolt
	}
	defer st.Close()
	ins, err := st.Intents()
	if err != nil {
		w.t.Fatalf("read the intents: %v", err)
	}
	return ins
}

// crashStats counts what the trials met.
type crashStats struct {
	mu                                  sync.Mutex
	trials, killedMidway, finishedFirst int
	withIntents, intentsAtKill          int
	outcomes                            map[string]int
	killAt                              []int // creates started before each kill
}

func (s *crashStats) add(f func(s *crashStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outcomes == nil {
		s.outcomes = map[string]int{}
	}
	f(s)
}

// resolveOutcomes counts the lines in which an apply reports how it
// resolved interrupted creates.
func resolveOutcomes(out string) map[string]int {
	m := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		for word, outcome := range map[string]string{": adopted ": "adopted", " was recorded already": "recorded", " made nothing": "cleared", ": recorded since as ": "superseded", "could not tell": "kept"} {
			if strings.Contains(line, word) {
				m[outcome]++
			}
		}
	}
	return m
}

func crashSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("RECONCILE_CRASH_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("RECONCILE_CRASH_SEED=%q: %v", v, err)
		}
		seed = s
	}
	t.Logf("kill moments from seed %d (RECONCILE_CRASH_SEED=%d repeats them)", seed, seed)
	return seed
}

// runTrials runs n trials on workers goroutines, each worker with its own
// emulator; trial gets the emulator, the active model, the trial's number
// and a random source of its own.
func runTrials(t *testing.T, n, workers int, settings server.Settings, trial func(t *testing.T, e *emu, model string, i int, rng *rand.Rand)) {
	seed := crashSeed(t)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		e := startEmulator(t)
		model := e.activeModel(t.TempDir())
		e.settings(settings)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				rng := rand.New(rand.NewPCG(seed, uint64(i)))
				t.Run(fmt.Sprintf("trial%02d", i), func(t *testing.T) { trial(t, e, model, i, rng) })
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

func trialCount(t *testing.T, def int) int {
	if v := os.Getenv("RECONCILE_CRASH_TRIALS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("RECONCILE_CRASH_TRIALS=%q: want a positive number", v)
		}
		return n
	}
	return def
}

// TestCrashSIGKILL kills apply with SIGKILL at random moments; the next
// apply must converge without orphans or duplicates.
func TestCrashSIGKILL(t *testing.T) {
	needBinary(t)
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	t.Parallel()
	n := trialCount(t, 50)
	var stats crashStats
	runTrials(t, n, 5, server.Settings{CreateDelayMS: 300, LatencyMS: 30}, func(t *testing.T, e *emu, model string, i int, rng *rand.Rand) {
		w := newWS(t, e)
		prefix := fmt.Sprintf("kill%02d-%d", i, rng.IntN(1e6))
		// Every fifth trial puts a secret in the endpoints' inputs: their
		// interrupted creates cannot be replayed from state, only by the
		// apply that has the secrets again.
		secret := i%5 == 4
		w.write("main.yaml", crashSpec(prefix, model, secret))
		// Kill right after the k-th create started: its intent is on disk
		// and its call in flight (endpoints take 300ms to create).
		k := 1 + rng.IntN(crashEndpoints+crashPolicies)
		p := w.startProc(nil, "apply", "--auto-approve")
		p.waitFor(&p.out, ": Creating...", k)
		killed := p.signal(syscall.SIGKILL)
		r := p.wait(30 * time.Second)
		if killed && p.signaled != syscall.SIGKILL {
			// It ended just before the kill.
			killed = false
		}
		if !killed && r.code != 0 {
			t.Fatalf("the first apply failed without being killed:\n%s", r)
		}
		pending := len(w.stateIntents())
		t.Logf("kill after create %d started: killed %v, ran %s, %d intents pending", k, killed, r.elapsed.Round(time.Millisecond), pending)
		stats.add(func(s *crashStats) {
			s.trials++
			s.killAt = append(s.killAt, k)
			if killed {
				s.killedMidway++
			} else {
				s.finishedFirst++
			}
			if pending > 0 {
				s.withIntents++
				s.intentsAtKill += pending
			}
		})
		// The kernel released the killed holder's lock: no --lock-timeout.
		r = w.must(0, "apply", "--auto-approve")
		if pending > 0 && !strings.Contains(r.stdout, "Resolving") {
			t.Errorf("%d intents were pending but the apply did not resolve them:\n%s", pending, r)
		}
		stats.add(func(s *crashStats) {
			for k, v := range resolveOutcomes(r.stdout + r.stderr) {
				s.outcomes[k] += v
			}
		})
		checkConverged(t, e, w, prefix)
		w.must(0, "plan", "--detailed-exitcode")
		if secret {
			if b, _ := os.ReadFile(w.path(".reconcile/state.db")); bytes.Contains(b, []byte("secret-of-")) {
				t.Errorf("the state holds a secret in clear")
			}
			w.mu.Lock()
			for _, r := range w.runs {
				if strings.Contains(r.stdout+r.stderr, "secret-of-") {
					t.Errorf("reconcile %s shows a secret in clear", strings.Join(r.args, " "))
				}
			}
			w.mu.Unlock()
		}
	})
	t.Logf("SIGKILL trials: %d (%d killed mid-apply, %d finished first); %d killed with creates in flight (%d intents in all); resolved: %v",
		stats.trials, stats.killedMidway, stats.finishedFirst, stats.withIntents, stats.intentsAtKill, stats.outcomes)
	if stats.trials == n && n >= 20 && stats.withIntents == 0 {
		t.Errorf("no trial killed an apply with a create in flight: the harness does not exercise intents")
	}
}

// TestCrashGracefulStop stops applies with SIGINT or SIGTERM right after a
// random number of creates started: the running creates finish, nothing
// new starts, state is saved with no intent left, the exit is 1 with what
// was left undone, and the next apply completes.
func TestCrashGracefulStop(t *testing.T) {
	needBinary(t)
	if runtime.GOOS == "windows" {
		t.Skip("needs signals")
	}
	t.Parallel()
	runTrials(t, 10, 2, server.Settings{CreateDelayMS: 300}, func(t *testing.T, e *emu, model string, i int, rng *rand.Rand) {
		w := newWS(t, e)
		prefix := fmt.Sprintf("stop%02d-%d", i, rng.IntN(1e6))
		w.write("main.yaml", crashSpec(prefix, model, false))
		sig, name := syscall.SIGINT, "SIGINT"
		if i%2 == 1 {
			sig, name = syscall.SIGTERM, "SIGTERM"
		}
		p := w.startProc(nil, "apply", "--auto-approve", "--parallelism", "4")
		// Signal once the k-th create has started: the apply is past its
		// plan, its signal handler installed.
		k := 1 + rng.IntN(8)
		if !p.waitFor(&p.out, ": Creating...", k) {
			t.Fatalf("the apply ended before %d creates started:\n%s", k, p.wait(time.Minute))
		}
		if !p.signal(sig) {
			t.Fatalf("the apply ended before the signal:\n%s", p.wait(time.Minute))
		}
		r := p.wait(40 * time.Second)
		// Every apply that received a stop signal exits 1, even when the
		// operations it had started were the last ones.
		if r.code != 1 {
			t.Fatalf("apply stopped by %s after %d creates started: want exit 1, got:\n%s", name, k, r)
		}
		wantStderr(t, r, "Received "+name)
		if !strings.Contains(r.stdout, "Apply complete!") { // the signal came after the last operation
			wantStdout(t, r, "Apply stopped by "+name, "What completed is saved in state")
		}
		if strings.Contains(r.stdout, "Interrupted while running") {
			t.Errorf("a graceful stop abandoned running operations:\n%s", r)
		}
		if ins := w.stateIntents(); len(ins) != 0 {
			t.Errorf("a graceful stop left intents: %+v\n%s", ins, r)
		}
		w.must(0, "apply", "--auto-approve")
		checkConverged(t, e, w, prefix)
	})
}

// TestCrashForcedStop sends a second signal: the running operations are
// abandoned at once, the exit is 130, and the next apply resolves them and
// completes. A short grace period does the same without the second signal.
func TestCrashForcedStop(t *testing.T) {
	needBinary(t)
	if runtime.GOOS == "windows" {
		t.Skip("needs signals")
	}
	t.Parallel()
	runTrials(t, 6, 2, server.Settings{CreateDelayMS: 3000}, func(t *testing.T, e *emu, model string, i int, rng *rand.Rand) {
		w := newWS(t, e)
		prefix := fmt.Sprintf("force%02d-%d", i, rng.IntN(1e6))
		w.write("main.yaml", crashSpec(prefix, model, false))
		graceOnly := i%2 == 1
		var env []string
		if graceOnly {
			env = []string{"RECONCILE_STOP_GRACE=500ms"}
		}
		p := w.startProc(env, "apply", "--auto-approve")
		// Endpoint creates take 3s: once one has started, it is running
		// when the signal comes.
		if !p.waitFor(&p.out, "ep00: Creating...", 1) {
			t.Fatalf("the apply ended before creating ep00:\n%s", p.wait(time.Minute))
		}
		start := time.Now()
		if !p.signal(syscall.SIGINT) {
			t.Fatal("the apply ended before the signal")
		}
		if !graceOnly {
			// The second signal once the first was taken.
			if !p.waitFor(&p.err, "Received SIGINT", 1) {
				t.Fatalf("the apply ended without taking the first signal:\n%s", p.wait(time.Minute))
			}
			p.signal(syscall.SIGTERM)
		}
		r := p.wait(30 * time.Second)
		took := time.Since(start)
		wantCode := 130
		if graceOnly {
			wantCode = 1
			wantStderr(t, r, "did not finish within 500ms: abandoning them")
		} else {
			wantStderr(t, r, "Received SIGTERM again: abandoning the running operations now")
		}
		if r.code != wantCode {
			t.Fatalf("want exit %d, got:\n%s", wantCode, r)
		}
		wantStdout(t, r, "Apply stopped by SIGINT", "Interrupted while running")
		if took > 15*time.Second { // well below the 20s grace a graceful stop waits
			t.Errorf("the apply took %s to stop", took)
		}
		if len(w.stateIntents()) == 0 {
			t.Errorf("the creates abandoned left no intent:\n%s", r)
		}
		r = w.must(0, "apply", "--auto-approve")
		wantStdout(t, r, "Resolving ")
		checkConverged(t, e, w, prefix)
	})
}
