package specs

import (
	"flag"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/schemas"
)

var valueRounds = flag.Int("values.rounds", 3000, "random objects tried per schema by TestValueViolationsAgree")

// TestValueViolationsAgree checks ValueViolations, which validates only
// what is not a literal Load validated, against Violations of the whole
// value: on random objects of literals and references whose literals fit
// the schema, evaluated to random values (unknown, secret, of the wrong
// type), with the schema's defaults, the diagnostics are the same, in the
// same order.
func TestValueViolationsAgree(t *testing.T) {
	t.Parallel()
	var allFolds atomic.Int64
	t.Cleanup(func() {
		if allFolds.Load() < 100 {
			t.Errorf("only %d lists or objects folded", allFolds.Load())
		}
	})
	for _, tok := range schemas.Tokens() {
		s, _ := schemas.Lookup(tok)
		t.Run(tok, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(2, uint64(len(tok))))
			g := &exprGen{rng: rng}
			checked, found, apart, folds := 0, 0, 0, 0
			// A schema whose objects rarely fit statically (a model's, with
			// four required nested objects) gets more rounds, up to five
			// times as many, to check as many objects as the others.
			for i := 0; i < *valueRounds || (checked < *valueRounds/40 && i < 5**valueRounds); i++ {
				obj, _ := g.expr(s.Root, 0, true).(*Object)
				l := &loader{}
				l.validateStatic(s, obj, "the object")
				if len(l.diags) > 0 {
					continue
				}
				vals, _ := g.eval(obj).(map[string]any)
				if rng.IntN(2) == 0 {
					vals = s.ApplyDefaults(vals)
				}
				checked++
				inst, dyn := knownValue(vals)
				want := Violations(s, obj, inst, dyn, "the object")
				got := ValueViolations(s, obj, vals, func() string { return "the object" })
				if len(want) > 0 {
					found++
				}
				if _, ok := violationsApart(s, obj, vals, func() string { return "the object" }); ok {
					apart++
				}
				if show(got) != show(want) {
					t.Fatalf("value %v:\nValueViolations:\n%s\nViolations:\n%s", vals, show(got), show(want))
				}
				// Folded as Load folds it, the object gives the same
				// diagnostics both ways: at the same places, but for
				// those inside what was folded, which are at its start.
				if (&folder{}).fold(obj) {
					continue // wholly literal: the inputs object is never folded whole
				}
				folds += countConsts(obj)
				want = Violations(s, obj, inst, dyn, "the object")
				if got = ValueViolations(s, obj, vals, func() string { return "the object" }); show(got) != show(want) {
					t.Fatalf("value %v, folded:\nValueViolations:\n%s\nViolations:\n%s", vals, show(got), show(want))
				}
			}
			t.Logf("%d objects checked, %d with violations, %d validated apart, %d lists or objects folded", checked, found, apart, folds)
			allFolds.Add(int64(folds))
			// The generator must not be vacuous: enough objects that fit
			// statically (schemas with patterns and required nested
			// fields, such as the IAM bindings', yield about 1 in 20).
			if len(s.Inputs()) > 0 && (checked < *valueRounds/40 || found < *valueRounds/100 || apart < checked/4) {
				t.Errorf("only %d objects checked, %d with violations, %d validated apart", checked, found, apart)
			}
		})
	}
}

func show(ds diag.Diagnostics) string {
	out := ""
	for _, d := range ds {
		out += d.String() + "\n"
	}
	return out
}

// exprGen makes random expressions and values; every expression has a
// position of its own.
type exprGen struct {
	rng  *rand.Rand
	line int
}

func (g *exprGen) pos() diag.Pos {
	g.line++
	return diag.At("spec.yaml", g.line, 1)
}

var genStrings = []string{"", "x", "viewer", "user:ada", "team:x", "nobody", "ns.key", "dashboard:a", "abc", "A.b.c"}

// expr returns a random expression for a value of schema p: mostly
// literals of the right type, or references.
func (g *exprGen) expr(p *schemas.Prop, depth int, top bool) Expr {
	rng := g.rng
	if !top && rng.IntN(3) == 0 {
		return &Ref{P: g.pos(), Root: "r"}
	}
	typ := ""
	if p != nil {
		typ = p.Type
	}
	if top {
		typ = "object"
	} else if rng.IntN(10) == 0 || typ == "" || depth > 3 && (typ == "array" || typ == "object") {
		typ = []string{"string", "integer", "boolean", "null"}[rng.IntN(4)]
	}
	switch typ {
	case "array":
		l := &List{P: g.pos()}
		for range rng.IntN(3) {
			var items *schemas.Prop
			if p != nil {
				items = p.Items
			}
			l.Items = append(l.Items, g.expr(items, depth+1, false))
		}
		return l
	case "object":
		o := &Object{P: g.pos()}
		var names []string
		if p != nil {
			for _, n := range slices.Sorted(maps.Keys(p.Properties)) {
				if rng.IntN(3) > 0 && (!p.Properties[n].ReadOnly || rng.IntN(10) == 0) {
					names = append(names, n)
				}
			}
			if p.AdditionalProperties != nil || rng.IntN(10) == 0 {
				for range rng.IntN(3) {
					names = append(names, genStrings[rng.IntN(len(genStrings))])
				}
			}
		}
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			var sub *schemas.Prop
			if p != nil {
				if sub = p.Properties[n]; sub == nil {
					sub = p.AdditionalProperties
				}
			}
			o.Entries = append(o.Entries, Entry{Key: n, Raw: n, KeyPos: g.pos(), Value: g.expr(sub, depth+1, false)})
		}
		return o
	case "integer":
		return &Lit{P: g.pos(), Value: int64(rng.IntN(4))}
	case "boolean":
		return &Lit{P: g.pos(), Value: true}
	case "null":
		return &Lit{P: g.pos()}
	}
	if p != nil && len(p.Enum) > 0 && rng.IntN(2) == 0 {
		return &Lit{P: g.pos(), Value: p.Enum[rng.IntN(len(p.Enum))]}
	}
	return &Lit{P: g.pos(), Value: genStrings[rng.IntN(len(genStrings))]}
}

// eval evaluates e as the planner would, giving each reference a random
// value.
func (g *exprGen) eval(e Expr) any {
	switch x := e.(type) {
	case *Lit:
		return x.Value
	case *List:
		out := make([]any, len(x.Items))
		for i, it := range x.Items {
			out[i] = g.eval(it)
		}
		return out
	case *Object:
		out := make(map[string]any, len(x.Entries))
		for _, en := range x.Entries {
			out[en.Key] = g.eval(en.Value)
		}
		return out
	}
	return g.value(0)
}

// value returns a random value, sometimes unknown or secret, or holding
// such values.
func (g *exprGen) value(depth int) any {
	rng := g.rng
	var v any
	switch n := rng.IntN(10); {
	case n == 0:
		return value.Unknown{}
	case n < 4:
		v = genStrings[rng.IntN(len(genStrings))]
	case n == 4:
		v = int64(rng.IntN(4))
	case n == 5:
		v = nil
	case n < 8 && depth < 2:
		l := make([]any, rng.IntN(3))
		for i := range l {
			l[i] = g.value(depth + 1)
		}
		v = l
	case depth < 2:
		m := map[string]any{}
		for i := range rng.IntN(3) {
			m[[]string{"relation", "principals", "a", strconv.Itoa(i)}[rng.IntN(4)]] = g.value(depth + 1)
		}
		v = m
	default:
		v = "user:x"
	}
	if rng.IntN(8) == 0 {
		return value.Secret{Value: v}
	}
	return v
}
