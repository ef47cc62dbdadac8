package specs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/specs"
)

// errorsDir holds the diagnostics fixtures: one case per file, or per
// directory for a spec split over several files.
var errorsDir = filepath.Join("..", "..", "testdata", "errors")

// errMarker is one expectation written in a fixture as a trailing comment:
//
//	key: value # ERROR "substring of the summary"
//	key: value # ERROR 7 "substring" (the diagnostic is at column 7)
//	key: value # WARNING "substring"
//	key: value # ERROR "substring" DETAIL "substring of the detail"
type errMarker struct {
	file     string
	line     int
	col      int // 0: any column
	severity diag.Severity
	summary  string
	detail   string
}

func (m errMarker) String() string {
	s := fmt.Sprintf("%s:%d", m.file, m.line)
	if m.col > 0 {
		s += fmt.Sprintf(":%d", m.col)
	}
	s += fmt.Sprintf(": %s containing %q", m.severity, m.summary)
	if m.detail != "" {
		s += fmt.Sprintf(" with detail containing %q", m.detail)
	}
	return s
}

const errQuoted = `"((?:[^"\\]|\\.)*)"`

var errMarkerRE = regexp.MustCompile(`#\s*(ERROR|WARNING)(?:\s+(\d+))?\s+` + errQuoted + `(?:\s+DETAIL\s+` + errQuoted + `)?`)

// readErrMarkers returns the expectations written in one fixture file.
func readErrMarkers(t *testing.T, name string, src []byte) []errMarker {
	t.Helper()
	var out []errMarker
	for i, line := range strings.Split(string(src), "\n") {
		for _, m := range errMarkerRE.FindAllStringSubmatch(line, -1) {
			mk := errMarker{file: name, line: i + 1, severity: diag.Error}
			if m[1] == "WARNING" {
				mk.severity = diag.Warning
			}
			if m[2] != "" {
				mk.col, _ = strconv.Atoi(m[2])
			}
			var err error
			if mk.summary, err = strconv.Unquote(`"` + m[3] + `"`); err != nil {
				t.Fatalf("%s:%d: bad errMarker text %s: %v", name, i+1, m[3], err)
			}
			if m[4] != "" {
				if mk.detail, err = strconv.Unquote(`"` + m[4] + `"`); err != nil {
					t.Fatalf("%s:%d: bad errMarker detail %s: %v", name, i+1, m[4], err)
				}
			}
			out = append(out, mk)
		}
	}
	return out
}

func (m errMarker) matches(d diag.Diagnostic) bool {
	return d.Pos.File == m.file && int(d.Pos.Line) == m.line &&
		(m.col == 0 || int(d.Pos.Col) == m.col) &&
		d.Severity == m.severity &&
		strings.Contains(d.Summary, m.summary) &&
		strings.Contains(d.Detail, m.detail)
}

// errorCase is one fixture: a file, or a directory of files loaded together.
type errorCase struct {
	name string
	dir  string // passed to specs.Load
	srcs []specs.Source
}

func readErrorCases(t *testing.T) []errorCase {
	t.Helper()
	entries, err := os.ReadDir(errorsDir)
	if err != nil {
		t.Fatal(err)
	}
	var cases []errorCase
	for _, e := range entries {
		path := filepath.Join(errorsDir, e.Name())
		if !e.IsDir() {
			if errIsSpecFile(e.Name()) {
				cases = append(cases, errorCase{name: e.Name(), dir: errorsDir, srcs: []specs.Source{errReadSource(t, path, e.Name())}})
			}
			continue
		}
		files, err := os.ReadDir(path)
		if err != nil {
			t.Fatal(err)
		}
		c := errorCase{name: e.Name(), dir: path}
		for _, f := range files {
			if !f.IsDir() && errIsSpecFile(f.Name()) {
				c.srcs = append(c.srcs, errReadSource(t, filepath.Join(path, f.Name()), f.Name()))
			}
		}
		if len(c.srcs) == 0 {
			t.Fatalf("%s: a case directory holds no *.yaml file", path)
		}
		cases = append(cases, c)
	}
	return cases
}

func errIsSpecFile(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

func errReadSource(t *testing.T, path, name string) specs.Source {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return specs.Source{Name: name, Data: b}
}

// TestErrors loads every fixture under testdata/errors and checks that each
// marked line gets exactly the diagnostic its errMarker describes, that nothing
// else is reported, and that every diagnostic has a position. Fixtures named
// valid_* carry no error errMarker and must load.
func TestErrors(t *testing.T) {
	cases := readErrorCases(t)
	if len(cases) == 0 {
		t.Fatalf("no fixtures in %s", errorsDir)
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.name, filepath.Ext(c.name)), func(t *testing.T) {
			t.Parallel()
			var want []errMarker
			for _, src := range c.srcs {
				want = append(want, readErrMarkers(t, src.Name, src.Data)...)
			}
			wantErrors := false
			for _, m := range want {
				wantErrors = wantErrors || m.severity == diag.Error
			}
			if strings.HasPrefix(c.name, "valid_") && wantErrors {
				t.Fatalf("%s: a valid_* fixture must not expect errors", c.name)
			}
			if !strings.HasPrefix(c.name, "valid_") && !wantErrors {
				t.Fatalf("%s: no # ERROR errMarker; name the fixture valid_* if it is meant to load", c.name)
			}

			spec, diags := specs.Load(c.dir, c.srcs, nil)

			var all strings.Builder
			for _, d := range diags {
				fmt.Fprintf(&all, "\n\t%s", strings.ReplaceAll(d.String(), "\n", "\n\t"))
			}
			if got := diags.HasErrors(); got != wantErrors {
				t.Errorf("Load(%s): HasErrors() = %v, want %v; got:%s", c.name, got, wantErrors, all.String())
			}
			if (spec == nil) != diags.HasErrors() {
				t.Errorf("Load(%s): spec is nil: %v, but HasErrors() = %v", c.name, spec == nil, diags.HasErrors())
			}
			for _, d := range diags {
				if d.Pos.File == "" || d.Pos.Line < 1 || d.Pos.Col < 1 {
					t.Errorf("Load(%s): diagnostic without a full position (%+v): %s", c.name, d.Pos, d)
				}
			}
			if !sort.SliceIsSorted(diags, func(i, j int) bool { return errLessPos(diags[i].Pos, diags[j].Pos) }) {
				t.Errorf("Load(%s): diagnostics are not sorted by position:%s", c.name, all.String())
			}

			used := make([]bool, len(diags))
			for _, m := range want {
				found := false
				for i, d := range diags {
					if !used[i] && m.matches(d) {
						used[i], found = true, true
						break
					}
				}
				if !found {
					t.Errorf("missing %s\n\tgot:%s", m, all.String())
				}
			}
			for i, d := range diags {
				if !used[i] {
					t.Errorf("unexpected diagnostic (no errMarker matches it): %s", d)
				}
			}
		})
	}
}

func errLessPos(a, b diag.Pos) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}
