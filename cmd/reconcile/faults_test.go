package main

// Faults, locks and state integrity, end to end.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// faultSpec declares lookups, endpoints and policies named after prefix.
func faultSpec(prefix, model string) string {
	var b strings.Builder
	b.WriteString(lookupsSpec + "resources:\n")
	for i := range 3 {
		fmt.Fprintf(&b, `  ep%d:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: %s
      modelId: %s
      displayName: %s-ep%d
      freeformTags: {etag: "${svcPolicy.etag}"}
`, i, server.Tenancy, model, prefix, i)
	}
	for i := range 3 {
		b.WriteString(policySpec(fmt.Sprintf("pol%d", i), fmt.Sprintf("dashboard:%s-pol%d", prefix, i), "", fmt.Sprintf("      dependsOn: [\"${ep%d}\"]\n", i)))
	}
	return b.String()
}

// emulatorStats reads the emulator's request and fault counters.
func (e *emu) stats() (requests, faults int) {
	e.t.Helper()
	var s struct {
		Requests int `json:"requests"`
		Faults   int `json:"faultsInjected"`
	}
	e.do("GET", "/_emulator/stats", nil, nil, &s)
	return s.Requests, s.Faults
}

// driftShape is what a drift report says, without the ids and serials that
// differ between two emulators.
func driftShape(t *testing.T, r result) string {
	t.Helper()
	var doc struct {
		Items []struct {
			Address string `json:"address"`
			Status  string `json:"status"`
			Fields  []struct {
				Path    string `json:"path"`
				Applied any    `json:"applied"`
				Live    any    `json:"live"`
			} `json:"fields"`
		} `json:"items"`
		Errors []any `json:"errors"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("drift --output json: %v\n%s", err, r)
	}
	var parts []string
	for _, it := range doc.Items {
		for _, f := range it.Fields {
			parts = append(parts, fmt.Sprintf("%s %s %s: %v -> %v", it.Address, it.Status, f.Path, f.Applied, f.Live))
		}
		if len(it.Fields) == 0 {
			parts = append(parts, it.Address+" "+it.Status)
		}
	}
	sort.Strings(parts)
	return fmt.Sprintf("%s; errors %v", strings.Join(parts, "; "), doc.Errors)
}

var summaryLine = regexp.MustCompile(`(?m)^(Apply complete!.*|Plan: .*|No changes\..*)$`)

// summaries are the summary lines of an output, for comparing two runs.
func summaries(r result) string {
	return strings.Join(summaryLine.FindAllString(r.stdout, -1), " | ")
}

// TestE2EFaults runs the same scenario on an emulator failing 20% of the
// calls (429 with Retry-After, 500, 503, dropped connections) with added
// latency, and on one without faults: apply, plan and drift must reach the
// same results, and the apply output must show the retries.
func TestE2EFaults(t *testing.T) {
	needBinary(t)
	t.Parallel()
	type run struct {
		name     string
		settings server.Settings
		e        *emu
		w        *ws
		out      []string
		applyOut string
		allOut   string
	}
	runs := []*run{
		{name: "clean"},
		{name: "faulty", settings: server.Settings{FaultRate: 0.2, FaultStatuses: []int{429, 500, 503, 0}, LatencyMS: 20}},
	}
	for _, r := range runs {
		r.e = startEmulator(t)
		r.w = newWS(t, r.e)
		model := r.e.activeModel(t.TempDir())
		r.w.write("main.yaml", faultSpec("faults", model))
		r.e.settings(r.settings)
	}
	step := func(what string, f func(r *run) string) {
		t.Helper()
		for _, r := range runs {
			r.out = append(r.out, what+": "+f(r))
		}
	}

	step("apply", func(r *run) string {
		res := r.w.must(0, "apply", "--auto-approve")
		r.applyOut += res.stdout
		return summaries(res)
	})
	step("plan", func(r *run) string { return summaries(r.w.must(0, "plan", "--detailed-exitcode")) })
	step("drift", func(r *run) string { return driftShape(t, r.w.must(0, "drift", "--output", "json")) })
	// Another user changes a policy and an endpoint, the same way in both.
	for _, r := range runs {
		// Out-of-band calls, with the faults off for them.
		saved := r.settings
		r.e.settings(server.Settings{})
		r.e.setPolicy("dashboard:faults-pol1", []binding{{Relation: "viewer", Principals: []string{role2}}})
		id := r.w.stateList()["ep2"].ID
		c := r.e.sdkClient(t)
		if _, err := c.UpdateEndpoint(context.Background(), ailanguage.UpdateEndpointRequest{EndpointId: &id,
			UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{DisplayName: strPtr("renamed-by-hand")}}); err != nil {
			t.Fatalf("OCI update endpoint: %v", err)
		}
		r.e.settings(saved)
	}
	step("drift after changes", func(r *run) string { return driftShape(t, r.w.must(2, "drift", "--output", "json")) })
	step("plan after changes", func(r *run) string { return summaries(r.w.must(2, "plan", "--detailed-exitcode")) })
	step("apply after changes", func(r *run) string {
		res := r.w.must(0, "apply", "--auto-approve")
		r.applyOut += res.stdout
		return summaries(res)
	})
	step("plan at the end", func(r *run) string { return summaries(r.w.must(0, "plan", "--detailed-exitcode")) })
	step("drift at the end", func(r *run) string { return driftShape(t, r.w.must(0, "drift", "--output", "json")) })

	clean, faulty := runs[0], runs[1]
	for _, r := range runs {
		r.w.mu.Lock()
		for _, res := range r.w.runs {
			r.allOut += res.stdout + res.stderr
		}
		r.w.mu.Unlock()
	}
	for i := range clean.out {
		if clean.out[i] != faulty.out[i] {
			t.Errorf("with faults:\n  %s\nwithout:\n  %s", faulty.out[i], clean.out[i])
		}
	}
	if n := strings.Count(faulty.allOut, "; retrying in "); n == 0 {
		t.Errorf("the commands against the faulty emulator show no retry:\n%s", faulty.allOut)
	} else {
		t.Logf("retry lines in the output of the commands against the faulty emulator: %d (%d in the applies' progress lines)",
			n, strings.Count(faulty.applyOut, "; retrying in "))
	}
	if strings.Contains(clean.allOut, "retrying") {
		t.Errorf("the commands against the clean emulator show retries")
	}
	requests, faults := faulty.e.stats()
	t.Logf("faulty emulator: %d cloud API calls, %d faults injected (%.0f%%), all absorbed: every command reached the clean run's result",
		requests, faults, 100*float64(faults)/float64(max(requests, 1)))
	if faults == 0 {
		t.Errorf("no fault was injected")
	}

	// A non-retriable error fails fast, with the vendor's message, even
	// among the faults.
	bad := fmt.Sprintf(`  bad:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:faults-bad
      bindings:
        - relation: editor
          principals: [%q, "role:not-a-uuid"]
`, role1)
	w := newWS(t, faulty.e)
	w.write("main.yaml", "resources:\n"+bad)
	r := w.must(1, "apply", "--auto-approve")
	wantStderr(t, r, "Error: bad", "400", "Invalid principal")
	// Faults injected on the way may be retried; the 400 itself is not.
	for _, line := range strings.Split(r.stdout+r.stderr, "\n") {
		if strings.Contains(line, "retrying in") && strings.Contains(line, " 400") {
			t.Errorf("a 400 was retried: %s", line)
		}
	}
	if len(w.stateIntents()) != 0 {
		t.Errorf("a refused create left an intent")
	}
}

func strPtr(s string) *string { return &s }

// TestE2EConcurrentApplies runs two applies on one state: exactly one
// proceeds; the other waits --lock-timeout and names the holder. A killed
// holder leaves no stale lock.
func TestE2EConcurrentApplies(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	e.settings(server.Settings{CreateDelayMS: 2500})
	w.write("main.yaml", "resources:\n"+endpointSpec("ep", model, "lock-ep", ""))
	holderFile := w.path(".reconcile/state.db.lock")
	waitHolder := func(p *proc) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if b, err := os.ReadFile(holderFile); err == nil && bytes.Contains(b, []byte(fmt.Sprintf(`"pid":%d`, p.cmd.Process.Pid))) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the first apply never took the lock")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	first := w.startProc(nil, "apply", "--auto-approve")
	waitHolder(first)
	second := w.startProc(nil, "apply", "--auto-approve", "--lock-timeout", "500ms")
	r2 := second.wait(30 * time.Second)
	r1 := first.wait(30 * time.Second)
	if r1.code != 0 || !strings.Contains(r1.stdout, "1 created") {
		t.Errorf("the first apply:\n%s", r1)
	}
	if r2.code != 1 {
		t.Fatalf("the second apply: want exit 1, got:\n%s", r2)
	}
	wantStderr(t, r2, fmt.Sprintf("locked by pid %d", first.cmd.Process.Pid), `("reconcile apply")`, "--lock-timeout")
	if r2.elapsed < 450*time.Millisecond {
		t.Errorf("the second apply gave up after %s, before its --lock-timeout", r2.elapsed)
	}

	// With a long enough --lock-timeout the second waits, then finds
	// nothing left to do.
	w.write("main.yaml", strings.Replace(mustRead(t, w.path("main.yaml")), "lock-ep", "lock-ep-2", 1))
	first = w.startProc(nil, "apply", "--auto-approve")
	waitHolder(first)
	second = w.startProc(nil, "apply", "--auto-approve", "--lock-timeout", "30s")
	r1, r2 = first.wait(30*time.Second), second.wait(40*time.Second)
	if r1.code != 0 || r2.code != 0 || !strings.Contains(r1.stdout, "1 updated") || !strings.Contains(r2.stdout, "No changes") {
		t.Errorf("two applies, the second waiting:\n%s\n%s", r1, r2)
	}

	// A killed holder leaves no stale lock: the next apply, with no
	// --lock-timeout, proceeds at once.
	w.write("main.yaml", strings.Replace(mustRead(t, w.path("main.yaml")), "lock-ep-2", "lock-ep-3", 1))
	first = w.startProc(nil, "apply", "--auto-approve")
	waitHolder(first)
	first.signal(syscall.SIGKILL)
	first.wait(10 * time.Second)
	r := w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "Apply complete!")
	cloud := e.cloudOfNames(t, "lock-ep")
	if len(cloud) != 1 {
		t.Errorf("live endpoints named lock-ep*: %v, want one", cloud)
	}
}

// cloudOfNames lists the live endpoints whose displayName starts with prefix.
func (e *emu) cloudOfNames(t *testing.T, prefix string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	c := e.sdkClient(t)
	comp := server.Tenancy
	resp, err := c.ListEndpoints(context.Background(), ailanguage.ListEndpointsRequest{CompartmentId: &comp})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range resp.Items {
		if strings.HasPrefix(strOf(ep.DisplayName), prefix) && ep.LifecycleState != ailanguage.EndpointLifecycleStateDeleted &&
			ep.LifecycleState != ailanguage.EndpointLifecycleStateDeleting {
			out[strOf(ep.DisplayName)] = append(out[strOf(ep.DisplayName)], strOf(ep.Id))
		}
	}
	return out
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestE2EStateIntegrity: history, older versions, and a damaged state file
// refused with a clear message and never written to; state file mode 0600.
func TestE2EStateIntegrity(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))
	w.must(0, "apply", "--auto-approve")
	first := w.stateShow("pol").Serial
	w.write("main.yaml", spec(policySpec("pol", id, fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n", role2), "")))
	w.must(0, "apply", "--auto-approve")
	r := w.must(0, "state", "history")
	if !regexp.MustCompile(`(?m)^\d+\s+\d{4}-\d\d-\d\dT\S+\s+apply\s+.*create=`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^\d+\s+\S+\s+apply\s+.*update=1`).MatchString(r.stdout) {
		t.Errorf("state history does not list the two applies with serial, time, command and counts:\n%s", r)
	}
	old := w.must(0, "state", "show", "pol", "--serial", fmt.Sprint(first))
	cur := w.must(0, "state", "show", "pol")
	if strings.Contains(old.stdout, "viewer") || !strings.Contains(cur.stdout, "viewer") {
		t.Errorf("state show --serial %d does not show the older version:\n%s\n%s", first, old, cur)
	}
	// A serial the state never had is an error, not the current version.
	r = w.run("state", "show", "pol", "--serial", "999")
	if r.code != 1 || !strings.Contains(r.stderr, "has serials 0 to") || strings.Contains(r.stdout, "viewer") {
		t.Errorf("state show --serial 999: want exit 1 naming the serials there are, got:\n%s", r)
	}
	path := w.path(".reconcile/state.db")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flipped := flipRecordByte(t, path, "pol", id)
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, damaged := range map[string][]byte{
		"truncated":            good[:len(good)/3],
		"zeroed":               append(bytes.Repeat([]byte{0}, 8192), good[8192:]...),
		"garbage":              []byte("this is not a state file, just some text that happens to be here\n"),
		"empty":                {},
		"one byte of a record": flipped,
	} {
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"apply", "--auto-approve"}, {"plan"}, {"state", "list"}, {"destroy", "--auto-approve"}} {
			r := w.run(args...)
			if r.code != 1 || !strings.Contains(r.stderr, "not a valid reconcile state file") {
				t.Errorf("%s state, %v: want exit 1 saying the file is not a valid state, got:\n%s", name, args, r)
			}
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, damaged) {
			t.Errorf("%s state: reconcile wrote to it", name)
		}
	}
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	w.must(0, "plan", "--detailed-exitcode")
}

// flipRecordByte changes one byte of the text in the stored record name, as
// a disk or a hand edit might, leaving the rest of the file as it is, and
// returns the file's bytes.
func flipRecordByte(t *testing.T, path, name, text string) []byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("records"))
		v := bytes.Clone(b.Get([]byte(name)))
		i := bytes.Index(v, []byte(text))
		if i < 0 {
			return fmt.Errorf("record %q does not hold %q", name, text)
		}
		v[i+len(text)-1] ^= 0x01
		return b.Put([]byte(name), v)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
