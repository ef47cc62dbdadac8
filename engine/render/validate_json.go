package render

import (
	"io"

	"github.com/reconcile-dev/reconcile/engine/diag"
)

// ValidateJSONVersion is the format version of ValidateJSON, documented in
// docs/validate-json.md.
const ValidateJSONVersion = "1.0"

// Validation is what validate found: every diagnostic, and, when the specs
// could be read, how many resources, variables and outputs they declare.
type Validation struct {
	Diagnostics                   diag.Diagnostics
	Resources, Variables, Outputs int
}

// Valid reports whether the specs have no error (warnings allowed).
func (v Validation) Valid() bool { return !v.Diagnostics.HasErrors() }

type validateJSON struct {
	FormatVersion string         `json:"format_version"`
	Valid         bool           `json:"valid"`
	ErrorCount    int            `json:"error_count"`
	WarningCount  int            `json:"warning_count"`
	Diagnostics   []diagJSONItem `json:"diagnostics"`
	Resources     int            `json:"resources"`
	Variables     int            `json:"variables"`
	Outputs       int            `json:"outputs"`
}

type diagJSONItem struct {
	File       string `json:"file"`
	Line       int    `json:"line"`
	Column     int    `json:"column"`
	Severity   string `json:"severity"`
	Message    string `json:"message"`
	Detail     string `json:"detail"`
	Suggestion string `json:"suggestion"`
}

// ValidateJSON writes a validation in the format of docs/validate-json.md:
// whether the specs are valid, the count of errors and of warnings, each
// diagnostic in the order given ([] when none) and what the specs declare.
func ValidateJSON(w io.Writer, v Validation) error {
	doc := validateJSON{FormatVersion: ValidateJSONVersion, Valid: v.Valid(), Diagnostics: []diagJSONItem{},
		Resources: v.Resources, Variables: v.Variables, Outputs: v.Outputs}
	for _, d := range v.Diagnostics {
		if d.Severity == diag.Error {
			doc.ErrorCount++
		} else {
			doc.WarningCount++
		}
		doc.Diagnostics = append(doc.Diagnostics, diagJSONItem{File: d.Pos.File, Line: int(d.Pos.Line), Column: int(d.Pos.Col),
			Severity: d.Severity.String(), Message: d.Summary, Detail: d.Detail, Suggestion: d.Suggestion})
	}
	return writeDoc(w, doc)
}
