package specs

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// cutSpec declares resources in the ways a cut must not disturb: a
// block scalar that keeps its trailing lines right before a cut entry,
// a plain scalar folded over lines, comments between entries, a quoted
// key, a second document, and a last entry.
const cutSpec = `config:
  region:
    default: r1
variables:
  where: ${region}
resources:
  a:
    type: oci:AiLanguage:Project
    properties:
      compartmentId: ocid1.compartment.oc1..c
      description: |+
        kept with its trailing lines

  b:
    type: oci:AiLanguage:Project
    properties:
      compartmentId: ocid1.compartment.oc1..c
      description: plain text
        folded over lines
  # a comment between entries
  "c":
    type: oci:AiLanguage:Project
    properties:
      compartmentId: ${a.compartmentId}
      displayName: c
  d:
    type: oci:AiLanguage:Project
    properties:
      compartmentId: ocid1.compartment.oc1..c
      description: >-
        folded
        block
  e:
    type: oci:AiLanguage:Project
    properties:
      compartmentId: ocid1.compartment.oc1..c
outputs:
  c: ${c.id}
---
resources:
  f:
    type: oci:AiLanguage:Project
    properties:
      compartmentId: ocid1.compartment.oc1..c
      description: |+
        keep

  g:
    type: oci:AiLanguage:Project
    properties:
      compartmentId: ${region}
  h:
    type: oci:AiLanguage:Project
    properties:
      compartmentId: ocid1.compartment.oc1..c
      description: ${f.id}
`

func loadCut(t *testing.T, srcs []Source, skip []FileCuts) *Spec {
	t.Helper()
	s, diags := LoadWith(t.TempDir(), srcs, nil, LoadOptions{Skip: skip})
	if diags.HasErrors() {
		t.Fatalf("load with cuts %+v: %v", skip, diags.Err())
	}
	return s
}

// checkCut loads srcs whole, cuts what keep refuses, loads them again
// with the cuts, and checks that what was kept loads as it did whole.
func checkCut(t *testing.T, srcs []Source, keep func(string) bool) (*Spec, []FileCuts) {
	t.Helper()
	whole := loadCut(t, srcs, nil)
	cuts := whole.Cuts(keep)
	part := loadCut(t, srcs, cuts)
	if part.Hash != whole.Hash {
		t.Errorf("hash %s with cuts, %s whole", part.Hash, whole.Hash)
	}
	if part.Partial != (len(cuts) > 0) {
		t.Errorf("Partial = %v with %d cuts", part.Partial, len(cuts))
	}
	if diff := keptDiff(whole, part, keep); diff != "" {
		t.Error(diff)
	}
	return part, cuts
}

// keptDiff says how what part, loaded with cuts, holds of what keep kept
// differs from whole, loaded whole; "" when it does not.
func keptDiff(whole, part *Spec, keep func(string) bool) string {
	for _, name := range slices.Sorted(maps.Keys(whole.Resources)) {
		got, ok := part.Resources[name]
		switch {
		case keep(name) && !ok:
			return name + " is kept but was cut"
		case ok:
			// The entry after a kept one may be cut: where it ends moves.
			g, w := *got, *whole.Resources[name]
			g.cutEnd, w.cutEnd = 0, 0
			if !reflect.DeepEqual(g, w) {
				return fmt.Sprintf("%s loads as\n%#v\nwith cuts, as\n%#v\nwhole", name, g, w)
			}
		}
	}
	if !reflect.DeepEqual(part.Variables, whole.Variables) || !reflect.DeepEqual(part.Outputs, whole.Outputs) ||
		!reflect.DeepEqual(part.Config, whole.Config) || !reflect.DeepEqual(part.Values, whole.Values) {
		return "variables, outputs or config differ with cuts"
	}
	return ""
}

func TestCuts(t *testing.T) {
	srcs := []Source{{Name: "dir/main.yaml", Data: []byte(cutSpec)}}
	keep := func(n string) bool { return n == "c" || n == "a" || n == "g" }
	part, cuts := checkCut(t, srcs, keep)
	// b and d go; e and h, the last of their sections, stay, and so does
	// f, which h refers to.
	want := []FileCuts{{Name: "main.yaml", Digest: part.digests["dir/main.yaml"], Lines: [][2]int{{14, 21}, {26, 33}}}}
	if !reflect.DeepEqual(cuts, want) {
		t.Errorf("cuts = %+v, want %+v", cuts, want)
	}
	if got := slices.Sorted(maps.Keys(part.Resources)); !slices.Equal(got, []string{"a", "c", "e", "f", "g", "h"}) {
		t.Errorf("resources with cuts: %q", got)
	}

	// Sources that changed since are loaded whole.
	changed := []Source{{Name: "dir/main.yaml", Data: []byte(strings.Replace(cutSpec, "plain text", "plain texts", 1))}}
	if s := loadCut(t, changed, cuts); s.Partial || len(s.Resources) != 8 {
		t.Errorf("changed sources: Partial %v, %d resources; want the whole load", s.Partial, len(s.Resources))
	}
	// Cuts that do not fit the lines are not taken.
	for _, bad := range [][][2]int{{{26, 33}, {14, 21}}, {{14, 14}}, {{14, 999}}, {{0, 3}}} {
		fc := []FileCuts{{Name: "main.yaml", Digest: want[0].Digest, Lines: bad}}
		if s := loadCut(t, srcs, fc); s.Partial || len(s.Resources) != 8 {
			t.Errorf("cuts %v: Partial %v, %d resources; want the whole load", bad, s.Partial, len(s.Resources))
		}
	}
}

// No entry is cut from a document with anchors or aliases, from a flow
// mapping, or from a project file.
func TestCutsNotTaken(t *testing.T) {
	for name, src := range map[string]string{
		"anchor": "resources:\n  a:\n    type: oci:AiLanguage:Project\n    properties: &p\n      compartmentId: ocid1.compartment.oc1..c\n" +
			"  b:\n    type: oci:AiLanguage:Project\n    properties: *p\n  c:\n    type: oci:AiLanguage:Project\n    properties: *p\n",
		"flow":         "resources: {a: {type: oci:AiLanguage:Project, properties: {compartmentId: x}},\n  b: {type: oci:AiLanguage:Project, properties: {compartmentId: x}}, c: {type: oci:AiLanguage:Project, properties: {compartmentId: x}}}\n",
		"explicit key": "resources:\n  ? a\n  : type: oci:AiLanguage:Project\n    properties:\n      compartmentId: x\n  ? b\n  : type: oci:AiLanguage:Project\n    properties:\n      compartmentId: x\n",
	} {
		s := loadCut(t, []Source{{Name: "main.yaml", Data: []byte(src)}}, nil)
		if cuts := s.Cuts(func(string) bool { return false }); len(cuts) > 0 {
			t.Errorf("%s: cuts %+v, want none", name, cuts)
		}
	}
}

// For the examples and random sets of resources closed under their
// references, what is kept loads as it does whole.
func TestCutsExamples(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/examples/*.yaml")
	var srcs []Source
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, Source{Name: f, Data: b})
	}
	whole := loadCut(t, srcs, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	cutSome := false
	for range 50 {
		keep := closedSet(whole, func(int) bool { return rng.IntN(4) == 0 })
		_, cuts := checkCut(t, srcs, func(n string) bool { return keep[n] })
		cutSome = cutSome || len(cuts) > 0
	}
	if !cutSome {
		t.Errorf("no cut was made in 50 tries: the test checks nothing")
	}
}

// FuzzCuts checks Cuts on any spec that loads: for the set of resources
// closed under references that mask picks, loading with the cuts gives
// what it keeps exactly as the whole load does. Specs are untrusted: a
// spec whose cut load differed would apply other values than its plan
// showed.
//
//	go test ./engine/specs -run '^$' -fuzz FuzzCuts -fuzztime 10m
func FuzzCuts(f *testing.F) {
	f.Add([]byte(cutSpec), uint64(0b101))
	files, _ := filepath.Glob("../../testdata/examples/*.yaml")
	for i, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b, uint64(i))
		}
	}
	f.Add([]byte("resources:\n  a:\n    type: oci:AiLanguage:Project\n    properties:\r\n      compartmentId: x\r\n  b:\r\n    type: oci:AiLanguage:Project\r\n    properties: {compartmentId: y}\n  c:\n    type: oci:AiLanguage:Project\n    properties:\n      compartmentId: \"z\n        z\"\n"), uint64(2))
	f.Fuzz(func(t *testing.T, data []byte, mask uint64) {
		srcs := []Source{{Name: "main.yaml", Data: data}}
		whole, diags := LoadWith(t.TempDir(), srcs, nil, LoadOptions{})
		if diags.HasErrors() {
			return
		}
		keep := closedSet(whole, func(i int) bool { return mask&(1<<(i%64)) != 0 })
		cuts := whole.Cuts(func(n string) bool { return keep[n] })
		part, diags := LoadWith(t.TempDir(), srcs, nil, LoadOptions{Skip: cuts})
		if diags.HasErrors() {
			t.Fatalf("load with cuts %+v: %v\n%q", cuts, diags.Err(), data)
		}
		if part.Hash != whole.Hash {
			t.Fatalf("hash differs with cuts")
		}
		if diff := keptDiff(whole, part, func(n string) bool { return keep[n] }); diff != "" {
			t.Fatalf("%s\ncuts %+v of %q", diff, cuts, data)
		}
	})
}

// SameResourceDeps agrees with ResourceDeps, through config entries and
// variables too.
func TestSameResourceDeps(t *testing.T) {
	src := `config:
  c: {default: x}
variables:
  v: ${a.id}
  w: ${v}
resources:
  a:
    type: oci:AiLanguage:Project
    properties: {compartmentId: "${c}"}
  b:
    type: oci:AiLanguage:Project
    properties: {compartmentId: "${a.id}", description: "${c}"}
  d:
    type: oci:AiLanguage:Project
    properties: {compartmentId: "${w}", description: "${b.id}"}
`
	s := loadCut(t, []Source{{Name: "main.yaml", Data: []byte(src)}}, nil)
	for _, name := range []string{"a", "b", "d"} {
		deps := s.ResourceDeps(name)
		if !s.SameResourceDeps(name, deps) {
			t.Errorf("%s: SameResourceDeps(%q) = false", name, deps)
		}
		for _, other := range [][]string{append(slices.Clone(deps), "z"), {"z"}, deps[min(1, len(deps)):]} {
			if slices.Equal(other, deps) {
				continue
			}
			if s.SameResourceDeps(name, other) {
				t.Errorf("%s: SameResourceDeps(%q) = true, deps are %q", name, other, deps)
			}
		}
	}
	if got := s.ResourceDeps("d"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("ResourceDeps(d) = %q, want [a b]", got)
	}
}

// closedSet returns the nodes an apply would run if the resources pick
// picks (by index in name order) changed: those, every variable, what the
// outputs read, and what all of them refer to.
func closedSet(s *Spec, pick func(i int) bool) map[string]bool {
	var roots []string
	for i, n := range slices.Sorted(maps.Keys(s.Resources)) {
		if pick(i) {
			roots = append(roots, n)
		}
	}
	for n := range s.Variables {
		roots = append(roots, n)
	}
	for n := range s.Outputs {
		roots = append(roots, s.OutputDeps(n)...)
	}
	return s.Graph().Closure(roots)
}
