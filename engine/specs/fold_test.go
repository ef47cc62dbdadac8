package specs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// countConsts counts the Consts in e.
func countConsts(e Expr) int {
	switch x := e.(type) {
	case *Const:
		return 1
	case *List:
		n := 0
		for _, it := range x.Items {
			n += countConsts(it)
		}
		return n
	case *Object:
		n := 0
		for _, en := range x.Entries {
			n += countConsts(en.Value)
		}
		return n
	}
	return 0
}

// sameFolded fails t unless folded is parsed, folded as Load folds: the
// same expressions, but for every literal list or object of any items,
// which is a Const at its place, of its value.
func sameFolded(t *testing.T, at string, parsed, folded Expr, top bool) {
	t.Helper()
	inst, dyn := staticValue(parsed)
	literal := len(dyn) == 0
	if c, ok := folded.(*Const); ok {
		v, err := c.Value()
		switch {
		case top || !literal:
			t.Fatalf("%s: %T folded, which is not a literal list or object below the inputs", at, parsed)
		case err != nil || !reflect.DeepEqual(v, inst) || !c.Is(inst):
			t.Fatalf("%s: folded into %#v (%v), parsed as %#v", at, v, err, inst)
		case c.P != parsed.Pos():
			t.Fatalf("%s: folded at %v, parsed at %v", at, c.P, parsed.Pos())
		}
		return
	}
	switch p := parsed.(type) {
	case *List:
		f, ok := folded.(*List)
		if !ok || len(f.Items) != len(p.Items) {
			t.Fatalf("%s: %#v parsed, %#v folded", at, parsed, folded)
		}
		if literal && len(p.Items) > 0 && !top {
			t.Fatalf("%s: a literal list left as it was", at)
		}
		for i := range p.Items {
			sameFolded(t, at+"/"+string(rune('0'+i%10)), p.Items[i], f.Items[i], false)
		}
	case *Object:
		f, ok := folded.(*Object)
		if !ok || len(f.Entries) != len(p.Entries) || f.P != p.P {
			t.Fatalf("%s: %#v parsed, %#v folded", at, parsed, folded)
		}
		if literal && len(p.Entries) > 0 && !top {
			t.Fatalf("%s: a literal object left as it was", at)
		}
		for i, en := range p.Entries {
			if fe := f.Entries[i]; fe.Key != en.Key || fe.Raw != en.Raw || fe.KeyPos != en.KeyPos {
				t.Fatalf("%s: entry %+v parsed, %+v folded", at, en, fe)
			}
			sameFolded(t, at+"/"+en.Key, en.Value, f.Entries[i].Value, false)
		}
	default:
		if !reflect.DeepEqual(parsed, folded) {
			t.Fatalf("%s: %#v parsed, %#v folded", at, parsed, folded)
		}
	}
}

// TestFoldInputs loads the examples and a spec of many shapes as parsed
// and folded, and checks that folding changes nothing but what it folds:
// each literal list or object below a resource's inputs, whole, into a
// Const of its value at its place; the rest, and what Load reads of the
// specs (their hash, their graph), stay as they were.
func TestFoldInputs(t *testing.T) {
	t.Parallel()
	var srcs [][]Source
	files, _ := filepath.Glob("../../testdata/examples/*.yaml")
	var ex []Source
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ex = append(ex, Source{Name: filepath.Base(f), Data: data})
	}
	srcs = append(srcs, ex, []Source{{Name: "main.yaml", Data: []byte(chunkSpec(40, true))}}, []Source{{Name: "deep.yaml", Data: []byte(`resources:
  deep:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:abc-def-ghi
      bindings:
        - relation: viewer
          principals: ["role:00000000-0000-0000-0000-000000000001", "${other.id}"]
        - relation: editor
          principals: ["user:64d2a3b6-8b5e-40ac-a5b7-3cdf3926b201"]
        - relation: editor
          principals: []
  other:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:other-one
      bindings:
        - relation: viewer
          principals: []
`)}})
	consts := 0
	for _, ss := range srcs {
		parsed, pd := LoadWith(t.TempDir(), ss, nil, LoadOptions{unfolded: true})
		folded, fd := LoadWith(t.TempDir(), ss, nil, LoadOptions{})
		if pd.HasErrors() || fd.HasErrors() || !reflect.DeepEqual(pd, fd) {
			t.Fatalf("%s: diagnostics parsed:\n%v\nfolded:\n%v", ss[0].Name, pd, fd)
		}
		if parsed.Hash != folded.Hash || !reflect.DeepEqual(parsed.Graph().Order(), folded.Graph().Order()) {
			t.Fatalf("%s: hash or graph differ once folded", ss[0].Name)
		}
		for name, r := range parsed.Resources {
			f := folded.Resources[name]
			if r.Properties == nil {
				continue
			}
			sameFolded(t, ss[0].Name+":"+name, r.Properties, f.Properties, true)
			consts += countConsts(f.Properties)
		}
	}
	if consts < 20 {
		t.Errorf("only %d lists or objects folded", consts)
	}
}
