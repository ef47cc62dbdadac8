package render

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

// ApplyJSONVersion is the format version of ApplyJSON, documented in
// docs/apply-json.md.
const ApplyJSONVersion = "2.1"

// Run says what kind of run an apply result is of, for its words.
type Run int

// Runs.
const (
	RunApply       Run = iota // apply
	RunDestroy                // destroy
	RunRefreshOnly            // apply --refresh-only: state takes the cloud's values
)

func (r Run) verb() string {
	if r == RunDestroy {
		return "Destroy"
	}
	return "Apply"
}

func (r Run) name() string {
	switch r {
	case RunDestroy:
		return "destroy"
	case RunRefreshOnly:
		return "apply_refresh_only"
	}
	return "apply"
}

// applyJSON is the document ApplyJSON writes.
type applyJSON struct {
	FormatVersion string `json:"format_version"`
	Run           string `json:"run"`
	applyResultJSON
	Outputs map[string]any `json:"outputs"`
}

// applyResultJSON is what an apply did, as apply JSON and the summary
// event of an event stream give it.
type applyResultJSON struct {
	Complete    bool            `json:"complete"`
	Stopped     string          `json:"stopped"`
	Counts      map[string]int  `json:"counts"`
	Failed      []nodeErrorJSON `json:"failed"`
	Interrupted []nodeErrorJSON `json:"interrupted"`
	Skipped     []string        `json:"skipped"`
	NotStarted  []string        `json:"not_started"`
	Deposed     []deposedJSON   `json:"deposed"`
}

// applyResult is res as applyResultJSON: counts of every action but
// no-op (zero included), lists never null.
func applyResult(res *report.Apply) applyResultJSON {
	counts := map[string]int{}
	for a := plan.NoOp + 1; int(a) < plan.NumActions; a++ {
		counts[a.String()] = res.Counts[a]
	}
	deposed := make([]deposedJSON, 0, len(res.Deposed))
	for _, d := range res.Deposed {
		deposed = append(deposed, deposedJSON{Address: d.Addr, Type: d.Type, IDs: nonNil(d.IDs)})
	}
	return applyResultJSON{Complete: res.Complete() && res.Stopped == "", Stopped: res.Stopped,
		Counts: counts, Failed: nodeErrorsJSON(res.Failed), Interrupted: nodeErrorsJSON(res.Interrupted),
		Skipped: nonNil(res.Skipped), NotStarted: nonNil(res.NotStarted), Deposed: deposed}
}

type deposedJSON struct {
	Address string   `json:"address"`
	Type    string   `json:"type"`
	IDs     []string `json:"ids"`
}

type nodeErrorJSON struct {
	Address  string `json:"address"`
	Position string `json:"position,omitempty"`
	Error    string `json:"error"`
}

func nodeErrorsJSON(errs []report.NodeError) []nodeErrorJSON {
	out := make([]nodeErrorJSON, 0, len(errs))
	for _, e := range errs {
		j := nodeErrorJSON{Address: e.Addr, Error: e.Err.Error()}
		if e.Pos.IsValid() {
			j.Position = e.Pos.String()
		}
		out = append(out, j)
	}
	return out
}

// ApplyJSON writes an apply's result in the versioned format documented in
// docs/apply-json.md: counts of every action (zero included), what failed,
// was interrupted, skipped or not started and the replaced objects left
// deposed ([] when nothing), whether and why the run was stopped, and the
// outputs, secrets as null.
func ApplyJSON(w io.Writer, res *report.Apply, run Run) error {
	outputs := map[string]any{}
	if run != RunRefreshOnly {
		for k, v := range res.Outputs {
			outputs[k] = JSONValue(v)
		}
	}
	doc := applyJSON{FormatVersion: ApplyJSONVersion, Run: run.name(), applyResultJSON: applyResult(res), Outputs: outputs}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ApplyText writes an apply's result for people: the summary line and what
// was left undone to out, one "Error:" line per failed or interrupted node
// to errs, then the outputs to out.
func ApplyText(out, errs io.Writer, res *report.Apply, run Run) {
	undone := len(res.Failed) + len(res.Skipped) + len(res.Interrupted) + len(res.NotStarted) + len(res.Deposed)
	fmt.Fprintf(out, "\n%s\n", applyHeadline(res, run))
	if len(res.Interrupted) > 0 {
		fmt.Fprintf(out, "Interrupted while running (the next run finds out what they did): %s\n", joinNames(addrs(res.Interrupted)))
	}
	if len(res.NotStarted) > 0 {
		fmt.Fprintf(out, "Not started: %s\n", joinNames(res.NotStarted))
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(out, "Skipped because a dependency failed: %s\n", joinNames(res.Skipped))
	}
	if len(res.Deposed) > 0 {
		var objs []string
		for _, d := range res.Deposed {
			for _, id := range d.IDs {
				objs = append(objs, fmt.Sprintf("%s (deposed object %s)", untrusted.Name(d.Addr), untrusted.Quote(id)))
			}
		}
		fmt.Fprintf(out, "Replaced objects not deleted yet, kept in state as deposed (the next apply deletes them): %s\n", strings.Join(objs, ", "))
	}
	ApplyErrorsText(errs, res)
	if undone > 0 || res.Stopped != "" {
		fmt.Fprintf(out, "What completed is saved in state; run the same command again to continue.\n")
	}
	if len(res.Outputs) > 0 && run != RunRefreshOnly && res.Stopped == "" {
		fmt.Fprintf(out, "\nOutputs:\n")
		width := 0
		for k := range res.Outputs {
			width = max(width, textWidth(untrusted.Name(k)))
		}
		for _, k := range slices.Sorted(maps.Keys(res.Outputs)) {
			name := untrusted.Name(k)
			fmt.Fprintf(out, "  %s%*s = %s\n", name, width-textWidth(name), "", DisplayValue(res.Outputs[k]))
		}
	}
}

// ApplyErrorsText writes one "Error:" line per failed or interrupted node
// of an apply's result, with the position of its declaration. The error's
// text is one line, as every error's is: what a cloud wrote in it (a
// message echoing a spec's value) is escaped, newlines too.
func ApplyErrorsText(w io.Writer, res *report.Apply) {
	for _, f := range slices.Concat(res.Failed, res.Interrupted) {
		where := ""
		if f.Pos.IsValid() {
			where = " (" + f.Pos.String() + ")"
		}
		fmt.Fprintf(w, "Error: %s%s: %s\n", untrusted.Name(f.Addr), where, untrusted.Text(f.Err.Error()))
	}
}

// applyHeadline is the line that sums up an apply's result, such as
// "Apply complete! 1 created, 0 updated, 0 replaced, 0 destroyed, 0
// imported."
func applyHeadline(res *report.Apply, run Run) string {
	verb := run.verb()
	undone := len(res.Failed) + len(res.Skipped) + len(res.Interrupted) + len(res.NotStarted) + len(res.Deposed)
	switch {
	case run == RunRefreshOnly && undone == 0:
		return fmt.Sprintf("Apply complete! %d accepted into state from the cloud; nothing in the cloud was changed.", res.Counts[plan.Refresh])
	case run == RunRefreshOnly:
		return fmt.Sprintf("Apply incomplete: %d accepted into state; %d failed, %d skipped. Nothing in the cloud was changed.", res.Counts[plan.Refresh], len(res.Failed), len(res.Skipped))
	case res.Stopped != "" && undone == 0:
		return fmt.Sprintf("%s %s: %s; every operation it had started finished, and none was left to start.", verb, res.Stopped, ApplySummary(res))
	case res.Stopped != "":
		return fmt.Sprintf("%s %s before it was done: %s; %d interrupted, %d not started, %d failed, %d skipped.",
			verb, res.Stopped, ApplySummary(res), len(res.Interrupted), len(res.NotStarted), len(res.Failed), len(res.Skipped))
	case undone == 0:
		return fmt.Sprintf("%s complete! %s.", verb, ApplySummary(res))
	}
	return fmt.Sprintf("%s incomplete: %s; %d failed, %d skipped.", verb, ApplySummary(res), len(res.Failed), len(res.Skipped))
}

// ApplySummary counts what an apply did, e.g. "2 created, 0 updated, 0
// replaced, 1 destroyed, 0 imported".
func ApplySummary(res *report.Apply) string {
	m := res.Counts
	return fmt.Sprintf("%d created, %d updated, %d replaced, %d destroyed, %d imported",
		m[plan.Create], m[plan.Update], m[plan.Replace], m[plan.Delete]+m[plan.Forget], m[plan.Import])
}

func addrs(errs []report.NodeError) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Addr
	}
	return out
}
