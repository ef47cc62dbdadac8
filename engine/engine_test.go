package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"reconcile/engine"
	"reconcile/resources"
	"reconcile/state"
)

// fakeCloud is a test driver: objects live in a map; each operation can be
// made to fail through the function fields.
type fakeCloud struct {
	mu      sync.Mutex
	objects map[string]resources.Attrs
	next    int
	calls   []string

	failCreate func(want resources.Attrs) error
	failUpdate func(id string) error
	failDelete func(id string) error
}

func newFakeCloud() *fakeCloud { return &fakeCloud{objects: map[string]resources.Attrs{}} }

func (f *fakeCloud) log(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeCloud) Read(_ context.Context, id string) (resources.Attrs, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.objects[id]
	if !ok {
		return nil, resources.ErrNotFound
	}
	out := resources.Attrs{}
	for k, v := range o {
		out[k] = v
	}
	return out, nil
}

func (f *fakeCloud) Create(_ context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log("create %v", want["displayName"])
	if f.failCreate != nil {
		if err := f.failCreate(want); err != nil {
			return "", nil, err
		}
	}
	f.next++
	id := fmt.Sprintf("ocid1.ailanguageendpoint.oc1..fake%d", f.next)
	o := resources.Attrs{"id": id, "state": "ACTIVE", "projectId": "ocid1.project"}
	for k, v := range want {
		o[k] = v
	}
	f.objects[id] = o
	return id, o, nil
}

func (f *fakeCloud) Update(_ context.Context, id string, _, want resources.Attrs) (resources.Attrs, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log("update %s", id)
	if f.failUpdate != nil {
		if err := f.failUpdate(id); err != nil {
			return nil, err
		}
	}
	o, ok := f.objects[id]
	if !ok {
		return nil, resources.ErrNotFound
	}
	for k, v := range want {
		o[k] = v
	}
	return o, nil
}

func (f *fakeCloud) Delete(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log("delete %s", id)
	if f.failDelete != nil {
		if err := f.failDelete(id); err != nil {
			return err
		}
	}
	if _, ok := f.objects[id]; !ok {
		return resources.ErrNotFound
	}
	delete(f.objects, id)
	return nil
}

type harness struct {
	t     *testing.T
	cloud *fakeCloud
	path  string
	reg   resources.Registry
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	c := newFakeCloud()
	return &harness{t: t, cloud: c, path: filepath.Join(t.TempDir(), "state.db"),
		reg: resources.Registry{Drivers: map[string]resources.Driver{"oci:AiLanguage:Endpoint": c}}}
}

func (h *harness) load(src string) *engine.Spec {
	h.t.Helper()
	spec, diags := engine.Load(h.t.TempDir(), []engine.Source{{Name: "spec.yaml", Data: []byte(src)}}, nil)
	if diags.HasErrors() {
		h.t.Fatalf("load: %v", diags.Err())
	}
	return spec
}

func (h *harness) plan(src string, opts engine.PlanOptions) *engine.Plan {
	h.t.Helper()
	st, err := state.Open(h.path, state.Options{ReadOnly: true})
	if err != nil {
		h.t.Fatal(err)
	}
	defer st.Close()
	p, diags := engine.MakePlan(h.t.Context(), h.load(src), st, h.reg, opts)
	if diags.HasErrors() {
		h.t.Fatalf("plan: %v", diags.Err())
	}
	return p
}

func (h *harness) apply(src string) (*engine.Plan, *engine.ApplyResult) {
	h.t.Helper()
	st, err := state.Open(h.path, state.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	defer st.Close()
	spec := h.load(src)
	p, diags := engine.MakePlan(h.t.Context(), spec, st, h.reg, engine.PlanOptions{Refresh: true})
	if diags.HasErrors() {
		h.t.Fatalf("plan: %v", diags.Err())
	}
	res, err := engine.Apply(h.t.Context(), p, spec, st, h.reg, engine.ApplyOptions{Command: "apply"})
	if err != nil {
		h.t.Fatal(err)
	}
	return p, res
}

func actions(p *engine.Plan) string {
	var parts []string
	for _, c := range p.Changes {
		parts = append(parts, c.Addr+":"+c.Action.String())
	}
	return strings.Join(parts, " ")
}

const twoEndpoints = `
resources:
  a:
    type: oci:AiLanguage:Endpoint
    properties:
      compartment_id: ocid1.compartment.oc1..x
      modelId: ocid1.ailanguagemodel.oc1..m
      displayName: first
  b:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ocid1.compartment.oc1..x
      modelId: ocid1.ailanguagemodel.oc1..m
      displayName: second-${a.id}
      description: ${a.displayName}
outputs:
  bId: ${b.id}
`

func TestApplyCreatesThenNoChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p, res := h.apply(twoEndpoints)
	if got, want := actions(p), "a:create b:create"; got != want {
		t.Fatalf("first plan = %q, want %q", got, want)
	}
	if res.Err() != nil || res.Counts[engine.Create] != 2 {
		t.Fatalf("apply: counts %v, failed %v", res.Counts, res.Failed)
	}
	if res.Outputs["bId"] == nil {
		t.Errorf("outputs = %v, want bId", res.Outputs)
	}
	p2 := h.plan(twoEndpoints, engine.PlanOptions{Refresh: true})
	if p2.HasChanges() {
		t.Errorf("second plan = %q, want no changes", actions(p2))
	}
}
