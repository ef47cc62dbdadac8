package ailanguage

import (
	"context"
	"errors"
	"fmt"

	"github.com/reconcile-dev/reconcile/resources"
)

// CheckRelated checks, for a plan, the object that input field of want
// names (a model an endpoint deploys, the project a model is made in),
// when the apply would send it: always for a create (prior nil), and when
// it differs from prior's otherwise. state reads the object's lifecycle
// state; an error of it matching resources.ErrNotFound means the object
// does not exist. An object that does not exist, or is not ACTIVE, is a
// *resources.AttrError at field saying so and what OCI would do (why),
// for kind ("model") and what the referrer is ("deploy it"). A field not
// known yet is not checked; a failed read is returned as it is.
func CheckRelated(ctx context.Context, want, prior resources.Attrs, field, kind, why string, state func(ctx context.Context, id string) (string, error)) error {
	id, ok := want[field].(string)
	if !ok || id == "" {
		return nil
	}
	if prior != nil && prior[field] == id {
		return nil
	}
	st, err := state(ctx, id)
	switch {
	case errors.Is(err, resources.ErrNotFound):
		return &resources.AttrError{Path: []string{field}, Err: fmt.Errorf("%s %s does not exist (deleted, or not visible to these credentials): %s", kind, id, why)}
	case err != nil:
		return fmt.Errorf("read %s %s: %w", kind, id, err)
	case st != StateActive:
		return &resources.AttrError{Path: []string{field}, Err: fmt.Errorf("%s %s is %s, not ACTIVE: %s", kind, id, st, why)}
	}
	return nil
}
