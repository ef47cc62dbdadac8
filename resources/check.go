package resources

import (
	"context"
	"errors"
)

// InputChecker is optional on a Driver: it finds, without a request, the
// inputs its API would refuse (a relation the resource type does not
// have, a member string IAM rejects), so that validate and plan report
// them at their place in the specs instead of apply failing half-way.
// validate calls it with what the specs alone give, plan with what it
// evaluated.
//
// CheckInputs is given the inputs as far as they are known: a value known
// only after apply, or secret, is missing from its map, and nil as an item
// of a list, so that the indexes stay those of the specs. The inputs are
// as the specs give them, before Normalize; plan has checked them against
// the type's schema, validate only their literals, so a value of a shape
// the check does not expect is left alone, not reported. CheckInputs
// reports nothing about what is missing (the schema says what is
// required), nor what it cannot tell offline. It must be pure: no request, no clock, no environment, and the
// same answer for the same inputs.
//
// It returns nil, or the problems found: one *AttrError, or several joined
// with errors.Join, each with the path of the offending input and a
// message that says what the API accepts. Secret values never reach it,
// so its messages may quote the inputs.
type InputChecker interface {
	CheckInputs(want Attrs) error
}

// PlanChecker is optional on a Driver whose API refuses inputs for reasons
// that only a read tells: a tag namespace the tenancy lacks, a model that
// is not ACTIVE. Plan calls it for every resource of the type, after
// InputChecker, with the inputs given as to CheckInputs and prior, the
// inputs last applied (nil for an object not yet made; only what state
// records in clear), so that it can check only what the apply would write.
//
// It returns nil, the problems found as CheckInputs does (*AttrError
// values), or an error of another kind when a read it needed failed: the
// plan then fails at the resource, saying so. It never changes anything.
type PlanChecker interface {
	CheckPlan(ctx context.Context, want, prior Attrs) error
}

// AttrErrors returns the *AttrError values err holds: err itself, or
// those errors.Join joined (at any depth), in order; and the rest of err
// (nil when every part is an *AttrError). It is how the engine reads what
// an InputChecker or a PlanChecker returns.
func AttrErrors(err error) ([]*AttrError, error) {
	var out []*AttrError
	var rest []error
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if ae, ok := err.(*AttrError); ok {
			out = append(out, ae)
			return
		}
		if err != nil {
			rest = append(rest, err)
		}
	}
	walk(err)
	return out, errors.Join(rest...)
}
