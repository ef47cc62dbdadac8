package specs

import (
	"slices"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
)

// Const is a list or an object of literals alone, which Load folds into
// one once it has checked the specs: it holds their value packed
// (value.Packer), in source order, in a fraction of the memory of the
// Lit, List and Object expressions it stands for: the specs of 20,000
// restriction policies take 15 MB rather than 31 once loaded. Diagnostics
// about a value inside it point at where it starts.
type Const struct {
	P      diag.Pos
	packed []byte
}

func (c *Const) Pos() diag.Pos { return c.P }

// Value returns the value, made anew: the caller's to change.
func (c *Const) Value() (any, error) { return value.UnpackValue(c.packed) }

// Is reports whether v is the value, of the same Go types (see
// value.SamePacked), without making a copy of it.
func (c *Const) Is(v any) bool { return value.SamePacked(c.packed, v) }

// folder folds the literal lists and objects of resources' inputs into
// Consts, buf being the packing of the one at hand.
type folder struct{ buf []byte }

// foldInputs folds what is literal in the inputs of every resource. The
// inputs object itself stays an Object, whose entries ValueViolations
// and the planner read; its literal values are folded one by one.
func (l *loader) foldInputs() {
	var f folder
	for _, r := range l.spec.Resources {
		obj := r.Properties
		if obj == nil || !f.fold(obj) {
			continue
		}
		for i := range obj.Entries {
			obj.Entries[i].Value = f.constOf(obj.Entries[i].Value)
		}
	}
}

// fold folds the literal lists and objects inside e and reports whether e
// is a literal itself, left whole for its caller to fold with its
// siblings. Each expression is visited once.
func (f *folder) fold(e Expr) bool {
	switch x := e.(type) {
	case *Lit:
		return true
	case *List:
		return f.foldAll(len(x.Items), func(i int) *Expr { return &x.Items[i] })
	case *Object:
		return f.foldAll(len(x.Entries), func(i int) *Expr { return &x.Entries[i].Value })
	}
	return false
}

// foldAll is fold for the n children of a list or an object: when they
// are all literals, it leaves them to the caller; otherwise it folds each
// that is one.
func (f *folder) foldAll(n int, at func(int) *Expr) bool {
	lits := make([]bool, n)
	all := true
	for i := range n {
		lits[i] = f.fold(*at(i))
		all = all && lits[i]
	}
	if all {
		return true
	}
	for i, lit := range lits {
		if lit {
			*at(i) = f.constOf(*at(i))
		}
	}
	return false
}

// constOf returns e, a literal, folded into a Const when it is a list or an
// object of any items, and packs (not one nesting past what
// value.UnpackValue takes).
func (f *folder) constOf(e Expr) Expr {
	switch x := e.(type) {
	case *List:
		if len(x.Items) == 0 {
			return e
		}
	case *Object:
		if len(x.Entries) == 0 {
			return e
		}
	default:
		return e
	}
	b, ok := packLiteral(f.buf[:0], e, 0)
	if !ok {
		return e
	}
	f.buf = b
	return &Const{P: e.Pos(), packed: slices.Clone(b)}
}

// packLiteral appends the value of e, a literal, to b as value.PackValue
// would pack it, a map's keys in source order.
func packLiteral(b []byte, e Expr, depth int) ([]byte, bool) {
	if depth > value.MaxPackDepth {
		return nil, false
	}
	ok := true
	switch x := e.(type) {
	case *Lit:
		return value.AppendPacked(b, x.Value)
	case *List:
		b = value.AppendPackedList(b, len(x.Items))
		for _, it := range x.Items {
			if b, ok = packLiteral(b, it, depth+1); !ok {
				return nil, false
			}
		}
		return b, true
	case *Object:
		b = value.AppendPackedMap(b, len(x.Entries))
		for _, en := range x.Entries {
			if b, ok = packLiteral(value.AppendPackedKey(b, en.Key), en.Value, depth+1); !ok {
				return nil, false
			}
		}
		return b, true
	}
	return nil, false
}
