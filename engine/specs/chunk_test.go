package specs

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sameAsWhole loads srcs whole and in chunks of perChunk resources (from
// any size), and fails t unless both give the same specs, diagnostics and
// cuts. It returns the specs loaded in chunks and whether the first file
// was cut into chunks at all.
func sameAsWhole(t *testing.T, srcs []Source, perChunk int) (*Spec, bool) {
	t.Helper()
	return sameAsWholeWith(t, srcs, perChunk, LoadOptions{})
}

// sameAsWholeWith is sameAsWhole with options, such as cuts.
func sameAsWholeWith(t *testing.T, srcs []Source, perChunk int, opts LoadOptions) (*Spec, bool) {
	t.Helper()
	wholeOpts, chunkOpts := opts, opts
	wholeOpts.whole = true
	chunkOpts.chunkMin, chunkOpts.chunkEntries = 1, perChunk
	whole, wd := LoadWith(t.TempDir(), srcs, nil, wholeOpts)
	chunked, cd := LoadWith(t.TempDir(), srcs, nil, chunkOpts)
	_, split := planChunks(srcs[0].Data, indexLines(srcs[0].Data), 1, perChunk)
	if !reflect.DeepEqual(wd, cd) {
		t.Fatalf("diagnostics whole:\n%v\nin chunks of %d:\n%v", wd, perChunk, cd)
	}
	if (whole == nil) != (chunked == nil) {
		t.Fatalf("whole spec nil %v, in chunks nil %v", whole == nil, chunked == nil)
	}
	if whole == nil {
		return nil, split
	}
	if whole.Hash != chunked.Hash {
		t.Errorf("hash %s whole, %s in chunks", whole.Hash, chunked.Hash)
	}
	if !slices.Equal(slices.Sorted(maps.Keys(whole.Resources)), slices.Sorted(maps.Keys(chunked.Resources))) {
		t.Fatalf("resources whole %v, in chunks %v", slices.Sorted(maps.Keys(whole.Resources)), slices.Sorted(maps.Keys(chunked.Resources)))
	}
	for name, w := range whole.Resources {
		if g := chunked.Resources[name]; !reflect.DeepEqual(*g, *w) {
			t.Fatalf("%s loads as\n%#v\nin chunks, as\n%#v\nwhole", name, *g, *w)
		}
	}
	if !reflect.DeepEqual(chunked.Variables, whole.Variables) || !reflect.DeepEqual(chunked.Outputs, whole.Outputs) ||
		!reflect.DeepEqual(chunked.Config, whole.Config) || !reflect.DeepEqual(chunked.Values, whole.Values) {
		t.Fatal("variables, outputs or config differ in chunks")
	}
	none := func(string) bool { return false }
	if wc, cc := whole.Cuts(none), chunked.Cuts(none); !reflect.DeepEqual(wc, cc) {
		t.Fatalf("cuts whole %+v, in chunks %+v", wc, cc)
	}
	return chunked, split
}

// chunkSpec returns a spec of n restriction policies between variables and
// outputs, with chain each policy but the first naming the one before it,
// with the shapes of YAML a chunk may end on: block scalars, flow lists,
// comments, blank lines and options.
func chunkSpec(n int, chain bool) string {
	var b strings.Builder
	b.WriteString("# policies\nconfig:\n  team: {default: platform}\nvariables:\n  owner: role:00000000-0000-0000-0000-000000000001\nresources:\n")
	for i := range n {
		fmt.Fprintf(&b, "  p%d:\n    type: datadog:RestrictionPolicy\n", i)
		switch i % 5 {
		case 0:
			b.WriteString("    # a comment within\n")
		case 1:
			b.WriteString("    options:\n      protect: false\n")
		case 2:
			b.WriteString("\n\n")
		}
		b.WriteString("    properties:\n")
		switch {
		case i == 0:
			b.WriteString("      resourceId: dashboard:first\n")
		case !chain:
			fmt.Fprintf(&b, "      resourceId: \"dashboard:%d\"\n", i)
		default:
			fmt.Fprintf(&b, "      resourceId: \"dashboard:%d-${p%d.id}\"\n", i, i-1)
		}
		b.WriteString("      bindings:\n        - relation: viewer\n          principals: [\"${owner}\", 'team:${team}']\n")
		if i%3 == 0 {
			b.WriteString("        - relation: editor\n          principals:\n            - user:a\n")
		}
		if i%4 == 3 {
			fmt.Fprintf(&b, "# between %d and %d\n", i, i+1)
		}
	}
	b.WriteString("outputs:\n  last: ${p" + fmt.Sprint(n-1) + ".id}\n  note: |\n    kept\n    text\n")
	return b.String()
}

func TestChunks(t *testing.T) {
	t.Parallel()
	src := chunkSpec(23, true)
	for _, per := range []int{1, 2, 3, 5, 11} {
		spec, split := sameAsWhole(t, []Source{{Name: "main.yaml", Data: []byte(src)}}, per)
		if !split || spec == nil || len(spec.Resources) != 23 {
			t.Fatalf("in chunks of %d: split %v, spec %v", per, split, spec != nil)
		}
	}
	// Errors: found in any chunk, reported as whole.
	for name, edit := range map[string]func(string) string{
		"invalid value": func(s string) string {
			return strings.Replace(s, "relation: viewer\n          principals: [\"${owner}\", 'team:${team}']\n  p15:", "relation: 7\n          principals: [\"${owner}\", 'team:${team}']\n  p15:", 1)
		},
		"unknown reference": func(s string) string { return strings.Replace(s, "${p15.id}", "${p99.id}", 1) },
		"declared twice":    func(s string) string { return strings.Replace(s, "  p17:\n", "  owner:\n", 1) },
		"a YAML error":      func(s string) string { return strings.Replace(s, "  p19:\n", "  p19: x: y\n", 1) },
		"nested too deep": func(s string) string {
			// Over the budget, a whole parse loads nothing of the file,
			// and reports nothing of the rest: not p2's bad value either.
			deep := strings.Repeat("{a: ", 70) + "1" + strings.Repeat("}", 70)
			s = strings.Replace(s, "  p2:\n    type: datadog:RestrictionPolicy", "  p2:\n    type: datadog:RestrictionPolicy\n    options: {protect: 7}", 1)
			return strings.Replace(s, "  p20:\n", "  p20:\n    x: "+deep+"\n", 1)
		},
		"an unknown type": func(s string) string {
			return strings.Replace(s, "  p21:\n    type: datadog:RestrictionPolicy", "  p21:\n    type: datadog:Nope", 1)
		},
		"an empty resource": func(s string) string { return strings.Replace(s, "  p9:\n", "  p9:\n  p9b:\n", 1) },
		"an empty properties": func(s string) string {
			return strings.Replace(s, "outputs:", "  q:\n    type: datadog:RestrictionPolicy\n    properties:\noutputs:", 1)
		},
	} {
		bad := edit(src)
		if bad == src {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		if spec, split := sameAsWhole(t, []Source{{Name: "main.yaml", Data: []byte(bad)}}, 2); spec != nil || !split {
			t.Errorf("%s: loads without errors %v, cut into chunks %v", name, spec != nil, split)
		}
	}
	// What a look at the lines cannot follow is parsed whole.
	for name, edit := range map[string]func(string) string{
		"an alias": func(s string) string {
			return strings.Replace(s, "principals:\n            - user:a", "principals: &p\n            - user:a", 1)
		},
		"a quoted key": func(s string) string { return strings.Replace(s, "  p7:\n", "  \"p7\":\n", 1) },
		"a string over lines": func(s string) string {
			return strings.Replace(s, "resourceId: dashboard:first", "resourceId: \"dashboard:\n  first\"", 1)
		},
		"a kept block scalar": func(s string) string { return strings.Replace(s, "note: |", "note: |+", 1) },
		"a repeated key":      func(s string) string { return strings.Replace(s, "  p12:\n", "  p11:\n", 1) },
		"crlf":                func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
		"two documents":       func(s string) string { return s + "---\nvariables:\n  x: 1\n" },
	} {
		other := edit(src)
		if other == src {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		if _, split := sameAsWhole(t, []Source{{Name: "main.yaml", Data: []byte(other)}}, 2); split {
			t.Errorf("%s: cut into chunks", name)
		}
	}
}

// TestChunksWithCuts loads in chunks specs that a saved plan's cuts leave
// resources out of, as apply PLANFILE does: as a whole parse of the same
// cut specs does.
func TestChunksWithCuts(t *testing.T) {
	t.Parallel()
	// Independent policies: the cuts can leave out all but a few.
	srcs := []Source{{Name: "main.yaml", Data: []byte(chunkSpec(23, false))}}
	whole, diags := LoadWith(t.TempDir(), srcs, nil, LoadOptions{whole: true})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	for _, every := range []int{2, 3, 7} {
		keep := closedSet(whole, func(i int) bool { return i%every == 0 })
		cuts := whole.Cuts(func(n string) bool { return keep[n] })
		if len(cuts) == 0 {
			t.Fatalf("every %d: no cuts", every)
		}
		for _, per := range []int{1, 2, 4} {
			spec, split := sameAsWholeWith(t, srcs, per, LoadOptions{Skip: cuts})
			if !split || spec == nil || !spec.Partial {
				t.Fatalf("every %d, chunks of %d: split %v, loaded %v", every, per, split, spec != nil)
			}
		}
	}
}

// TestChunksExamples loads the examples in chunks of one resource.
func TestChunksExamples(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../testdata/examples/*.yaml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sameAsWhole(t, []Source{{Name: filepath.Base(name), Data: b}}, 1)
	}
}

// FuzzChunks checks that a spec loaded in chunks loads as it does whole:
// the same resources, variables, outputs, config, diagnostics and cuts.
//
//	go test ./engine/specs -run '^$' -fuzz FuzzChunks -fuzztime 10m
func FuzzChunks(f *testing.F) {
	f.Add([]byte(chunkSpec(9, true)), uint8(2))
	f.Add([]byte(chunkSpec(9, false)), uint8(3))
	f.Add([]byte(cutSpec), uint8(1))
	files, _ := filepath.Glob("../../testdata/examples/*.yaml")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b, uint8(1))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, per uint8) {
		sameAsWhole(t, []Source{{Name: "main.yaml", Data: data}}, 1+int(per%8))
	})
}

// selfContained never says true of a line that leaves a quoted scalar or
// a flow collection open.
func TestSelfContained(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]bool{
		`  p1:`:                         true,
		`    resourceId: "a-${b.id}"`:   true,
		`    principals: ["a", 'b''c']`: true,
		`    note: it's # a comment "`:  true,
		`    x: a"b`:                    true,
		`    desc: "open`:               false,
		"    desc:\t\"open":             false,
		`    desc: 'open''`:             false,
		`    desc: "escaped \"`:         false,
		`    list: [a, b`:               false,
		`    map: {a: 1, b: [2]`:        false,
		`    k: v # [ in a comment`:     true,
		`    - "x", "y`:                 false,
		`    key: value "`:              false,
		`"quoted key": x`:               true,
		`    m: {"a":"b"}`:              true,
		`    m: {"a":"b`:                false,
		`    back: "a\\"`:               true,
	} {
		if got := selfContained([]byte(line)); got != want {
			t.Errorf("selfContained(%q) = %v, want %v", line, got, want)
		}
	}
}
