package specs

import (
	"math/rand/v2"
	"testing"

	"github.com/reconcile-dev/reconcile/schemas"
)

// TestAcceptsTree checks the quick check of a spec's literals where they
// lie against the same check of the value they make: on random objects of
// literals and references for every schema, Schema.AcceptsTree of the
// expression says what Schema.Accepts of its static value (the references
// absent) says, and what it accepts has no violations.
func TestAcceptsTree(t *testing.T) {
	t.Parallel()
	for _, tok := range schemas.Tokens() {
		s, _ := schemas.Lookup(tok)
		rng := rand.New(rand.NewPCG(7, uint64(len(tok))))
		g := &exprGen{rng: rng}
		accepted, rounds := 0, *valueRounds
		for range rounds {
			obj, _ := g.expr(s.Root, 0, true).(*Object)
			got := s.AcceptsTree((*objectTree)(obj))
			inst, dyn := staticValue(obj)
			m, _ := inst.(map[string]any)
			if want := s.Accepts(m, dyn); got != want {
				t.Fatalf("%s: AcceptsTree = %v, Accepts of the value %v (absent %v) = %v", tok, got, m, dyn, want)
			}
			if !got {
				continue
			}
			accepted++
			if ds := Violations(s, obj, m, dyn, "the object"); len(ds) > 0 {
				t.Fatalf("%s: accepted %v (absent %v), but:\n%s", tok, m, dyn, show(ds))
			}
		}
		// Not vacuous: schemas whose literals fit often (the restriction
		// policy's, an endpoint's) are accepted in some rounds.
		t.Logf("%s: %d of %d accepted", tok, accepted, rounds)
		if tok == "datadog:RestrictionPolicy" && accepted < rounds/100 {
			t.Errorf("%s: only %d of %d accepted", tok, accepted, rounds)
		}
	}
}
