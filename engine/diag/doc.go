// Package diag holds positions in spec files and the diagnostics reported
// at them. It is the first stage: it imports nothing of reconcile, and every
// other stage uses it.
//
// A Pos is a place in a spec file: File as the loader was given it (a
// Source's Name), Line and Col counted from 1, Col in characters, not
// bytes. It prints as FILE:LINE:COL, as FILE when only the file is known,
// and as "" for the zero Pos, which means that no position is known
// (IsValid is false). The spec loader takes positions from the YAML parser
// and, inside a string, from the source text, so that a mistake in an
// interpolation points at its "${"; expressions, entry keys and
// declarations all carry one.
//
// A Diagnostic is one problem found in the user's specs: a Pos, a Severity
// (Error or Warning), a one-line Summary (lower case, no final period), an
// optional Detail saying why and how to fix it, and, when the mistake is
// probably a misspelling, the name meant as Suggestion. Its String is
// "POS: error: summary", the detail on the lines after it, indented by a
// tab. Diagnostics is a list of them, nil when there is nothing to report:
// HasErrors tells whether any is an error, and Err turns a list with
// errors into an error (Errors) that As turns back into the list.
//
// Conventions the stages keep:
//
//   - Report every problem found, not only the first: the loader goes on
//     after an error, and only skips checks that would repeat it.
//   - Build diagnostics with Errorf; end a summary with DidYouMean(name,
//     candidates) when a name is unknown, which adds ` (did you mean "x"?)`
//     when a candidate is close (Suggest: an edit distance, case folded,
//     in which swapping two adjacent characters is one edit, of at most a
//     third of the name's length, 1 to 3), and Errorf keeps the suggestion
//     as data too. ValidList words the list of valid names for a Detail.
//   - Sort before returning: it orders by position and drops a diagnostic
//     whose position and summary repeat an earlier one.
//
// Who reports what: specs.Load returns every problem of the specs (the Spec
// is nil when any is an error); the planner returns evaluation errors at
// the expression that failed (an eval.Error carries its Pos) and cloud
// read failures at the node's declaration; a failure during apply is not a
// diagnostic but a report.NodeError, which carries the node's Pos too.
package diag
