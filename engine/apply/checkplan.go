package apply

import (
	"errors"
	"fmt"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/state"
)

// ErrStalePlan is matched (with errors.Is) by the error CheckPlan returns
// when a saved plan no longer fits the state or the specs.
var ErrStalePlan = errors.New("stale plan")

// stalePlanError is a CheckPlan failure: its text says what moved on and
// what to do; it matches ErrStalePlan.
type stalePlanError struct{ msg string }

func (e *stalePlanError) Error() string { return e.msg }

func (e *stalePlanError) Is(target error) bool { return target == ErrStalePlan }

// CheckPlan reports whether the saved plan pf may be applied to the state
// described by meta, whose key is stateKey, with the specs in spec. It
// returns plan.ErrFileChanged when the file's signature does not match (see
// plan.File.Verify), and an error matching ErrStalePlan when the plan was made for
// another state (lineage), when the state changed since (serial), or when
// the specs or config values changed (spec hash).
func CheckPlan(pf *plan.File, meta state.Meta, stateKey []byte, spec *specs.Spec) error {
	if err := pf.Verify(stateKey); err != nil {
		return err
	}
	p := pf.Plan
	switch {
	case p.Lineage != "" && meta.Lineage != p.Lineage:
		return &stalePlanError{fmt.Sprintf("the plan file was made for another state (lineage %s, this state has %s); make a new plan", p.Lineage, meta.Lineage)}
	case meta.Serial != p.Serial:
		return &stalePlanError{fmt.Sprintf("the state changed since the plan was made (serial %d then, %d now); make a new plan with 'reconcile plan --out FILE'", p.Serial, meta.Serial)}
	case spec.Hash != p.SpecHash:
		return &stalePlanError{"the specs or config values changed since the plan was made; make a new plan with 'reconcile plan --out FILE' (secret config values must be passed again with --config)"}
	}
	return nil
}
