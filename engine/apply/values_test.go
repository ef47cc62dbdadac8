package apply

import (
	"maps"
	"slices"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/specs"
)

// TestValuesLetGo checks that an apply lets go of a node's value once
// every scheduled node that reads it has finished, and keeps those the
// outputs read.
func TestValuesLetGo(t *testing.T) {
	src := `
variables:
  suffix: ${b.id}
resources:
  a:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:a
      bindings: [{relation: viewer, principals: ["role:x"]}]
  b:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:b-${a.id}
      bindings: [{relation: viewer, principals: ["role:x"]}]
  c:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:c-${a.id}-${suffix}
      bindings: [{relation: viewer, principals: ["role:x"]}]
outputs:
  second: ${b.id}
`
	spec, diags := specs.Load(t.TempDir(), []specs.Source{{Name: "spec.yaml", Data: []byte(src)}}, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	g := spec.Graph()
	deps := g.DepsMap()
	a := &applier{spec: spec, values: map[string]any{}}
	a.countReaders(g.Order(), deps)
	held := func() []string { return slices.Sorted(maps.Keys(a.values)) }
	finish := func(node string) {
		a.setValue(node, node+"-value")
		a.done(node, deps[node])
	}

	finish("a")
	finish("b")
	if got := held(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after a and b: values of %v, want a (c reads it too) and b", got)
	}
	finish("suffix")
	if got := held(); !slices.Equal(got, []string{"a", "b", "suffix"}) {
		t.Fatalf("after suffix: values of %v, want a, b (an output reads it) and suffix", got)
	}
	finish("c")
	if got := held(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("after c: values of %v, want b's alone (an output reads it; nothing reads c's)", got)
	}
}
