package plan_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
)

// FuzzReadPlanFile feeds arbitrary bytes to the plan-file reader, as a
// damaged or hostile plan file would. It must never panic; a plan it accepts
// must write again, and read back from that to the same plan.
//
//	go test ./engine/plan -run '^$' -fuzz FuzzReadPlanFile -fuzztime 10m
func FuzzReadPlanFile(f *testing.F) {
	pl := &plan.Plan{Lineage: "4b7c1c1e-0000-4000-8000-000000000000", Serial: 3, SpecHash: "sha256:abc", Changes: []plan.Change{
		{Addr: "ep", Type: "oci:AiLanguage:Endpoint", Kind: kind.Resource, Action: plan.Update, ID: "ocid1.x",
			Before: map[string]any{"displayName": "a", "inferenceUnits": int64(1), "tags": map[string]any{"k": "v"}},
			After: map[string]any{"displayName": "b", "inferenceUnits": int64(2), "id": value.Unknown{}, "description": value.Secret{Value: "s3cret"},
				"list": []any{1.5, nil, true, []any{"x"}}},
			ReplacePaths: []string{"modelId"}, Pos: diag.Pos{File: "main.yaml", Line: 3, Col: 5}},
		{Addr: "pol", Type: "datadog:RestrictionPolicy", Kind: kind.Resource, Action: plan.Create,
			After: map[string]any{"resourceId": "dashboard:x", "bindings": []any{map[string]any{"relation": "editor", "principals": []any{"org:1"}}}}},
		{Addr: "old", Type: "oci:AiLanguage:Endpoint", Kind: kind.Resource, Action: plan.Delete, ID: "ocid1.old"},
		{Addr: "me", Type: "datadog:getCurrentUser", Kind: kind.Lookup, Action: plan.Read, Deferred: true},
		{Addr: "same", Type: "datadog:RestrictionPolicy", Kind: kind.Resource, Action: plan.NoOp, ID: "dashboard:y",
			Before: map[string]any{"resourceId": "dashboard:y", "n": int64(2)}, After: map[string]any{"resourceId": "dashboard:y", "n": int64(2)}},
	}}
	var buf bytes.Buffer
	key := []byte("a fuzzing key of thirty-two bytes")
	if err := plan.WriteFile(&buf, plan.File{Plan: pl, SpecPath: "/specs", Backend: "/state.db", Stack: "dev", Config: map[string]string{"k": "v"}}, "fuzz", key); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(bytes.Replace(buf.Bytes(), []byte(`"version": 4`), []byte(`"version": 99`), 1))
	for _, s := range []string{"", "{}", "null", `{"version":1,"specHash":"x"}`, `{"version":1,"specHash":"x","changes":[{"addr":"a","action":"nope"}]}`,
		`{"version":1,"specHash":"x","changes":[{"addr":"a","action":"create","after":{"n":1e400,"u":{"$unknown":true}}}]}`,
		`{"version":1,"specHash":"x","changes":[{"addr":"a","action":"create","after":{"a":[[[[[[{"$secret":"x"}]]]]]]}}]}`,
		`{"format":"reconcile plan","version":5,"mac":"m","plan":{"version":5,"specHash":"h","changes":[{"addr":"a","kind":"resource","action":"no-op","before":{"x":1},"afterIsBefore":true}],"outputs":{"o":1e400}}}`,
		`{"format":"reconcile plan","version":5,"mac":"m","plan":{"version":5,"specHash":"h","changes":[{"addr":"a","kind":"resource","action":"update","drift":[{"path":"x","live":{"$unknown":true}}]}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := plan.ReadFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := plan.WriteFile(&out, pf, "fuzz", key); err != nil {
			t.Fatalf("a plan file that reads does not write again: %v\n%q", err, data)
		}
		pf2, err := plan.ReadFile(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("a plan file written from one that reads does not read: %v\n%s", err, out.Bytes())
		}
		if err := pf2.Verify(key); err != nil {
			t.Fatalf("a plan file written with a key does not verify with it: %v", err)
		}
		// An empty map or list is written like none (omitempty): the same
		// to apply.
		for _, p := range []*plan.File{&pf, &pf2} {
			if len(p.Config) == 0 {
				p.Config = nil
			}
			if len(p.Plan.Outputs) == 0 {
				p.Plan.Outputs = nil
			}
			for i := range p.Plan.Changes {
				c := &p.Plan.Changes[i]
				if len(c.Before) == 0 {
					c.Before = nil
				}
				if len(c.After) == 0 {
					c.After = nil
				}
				if len(c.ReplacePaths) == 0 {
					c.ReplacePaths = nil
				}
			}
		}
		if !reflect.DeepEqual(pf.Plan, pf2.Plan) || pf.SpecPath != pf2.SpecPath || pf.Backend != pf2.Backend || pf.Stack != pf2.Stack || !reflect.DeepEqual(pf.Config, pf2.Config) {
			t.Fatalf("a plan file changes on a round trip:\n%#v\n%#v", pf.Plan, pf2.Plan)
		}
	})
}
