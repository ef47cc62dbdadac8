package main

import (
	"maps"
	"slices"
	"testing"

	"reconcile/schemas"
)

// TestRegistryServesEverySchema checks that the registry the binary builds
// and the embedded schemas name the same types: a driver or lookup without
// a schema, or a schema that nothing serves, fails here. A driver must
// serve a resource type and a lookup a function type.
func TestRegistryServesEverySchema(t *testing.T) {
	t.Parallel()
	reg, cleanup, err := (&cli{}).registry()
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	served := map[string]schemas.Kind{}
	for tok := range reg.Drivers {
		served[tok] = schemas.Resource
	}
	for tok := range reg.Functions {
		if _, dup := served[tok]; dup {
			t.Errorf("%s is served both by a driver and by a lookup", tok)
		}
		served[tok] = schemas.Function
	}
	for tok, k := range served {
		s, ok := schemas.Lookup(tok)
		switch {
		case !ok:
			t.Errorf("the registry serves %s (a %s), which has no schema", tok, k)
		case s.Token != tok:
			t.Errorf("the registry serves %s under an alias; want the canonical token %s", tok, s.Token)
		case s.Kind != k:
			t.Errorf("the registry serves %s as a %s, but its schema is of a %s", tok, k, s.Kind)
		}
	}
	for _, tok := range schemas.Tokens() {
		if _, ok := served[tok]; !ok {
			t.Errorf("schema %s has no driver or lookup in the registry", tok)
		}
	}
	if len(served) == 0 || len(served) != len(schemas.Tokens()) {
		t.Errorf("the registry serves %v, the schemas list %v", slices.Sorted(maps.Keys(served)), schemas.Tokens())
	}
}
