package main

import (
	"fmt"
	"strings"
	"testing"
)

// posOf returns "FILE:LINE:COL" of the first occurrence of needle in text,
// a file named file.
func posOf(t *testing.T, file, text, needle string) string {
	t.Helper()
	i := strings.Index(text, needle)
	if i < 0 {
		t.Fatalf("%q is not in the specs", needle)
	}
	line := strings.Count(text[:i], "\n") + 1
	col := i - strings.LastIndex(text[:i], "\n")
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// TestE2EUnsupportedRelation: a relation that the resource type does not
// have is an error of validate (offline) and of plan, at the relation,
// naming the relations the type has; nothing is sent to Datadog. A
// relation given by a config value is found too.
func TestE2EUnsupportedRelation(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	src := spec(policySpec("pol", id, fmt.Sprintf("        - relation: owner\n          principals: [%q]\n", role2), ""))
	w.write("main.yaml", src)
	at := posOf(t, "main.yaml", src, "owner")
	want := []string{at + ": error:", `field "bindings[1].relation"`, `resource type "dashboard" has no relation "owner"`, `"viewer" or "editor"`}

	r := w.rc("validate")
	if r.code != 1 {
		t.Fatalf("validate: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, want...)

	mark := e.mark()
	r = w.must(1, "plan")
	wantStderr(t, r, want...)
	r = w.must(1, "apply", "--auto-approve")
	wantStderr(t, r, want...)
	if calls := e.callsSince(mark, "/api/v2/restriction_policy/"); len(calls) != 0 {
		t.Errorf("plan and apply called the restriction-policy API: %v", calls)
	}
	if got := e.policy(id); len(got) != 0 {
		t.Errorf("the policy was written: %+v", got)
	}

	// The relation from config: known offline as well.
	src = "config:\n  rel:\n    type: string\n    default: runner\n" + spec(policySpec("pol", id, fmt.Sprintf("        - relation: ${rel}\n          principals: [%q]\n", role2), ""))
	w.write("main.yaml", src)
	r = w.rc("validate")
	if r.code != 1 {
		t.Fatalf("validate: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, posOf(t, "main.yaml", src, "${rel}")+": error:", `has no relation "runner"`)

	// Fixed: validate and apply pass.
	src = spec(policySpec("pol", id, fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n", role2), ""))
	w.write("main.yaml", src)
	if r := w.rc("validate"); r.code != 0 {
		t.Fatalf("validate: want exit 0, got:\n%s", r)
	}
	w.must(0, "apply", "--auto-approve")
	if got := e.policy(id); len(got) != 2 {
		t.Errorf("policy of %s = %+v, want 2 bindings", id, got)
	}
}

// TestE2EUnknownResourceType: a resource type that Datadog refuses
// restriction policies on passes validate (whether Datadog has it takes a
// request), and fails plan at resourceId, with Datadog's answer and a
// suggestion; the plan only read.
func TestE2EUnknownResourceType(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	src := spec(policySpec("pol", "dashbaord:abc", "", ""))
	w.write("main.yaml", src)
	if r := w.rc("validate"); r.code != 0 {
		t.Fatalf("validate: want exit 0, got:\n%s", r)
	}
	mark := e.mark()
	r := w.must(1, "plan")
	wantStderr(t, r, posOf(t, "main.yaml", src, "dashbaord:abc")+": error:", `field "resourceId"`,
		"Invalid resource type: 'dashbaord' does not support restriction policies", `did you mean "dashboard"?`)
	calls := e.callsSince(mark, "/api/v2/restriction_policy/")
	if len(calls) != 1 || countMethod(calls, "GET") != 1 {
		t.Errorf("plan called %v, want one GET", calls)
	}
}
