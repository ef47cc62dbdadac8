package apply

import (
	"errors"
	"fmt"

	"github.com/reconcile-dev/reconcile/state"
)

// checkSize refuses a create or an update whose record state could not
// write (see state.Backend.RecordLimit), before anything is sent to the
// cloud: rec as record would write it, with the inputs of the change and
// the outputs known so far (an update's recorded ones; none for a create,
// whose outputs are the cloud's to give). The planner refused such a
// change already; this checks again with the inputs as the apply
// evaluated them.
func (a *applier) checkSize(o *resourceOp, rec state.Record, inputs, outputs map[string]any, what string) error {
	rec.Inputs, rec.Outputs = inputs, outputs
	if rec.ID == "" {
		rec.ID = o.prior.ID
	}
	err := state.CheckRecordSize(a.st, rec)
	var tl *state.TooLargeError
	if !errors.As(err, &tl) {
		return nil // a record that cannot be encoded fails with its own error
	}
	return a.fail(o.r.Name, o.r.Pos, fmt.Errorf("%s %s: not sent to the cloud, as state could not record the result: %w. Make its inputs smaller (split it into several resources), or keep the stack's state on a local file",
		what, o.r.Type, err))
}

// fitRecord returns rec as it is when st can write it; otherwise rec made
// smaller so that st can, and the *state.TooLargeError that says why. An
// object made or changed in the cloud so never goes unrecorded, and a
// later apply or destroy can still replace or delete it: its record keeps
// its id, options and dependencies, with its outputs cut to the id, or, if
// even so it is too large, without its inputs either, tainted, so that
// the next plan replaces it (which the planner refuses until its inputs
// fit) rather than compare them.
func fitRecord(st state.Backend, rec state.Record) (state.Record, error) {
	err := state.CheckRecordSize(st, rec)
	var tl *state.TooLargeError
	if !errors.As(err, &tl) {
		return rec, nil
	}
	small := rec
	small.Outputs = map[string]any{}
	if id, ok := rec.Outputs["id"]; ok {
		small.Outputs["id"] = id
	}
	if state.CheckRecordSize(st, small) == nil {
		return small, fmt.Errorf("%w; recorded without its outputs, but its id", err)
	}
	small.Inputs = nil
	small.Tainted = fmt.Sprintf("its record, %s, is too large for the state backend (%s): only its id is kept; the next apply replaces it, once its inputs fit",
		state.FormatSize(tl.Size), state.FormatSize(tl.Limit.Bytes))
	return small, fmt.Errorf("%w; recorded with its id only, tainted", err)
}

// putFitted writes rec with put, made smaller first if it must be (see
// fitRecord). It returns the record written and, when it had to be made
// smaller, why, as a second error.
func putFitted(st state.Backend, put func(state.Record) (state.Record, error), rec state.Record) (written state.Record, cut, err error) {
	rec, cut = fitRecord(st, rec)
	written, err = put(rec)
	return written, cut, err
}
