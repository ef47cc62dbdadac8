package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// planDoc is what these tests read of 'plan --output json'.
type planDoc struct {
	Destroy bool     `json:"destroy"`
	Targets []string `json:"targets"`
	Changes []struct {
		Address      string `json:"address"`
		Action       string `json:"action"`
		ActionReason string `json:"action_reason"`
		Reason       string `json:"reason"`
	} `json:"changes"`
}

func (w *ws) planJSON(want int, args ...string) planDoc {
	w.t.Helper()
	r := w.must(want, append([]string{"plan", "--output", "json", "--detailed-exitcode"}, args...)...)
	var d planDoc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		w.t.Fatalf("plan --output json: %v\n%s", err, r)
	}
	return d
}

// actionsOf lists "address:action" of the changes of d that are not
// no-ops or reads, in order.
func (d planDoc) actionsOf() string {
	var out []string
	for _, c := range d.Changes {
		if c.Action != "no-op" && c.Action != "read" {
			out = append(out, c.Address+":"+c.Action)
		}
	}
	return strings.Join(out, " ")
}

// TestE2ETargetAndReplace: --target plans and applies only a resource and
// what it depends on; --replace replaces one that nothing forces; both
// round-trip through a plan file.
func TestE2ETargetAndReplace(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	a, b := rid(t, "a"), rid(t, "b")
	w.write("main.yaml", spec(policySpec("a", a, "", ""), policySpec("b", b, "", "")))
	w.must(0, "apply", "--auto-approve")

	// Both change; only a is targeted.
	viewer := fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n", role1)
	w.write("main.yaml", spec(policySpec("a", a, viewer, ""), policySpec("b", b, viewer, "")))
	d := w.planJSON(2, "--target", "a")
	if got := d.actionsOf(); got != "a:update" || strings.Join(d.Targets, ",") != "a" {
		t.Fatalf("plan --target a: %q, targets %q", got, d.Targets)
	}
	for _, c := range d.Changes {
		if c.Address == "b" || c.Address == "svcPolicy" {
			t.Errorf("plan --target a planned %s, which a does not depend on", c.Address)
		}
	}
	r := w.must(2, "plan", "--target", "a", "--out", "a.plan", "--detailed-exitcode")
	wantStdout(t, r, `Targeted plan (--target "a")`, "a (datadog:RestrictionPolicy) will be updated in place")
	mark := e.mark()
	r = w.must(0, "apply", "a.plan")
	wantStdout(t, r, "1 updated")
	if calls := e.callsSince(mark, "/restriction_policy/"+b); countMethod(calls, "POST") != 0 {
		t.Errorf("the targeted apply wrote b: %v", calls)
	}
	if len(e.policy(a)) != 2 || len(e.policy(b)) != 1 {
		t.Errorf("after apply --target a: a %+v, b %+v; want 2 bindings and 1", e.policy(a), e.policy(b))
	}
	if got := w.planJSON(2).actionsOf(); got != "b:update" {
		t.Errorf("full plan after the targeted apply = %q, want b:update", got)
	}

	// apply --target straight away.
	r = w.must(0, "apply", "--auto-approve", "--target", "b")
	wantStdout(t, r, `Targeted plan (--target "b")`, "1 updated")
	w.must(0, "plan", "--detailed-exitcode")

	// --replace of a resource that nothing forces to change.
	d = w.planJSON(2, "--replace", "a")
	if got := d.actionsOf(); got != "a:replace" {
		t.Fatalf("plan --replace a = %q", got)
	}
	for _, c := range d.Changes {
		if c.Address == "a" && (c.ActionReason != "replace_by_request" || c.Reason != "replacement requested") {
			t.Errorf("a: action_reason %q reason %q, want replace_by_request", c.ActionReason, c.Reason)
		}
	}
	w.must(2, "plan", "--replace", "a", "--out", "r.plan", "--detailed-exitcode")
	mark = e.mark()
	r = w.must(0, "apply", "r.plan")
	wantStdout(t, r, "1 replaced")
	// A restriction policy's id is the resource it restricts: the
	// replacement writes the new policy, then deletes the old one.
	if calls := e.callsSince(mark, "/restriction_policy/"); countMethod(calls, "POST") == 0 {
		t.Errorf("apply of --replace a made no write: %v", calls)
	}
	w.must(0, "apply", "--auto-approve", "--replace", "b")
	w.must(0, "plan", "--detailed-exitcode")

	// Mistakes are named, with a suggestion.
	wantStderr(t, w.must(1, "plan", "--target", "aa"), `--target "aa": nothing of that name`, `(did you mean "a"?)`)
	wantStderr(t, w.must(1, "plan", "--replace", "me"), `--replace "me": no managed resource of that name`)
	wantStderr(t, w.must(1, "plan", "--replace", "a", "--destroy"), "--replace asks for a replacement, which a destroy does not make")
	wantStderr(t, w.must(1, "plan", "--refresh-only", "--target", "a"), "--refresh-only", "takes no --destroy, --target or --replace")
	wantStderr(t, w.must(1, "apply", "r.plan", "--target", "a"), "the plan file records them")
}

// TestE2EPlanDestroy: plan --destroy saves a plan of destroying
// everything, which apply PLANFILE carries out; --target narrows it to a
// resource and what depends on it.
func TestE2EPlanDestroy(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	a, b := rid(t, "a"), rid(t, "b")
	w.write("main.yaml", spec(policySpec("a", a, "", ""), policySpec("b", b, "", "")))
	w.must(0, "apply", "--auto-approve")

	d := w.planJSON(2, "--destroy")
	if got := d.actionsOf(); !d.Destroy || (got != "a:delete b:delete" && got != "b:delete a:delete") {
		t.Fatalf("plan --destroy: destroy %v, %q", d.Destroy, got)
	}
	d = w.planJSON(2, "--destroy", "--target", "b")
	if got := d.actionsOf(); got != "b:delete" {
		t.Fatalf("plan --destroy --target b = %q", got)
	}
	w.must(2, "plan", "--destroy", "--target", "b", "--out", "b.plan", "--detailed-exitcode")
	r := w.must(0, "show", "b.plan")
	wantStdout(t, r, `Targeted destroy (--target "b")`, "b (datadog:RestrictionPolicy) will be destroyed")
	r = w.must(0, "apply", "b.plan")
	wantStdout(t, r, "Destroy complete!", "1 destroyed")
	if len(e.policy(b)) != 0 || len(e.policy(a)) != 1 {
		t.Errorf("after the targeted destroy: a %+v, b %+v", e.policy(a), e.policy(b))
	}
	if st := w.stateList(); st["me"].Kind != "lookup" || st["a"].ID != a {
		t.Errorf("a targeted destroy dropped what it did not target: %+v", st)
	}

	w.must(2, "plan", "--destroy", "--out", "all.plan", "--detailed-exitcode")
	r = w.must(0, "apply", "all.plan")
	wantStdout(t, r, "Destroy complete!", "1 destroyed")
	if len(e.policy(a)) != 0 {
		t.Errorf("apply of plan --destroy left a: %+v", e.policy(a))
	}
	if st := w.stateList(); len(st) != 0 {
		t.Errorf("state after apply of plan --destroy: %+v", st)
	}
	wantStderr(t, w.must(1, "destroy", "--auto-approve", "--target", "b"), `--target "b": no managed resource of that name in state`)
}

// TestE2EStateTaint: taint makes the next plan replace the resource with
// the reason that says so, untaint takes it back, and both are in the
// history.
func TestE2EStateTaint(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))
	w.must(0, "apply", "--auto-approve")

	r := w.must(0, "state", "taint", "pol")
	wantStdout(t, r, "Marked pol (datadog:RestrictionPolicy "+id+") tainted", "the next plan replaces it")
	if !w.stateList()["pol"].Tainted {
		t.Errorf("state list does not show pol tainted")
	}
	wantStdout(t, w.must(0, "state", "taint", "pol"), "already tainted", "Nothing was changed")
	d := w.planJSON(2)
	if got := d.actionsOf(); got != "pol:replace" {
		t.Fatalf("plan after taint = %q", got)
	}
	for _, c := range d.Changes {
		if c.Address == "pol" && (c.ActionReason != "replace_because_tainted" || !strings.Contains(c.Reason, "marked tainted with 'reconcile state taint'")) {
			t.Errorf("pol: action_reason %q reason %q", c.ActionReason, c.Reason)
		}
	}
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "pol (datadog:RestrictionPolicy) must be replaced", "marked tainted with 'reconcile state taint'")

	r = w.must(0, "state", "untaint", "pol")
	wantStdout(t, r, "pol is no longer tainted")
	w.must(0, "plan", "--detailed-exitcode")
	wantStdout(t, w.must(0, "state", "untaint", "pol"), "pol is not tainted. Nothing was changed.")

	w.must(0, "state", "taint", "pol")
	r = w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "1 replaced")
	if w.stateList()["pol"].Tainted {
		t.Errorf("pol is still tainted after the apply replaced it")
	}
	if len(e.policy(id)) != 1 {
		t.Errorf("policy after the replacement: %+v", e.policy(id))
	}

	r = w.must(0, "state", "history")
	wantStdout(t, r, "state taint pol", "state untaint pol")

	wantStderr(t, w.must(1, "state", "taint", "me"), `"me" is a lookup`, "only managed resources can be tainted")
	wantStderr(t, w.must(1, "state", "taint", "poll"), `no node named "poll" in state (did you mean "pol"?)`)
	wantStderr(t, w.must(1, "state", "untaint"), "state untaint takes 1 argument, got 0")
}
