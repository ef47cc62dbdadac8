package diag

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

// Pos is a position in a spec file. Line and Col are 1-based; a zero Pos
// means no position is known. They are int32s, not ints: a large spec holds
// a Pos for each of its values, and the smaller Pos makes those values'
// nodes a size class smaller.
type Pos struct {
	File      string
	Line, Col int32
}

// At returns the position of line and col in file. Lines and columns past
// what an int32 holds (no spec file has them) are clamped.
func At(file string, line, col int) Pos {
	return Pos{File: file, Line: clamp32(line), Col: clamp32(col)}
}

func clamp32(n int) int32 {
	return int32(min(max(n, math.MinInt32), math.MaxInt32))
}

func (p Pos) String() string {
	switch {
	case p.File == "":
		return ""
	case p.Line == 0:
		return untrusted.Path(p.File)
	}
	return fmt.Sprintf("%s:%d:%d", untrusted.Path(p.File), p.Line, p.Col)
}

// IsValid reports whether p names a place in a file.
func (p Pos) IsValid() bool { return p.File != "" }

// Severity of a Diagnostic.
type Severity int

// Severities.
const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one problem found in the user's spec.
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	Summary  string // one line, lower case, no final period
	Detail   string // optional: why, and how to fix it
	// Suggestion is the known name the mistaken one is probably meant to
	// be, when there is one (the summary ends with "(did you mean ...?)").
	Suggestion string
}

func (d Diagnostic) String() string {
	var b strings.Builder
	if d.Pos.IsValid() {
		b.WriteString(d.Pos.String())
		b.WriteString(": ")
	}
	b.WriteString(d.Severity.String())
	b.WriteString(": ")
	// The summary is one line; it may quote the specs or hold a cloud's
	// message (a refresh that failed), whose newlines are escaped. The
	// detail's lines are reconcile's, each escaped alike.
	b.WriteString(untrusted.Text(d.Summary))
	if d.Detail != "" {
		for l := range strings.SplitSeq(d.Detail, "\n") {
			b.WriteString("\n\t")
			b.WriteString(untrusted.Text(l))
		}
	}
	return b.String()
}

// Diagnostics is nil when there is nothing to report.
type Diagnostics []Diagnostic

// HasErrors reports whether any item is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Err returns nil unless some item is an error; the error lists every item.
func (ds Diagnostics) Err() error {
	if !ds.HasErrors() {
		return nil
	}
	return Errors(ds)
}

// Errors is the error form of Diagnostics.
type Errors Diagnostics

func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, d := range e {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// As returns the diagnostics carried by err, if any.
func As(err error) (Diagnostics, bool) {
	var de Errors
	if errors.As(err, &de) {
		return Diagnostics(de), true
	}
	return nil, false
}

// Sort orders the diagnostics by position and drops all but the first of
// several reports on the same line that share their summary's subject, so
// that one mistake yields one report.
func (ds Diagnostics) Sort() Diagnostics {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Pos, ds[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	out := ds[:0]
	seen := map[string]bool{}
	for _, d := range ds {
		k := d.Pos.String() + "\x00" + d.Summary
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, d)
	}
	return out
}

// Errorf returns an error diagnostic at pos; a summary that ends with the
// suffix DidYouMean writes keeps its suggestion as data too.
func Errorf(pos Pos, format string, args ...any) Diagnostic {
	d := Diagnostic{Pos: pos, Severity: Error, Summary: fmt.Sprintf(format, args...)}
	// didYouMean ends a summary with the suggestion: keep it as data too.
	if m := suggestionSuffix.FindStringSubmatch(d.Summary); m != nil {
		d.Suggestion, _ = strconv.Unquote(m[1])
	}
	return d
}

// suggestionSuffix matches the suffix didYouMean writes.
var suggestionSuffix = regexp.MustCompile(` \(did you mean ("(?:[^"\\]|\\.)*")\?\)$`)
