package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
	"github.com/reconcile-dev/reconcile/kind"
)

// DriftJSONVersion is the format version of DriftJSON.
const DriftJSONVersion = "1.2"

// driftCounts counts a drift report's items by status.
func driftCounts(r *report.Drift) (changed, deleted, results int) {
	for _, it := range r.Items {
		switch it.Status {
		case report.DriftChanged:
			changed++
		case report.DriftDeleted:
			deleted++
		case report.DriftResult:
			results++
		}
	}
	return
}

// DriftSummary is the one-line verdict of a drift report.
func DriftSummary(r *report.Drift) string {
	c, d, l := driftCounts(r)
	errs := ""
	if len(r.Errors) > 0 {
		errs = fmt.Sprintf("; %d could not be read", len(r.Errors))
	}
	if !r.HasDrift() {
		return fmt.Sprintf("No drift: %s what was last applied%s.", Count(r.Checked, "resource or lookup matches", "resources and lookups match"), errs)
	}
	return fmt.Sprintf("Drift: %d changed, %d deleted, %d with new lookup results (%d checked)%s.", c, d, l, r.Checked, errs)
}

// DriftText writes the report for people, ending with the summary line:
// each node as a plan shows the objects changed outside reconcile (a
// headline, then its id and each field from the value last applied to the
// live one, lists and maps element by element), then the nodes that could
// not be read. Secrets are never shown.
func DriftText(w io.Writer, r *report.Drift) error {
	t := &textWriter{}
	for _, it := range r.Items {
		t.driftItem(it)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&t.b, "  ! %s (%s) could not be read: %s\n", untrusted.Name(e.Addr), untrusted.Text(e.Type), untrusted.Text(e.Err.Error()))
	}
	if len(r.Errors) > 0 {
		t.b.WriteString("\n")
	}
	t.b.WriteString(DriftSummary(r))
	t.b.WriteString("\n")
	return t.flush(w, 0)
}

type driftJSON struct {
	FormatVersion string          `json:"format_version"`
	Lineage       string          `json:"lineage"`
	Serial        int64           `json:"serial"`
	Checked       int             `json:"checked"`
	Drifted       int             `json:"drifted"`
	HasDrift      bool            `json:"has_drift"`
	Items         []driftItemJSON `json:"items"`
	Errors        []driftErrJSON  `json:"errors"`
	Summary       string          `json:"summary"`
}

type driftItemJSON struct {
	Address string             `json:"address"`
	Type    string             `json:"type"`
	Kind    kind.Kind          `json:"kind"`
	ID      string             `json:"id"`
	Status  report.DriftStatus `json:"status"`
	Fields  []driftFieldJSON   `json:"fields"`
	Details []string           `json:"details"`
	// AccessChanges are the members added to and removed from an access
	// policy, structured: what the details say in words.
	AccessChanges []jsonAccessChange `json:"access_changes"`
}

type driftFieldJSON struct {
	Path      string `json:"path"`
	Applied   any    `json:"applied"`
	Live      any    `json:"live"`
	Sensitive bool   `json:"sensitive"`
}

type driftErrJSON struct {
	Address string `json:"address"`
	Type    string `json:"type"`
	Error   string `json:"error"`
}

// DriftJSON writes the report in the versioned JSON format documented
// in docs/drift-json.md. Secret values are null with "sensitive": true.
func DriftJSON(w io.Writer, r *report.Drift) error {
	out := driftJSON{FormatVersion: DriftJSONVersion, Lineage: r.Lineage, Serial: r.Serial, Checked: r.Checked,
		Drifted: len(r.Items), HasDrift: r.HasDrift(), Items: []driftItemJSON{}, Errors: []driftErrJSON{}, Summary: DriftSummary(r)}
	for _, it := range r.Items {
		out.Items = append(out.Items, driftItemJSONOf(it))
	}
	for _, e := range r.Errors {
		out.Errors = append(out.Errors, driftErrJSON{Address: e.Addr, Type: e.Type, Error: e.Err.Error()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// driftItemJSONOf converts one drifted node, for the drift report and for
// the resource_drift list of a JSON plan.
func driftItemJSONOf(it report.DriftItem) driftItemJSON {
	j := driftItemJSON{Address: it.Addr, Type: it.Type, Kind: it.Kind, ID: it.ID, Status: it.Status, Fields: []driftFieldJSON{}, Details: it.Details,
		AccessChanges: jsonAccessChanges(it.Access)}
	if j.Details == nil {
		j.Details = []string{}
	}
	for _, f := range it.Fields {
		sensitive := value.ContainsSecret(f.Applied) || value.ContainsSecret(f.Live)
		fj := driftFieldJSON{Path: f.Path, Sensitive: sensitive}
		if !sensitive {
			fj.Applied, fj.Live = JSONValue(f.Applied), JSONValue(f.Live)
		}
		j.Fields = append(j.Fields, fj)
	}
	return j
}

// driftItemOf is the drift of a planned change, as Drift reports it.
func driftItemOf(c *plan.Change) report.DriftItem {
	it := report.DriftItem{Addr: c.Addr, Type: c.Type, Kind: c.Kind, ID: c.ID, Fields: c.Drift, Details: c.DriftDetails, Access: c.DriftAccess}
	switch {
	case c.DeletedOutside:
		it.Status, it.ID = report.DriftDeleted, c.DeletedID
	case c.Kind == kind.Resource:
		it.Status = report.DriftChanged
	default:
		it.Status = report.DriftResult
	}
	return it
}

// DriftMarkdown writes the report for an issue or a chat message.
func DriftMarkdown(w io.Writer, r *report.Drift) error {
	var b strings.Builder
	if !r.HasDrift() && len(r.Errors) == 0 {
		fmt.Fprintf(&b, "### :white_check_mark: No drift\n\n%s\n", mdEscape(DriftSummary(r)))
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "### :warning: Drift detected\n\n%s\n\n", mdEscape(DriftSummary(r)))
	if len(r.Items) > 0 {
		b.WriteString("| resource | type | what | fields |\n|---|---|---|---|\n")
		for _, it := range r.Items {
			var fields []string
			for _, f := range it.Fields {
				fields = append(fields, mdCode(f.Path))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCode(it.Addr), mdCode(it.Type), string(it.Status), strings.Join(fields, ", "))
		}
		var text strings.Builder
		DriftText(&text, &report.Drift{Items: r.Items, Checked: r.Checked})
		b.WriteString("\n<details><summary>Details</summary>\n\n")
		b.WriteString(mdFence("", text.String()))
		b.WriteString("\n</details>\n")
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "\n- :x: %s (%s) could not be read: %s", mdCode(e.Addr), mdCode(e.Type), mdEscape(e.Err.Error()))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
