package engine_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/refresh"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// Regression tests of the trust issue: each names the defect it guards.

// A reference to an input the specs leave unset is the live value after
// apply (null when the cloud has none either), "(known after apply)" while
// the resource is still to be created; never the whole parent object.
func TestReferenceToUnsetInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := resourcesOf(endpoint("ep", "ep")) + `
outputs:
  description: ${ep.description}
  freeform: ${ep.freeformTags}
`
	p := h.plan(src, planner.Options{Refresh: true})
	for _, name := range []string{"description", "freeform"} {
		if _, ok := p.Outputs[name].(value.Unknown); !ok {
			t.Errorf("planned output %s = %#v, want (known after apply)", name, p.Outputs[name])
		}
	}
	_, res := h.mustApply(src)
	if v, ok := res.Outputs["description"]; !ok || v != nil {
		t.Errorf("output description after apply = %#v (present %v), want null", v, ok)
	}

	// The cloud fills in a value the specs leave unset: references read it,
	// also from state in a plan that reads nothing.
	id := h.record("ep").ID
	obj, _ := h.cloud.object(id)
	obj["description"] = "filled by the cloud"
	h.cloud.put(id, obj)
	_, res = h.mustApply(src)
	if got := res.Outputs["description"]; got != "filled by the cloud" {
		t.Errorf("output description = %#v, want the cloud's value", got)
	}
	p = h.plan(src, planner.Options{Refresh: false})
	if got := p.Outputs["description"]; got != "filled by the cloud" {
		t.Errorf("output description planned from state = %#v, want the cloud's value", got)
	}
}

// ${obj.missing} on a map the specs give is an error at the reference.
func TestReferenceToMissingKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := "variables:\n  obj:\n    a: 1\noutputs:\n  x: ${obj.missing}\n"
	_, diags := h.makePlan(src, planner.Options{})
	if !diags.HasErrors() {
		t.Fatalf("plan of ${obj.missing}: no error")
	}
	d := diags[0]
	if d.Pos.Line != 5 || d.Pos.Col != 6 || !strings.Contains(d.Summary, `no key "missing"`) {
		t.Errorf("diagnostic = %s, want spec.yaml:5:6 naming the missing key", d)
	}
}

// An object deleted outside reconcile and gone from the specs is forgotten
// for that reason, not "(retainOnDelete)"; a replaceOnChanges field is not
// said to be unable to change in place.
func TestReasonsAreTyped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "a"), endpoint("gone", "gone")))
	h.cloud.remove(h.record("gone").ID)
	p := h.plan(resourcesOf(endpoint("a", "a", "displayName: b", "options.replaceOnChanges: [displayName]")), planner.Options{Refresh: true})
	var b strings.Builder
	if err := render.PlanText(&b, p, render.Options{}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, bad := range []string{"retainOnDelete", "cannot be updated in place"} {
		if strings.Contains(text, bad) {
			t.Errorf("the plan says %q:\n%s", bad, text)
		}
	}
	for _, want := range []string{"gone (oci:AiLanguage:Endpoint) will be removed from state: it was already deleted outside reconcile",
		`replaceOnChanges asks for a replacement when "displayName" changes`} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan does not say %q:\n%s", want, text)
		}
	}
	if c := change(t, p, "gone"); c.Reason != plan.ReasonGoneOutside {
		t.Errorf("gone: reason %s, want %s", c.Reason, plan.ReasonGoneOutside)
	}
}

// Counts add up: a create that failed is counted as failed, not also as
// created; a read of what state already holds is neither shown nor
// counted.
func TestCountsAddUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cloud.taintCreate = func(resources.Attrs) error {
		return resources.Unusable(errors.New("endpoint is FAILED: out of capacity"))
	}
	_, res := h.apply(resourcesOf(endpoint("a", "a")))
	if res.Counts[plan.Create] != 0 || len(res.Failed) != 1 {
		t.Errorf("a create that failed: counts %v, failed %d; want no create counted and one failure", res.Counts, len(res.Failed))
	}
	h.cloud.taintCreate = nil

	src := "variables:\n  me:\n    fn::invoke:\n      function: datadog:getCurrentUser\n" + resourcesOf(endpoint("b", "b"))
	h.mustApply(src)
	p := h.plan(src+endpoint("c", "c"), planner.Options{Refresh: true})
	var b strings.Builder
	if err := render.PlanText(&b, p, render.Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "to read") || !strings.Contains(b.String(), "Plan: 1 to create, 0 to update, 0 to replace, 0 to destroy.") {
		t.Errorf("a plan whose only read is unchanged counts it, or miscounts:\n%s", b.String())
	}
}

// A replacement's "Creating..." is about the new object, which has no id
// yet: it never shows the old one's.
func TestReplacementCreateShowsNoOldID(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "a", "options.replaceOnChanges: [displayName]")))
	old := h.record("a").ID
	var mu sync.Mutex
	var events []report.Event
	h.applyWith(resourcesOf(endpoint("a", "b", "options.replaceOnChanges: [displayName]")), planner.Options{Refresh: true},
		apply.Options{Observer: func(e report.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }})
	var sawCreate, sawDelete bool
	for _, e := range events {
		if e.Phase != report.Started {
			continue
		}
		switch e.Action {
		case plan.Create:
			sawCreate = true
			if e.ID != "" {
				t.Errorf("the replacement's create started with id %q, want none", e.ID)
			}
		case plan.Delete:
			sawDelete = true
			if e.ID != old {
				t.Errorf("the replacement's delete started with id %q, want the old %q", e.ID, old)
			}
		}
	}
	if !sawCreate || !sawDelete {
		t.Errorf("events %+v: want a create and a delete", events)
	}
}

// Flipping protect is a change: the plan shows it, counts it and applies it
// to state, with no cloud call; "No changes" is never followed by a write.
func TestOptionChangeIsAChange(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "a")))
	serial := h.meta().Serial
	calls := len(h.cloud.callLog())
	src := resourcesOf(endpoint("a", "a", "options.protect: true"))
	p := h.plan(src, planner.Options{Refresh: true})
	c := change(t, p, "a")
	if c.Action != plan.Update || c.Reason != plan.ReasonOptionsChanged || !p.HasChanges() ||
		len(c.Options) != 1 || c.Options[0] != (plan.OptionChange{Name: "protect", Before: false, After: true}) {
		t.Fatalf("plan after setting protect: %s (%s) options %+v, has changes %v; want an update of protect false -> true", c.Action, c.Reason, c.Options, p.HasChanges())
	}
	var b strings.Builder
	if err := render.PlanText(&b, p, render.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "~ options.protect") || !strings.Contains(b.String(), "false -> true") || !strings.Contains(b.String(), "Plan: 0 to create, 1 to update") {
		t.Errorf("the plan does not show the change of protect:\n%s", b.String())
	}
	_, res := h.mustApply(src)
	if res.Counts[plan.Update] != 1 || !h.record("a").Protect {
		t.Errorf("apply: counts %v, protect recorded %v; want one update, protect true", res.Counts, h.record("a").Protect)
	}
	if got := h.cloud.callLog()[calls:]; len(got) != 0 {
		t.Errorf("an options change called the cloud: %v", got)
	}
	if h.meta().Serial == serial {
		t.Errorf("the serial did not grow")
	}
	// Nothing left: no changes, and no write.
	p = h.plan(src, planner.Options{Refresh: true})
	if p.HasChanges() {
		t.Errorf("plan after applying protect: %s, want no changes", actions(p))
	}
	serial = h.meta().Serial
	h.mustApply(src)
	if h.meta().Serial != serial {
		t.Errorf("an apply of no changes wrote state (serial %d -> %d)", serial, h.meta().Serial)
	}
}

// fn::readFile, fn::filebase64 and fn::filebase64sha256 read only inside
// the project directory: no absolute path outside it, no "..", no symbolic
// link that leads out; the error is at the call.
func TestReadFileConfined(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	mustWrite(t, outside, "DD_API_KEY=leaked")
	mustWrite(t, filepath.Join(dir, "inside.txt"), "hello")
	mustWrite(t, filepath.Join(dir, "sub", "deep.txt"), "deep")
	if err := os.Symlink(outside, filepath.Join(dir, "out-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "in-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self", filepath.Join(dir, "proc")); err != nil {
		t.Fatal(err)
	}
	encode := map[string]func(string) string{
		"readFile":   func(s string) string { return s },
		"filebase64": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"filebase64sha256": func(s string) string {
			sum := sha256.Sum256([]byte(s))
			return base64.StdEncoding.EncodeToString(sum[:])
		},
	}
	for path, want := range map[string]string{
		"inside.txt":                          "hello",
		"./sub/../inside.txt":                 "hello",
		"in-link/deep.txt":                    "deep",
		filepath.Join(dir, "sub", "deep.txt"): "deep",
		outside:                               "error: absolute paths must be inside the project directory",
		"/proc/self/environ":                  "error: absolute paths must be inside the project directory",
		"../" + filepath.Base(filepath.Dir(outside)) + "/secret.txt": "error: the path leaves the project directory",
		"out-link":     "error: a symbolic link leads out of the project directory",
		"proc/environ": "error: a symbolic link leads out of the project directory",
		"sub":          "error: not a regular file",
		"missing.txt":  "error: ",
	} {
		for fn, enc := range encode {
			src := fmt.Sprintf("variables:\n  v:\n    fn::%s: %q\noutputs:\n  o: ${v}\n", fn, path)
			spec, diags := specs.Load(dir, []specs.Source{{Name: "spec.yaml", Data: []byte(src)}}, nil)
			if diags.HasErrors() {
				t.Fatalf("load: %v", diags.Err())
			}
			h := newHarness(t)
			var p *plan.Plan
			h.reading(func(st *state.Store) { p, diags = planner.Plan(t.Context(), spec, st, h.reg, planner.Options{}) })
			if msg, isErr := strings.CutPrefix(want, "error: "); isErr {
				if !diags.HasErrors() || !strings.Contains(diags[0].Summary, msg) || diags[0].Pos.Line != 3 || diags[0].Pos.Col != 5 {
					t.Errorf("fn::%s %q: diagnostics %v, want an error at spec.yaml:3:5 containing %q", fn, path, diags, msg)
				}
				continue
			}
			if diags.HasErrors() || p.Outputs["o"] != enc(want) {
				t.Errorf("fn::%s %q = %v (%v), want %q", fn, path, p.Outputs["o"], diags, enc(want))
			}
		}
	}
}

func mustWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An evaluation bomb, a small spec whose variables double a string or a
// list, is refused at the expression that crosses the bound, quickly and
// without taking gigabytes.
func TestEvaluationBombs(t *testing.T) {
	t.Parallel()
	for name, step := range map[string]string{
		"string":  `"${v%d}${v%d}"`,
		"list":    `["${v%d}", "${v%d}"]`,
		"join":    `{fn::join: ["", ["${v%d}", "${v%d}"]]}`,
		"toJSON":  `{fn::toJSON: ["${v%d}", "${v%d}"]}`,
		"objects": `{a: "${v%d}", b: "${v%d}"}`,
		// fn::length and fn::singleOrNone of values that keep doubling:
		// each is refused at the bound, never measured past it.
		"length": `{fn::singleOrNone: [["${v%[1]d}", "${v%[2]d}", {fn::length: "${v%[1]d}"}]]}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			b.WriteString("variables:\n  v0: \"0123456789abcdef0123456789abcdef\"\n")
			for i := 1; i <= 40; i++ {
				fmt.Fprintf(&b, "  v%d: %s\n", i, fmt.Sprintf(step, i-1, i-1))
			}
			b.WriteString("outputs:\n  o: ${v40}\n")
			h := newHarness(t)
			_, diags := h.makePlan(b.String(), planner.Options{})
			if !diags.HasErrors() || !strings.Contains(diags[0].Summary, "the limit of any one value") || diags[0].Pos.Line < 3 {
				t.Fatalf("diagnostics %v, want one at the variable that crosses the limit", diags)
			}
		})
	}
}

// A plan or drift interrupted (Ctrl-C) reports it once, not once per node.
func TestInterruptedPlanOneError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var eps []string
	for i := range 30 {
		eps = append(eps, endpoint(fmt.Sprintf("ep%02d", i), fmt.Sprintf("ep%02d", i)))
	}
	src := resourcesOf(eps...)
	h.mustApply(src)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var diags diag.Diagnostics
	var derr error
	h.reading(func(st *state.Store) {
		spec := h.load(src)
		_, diags = planner.Plan(ctx, spec, st, h.reg, planner.Options{Refresh: true})
		_, derr = refresh.Drift(ctx, spec, st, h.reg, 10)
	})
	if len(diags) != 1 || !strings.Contains(diags[0].Summary, "the plan was interrupted") {
		t.Errorf("interrupted plan: %d diagnostics, want one saying it was interrupted:\n%s", len(diags), diagText(diags))
	}
	if derr == nil || !strings.Contains(derr.Error(), "drift was interrupted") {
		t.Errorf("interrupted drift: %v, want one error saying it was interrupted", derr)
	}
}

// An object that state already manages under one name cannot be imported
// under another, by reconcile import or by options.import: two names would
// own it, and deleting one would destroy the other's object.
func TestImportRefusesSecondOwner(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "a")))
	id := h.record("a").ID
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = apply.Import(t.Context(), st, h.reg, "b", endpointToken, id)
	st.Close()
	if err == nil || !strings.Contains(err.Error(), `already managed in this state as "a"`) {
		t.Errorf("reconcile import of a's object as b: %v, want it refused naming a", err)
	}
	_, diags := h.makePlan(resourcesOf(endpoint("a", "a"), endpoint("b", "a", "options.import: "+id)), planner.Options{Refresh: true})
	if !diags.HasErrors() || !strings.Contains(diags[0].Summary, `already managed in this state as "a"`) {
		t.Errorf("options.import of a's object as b: %v, want it refused naming a", diags)
	}
	if _, ok := h.records()["b"]; ok {
		t.Errorf("b was recorded")
	}
}

// A create whose outcome is unknown (the object was made but the wait for
// it timed out, or the API went away) is never tainted and replaced: the
// object is recorded, its intent kept, and the next run finds out how its
// create ended, as after a crash.
func TestUnknownCreateOutcomeIsResolvedNotReplaced(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	h.useCloud(c)
	c.taintCreate = func(resources.Attrs) error {
		return errors.New("timed out after 20m0s waiting for the endpoint to become ACTIVE (still state CREATING)")
	}
	src := resourcesOf(endpoint("a", "a"))
	_, res := h.apply(src)
	if len(res.Failed) != 1 || res.Counts[plan.Create] != 0 {
		t.Fatalf("apply: failed %v, counts %v; want a failed, nothing counted created", res.Failed, res.Counts)
	}
	rec := h.record("a")
	if rec.ID == "" || rec.Tainted != "" {
		t.Fatalf("record = id %q tainted %q; want the object recorded, not tainted", rec.ID, rec.Tainted)
	}
	if ins := h.intents(); len(ins) != 1 || ins[0].ID != rec.ID {
		t.Fatalf("intents = %+v, want one naming %s", ins, rec.ID)
	}
	c.taintCreate = nil
	calls := len(h.cloud.callLog())
	if got := outcomes(h.resolve()); got != "a:recorded" {
		t.Errorf("resolving the intent: %s, want a:recorded", got)
	}
	p, _ := h.mustApply(src)
	if got := actions(p); got != "a:no-op" {
		t.Errorf("the next apply planned %q, want a:no-op (resolved, not replaced)", got)
	}
	if log := h.cloud.callLog()[calls:]; len(log) != 0 {
		t.Errorf("the next apply called the cloud: %v", log)
	}
	if len(h.intents()) != 0 || h.record("a").ID != rec.ID {
		t.Errorf("after the next apply: intents %v, id %q; want none and %q", h.intents(), h.record("a").ID, rec.ID)
	}
}

// A create the driver says was refused, even before any request was sent
// (a missing or bad config), leaves no intent behind: a later destroy must
// not create the object by resolving it.
func TestRefusedCreateLeavesNoIntent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	h.useCloud(c)
	c.failCreate = func(resources.Attrs) error {
		return resources.Refused(errors.New(`OCI config file: stat /home/ci/.oci/config: no such file or directory`))
	}
	src := resourcesOf(endpoint("a", "a"))
	_, res := h.apply(src)
	if len(res.Failed) != 1 || len(h.intents()) != 0 {
		t.Fatalf("apply: failed %v, intents %v; want a failed and no intent", res.Failed, h.intents())
	}
	c.failCreate = nil
	h.destroy(src)
	if ids := h.cloud.ids(); len(ids) != 0 || c.createCount() != 0 {
		t.Errorf("after destroy the cloud holds %v (%d creates); want nothing", ids, c.createCount())
	}
}

// Digests of secrets are keyed with the state's own key: a 6-digit PIN in a
// plan file or state cannot be found by trying every PIN, as it could when
// the digest was salted with the node's public name. They do not depend on
// the node, so 'state mv' keeps secrets comparing equal; the salted digests
// of older states still compare until the next apply writes them anew.
func TestSecretDigestsAreKeyed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const pin = "493817"
	src := resourcesOf(endpoint("a", "a", "description: {fn::secret: \""+pin+"\"}"))
	h.mustApply(src)
	sealed, _ := h.record("a").Inputs["description"].(map[string]any)
	digest, _ := sealed["$secret"].(string)
	mac := hmac.New(sha256.New, h.stateKey())
	mac.Write([]byte(`"` + pin + `"`))
	if want := "hmac-sha256:" + hex.EncodeToString(mac.Sum(nil)); digest != want {
		t.Fatalf("the state holds %q for the secret, want the keyed digest %q", digest, want)
	}
	for guess := 0; guess < 1000000; guess += 99991 { // salted as before: nothing matches
		sum := sha256.Sum256([]byte("reconcile\x00a\x00" + fmt.Sprintf(`"%06d"`, guess)))
		if strings.HasSuffix(digest, hex.EncodeToString(sum[:])) {
			t.Fatalf("the digest is the old salted one")
		}
	}

	// state mv, and the specs renamed alike: nothing to change.
	st, err := state.Open(h.path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Rename("a", "b"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	renamed := resourcesOf(endpoint("b", "a", "description: {fn::secret: \""+pin+"\"}"))
	for _, refresh := range []bool{false, true} {
		if p := h.plan(renamed, planner.Options{Refresh: refresh}); p.HasChanges() {
			t.Errorf("plan (refresh %v) after state mv: %s, want no changes", refresh, actions(p))
		}
	}

	// A digest salted the old way, as a format 1 state holds it, still
	// compares equal.
	st, err = state.Open(h.path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, _, _ := st.Get("b")
	sum := sha256.Sum256([]byte("reconcile\x00b\x00\"" + pin + "\""))
	rec.Inputs["description"] = map[string]any{"$secret": "sha256:" + hex.EncodeToString(sum[:])}
	if _, err := st.Put(rec); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if p := h.plan(renamed, planner.Options{Refresh: false}); p.HasChanges() {
		t.Errorf("plan against an old salted digest: %s, want no changes", actions(p))
	}
	if p := h.plan(resourcesOf(endpoint("b", "a", "description: {fn::secret: \"000000\"}")), planner.Options{Refresh: false}); !p.HasChanges() {
		t.Errorf("plan of another secret against an old salted digest: no changes")
	}
}

// An input imported before it was marked secret is sealed everywhere state
// keeps it once the specs wrap it in fn::secret: in the current record and
// in every earlier version. So it is whether apply reads the record it
// started from as listed, or again from state (as the CLI applies, the
// planner having let its values go), with or without an update.
func TestSecretSealedInHistory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, display string
		cli           bool
	}{{"kept", "a", false}, {"kept as the CLI applies", "a", true}, {"updated as the CLI applies", "renamed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			const clear = "imported-in-clear-token"
			h.cloud.put("ocid1.existing", resources.Attrs{"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1..m1",
				"displayName": "a", "description": clear, "inferenceUnits": 1, "state": "ACTIVE"})
			st, err := state.Open(h.path, state.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := apply.Import(t.Context(), st, h.reg, "a", endpointToken, "ocid1.existing"); err != nil {
				t.Fatal(err)
			}
			st.Close()
			src := resourcesOf(endpoint("a", tc.display, "description: {fn::secret: "+clear+"}"))
			var p *plan.Plan
			if tc.cli {
				var res *report.Apply
				if p, res = consumeApply(t, h, src); res.Err() != nil {
					t.Fatal(res.Err())
				}
			} else {
				p, _ = h.mustApply(src)
			}
			if want := tc.display != "a"; p.HasChanges() != want {
				t.Errorf("marking the imported value secret planned %s, want changes %v", actions(p), want)
			}
			checkNoVersionHolds(t, h, "a", clear)
		})
	}
}

// checkNoVersionHolds fails t if a version of name's record that h's state
// keeps holds secret in clear.
func checkNoVersionHolds(t *testing.T, h *harness, name, secret string) {
	t.Helper()
	st, err := state.Open(h.path, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, _ := st.Meta()
	for serial := int64(1); serial <= m.Serial; serial++ {
		rec, ok, err := st.Version(name, serial)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rec.Inputs, rec.Outputs); ok && strings.Contains(got, secret) {
			t.Errorf("version %d of %s holds the secret in clear: %s", serial, name, got)
		}
	}
}

// TestPlannedImportSealsSecrets: an options.import of an object whose
// input the specs mark secret never writes that input in clear, not even
// in the first version recorded before the update.
func TestPlannedImportSealsSecrets(t *testing.T) {
	t.Parallel()
	for name, live := range map[string]string{"same value": "planned-import-secret", "other value": "old-planned-import-secret"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			const secret = "planned-import-secret"
			h.cloud.put("ocid1.existing", resources.Attrs{"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1..m1",
				"displayName": "a", "description": live, "inferenceUnits": 1, "state": "ACTIVE"})
			h.mustApply(resourcesOf(endpoint("a", "a", "description: {fn::secret: "+secret+"}", "options.import: ocid1.existing")))
			checkNoVersionHolds(t, h, "a", secret)
		})
	}
}
