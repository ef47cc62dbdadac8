package render_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
)

// clock is a fake time source: each call is one step later than the last.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func newClock(step time.Duration) *clock {
	return &clock{t: time.Date(2025, 3, 14, 8, 26, 50, 0, time.UTC), step: step}
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

// eventLine is one decoded line of a stream, and its text.
type eventLine struct {
	text string
	m    map[string]any
}

func (l eventLine) typ() string { s, _ := l.m["type"].(string); return s }
func (l eventLine) str(key string) string {
	s, _ := l.m[key].(string)
	return s
}

// parseEvents splits a stream into lines and decodes each, failing on a
// line that is not one JSON object with the keys every event has: the
// format version, a type, a timestamp in RFC 3339 (UTC, milliseconds) and
// a message. Keys are snake_case outside the values of data keys (the
// specs' and the cloud's names).
func parseEvents(t *testing.T, out string) []eventLine {
	t.Helper()
	if out != "" && !strings.HasSuffix(out, "\n") {
		t.Errorf("the stream does not end with a newline: %q", out[max(0, len(out)-80):])
	}
	var lines []eventLine
	for i, text := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if out == "" {
			break
		}
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(text))
		if err := dec.Decode(&m); err != nil || m == nil || dec.More() {
			t.Fatalf("line %d is not one JSON object (%v): %s", i+1, err, text)
		}
		if m["format_version"] != render.EventsVersion {
			t.Errorf("line %d: format_version = %v, want %q", i+1, m["format_version"], render.EventsVersion)
		}
		if typ, _ := m["type"].(string); typ == "" {
			t.Errorf("line %d has no type: %s", i+1, text)
		}
		ts, _ := m["timestamp"].(string)
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") || len(ts) != len("2006-01-02T15:04:05.000Z") {
			t.Errorf("line %d: timestamp %q is not RFC 3339 in UTC with milliseconds", i+1, ts)
		}
		if msg, ok := m["message"].(string); !ok || msg == "" || strings.Contains(msg, "\n") {
			t.Errorf("line %d: message %q, want one line of text", i+1, m["message"])
		}
		for k, v := range m {
			checkKeys(t, fmt.Sprintf("line %d", i+1), k, v)
		}
		lines = append(lines, eventLine{text: text, m: m})
	}
	return lines
}

// dataKeys hold the user's or the cloud's names, as the JSON documents do.
var dataKeys = []string{"change", "outputs", "fields", "applied", "live"}

func checkKeys(t *testing.T, where, key string, v any) {
	t.Helper()
	if strings.ContainsFunc(key, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') }) {
		t.Errorf("%s: key %q is not snake_case", where, key)
	}
	if slices.Contains(dataKeys, key) {
		return
	}
	if key == "counts" { // keyed by action, as plan and apply JSON count them
		m, _ := v.(map[string]any)
		for k := range m {
			if !slices.Contains(actionNames(), k) {
				t.Errorf("%s: counts has %q, not an action", where, k)
			}
		}
		return
	}
	switch x := v.(type) {
	case nil:
		t.Errorf("%s: %s is null; lists are [] and strings \"\"", where, key)
	case map[string]any:
		for k, e := range x {
			checkKeys(t, where, k, e)
		}
	case []any:
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				for k, e := range m {
					checkKeys(t, where, k, e)
				}
			}
		}
	}
}

func actionNames() []string {
	var out []string
	for a := plan.NoOp; int(a) < plan.NumActions; a++ {
		out = append(out, a.String())
	}
	return out
}

func types(lines []eventLine) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.typ())
	}
	return out
}

// planStream renders p as 'plan --output jsonl' does.
func planStream(p *plan.Plan, now func() time.Time) string {
	var b bytes.Buffer
	s := render.NewEventStream(&b, now)
	s.Start("1.2.3", "plan")
	s.Plan(p)
	s.PlanSummary(p)
	return b.String()
}

// TestEventStreamPlans renders every hand-built plan of the golden tests
// as a plan's stream: every line parses; the version comes first and the
// summary last, after the outputs; one planned_change per change a text
// plan shows, in plan order; drift before the changes; no secret.
func TestEventStreamPlans(t *testing.T) {
	t.Parallel()
	for name, p := range renderCases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := planStream(p, newClock(time.Millisecond).now)
			if strings.Contains(out, secretValue) {
				t.Errorf("the stream shows the secret:\n%s", out)
			}
			lines := parseEvents(t, out)
			got := types(lines)
			if len(got) < 3 || got[0] != "version" || got[len(got)-2] != "outputs" || got[len(got)-1] != "summary" {
				t.Fatalf("event types %v, want version first, outputs and summary last", got)
			}
			var changes, drift []string
			for _, l := range lines[1 : len(lines)-2] {
				switch l.typ() {
				case "planned_change":
					changes = append(changes, l.str("address"))
				case "resource_drift":
					if len(changes) > 0 {
						t.Errorf("resource_drift %s after a planned_change", l.str("address"))
					}
					drift = append(drift, l.str("address"))
				default:
					t.Errorf("unexpected %s event in a plan's stream: %s", l.typ(), l.text)
				}
			}
			var want, wantDrift []string
			for i := range p.Changes {
				c := &p.Changes[i]
				shown := !(c.Action == plan.NoOp && len(c.Deposed) == 0) &&
					!(c.Action == plan.Read && !c.Deferred && c.Before != nil && value.Same(c.Before, c.After))
				if shown {
					want = append(want, c.Addr)
				}
				if c.Drifted() && !p.RefreshOnly {
					wantDrift = append(wantDrift, c.Addr)
				}
			}
			if !slices.Equal(changes, want) || !slices.Equal(drift, wantDrift) {
				t.Errorf("planned_change for %q and resource_drift for %q, want %q and %q", changes, drift, want, wantDrift)
			}
			sum := lines[len(lines)-1].m
			if sum["operation"] != "plan" || sum["has_changes"] != p.HasChanges() || sum["refresh_only"] != p.RefreshOnly {
				t.Errorf("summary %v, want operation plan, has_changes %v, refresh_only %v", sum, p.HasChanges(), p.RefreshOnly)
			}
		})
	}
}

// TestEventStreamPlanFields checks one plan's events field by field: the
// change as plan JSON has it, secrets and unknowns null and listed, and
// the outputs' flags.
func TestEventStreamPlanFields(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Changes: []plan.Change{createEndpoint(), updateEndpoint()}, Outputs: obj{"endpointId": value.Unknown{}, "apiKey": value.Secret{Value: secretValue}, "name": "x"}}
	lines := parseEvents(t, planStream(p, newClock(time.Millisecond).now))
	if got := types(lines); !slices.Equal(got, []string{"version", "planned_change", "planned_change", "outputs", "summary"}) {
		t.Fatalf("types %v", got)
	}
	v := lines[0].m
	if v["reconcile_version"] != "1.2.3" || v["command"] != "plan" || v["timestamp"] != "2025-03-14T08:26:50.000Z" {
		t.Errorf("version event %v", v)
	}
	create := lines[1].m
	if create["address"] != "sentiment" || create["resource_type"] != endpointType || create["kind"] != "resource" || create["action"] != "create" ||
		create["position"] != "site.yaml:12:3" || create["message"] != "sentiment will be created" || lines[1].m["timestamp"] != "2025-03-14T08:26:50.001Z" {
		t.Errorf("planned_change of the create: %s", lines[1].text)
	}
	change, _ := create["change"].(map[string]any)
	after, _ := change["after"].(map[string]any)
	sensitive, _ := change["after_sensitive"].([]any)
	unknown, _ := change["after_unknown"].([]any)
	if change["address"] != "sentiment" || after == nil || after["apiKey"] != nil || after["displayName"] != "sentiment-prod" ||
		!slices.Contains(sensitive, any("/apiKey")) || !slices.Contains(unknown, any("/id")) {
		t.Errorf("change of the create, want plan JSON's with apiKey null and sensitive, id unknown: %v", change)
	}
	if _, ok := lines[2].m["position"]; ok {
		t.Errorf("a change without a position has one: %s", lines[2].text)
	}
	outputs, _ := lines[3].m["outputs"].(map[string]any)
	want := map[string]string{
		"endpointId": "map[sensitive:false unknown:true value:<nil>]",
		"apiKey":     "map[sensitive:true unknown:false value:<nil>]",
		"name":       "map[sensitive:false unknown:false value:x]",
	}
	for k, w := range want {
		if got := fmt.Sprint(outputs[k]); got != w {
			t.Errorf("outputs.%s = %s, want %s", k, got, w)
		}
	}
	sum := lines[4].m
	counts, _ := sum["counts"].(map[string]any)
	if sum["message"] != "Plan: 1 to create, 1 to update, 0 to replace, 0 to destroy." || counts["create"] != 1.0 || counts["update"] != 1.0 ||
		counts["no-op"] != 0.0 || len(counts) != plan.NumActions || sum["has_changes"] != true || fmt.Sprint(sum["targets"]) != "[]" {
		t.Errorf("summary %s", lines[4].text)
	}
}

// TestEventStreamOperations renders the events of an apply: each phase
// its type, with the address, type, action, id and elapsed time; a retry
// with its call; the failure with its error; the skipped node; then the
// outputs (a secret null) and the summary as apply JSON has it.
func TestEventStreamOperations(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	s := render.NewEventStream(&b, newClock(time.Millisecond).now)
	s.Start("1.2.3", "apply")
	ep := report.Event{Addr: "sentiment", Type: endpointType, Action: plan.Create}
	at := func(e report.Event, ph report.Phase, elapsed time.Duration, msg string) report.Event {
		e.Phase, e.Elapsed, e.Message = ph, elapsed, msg
		return e
	}
	started := at(ep, report.Started, 0, "")
	started.Pos = diag.Pos{File: "site.yaml", Line: 12, Col: 3}
	s.Op(started)
	retried := at(ep, report.Running, 300*time.Millisecond, "POST /20221001/endpoints: 503 Service Unavailable; retrying in 250ms (attempt 2)")
	retried.Retry = &report.Retry{Method: "POST", Path: "/20221001/endpoints", Cause: "503 Service Unavailable", Attempt: 2, Wait: 250 * time.Millisecond}
	s.Op(retried)
	s.Op(at(ep, report.Running, 10*time.Second, "state CREATING"))
	done := at(ep, report.Done, 12*time.Second, "")
	done.ID = "ocid1.ailanguageendpoint.oc1.iad.x"
	s.Op(done)
	pol := report.Event{Addr: "dashboardPolicy", Type: policyType, Action: plan.Update, ID: "dashboard:abc"}
	s.Op(at(pol, report.Started, 0, ""))
	s.Op(at(pol, report.Failed, 200*time.Millisecond, "datadog API: 400: Invalid principal\nsecond line"))
	s.Op(report.Event{Addr: "after", Type: policyType, Action: plan.Create, Phase: report.Skipped})
	s.Op(report.Event{Addr: "same", Type: policyType, Action: plan.NoOp, Phase: report.Done}) // nothing to say
	s.Retry("svcPolicy", report.Retry{Method: "POST", Path: "/v1/services/s:getIamPolicy", Cause: "connection error: EOF", Attempt: 3, Wait: 1500 * time.Millisecond})
	res := &report.Apply{Counts: map[plan.Action]int{plan.Create: 1}, Failed: []report.NodeError{{Addr: "dashboardPolicy", Pos: diag.Pos{File: "site.yaml", Line: 20, Col: 3}, Err: errors.New("datadog API: 400: Invalid principal")}},
		Skipped: []string{"after"}, Outputs: map[string]any{"id": "ocid1.x", "key": value.Secret{Value: secretValue}}}
	s.ApplySummary(res, render.RunApply)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, secretValue) {
		t.Errorf("the stream shows the secret:\n%s", out)
	}
	lines := parseEvents(t, out)
	want := []string{"version", "op_start", "retry", "op_progress", "op_complete", "op_start", "op_errored", "op_skipped", "retry", "outputs", "summary"}
	if got := types(lines); !slices.Equal(got, want) {
		t.Fatalf("types %v, want %v", got, want)
	}
	for i, l := range lines[1:9] {
		for _, k := range []string{"address", "resource_type", "action", "id", "elapsed_ms"} {
			if _, ok := l.m[k]; !ok {
				t.Errorf("event %d (%s) has no %s: %s", i+1, l.typ(), k, l.text)
			}
		}
	}
	checks := []struct {
		line int
		key  string
		want any
	}{
		{1, "message", "sentiment: Creating..."}, {1, "position", "site.yaml:12:3"}, {1, "action", "create"}, {1, "resource_type", endpointType},
		{2, "message", "sentiment: POST /20221001/endpoints: 503 Service Unavailable; retrying in 250ms (attempt 2)"}, {2, "elapsed_ms", 300.0},
		{3, "detail", "state CREATING"}, {3, "message", "sentiment: Still creating... [10s elapsed] (state CREATING)"}, {3, "elapsed_ms", 10000.0},
		{4, "id", "ocid1.ailanguageendpoint.oc1.iad.x"}, {4, "message", "sentiment: Creation complete after 12s [id=ocid1.ailanguageendpoint.oc1.iad.x]"},
		{5, "id", "dashboard:abc"}, {5, "action", "update"},
		{6, "error", "datadog API: 400: Invalid principal\nsecond line"}, {6, "message", "dashboardPolicy: Modifications failed after 200ms: datadog API: 400: Invalid principal second line"},
		{7, "address", "after"}, {7, "message", "after: skipped, a dependency failed"},
		{8, "address", "svcPolicy"}, {8, "action", ""}, {8, "message", "svcPolicy: POST /v1/services/s:getIamPolicy: connection error: EOF; retrying in 1.5s (attempt 3)"},
		{10, "operation", "apply"}, {10, "complete", false}, {10, "message", "Apply incomplete: 1 created, 0 updated, 0 replaced, 0 destroyed, 0 imported; 1 failed, 1 skipped."},
		{10, "stopped", ""},
	}
	for _, c := range checks {
		if got := lines[c.line].m[c.key]; got != c.want {
			t.Errorf("%s event (line %d): %s = %#v, want %#v", lines[c.line].typ(), c.line+1, c.key, got, c.want)
		}
	}
	for _, i := range []int{1, 4, 7} {
		if _, ok := lines[i].m["retry"]; ok {
			t.Errorf("%s event has a retry: %s", lines[i].typ(), lines[i].text)
		}
	}
	if got := fmt.Sprint(lines[2].m["retry"]); got != "map[attempt:2 cause:503 Service Unavailable method:POST path:/20221001/endpoints wait_ms:250]" {
		t.Errorf("retry = %s", got)
	}
	if got := fmt.Sprint(lines[9].m["outputs"]); got != "map[id:map[sensitive:false unknown:false value:ocid1.x] key:map[sensitive:true unknown:false value:<nil>]]" {
		t.Errorf("outputs = %s", got)
	}
	sum := lines[10].m
	if fmt.Sprint(sum["failed"]) != "[map[address:dashboardPolicy error:datadog API: 400: Invalid principal position:site.yaml:20:3]]" ||
		fmt.Sprint(sum["skipped"]) != "[after]" || fmt.Sprint(sum["interrupted"]) != "[]" || fmt.Sprint(sum["not_started"]) != "[]" {
		t.Errorf("summary %s", lines[10].text)
	}
	if counts, _ := sum["counts"].(map[string]any); len(counts) != plan.NumActions-1 || counts["create"] != 1.0 || counts["delete"] != 0.0 {
		t.Errorf("summary counts %v, want every action but no-op, create 1", sum["counts"])
	}
}

// TestEventStreamRefreshOnly: a refresh-only apply writes {} as its
// outputs, as apply JSON does.
func TestEventStreamRefreshOnly(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	s := render.NewEventStream(&b, nil)
	s.ApplySummary(&report.Apply{Counts: map[plan.Action]int{plan.Refresh: 2}, Outputs: map[string]any{"x": "y"}}, render.RunRefreshOnly)
	lines := parseEvents(t, b.String())
	if len(lines) != 2 || fmt.Sprint(lines[0].m["outputs"]) != "map[]" || lines[1].m["operation"] != "apply_refresh_only" || lines[1].m["complete"] != true {
		t.Errorf("refresh-only apply: %s", b.String())
	}
}

// TestEventStreamDiagnostics: a diagnostic carries its place as
// FILE:LINE:COL and as parts; an error without a place has empty ones.
func TestEventStreamDiagnostics(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	s := render.NewEventStream(&b, nil)
	s.Diagnostic(diag.Diagnostic{Pos: diag.Pos{File: "main.yaml", Line: 7, Col: 5}, Severity: diag.Error, Summary: `unknown field "inferenceUnit" (did you mean "inferenceUnits"?)`,
		Detail: "valid fields: ...", Suggestion: "inferenceUnits"})
	s.Diagnostic(diag.Diagnostic{Severity: diag.Warning, Summary: "the lock of x was lost\nstopping"})
	lines := parseEvents(t, b.String())
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	d := lines[0].m
	if d["position"] != "main.yaml:7:5" || d["file"] != "main.yaml" || d["line"] != 7.0 || d["column"] != 5.0 || d["severity"] != "error" ||
		d["suggestion"] != "inferenceUnits" || d["detail"] != "valid fields: ..." ||
		d["message"] != `main.yaml:7:5: error: unknown field "inferenceUnit" (did you mean "inferenceUnits"?)` {
		t.Errorf("diagnostic %s", lines[0].text)
	}
	w := lines[1].m
	if w["position"] != "" || w["file"] != "" || w["line"] != 0.0 || w["severity"] != "warning" || w["summary"] != "the lock of x was lost\nstopping" ||
		w["message"] != "warning: the lock of x was lost stopping" {
		t.Errorf("diagnostic without a place %s", lines[1].text)
	}
}

// TestEventStreamConcurrent: events written at once from many goroutines
// (an apply's parallel operations) come out as whole lines, every one, in
// order of time.
func TestEventStreamConcurrent(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	s := render.NewEventStream(&b, newClock(time.Millisecond).now)
	var wg sync.WaitGroup
	const workers, each = 8, 50
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				e := report.Event{Addr: fmt.Sprintf("node%d", w), Type: endpointType, Action: plan.Create, Phase: report.Running,
					Message: strings.Repeat("x", 5000) + fmt.Sprint(i)} // lines longer than a pipe's atomic write
				s.Op(e)
			}
		})
	}
	wg.Wait()
	lines := parseEvents(t, b.String())
	if len(lines) != workers*each {
		t.Fatalf("%d lines, want %d", len(lines), workers*each)
	}
	for i := 1; i < len(lines); i++ {
		if lines[i].str("timestamp") <= lines[i-1].str("timestamp") {
			t.Fatalf("line %d is stamped %s, after line %d's %s", i+1, lines[i].str("timestamp"), i, lines[i-1].str("timestamp"))
		}
	}
}

// failingWriter fails every write after the first n.
type failingWriter struct {
	n      int
	writes int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > w.n {
		return 0, errors.New("broken pipe")
	}
	return len(p), nil
}

// TestEventStreamErrors: a value JSON cannot hold becomes a diagnostic
// line, not a broken one; a failed write ends the stream and is reported.
func TestEventStreamErrors(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	s := render.NewEventStream(&b, nil)
	s.PlanSummary(&plan.Plan{Outputs: obj{"ratio": math.NaN()}})
	lines := parseEvents(t, b.String())
	if got := types(lines); !slices.Equal(got, []string{"diagnostic", "summary"}) || !strings.Contains(lines[0].str("message"), "outputs event could not be encoded") {
		t.Errorf("a NaN output: %s", b.String())
	}

	// A driver's message of several lines is one line of message.
	b.Reset()
	s = render.NewEventStream(&b, nil)
	s.Op(report.Event{Addr: "ep", Type: endpointType, Action: plan.Create, Phase: report.Running, Message: "state CREATING\r\nwork request 40%"})
	s.Retry("", report.Retry{Method: "GET", Path: "/x", Cause: "connection error:\nEOF", Attempt: 2})
	lines = parseEvents(t, b.String())
	if len(lines) != 2 || lines[0].str("detail") != "state CREATING\r\nwork request 40%" || lines[1].str("message") != "GET /x: connection error: EOF; retrying in 0s (attempt 2)" {
		t.Errorf("messages of several lines: %s", b.String())
	}

	w := &failingWriter{n: 1}
	s = render.NewEventStream(w, nil)
	s.Start("1", "plan")
	s.Start("1", "plan")
	s.Start("1", "plan")
	if err := s.Err(); err == nil || w.writes != 2 {
		t.Errorf("after a failed write: Err() = %v and %d writes, want the error and no write after it", err, w.writes)
	}
}

// TestEventStreamDocExample keeps the example in docs/events-jsonl.md true:
// it writes the events the example shows and compares.
func TestEventStreamDocExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "events-jsonl.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, example, ok := strings.Cut(string(doc), "## Example\n")
	_, example, ok2 := strings.Cut(example, "```jsonl\n")
	example, _, ok3 := strings.Cut(example, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/events-jsonl.md has no ```jsonl block under ## Example")
	}
	var b bytes.Buffer
	c := newClock(0)
	s := render.NewEventStream(&b, c.now)
	at := func(d time.Duration) {
		c.mu.Lock()
		c.t = time.Date(2025, 3, 14, 8, 26, 50, 0, time.UTC).Add(d)
		c.mu.Unlock()
	}
	s.Start("0.1.0", "apply")
	p := &plan.Plan{Changes: []plan.Change{
		{Addr: "sentiment", Type: endpointType, Kind: kind.Resource, Action: plan.Create, Pos: diag.Pos{File: "main.yaml", Line: 4, Col: 3},
			After: obj{"compartmentId": "ocid1.compartment.oc1..example", "modelId": "ocid1.ailanguagemodel.oc1.iad.example", "displayName": "sentiment",
				"inferenceUnits": int64(1), "description": value.Secret{Value: secretValue}, "id": value.Unknown{}}},
		{Addr: "dashboardPolicy", Type: policyType, Kind: kind.Resource, Action: plan.Update, ID: "dashboard:abc-def-ghi", Pos: diag.Pos{File: "main.yaml", Line: 12, Col: 3},
			Before: obj{"resourceId": "dashboard:abc-def-ghi", "bindings": list{obj{"relation": "viewer", "principals": list{"org:1"}}}, "id": "dashboard:abc-def-ghi"},
			After:  obj{"resourceId": "dashboard:abc-def-ghi", "bindings": list{obj{"relation": "editor", "principals": list{"org:1"}}}, "id": "dashboard:abc-def-ghi"},
			Access: []plan.AccessChange{{Resource: "dashboard:abc-def-ghi", Role: "editor", Member: "org:1", Added: true}, {Resource: "dashboard:abc-def-ghi", Role: "viewer", Member: "org:1"}}},
	}}
	at(1500 * time.Millisecond)
	s.Plan(p)
	ep := report.Event{Addr: "sentiment", Type: endpointType, Action: plan.Create}
	pol := report.Event{Addr: "dashboardPolicy", Type: policyType, Action: plan.Update, ID: "dashboard:abc-def-ghi"}
	ev := func(e report.Event, ph report.Phase, elapsed time.Duration, msg string) report.Event {
		e.Phase, e.Elapsed, e.Message = ph, elapsed, msg
		return e
	}
	at(1512 * time.Millisecond)
	e := ev(ep, report.Started, 0, "")
	e.Pos = p.Changes[0].Pos
	s.Op(e)
	e = ev(pol, report.Started, 0, "")
	e.Pos = p.Changes[1].Pos
	s.Op(e)
	at(1530 * time.Millisecond)
	e = ev(ep, report.Running, 18*time.Millisecond, "POST /20221001/endpoints: 503 Service Unavailable; retrying in 212ms (attempt 2)")
	e.Retry = &report.Retry{Method: "POST", Path: "/20221001/endpoints", Cause: "503 Service Unavailable", Attempt: 2, Wait: 212 * time.Millisecond}
	s.Op(e)
	at(1824 * time.Millisecond)
	s.Op(ev(pol, report.Done, 312*time.Millisecond, ""))
	at(11512 * time.Millisecond)
	s.Op(ev(ep, report.Running, 10*time.Second, "state CREATING"))
	at(13912 * time.Millisecond)
	e = ev(ep, report.Done, 12400*time.Millisecond, "")
	e.ID = "ocid1.ailanguageendpoint.oc1.iad.amaaaaaa"
	s.Op(e)
	res := &report.Apply{Counts: map[plan.Action]int{plan.Create: 1, plan.Update: 1}, Outputs: map[string]any{"endpointId": "ocid1.ailanguageendpoint.oc1.iad.amaaaaaa", "apiToken": value.Secret{Value: secretValue}}}
	at(13915 * time.Millisecond)
	s.ApplySummary(res, render.RunApply)
	if got := b.String(); got != example {
		t.Errorf("the example in docs/events-jsonl.md is not what EventStream writes; it wrote:\n%s", got)
	}
}
