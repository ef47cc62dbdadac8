package engine_test

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/refresh"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// lookupTok is the secret config value of the tests below.
const lookupTok = "lookup-tok-5ecret-93e1"

// secretLookupSpec declares the secret config value tok, the lookup svc
// called with serviceName given by arg (and whatever prelude declares
// under variables), a resource whose description is the lookup's etag,
// and outputs of the lookup's results.
func secretLookupSpec(prelude, arg string) string {
	return `config:
  tok:
    type: string
    secret: true
    default: ` + lookupTok + `
variables:
` + prelude + `  svc:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: ` + arg + `
  svcEtag:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: ` + arg + `
      return: etag
` + resourcesOf(endpoint("a", "a", "description: ${svc.etag}")) + `outputs:
  etag: ${svc.etag}
  whole: ${svc}
  returned: ${svcEtag}
  id: ${svc.id}
  index: ${svc["policyData"]}
`
}

// rendered is every rendering of p: text, JSON and Markdown.
func rendered(t *testing.T, p *plan.Plan) string {
	t.Helper()
	var b bytes.Buffer
	for _, r := range []func(*bytes.Buffer, *plan.Plan, render.Options) error{
		func(b *bytes.Buffer, p *plan.Plan, o render.Options) error { return render.PlanText(b, p, o) },
		func(b *bytes.Buffer, p *plan.Plan, o render.Options) error { return render.PlanJSON(b, p, o) },
		func(b *bytes.Buffer, p *plan.Plan, o render.Options) error { return render.PlanMarkdown(b, p, o) },
	} {
		if err := r(&b, p, render.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// planFileBytes is p saved as a plan file, signed with key.
func planFileBytes(t *testing.T, p *plan.Plan, key []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := plan.WriteFile(&buf, plan.File{Plan: p}, "test", key); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// applySaved applies p as apply reads it from a plan file: secrets
// sealed.
func applySaved(t *testing.T, h *harness, p *plan.Plan, src string) {
	t.Helper()
	saved := signed(t, plan.File{Plan: p}, h.stateKey())
	st, err := state.Open(h.path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	res, err := apply.Apply(t.Context(), saved.Plan, h.load(src), st, h.reg, apply.Options{Command: "apply"})
	if err != nil || res.Err() != nil || !res.Complete() {
		t.Fatalf("apply of the saved plan: %v, failed %v", err, res.Failed)
	}
}

// allSealed reports whether every non-null value of m is sealed.
func allSealed(m map[string]any) bool {
	for _, v := range m {
		if v != nil && !value.IsSealed(v) {
			return false
		}
	}
	return len(m) > 0
}

// A lookup called with an argument that holds a secret, however made, is
// secret as a whole: every result, its id too, in the plan, in what
// references see, in a plan file, in state and its history, and in the
// recorded outputs. A plan file holds its results only sealed, so its apply
// reads the lookup again.
func TestLookupWithSecretArgumentIsSecret(t *testing.T) {
	t.Parallel()
	sum := sha1.Sum([]byte(lookupTok))
	for name, tc := range map[string]struct {
		prelude, arg string
		derived      string // the serviceName the lookup is called with
	}{
		"secret config":  {arg: "${tok}", derived: lookupTok},
		"fn::secret":     {arg: "{fn::secret: svc-fnsecret-51d2}", derived: "svc-fnsecret-51d2"},
		"interpolation":  {arg: `"svc-${tok}"`, derived: "svc-" + lookupTok},
		"fn::join":       {arg: `{fn::join: ["", [joined-, "${tok}"]]}`, derived: "joined-" + lookupTok},
		"fn::toBase64":   {arg: `{fn::toBase64: "${tok}"}`, derived: base64.StdEncoding.EncodeToString([]byte(lookupTok))},
		"fn::fromBase64": {arg: `{fn::fromBase64: {fn::toBase64: "from-${tok}"}}`, derived: "from-" + lookupTok},
		"fn::select":     {arg: `{fn::select: [1, {fn::split: ["/", "a/sel-${tok}"]}]}`, derived: "sel-" + lookupTok},
		"fn::sha1":       {arg: `{fn::sha1: "${tok}"}`, derived: hex.EncodeToString(sum[:])},
		"fn::toJSON":     {arg: `{fn::toJSON: ["${tok}"]}`, derived: `["` + lookupTok + `"]`},
		"a secret lookup result": {
			prelude: "  first:\n    fn::invoke:\n      function: gcp:endpoints:getServiceIamPolicy\n      arguments:\n        serviceName: first-${tok}\n",
			arg:     "${first.etag}", derived: "etag-of-first-" + lookupTok,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			src := secretLookupSpec(tc.prelude, tc.arg)
			p := h.plan(src, planner.Options{Refresh: true})
			c := change(t, p, "svc")
			if c.ID != "" || len(c.After) == 0 {
				t.Errorf("svc: id %q, after %v; want no id in clear", c.ID, c.After)
			}
			for k, v := range c.After {
				if !value.IsSecret(v) {
					t.Errorf("svc's result %s = %#v, want a secret", k, v)
				}
			}
			if d := change(t, p, "a").After["description"]; !value.IsSecret(d) {
				t.Errorf("a's description = %#v, want a secret: it is the secret lookup's etag", d)
			}
			for _, o := range []string{"etag", "whole", "returned", "id", "index"} {
				if !value.IsSecret(p.Outputs[o]) {
					t.Errorf("output %s = %#v, want a secret", o, p.Outputs[o])
				}
			}
			shown := rendered(t, p) + string(planFileBytes(t, p, h.stateKey()))
			if strings.Contains(shown, tc.derived) {
				t.Errorf("the rendered plan or the plan file holds %q in clear", tc.derived)
			}

			applySaved(t, h, p, src)
			if calls := h.iam.invocations(); len(calls) == 0 || calls[len(calls)-1]["serviceName"] != tc.derived {
				t.Errorf("the lookup was called with %v, want it read again by the apply with %q", calls, tc.derived)
			}
			rec := h.record("svc")
			if rec.ID != "" || !allSealed(rec.Outputs) || !allSealed(rec.Inputs) {
				t.Errorf("svc's record: id %q, inputs %v, outputs %v; want no id, every argument and result sealed", rec.ID, rec.Inputs, rec.Outputs)
			}
			if d := h.record("a").Inputs["description"]; !value.IsSealed(d) {
				t.Errorf("a's recorded description = %#v, want it sealed", d)
			}
			for _, n := range []string{"svc", "svcEtag", "a"} {
				checkNoVersionHolds(t, h, n, tc.derived)
			}
			h.reading(func(st *state.Store) {
				o, _, err := st.Outputs()
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range o.Values {
					if !value.IsSealed(v) {
						t.Errorf("recorded output %s = %#v, want it sealed", k, v)
					}
				}
			})
			p2 := h.plan(src, planner.Options{Refresh: true})
			if p2.HasChanges() || len(change(t, p2, "svc").Drift) > 0 {
				t.Errorf("plan after apply = %s, drift %v; want no changes", actions(p2), change(t, p2, "svc").Drift)
			}
			if strings.Contains(rendered(t, p2), tc.derived) {
				t.Errorf("the second plan shows %q in clear", tc.derived)
			}
		})
	}
}

// A lookup read during apply (an argument known only then) with a secret
// argument: what the apply records of it, and of what uses it, is sealed.
func TestDeferredLookupWithSecretArgumentIsSecret(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := `config:
  tok:
    type: string
    secret: true
    default: ` + lookupTok + `
variables:
  svc:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: "${ep.id}-${tok}"
` + resourcesOf(endpoint("ep", "ep"), endpoint("b", "b", "description: ${svc.etag}")) + `outputs:
  etag: ${svc.etag}
`
	p, res := h.apply(src)
	if c := change(t, p, "svc"); !c.Deferred || res.Err() != nil {
		t.Fatalf("svc deferred %v, apply %v; want a lookup read during apply", c.Deferred, res.Err())
	}
	if !value.IsSecret(p.Outputs["etag"]) && !value.ContainsUnknown(p.Outputs["etag"]) {
		t.Errorf("planned output etag = %#v", p.Outputs["etag"])
	}
	calls := h.iam.invocations()
	if len(calls) != 1 {
		t.Fatalf("lookup calls %v, want one, during apply", calls)
	}
	derived := fmt.Sprint(calls[0]["serviceName"])
	rec := h.record("svc")
	if rec.ID != "" || !allSealed(rec.Outputs) {
		t.Errorf("svc's record: id %q outputs %v; want no id and every result sealed", rec.ID, rec.Outputs)
	}
	if d := h.record("b").Inputs["description"]; !value.IsSealed(d) {
		t.Errorf("b's recorded description = %#v, want it sealed", d)
	}
	if !value.IsSecret(res.Outputs["etag"]) {
		t.Errorf("applied output etag = %#v, want a secret", res.Outputs["etag"])
	}
	for _, n := range []string{"svc", "b"} {
		checkNoVersionHolds(t, h, n, derived)
	}
	p2 := h.plan(src, planner.Options{Refresh: true})
	if p2.HasChanges() {
		t.Errorf("plan after apply = %s, want no changes", actions(p2))
	}
	if strings.Contains(rendered(t, p2), derived) {
		t.Errorf("the second plan shows %q in clear", derived)
	}
}

// A get whose id or state holds a secret reads an object that is secret
// as a whole: every field, in the plan, in references, in state (which
// keeps no id in clear) and in drift. Its errors do not show the id.
func TestGetWithSecretIsSecret(t *testing.T) {
	t.Parallel()
	const id = "ocid1.aiendpoint.existing-5ecret"
	for name, get := range map[string]string{
		"id from secret config": "id: ${existingId}",
		"id from fn::secret":    "id: {fn::secret: " + id + "}",
		"id made by a function": `id: {fn::join: ["", ["${existingId}"]]}`,
		"secret state":          "id: " + id + "\n      state:\n        displayName: {fn::secret: seen-name-77}",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.cloud.put(id, resources.Attrs{"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1..m1",
				"displayName": "seen-name-77", "description": "described-9f0", "inferenceUnits": 1, "state": "ACTIVE"})
			src := `config:
  existingId:
    type: string
    secret: true
    default: ` + id + `
resources:
  g:
    type: oci:AiLanguage:Endpoint
    get:
      ` + get + `
` + endpoint("b", "b", "description: ${g.description}") + `outputs:
  name: ${g.displayName}
  whole: ${g}
`
			p := h.plan(src, planner.Options{Refresh: true})
			c := change(t, p, "g")
			if c.ID != "" {
				t.Errorf("g's id = %q, want none in clear", c.ID)
			}
			for k, v := range c.After {
				if v != nil && !value.IsSecret(v) {
					t.Errorf("g's %s = %#v, want a secret", k, v)
				}
			}
			if !value.IsSecret(p.Outputs["name"]) || !value.IsSecret(p.Outputs["whole"]) || !value.IsSecret(change(t, p, "b").After["description"]) {
				t.Errorf("outputs %v, b's description %#v: want secrets", p.Outputs, change(t, p, "b").After["description"])
			}
			shown := rendered(t, p) + string(planFileBytes(t, p, h.stateKey()))
			for _, s := range []string{id, "described-9f0"} {
				if strings.Contains(shown, s) {
					t.Errorf("the rendered plan or the plan file holds %q in clear", s)
				}
			}
			applySaved(t, h, p, src)
			rec := h.record("g")
			if rec.ID != "" || !allSealed(rec.Outputs) {
				t.Errorf("g's record: id %q, outputs %v; want no id and every field sealed", rec.ID, rec.Outputs)
			}
			checkNoVersionHolds(t, h, "g", "described-9f0")
			if p2 := h.plan(src, planner.Options{Refresh: true}); p2.HasChanges() || len(change(t, p2, "g").Drift) > 0 {
				t.Errorf("plan after apply = %s, drift %v; want no changes", actions(p2), change(t, p2, "g").Drift)
			}

			// Changed outside: the plan's drift shows secrets only, and
			// reconcile drift reads nothing it cannot show.
			h.cloud.put(id, resources.Attrs{"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1..m1",
				"displayName": "seen-name-77", "description": "changed-by-hand-31", "inferenceUnits": 1, "state": "ACTIVE"})
			p3 := h.plan(src, planner.Options{Refresh: true})
			drift := change(t, p3, "g").Drift
			if len(drift) != 1 || drift[0].Path != "description" || !value.IsSecret(drift[0].Applied) || !value.IsSecret(drift[0].Live) {
				t.Errorf("drift of g = %#v, want description, secret on both sides", drift)
			}
			if strings.Contains(rendered(t, p3), "changed-by-hand-31") {
				t.Errorf("the plan shows the drifted secret in clear")
			}
			h.reading(func(st *state.Store) {
				d, err := refresh.Drift(t.Context(), h.load(src), st, h.reg, 2)
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if err := render.DriftJSON(&b, d); err != nil {
					t.Fatal(err)
				}
				if len(d.Errors) > 0 || strings.Contains(b.String(), id) || strings.Contains(b.String(), "changed-by-hand-31") {
					t.Errorf("drift: errors %v, report %s; want no error and nothing in clear", d.Errors, b.String())
				}
			})
		})
	}
}

// A get of a secret id that does not exist, or cannot be read, is an
// error that does not show the id.
func TestGetWithSecretIDErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const id = "ocid1.aiendpoint.missing-5ecret"
	src := `variables:
  derived:
    fn::toBase64: {fn::secret: ` + id + `}
resources:
  g:
    type: oci:AiLanguage:Endpoint
    get:
      id: ${derived}
`
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, diags := planner.Plan(t.Context(), h.load(src), st, h.reg, planner.Options{Refresh: true})
	text := diagText(diags)
	if !diags.HasErrors() || !strings.Contains(text, "does not exist") || !strings.Contains(text, value.SensitiveText) ||
		strings.Contains(text, base64.StdEncoding.EncodeToString([]byte(id))) {
		t.Errorf("plan of a get of a missing secret id: %s; want it not found, the id not shown", text)
	}
}

// A lookup's result that changes while its secret arguments stay the same
// is drift, shown as secrets.
func TestSecretLookupDrift(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	etag := "etag-first-1a"
	h.iam.result = func(resources.Attrs) (resources.Attrs, error) {
		return resources.Attrs{"id": "services/x", "etag": etag, "policyData": "{}"}, nil
	}
	src := secretLookupSpec("", "${tok}")
	h.mustApply(src)
	etag = "etag-second-2b"
	p := h.plan(src, planner.Options{Refresh: true})
	drift := change(t, p, "svc").Drift
	if len(drift) != 1 || drift[0].Path != "etag" || !value.IsSecret(drift[0].Applied) || !value.IsSecret(drift[0].Live) {
		t.Errorf("drift of svc = %#v, want etag, secret on both sides", drift)
	}
	if s := rendered(t, p); strings.Contains(s, "etag-second-2b") || strings.Contains(s, "etag-first-1a") {
		t.Errorf("the plan shows the lookup's drift in clear")
	}
}

// A lookup first applied with plain arguments, then with the same ones
// marked secret: no version of its record in state's history keeps its
// results, or its id, in clear.
func TestLookupTurnedSecretSealsHistory(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	plain := secretLookupSpec("", "${tok}")
	plain = strings.Replace(plain, "    secret: true\n", "", 1)
	h.mustApply(plain)
	if rec := h.record("svc"); rec.ID != "services/"+lookupTok {
		t.Fatalf("svc's id = %q, want it in clear while nothing is secret", rec.ID)
	}
	h.mustApply(secretLookupSpec("", "${tok}"))
	for _, n := range []string{"svc", "svcEtag", "a"} {
		checkNoVersionHolds(t, h, n, lookupTok)
	}
	h.reading(func(st *state.Store) {
		m, _ := st.Meta()
		for serial := int64(1); serial <= m.Serial; serial++ {
			if rec, ok, err := st.Version("svc", serial); err != nil || ok && rec.ID != "" {
				t.Errorf("version %d of svc: id %q (%v), want none", serial, rec.ID, err)
			}
		}
	})
}
