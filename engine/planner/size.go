package planner

import (
	"errors"
	"fmt"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state"
)

// checkRecordSize refuses the change c of the resource r, which writes
// its record, when state could not write that record
// (state.Backend.RecordLimit): the apply would change the cloud, create
// an object even, and then fail to record it. The record is counted as
// the apply would write it with the inputs the specs give now, desired,
// and outputs, those known now (an update's recorded ones; a create's are
// the cloud's to give). Apply checks again before each create and update.
func (p *planner) checkRecordSize(r *specs.Resource, c *plan.Change, desired, outputs map[string]any) error {
	if p.st == nil {
		return nil
	}
	rec := state.Record{Name: r.Name, Type: r.Type, Kind: kind.Resource, ID: c.ID, Outputs: outputs,
		Dependencies: p.spec.ResourceDeps(r.Name), Deposed: c.Deposed}
	rec.Inputs, _ = value.Seal(desired, p.sealer(r.Name)).(map[string]any)
	err := state.CheckRecordSize(p.st, rec)
	var tl *state.TooLargeError
	if !errors.As(err, &tl) {
		return nil // a record that cannot be encoded fails with its own error at apply
	}
	what := "Creating it would make an object"
	if c.Action == plan.Update || c.Action == plan.Import {
		what = "Applying it would change an object"
	}
	return p.failDetail(r.Pos,
		fmt.Sprintf("The limit is the state backend's: %s. %s in the cloud that state could not record. Make its inputs smaller (split it into several resources), or keep the stack's state on a local file (reconcile state migrate --to PATH), whose records may reach 2 GiB",
			tl.Limit.Why, what),
		"%s %q cannot be recorded in state: its record would be %s, more than the %s a record can take", r.Type, r.Name, state.FormatSize(tl.Size), state.FormatSize(tl.Limit.Bytes))
}
