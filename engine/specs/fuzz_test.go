package specs_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/specs"
)

// fuzzSeeds are small valid specs, beside the fixtures of testdata.
var fuzzSeeds = []string{
	"",
	"resources: {}\n",
	`config:
  compartment: ocid1.compartment.oc1..example
variables:
  user:
    fn::invoke:
      function: datadog:getCurrentUser
  policy:
    fn::gcp:endpoints:getServiceIamPolicy:
      service_name: orders.endpoints.acme.cloud.goog
resources:
  ep:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ${compartment}
      model_id: ocid1.ailanguagemodel.oc1.iad.example
      displayName: "ep-${user.orgId}-$${x}"
      freeformTags: {etag: "${policy.etag}"}
    options:
      protect: true
      ignoreChanges: [displayName]
  rp:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:abc
      bindings:
        - relation: editor
          principals: ["org:${user.orgId}"]
    options:
      dependsOn: ["${ep}"]
outputs:
  id: ${ep.id}
  joined:
    fn::join: [",", ["${ep.displayName}", x]]
`,
	`variables:
  a: &anchor
    k: [1, 2, {x: "${b}"}]
  b: *anchor
`,
}

// fuzzSeedFiles returns every spec file under testdata/errors and
// testdata/examples.
func fuzzSeedFiles(f *testing.F) [][]byte {
	f.Helper()
	var out [][]byte
	for _, dir := range []string{errorsDir, filepath.Join("..", "testdata", "examples")} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return filepath.SkipDir
				}
				return err
			}
			if d.IsDir() || !errIsSpecFile(d.Name()) {
				return nil
			}
			b, err := os.ReadFile(path)
			if err == nil {
				out = append(out, b)
			}
			return err
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	return out
}

// FuzzLoad checks the invariants of specs.Load on any input, as one file
// and split in two: it does not panic, the Spec is nil exactly when there
// are errors, every diagnostic has a position inside the files and renders,
// and a second load gives the same result.
func FuzzLoad(f *testing.F) {
	for _, b := range fuzzSeedFiles(f) {
		f.Add(b)
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheckLoad(t, []specs.Source{{Name: "fuzz.yaml", Data: data}})
		cut := fuzzSplitPoint(data)
		fuzzCheckLoad(t, []specs.Source{{Name: "fuzz-a.yaml", Data: data[:cut]}, {Name: "fuzz-b.yaml", Data: data[cut:]}})
	})
}

// fuzzSplitPoint returns where to split data in two files: at a top-level key
// after the middle if there is one, else at a line break, else the middle.
func fuzzSplitPoint(data []byte) int {
	mid := len(data) / 2
	for i := mid; i < len(data); i++ {
		if i > 0 && data[i-1] == '\n' && !bytes.ContainsRune([]byte(" \t-#\n\r"), rune(data[i])) {
			return i
		}
	}
	if i := bytes.IndexByte(data[mid:], '\n'); i >= 0 {
		return mid + i + 1
	}
	return mid
}

// fuzzCheckLoad loads srcs twice and checks the invariants of the result.
func fuzzCheckLoad(t *testing.T, srcs []specs.Source) (*specs.Spec, diag.Diagnostics) {
	t.Helper()
	spec, diags := specs.Load(".", srcs, nil)
	if (spec == nil) != diags.HasErrors() {
		t.Fatalf("Load: spec is nil: %v, but HasErrors() = %v:\n%s", spec == nil, diags.HasErrors(), fuzzRender(diags))
	}
	lines := map[string][]string{}
	for _, src := range srcs {
		lines[src.Name] = fuzzLines.Split(string(src.Data), -1)
	}
	for i, d := range diags {
		s := d.String()
		if s == "" || d.Summary == "" || strings.Contains(d.Summary, "\n") {
			t.Errorf("Load: diagnostic %d has a summary that is not one line: %q", i, d.Summary)
		}
		if d.Pos.File == "" || d.Pos.Line < 1 || d.Pos.Col < 1 {
			t.Errorf("Load: diagnostic without a position (%+v): %s", d.Pos, s)
			continue
		}
		ls, ok := lines[d.Pos.File]
		if !ok {
			t.Errorf("Load: diagnostic in a file that was not loaded (%q): %s", d.Pos.File, s)
			continue
		}
		if int(d.Pos.Line) > len(ls) {
			t.Errorf("Load: diagnostic past the last line (%d) of %s: %s", len(ls), d.Pos.File, s)
			continue
		}
		if n := utf8.RuneCountInString(ls[d.Pos.Line-1]); int(d.Pos.Col) > n+1 {
			t.Errorf("Load: diagnostic past the end of line %d (%d characters): %s", d.Pos.Line, n, s)
		}
		if i > 0 && errLessPos(d.Pos, diags[i-1].Pos) {
			t.Errorf("Load: diagnostics not sorted by position:\n%s", fuzzRender(diags))
		}
	}
	spec2, diags2 := specs.Load(".", srcs, nil)
	if !reflect.DeepEqual(diags, diags2) {
		t.Fatalf("Load is not deterministic:\n%s\nthen:\n%s", fuzzRender(diags), fuzzRender(diags2))
	}
	if (spec == nil) != (spec2 == nil) || spec != nil && spec.Hash != spec2.Hash {
		t.Fatalf("Load is not deterministic: the specs differ")
	}
	return spec, diags
}

// fuzzLines matches the line breaks of YAML, by which positions count lines.
var fuzzLines = regexp.MustCompile("\r\n|\r|\n|\u0085|\u2028|\u2029")

func fuzzRender(ds diag.Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "\t%s\n", strings.ReplaceAll(d.String(), "\n", "\n\t"))
	}
	return b.String()
}

// fuzzTemplateDoc is a spec with a few names to refer to; the fuzzed string is
// the value of variable v, at the end.
const fuzzTemplateDoc = `config:
  env: prod
resources:
  ep:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ocid1.compartment.oc1..example
      modelId: ocid1.ailanguagemodel.oc1.iad.example
variables:
  list: [a, b]
  v: `

// FuzzTemplate checks the interpolation parser through specs.Load: the
// string is written as the value of a variable in every YAML style that can
// hold it. A string without a ${ access (after $$ escapes) must load as
// that text with each $$ made one $. Every diagnostic about an access must
// point at the "${" it is about.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		"${env}", "a-${ep.displayName}-b", "$${x}", "${ep.display_name}", "${list[1]}",
		"${[0]}", "${a.}", "${list[x]}", `${ep["x"]}`, `${ep.freeformTags["a.b"]}`, `${["env"]}`,
		"${pulumi.stack}", "${pulumi.nope}", "${v}", "x${", "${ep.nope} ${nope}", "é ${nope}",
		"\t${nope}\n  ${env", "$$$${env}", "a$$b $ c $", "${", "$", "", `${ep["a\"b"]}`,
		"${ep.id}${ep.id}", "line one\nline ${two}", "${ep.freeformTags[\"x\"][0].y}", "\u2028${x}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "?")
		}
		for style, enc := range fuzzEncodings(s) {
			src := fuzzTemplateDoc + enc + "\n"
			spec, diags := fuzzCheckLoad(t, []specs.Source{{Name: "t.yaml", Data: []byte(src)}})
			want, ok := fuzzDecodeV(t, src)
			if !ok {
				continue // this style cannot hold the string after all
			}
			lines := fuzzLines.Split(src, -1)
			for _, d := range diags {
				if strings.HasPrefix(d.Summary, "dependency cycle") {
					continue // at the variable's name
				}
				line := lines[d.Pos.Line-1]
				if i := fuzzRuneOffset(line, int(d.Pos.Col)); i < 0 || !strings.HasPrefix(line[i:], "${") {
					t.Errorf("%s: %s points at %q, not at a \"${\"\n%s", style, d, line, src)
				}
			}
			text, access := fuzzUnescape(want)
			if access {
				continue
			}
			if spec == nil {
				t.Fatalf("%s: %q has no access but does not load:\n%s%s", style, want, fuzzRender(diags), src)
			}
			lit, isLit := spec.Variables["v"].Expr.(*specs.Lit)
			if !isLit || lit.Value != text {
				t.Errorf("%s: %q loads as %#v, want the text %q", style, want, spec.Variables["v"].Expr, text)
			}
		}
	})
}

// fuzzEncodings writes s as a YAML scalar in each style that can hold it.
func fuzzEncodings(s string) map[string]string {
	out := map[string]string{"double-errQuoted": fuzzDoubleQuote(s)}
	printable := true
	for _, r := range s {
		if !fuzzPrintable(r) || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029 {
			printable = false
		}
	}
	if printable && !strings.Contains(s, "\n") {
		out["single-errQuoted"] = "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	if printable && s != "" && !strings.HasSuffix(s, "\n") {
		// An explicit indentation indicator lets lines start with spaces.
		out["literal"] = "|2-\n    " + strings.ReplaceAll(s, "\n", "\n    ")
	}
	return out
}

func fuzzPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return true
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0xfeff || r == 0xfffe || r == 0xffff:
		return false
	}
	return r != utf8.RuneError
}

func fuzzDoubleQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case !fuzzPrintable(r) || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029:
			if r <= 0xffff {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// fuzzDecodeV returns the string YAML itself reads as variable v.
func fuzzDecodeV(t *testing.T, src string) (string, bool) {
	var doc struct {
		Variables map[string]any `yaml:"variables"`
	}
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return "", false
	}
	s, ok := doc.Variables["v"].(string)
	return s, ok
}

// fuzzUnescape applies the $$ escape of the spec language to s, a reference
// implementation: it reports whether s holds a ${ access instead.
func fuzzUnescape(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) {
			switch s[i+1] {
			case '$':
				i++
			case '{':
				return "", true
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), false
}

// fuzzRuneOffset returns the byte offset of column col (1-based, in
// characters) of line, or -1.
func fuzzRuneOffset(line string, col int) int {
	c := 1
	for i := range line {
		if c == col {
			return i
		}
		c++
	}
	if c == col {
		return len(line)
	}
	return -1
}
