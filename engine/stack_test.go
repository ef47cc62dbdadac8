package engine_test

import (
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/state"
)

// A stack's settings give config values: typed by the declaration (a wrong
// type is an error at the setting), declaring what the specs do not, secret
// when encrypted, overridden by --config; ${pulumi.stack} and
// ${pulumi.project} read the stack and the project.
func TestStackConfig(t *testing.T) {
	t.Parallel()
	src := "config:\n  replicas:\n    type: integer\n    default: 1\n  token:\n    type: string\noutputs:\n  r: ${replicas}\n  t: ${token}\n  e: ${extra}\n  s: ${pulumi.stack}\n  p: ${pulumi.project}\n"
	at := diag.Pos{File: "Pulumi.dev.yaml", Line: 3, Col: 3}
	load := func(cfg map[string]specs.StackValue, overrides map[string]string) (*specs.Spec, diag.Diagnostics) {
		return specs.LoadWith(t.TempDir(), []specs.Source{{Name: "spec.yaml", Data: []byte(src)}}, overrides,
			specs.LoadOptions{Project: "orders", Stack: "dev", StackConfig: cfg})
	}
	spec, diags := load(map[string]specs.StackValue{
		"replicas": {Value: int64(3), Pos: at},
		"token":    {Value: "s3cr3t", Secret: true, Pos: at},
		"extra":    {Value: map[string]any{"a": true}, Pos: at},
	}, map[string]string{"replicas": "5"})
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags.Err())
	}
	if spec.Values["replicas"] != int64(5) {
		t.Errorf("replicas = %v, want 5 (--config overrides the stack's settings)", spec.Values["replicas"])
	}
	if _, ok := spec.Values["token"].(value.Secret); !ok {
		t.Errorf("token = %#v, want a secret", spec.Values["token"])
	}
	if spec.Stack != "dev" || spec.Project != "orders" {
		t.Errorf("stack %q project %q", spec.Stack, spec.Project)
	}
	h := newHarness(t)
	var p *plan.Plan
	h.reading(func(st *state.Store) { p, diags = planner.Plan(t.Context(), spec, st, h.reg, planner.Options{}) })
	if diags.HasErrors() || p.Outputs["s"] != "dev" || p.Outputs["p"] != "orders" || p.Outputs["e"] == nil {
		t.Errorf("outputs %v (%v)", p.Outputs, diags)
	}

	_, diags = load(map[string]specs.StackValue{"replicas": {Value: "three", Pos: at}, "token": {Value: "x", Pos: at}}, nil)
	if !diags.HasErrors() || diags[0].Pos != at || !strings.Contains(diags[0].Summary, `config "replicas": expected integer`) {
		t.Errorf("a setting of the wrong type: %v, want an error at %s", diags, at)
	}
}
