package main

// The event stream of --output jsonl, end to end: the real binary on the
// emulator, every line of stdout parsed and checked.

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// event is one line of an event stream, decoded: the keys most checks
// read, and all of them.
type event struct {
	FormatVersion string `json:"format_version"`
	Type          string `json:"type"`
	Timestamp     string `json:"timestamp"`
	Message       string `json:"message"`
	Address       string `json:"address"`
	ResourceType  string `json:"resource_type"`
	Action        string `json:"action"`
	ID            string `json:"id"`
	Error         string `json:"error"`
	Detail        string `json:"detail"`
	Retry         *struct {
		Method  string `json:"method"`
		Path    string `json:"path"`
		Cause   string `json:"cause"`
		Attempt int    `json:"attempt"`
		WaitMS  int64  `json:"wait_ms"`
	} `json:"retry"`
	Operation  string         `json:"operation"`
	Complete   bool           `json:"complete"`
	Stopped    string         `json:"stopped"`
	HasChanges bool           `json:"has_changes"`
	Counts     map[string]int `json:"counts"`
	Failed     []struct {
		Address, Position, Error string
	} `json:"failed"`
	Skipped  []string       `json:"skipped"`
	Position string         `json:"position"`
	Severity string         `json:"severity"`
	File     string         `json:"file"`
	Line     int            `json:"line"`
	Outputs  map[string]any `json:"outputs"`
	raw      map[string]any
	text     string
}

// parseStream parses the stdout of a run with --output jsonl: each line
// must be one JSON object with the keys every event has, the first the
// version event, the timestamps in order, and nothing else on stdout.
func parseStream(t *testing.T, r result) []event {
	t.Helper()
	if testing.Verbose() {
		t.Logf("%s", r)
	}
	if r.stdout == "" {
		t.Fatalf("no events on stdout:\n%s", r)
	}
	if !strings.HasSuffix(r.stdout, "\n") {
		t.Errorf("the stream does not end with a whole line:\n%s", r)
	}
	var evs []event
	for i, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var ev event
		dec := json.NewDecoder(strings.NewReader(line))
		if err := dec.Decode(&ev); err != nil || dec.More() {
			t.Fatalf("line %d of stdout is not one JSON object (%v): %q\n%s", i+1, err, line, r)
		}
		if err := json.Unmarshal([]byte(line), &ev.raw); err != nil {
			t.Fatal(err)
		}
		ev.text = line
		if ev.FormatVersion != "1.1" || ev.Type == "" || ev.Message == "" {
			t.Errorf("line %d lacks a format_version 1.1, type or message: %s", i+1, line)
		}
		if _, err := time.Parse(time.RFC3339Nano, ev.Timestamp); err != nil || (i > 0 && ev.Timestamp < evs[i-1].Timestamp) {
			t.Errorf("line %d: timestamp %q not RFC 3339 or earlier than the line before", i+1, ev.Timestamp)
		}
		evs = append(evs, ev)
	}
	if evs[0].Type != "version" || evs[0].raw["command"] != r.args[0] || evs[0].raw["reconcile_version"] == "" {
		t.Errorf("the first event is not the version of %s: %s", r.args[0], evs[0].text)
	}
	return evs
}

// ofType returns the events of the type.
func ofType(evs []event, typ string) []event {
	var out []event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// last returns the last event, which must be of the type.
func lastEvent(t *testing.T, evs []event, typ string) event {
	t.Helper()
	e := evs[len(evs)-1]
	if e.Type != typ {
		t.Fatalf("the last event is %s, want %s: %s", e.Type, typ, e.text)
	}
	return e
}

// opsOf lists "type address action" of the operation events.
func opsOf(evs []event) []string {
	var out []string
	for _, e := range evs {
		if strings.HasPrefix(e.Type, "op_") {
			out = append(out, e.Type+" "+e.Address+" "+e.Action)
		}
	}
	slices.Sort(out)
	return out
}

func addrsOf(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Address+" "+e.Action)
	}
	slices.Sort(out)
	return out
}

// TestE2EEventsLifecycle runs plan, apply (creates; then an update and a
// delete; then a failure with a skipped dependent) and destroy with
// --output jsonl, checking each stream line by line.
func TestE2EEventsLifecycle(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	pol := rid(t, "pol")
	ep := endpointSpec("ep", model, "events-ep", "")
	w.write("main.yaml", spec(ep, policySpec("pol", pol, "", "")))

	// plan: the changes, the outputs, the summary; exit 2 with changes.
	r := w.must(2, "plan", "--output", "jsonl", "--detailed-exitcode")
	evs := parseStream(t, r)
	changes := ofType(evs, "planned_change")
	if got := addrsOf(changes); !slices.Equal(got, []string{"ep create", "me read", "pol create", "svcPolicy read"}) {
		t.Errorf("planned changes %q", got)
	}
	for _, c := range changes {
		ch, _ := c.raw["change"].(map[string]any)
		if c.Address == "ep" && (c.ResourceType != "oci:AiLanguage:Endpoint" || c.Position != "main.yaml:14:3" || ch["address"] != "ep" || ch["action"] != "create") {
			t.Errorf("planned_change of ep: %s", c.text)
		}
	}
	if n := len(ofType(evs, "op_start")); n != 0 {
		t.Errorf("a plan wrote %d op_start events", n)
	}
	if _, ok := ofType(evs, "outputs")[0].Outputs["policyEtag"]; !ok {
		t.Errorf("outputs event without policyEtag")
	}
	sum := lastEvent(t, evs, "summary")
	if sum.Operation != "plan" || !sum.HasChanges || sum.Counts["create"] != 2 || sum.Counts["read"] != 2 {
		t.Errorf("plan summary: %s", sum.text)
	}

	// apply: the plan's changes, then each create from start to end.
	r = w.must(0, "apply", "--auto-approve", "--output", "jsonl")
	evs = parseStream(t, r)
	if got := opsOf(evs); !slices.Equal(got, []string{"op_complete ep create", "op_complete pol create", "op_start ep create", "op_start pol create"}) {
		t.Errorf("operations %q", got)
	}
	if i, j := slices.IndexFunc(evs, func(e event) bool { return e.Type == "planned_change" }), slices.IndexFunc(evs, func(e event) bool { return e.Type == "op_start" }); i < 0 || j < i {
		t.Errorf("the planned changes do not come before the operations")
	}
	for _, c := range ofType(evs, "op_complete") {
		if want := w.stateList()[c.Address].ID; c.ID != want || c.ID == "" {
			t.Errorf("op_complete of %s has id %q, want %q", c.Address, c.ID, want)
		}
	}
	sum = lastEvent(t, evs, "summary")
	if sum.Operation != "apply" || !sum.Complete || sum.Counts["create"] != 2 || sum.Stopped != "" {
		t.Errorf("apply summary: %s", sum.text)
	}
	if evs[len(evs)-2].Type != "outputs" || evs[len(evs)-2].Outputs["policyEtag"] == nil {
		t.Errorf("the outputs do not come before the summary: %s", evs[len(evs)-2].text)
	}
	if r.stderr != "" {
		t.Errorf("a clean apply wrote to stderr:\n%s", r)
	}

	// An update in place and a delete.
	w.write("main.yaml", spec(endpointSpec("ep", model, "events-ep-renamed", "")))
	r = w.must(0, "apply", "--auto-approve", "--output", "jsonl")
	evs = parseStream(t, r)
	if got := addrsOf(ofType(evs, "planned_change")); !slices.Equal(got, []string{"ep update", "pol delete"}) {
		t.Errorf("planned changes %q", got)
	}
	if got := opsOf(evs); !slices.Equal(got, []string{"op_complete ep update", "op_complete pol delete", "op_start ep update", "op_start pol delete"}) {
		t.Errorf("operations %q", got)
	}
	sum = lastEvent(t, evs, "summary")
	if !sum.Complete || sum.Counts["update"] != 1 || sum.Counts["delete"] != 1 {
		t.Errorf("apply summary: %s", sum.text)
	}

	// A failure: its dependent is skipped, the independent one made.
	bad := fmt.Sprintf(`  bad:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: %s
      bindings:
        - relation: editor
          principals: [%q, "role:not-a-uuid"]
`, rid(t, "bad"), role1)
	w.write("main.yaml", spec(endpointSpec("ep", model, "events-ep-renamed", ""), bad, policySpec("dep", rid(t, "dep"), "", "      dependsOn: [\"${bad}\"]\n"),
		policySpec("good", rid(t, "good"), "", "")))
	r = w.must(1, "apply", "--auto-approve", "--output", "jsonl")
	evs = parseStream(t, r)
	errored := ofType(evs, "op_errored")
	if len(errored) != 1 || errored[0].Address != "bad" || errored[0].Action != "create" || !strings.Contains(errored[0].Error, "Invalid principal") {
		t.Errorf("op_errored events: %v", errored)
	}
	if sk := ofType(evs, "op_skipped"); len(sk) != 1 || sk[0].Address != "dep" {
		t.Errorf("op_skipped events: %v", sk)
	}
	sum = lastEvent(t, evs, "summary")
	if sum.Complete || len(sum.Failed) != 1 || sum.Failed[0].Address != "bad" || !strings.Contains(sum.Failed[0].Error, "Invalid principal") ||
		sum.Failed[0].Position == "" || !slices.Equal(sum.Skipped, []string{"dep"}) || sum.Counts["create"] != 1 {
		t.Errorf("summary of a failed apply: %s", sum.text)
	}
	if len(evs[len(evs)-2].Outputs) != 0 {
		t.Errorf("an incomplete apply recorded outputs: %s", evs[len(evs)-2].text)
	}
	wantStderr(t, r, "Error: bad (main.yaml:", "Invalid principal")

	// destroy: deletes in reverse order, as events.
	r = w.must(0, "destroy", "--auto-approve", "--output", "jsonl")
	evs = parseStream(t, r)
	if got := addrsOf(ofType(evs, "planned_change")); !slices.Equal(got, []string{"ep delete", "good delete"}) {
		t.Errorf("planned changes of destroy %q", got)
	}
	if got := opsOf(evs); !slices.Equal(got, []string{"op_complete ep delete", "op_complete good delete", "op_start ep delete", "op_start good delete"}) {
		t.Errorf("operations of destroy %q", got)
	}
	sum = lastEvent(t, evs, "summary")
	if sum.Operation != "destroy" || !sum.Complete || sum.Counts["delete"] != 2 {
		t.Errorf("destroy summary: %s", sum.text)
	}
	if got := w.stateList(); len(got) != 0 {
		t.Errorf("state after destroy: %v", got)
	}
}

// TestE2EEventsErrors: a run that stops before planning writes its
// errors as diagnostic events (with FILE:LINE:COL for the specs'), and
// still nothing but whole lines of JSON; other commands refuse jsonl.
func TestE2EEventsErrors(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	w.write("main.yaml", "resources:\n"+endpointSpec("ep", model, "x", "      inferenceUnit: 2\n"))
	r := w.must(1, "plan", "--output", "jsonl")
	evs := parseStream(t, r)
	diags := ofType(evs, "diagnostic")
	if len(diags) != 1 || diags[0].Severity != "error" || diags[0].File != "main.yaml" || diags[0].Line != 8 ||
		diags[0].Position != "main.yaml:8:7" || diags[0].raw["suggestion"] != "inferenceUnits" {
		t.Errorf("diagnostics %v", diags)
	}
	if len(ofType(evs, "summary")) != 0 {
		t.Errorf("a plan that did not plan wrote a summary")
	}
	wantStderr(t, r, "main.yaml:8:7: error: unknown field")

	w.write("main.yaml", "resources:\n"+endpointSpec("ep", model, "x", ""))
	r = w.must(1, "apply", "--output", "jsonl") // no terminal, no --auto-approve
	evs = parseStream(t, r)
	if d := lastEvent(t, evs, "diagnostic"); d.Severity != "error" || d.Position != "" || !strings.Contains(d.raw["summary"].(string), "apply needs confirmation") {
		t.Errorf("the refusal: %s", d.text)
	}
	if len(ofType(evs, "planned_change")) != 1 {
		t.Errorf("the refused apply did not show its plan as events")
	}

	for _, args := range [][]string{{"drift"}, {"validate"}, {"state", "list"}} {
		r := w.run(append(args, "--output", "jsonl")...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "--output jsonl is the event stream of plan, apply and destroy") {
			t.Errorf("%v --output jsonl:\n%s", args, r)
		}
	}
}

// TestE2EEventsRetry: retries of the emulator's injected faults (every
// call answering 503 until the test, having seen the retry event, turns
// them off) are retry events: inside an operation of an apply, with its
// address and action, and outside one, during a plan's refresh, with the
// address of the node read. A slow create reports op_progress.
func TestE2EEventsRetry(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	w.write("main.yaml", "resources:\n"+endpointSpec("ep", model, "events-retry", ""))
	w.must(0, "plan", "--out", "p.plan")
	faults := server.Settings{FaultRate: 1, FaultStatuses: []int{503}, CreateDelayMS: 1500}
	e.settings(faults)

	// The plan file's apply calls the cloud first in the create.
	p := w.startProc(nil, "apply", "p.plan", "--output", "jsonl", "--progress-interval", "100ms")
	if !p.waitFor(&p.out, `"type":"retry"`, 1) {
		t.Fatalf("no retry event:\n%s", p.wait(time.Minute))
	}
	e.settings(server.Settings{CreateDelayMS: 1500})
	r := p.wait(time.Minute)
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	evs := parseStream(t, r)
	retries := ofType(evs, "retry")
	first := retries[0]
	if first.Address != "ep" || first.Action != "create" || first.ResourceType != "oci:AiLanguage:Endpoint" || first.Retry == nil ||
		first.Retry.Method != "POST" || first.Retry.Path != "/20221001/endpoints" || !strings.HasPrefix(first.Retry.Cause, "503") || first.Retry.Attempt != 2 ||
		!strings.HasPrefix(first.Message, "ep: POST /20221001/endpoints: 503") {
		t.Errorf("the retry of the create: %s", first.text)
	}
	start := slices.IndexFunc(evs, func(e event) bool { return e.Type == "op_start" })
	done := slices.IndexFunc(evs, func(e event) bool { return e.Type == "op_complete" })
	at := slices.IndexFunc(evs, func(e event) bool { return e.Type == "retry" })
	if start < 0 || done < 0 || at < start || at > done {
		t.Errorf("the retry is not between the create's op_start and op_complete")
	}
	progress := ofType(evs, "op_progress")
	if len(progress) == 0 || !strings.Contains(progress[len(progress)-1].Detail, "CREATING") || !strings.Contains(progress[len(progress)-1].Message, "ep: Still creating...") {
		t.Errorf("no op_progress of the 1.5s create saying it is CREATING: %v", progress)
	}
	if s := lastEvent(t, evs, "summary"); !s.Complete {
		t.Errorf("summary: %s", s.text)
	}
	if strings.Contains(r.stderr, "Retrying") {
		t.Errorf("retries went to stderr too:\n%s", r)
	}

	// A plan's refresh reads ep outside any operation.
	e.settings(faults)
	p = w.startProc(nil, "plan", "--output", "jsonl")
	if !p.waitFor(&p.out, `"type":"retry"`, 1) {
		t.Fatalf("no retry event:\n%s", p.wait(time.Minute))
	}
	e.settings(server.Settings{})
	r = p.wait(time.Minute)
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	evs = parseStream(t, r)
	first = ofType(evs, "retry")[0]
	if first.Address != "ep" || first.Action != "" || first.ID != "" || first.Retry == nil || first.Retry.Method != "GET" ||
		!strings.HasPrefix(first.Retry.Path, "/20221001/endpoints/") || !strings.HasPrefix(first.Message, "ep: GET /20221001/endpoints/") {
		t.Errorf("the retry of the refresh: %s", first.text)
	}
	if s := lastEvent(t, evs, "summary"); s.HasChanges {
		t.Errorf("summary: %s", s.text)
	}
}

// TestE2EEventsStopped: an apply stopped by SIGINT ends its stream with a
// summary saying so (exit 1); one stopped at once by a second signal
// exits 130 with every line it wrote whole.
func TestE2EEventsStopped(t *testing.T) {
	needBinary(t)
	if runtime.GOOS == "windows" {
		t.Skip("needs signals")
	}
	t.Parallel()
	for _, forced := range []bool{false, true} {
		name := "graceful"
		if forced {
			name = "forced"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := startEmulator(t)
			w := newWS(t, e)
			model := e.activeModel(t.TempDir())
			var b strings.Builder
			b.WriteString("resources:\n")
			for i := range 3 {
				b.WriteString(endpointSpec(fmt.Sprintf("ep%d", i), model, fmt.Sprintf("stop-%d", i), ""))
			}
			w.write("main.yaml", b.String())
			// One create at a time, each 3s long: when the first has
			// started, the others are still to start.
			e.settings(server.Settings{CreateDelayMS: 3000})
			p := w.startProc(nil, "apply", "--auto-approve", "--output", "jsonl", "--parallelism", "1")
			if !p.waitFor(&p.out, `"type":"op_start"`, 1) {
				t.Fatalf("no operation started:\n%s", p.wait(time.Minute))
			}
			p.signal(syscall.SIGINT)
			if forced {
				if !p.waitFor(&p.err, "Received SIGINT", 1) {
					t.Fatalf("the first signal was not taken:\n%s", p.wait(time.Minute))
				}
				p.signal(syscall.SIGINT)
			}
			r := p.wait(time.Minute)
			evs := parseStream(t, r)
			if forced {
				if r.code != 130 {
					t.Fatalf("want exit 130:\n%s", r)
				}
				return
			}
			if r.code != 1 {
				t.Fatalf("want exit 1:\n%s", r)
			}
			sum := lastEvent(t, evs, "summary")
			if sum.Complete || sum.Stopped != "stopped by SIGINT" || len(sum.raw["not_started"].([]any)) == 0 {
				t.Errorf("summary of a stopped apply: %s", sum.text)
			}
			wantStderr(t, r, "Received SIGINT")
		})
	}
}
