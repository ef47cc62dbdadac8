package eval

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
)

// Lookup calls the lookup function with args, in clear, and returns its
// result in canonical form. Planning, applying and drift all call lookups
// through it.
func Lookup(ctx context.Context, reg resources.Registry, function string, args map[string]any) (map[string]any, error) {
	fn, ok := reg.Functions[function]
	if !ok {
		return nil, fmt.Errorf("no driver is configured for %s", function)
	}
	res, err := fn.Invoke(ctx, resources.Attrs(args))
	if err != nil {
		return nil, err
	}
	return resources.CanonAttrs(res), nil
}

// Invoker returns an Evaluator's Invoke that calls lookups with Lookup,
// its errors at the fn::invoke's position.
func Invoker(ctx context.Context, reg resources.Registry) func(inv *specs.Invoke, args map[string]any) (map[string]any, error) {
	return func(inv *specs.Invoke, args map[string]any) (map[string]any, error) {
		if _, ok := reg.Functions[inv.Function]; !ok {
			return nil, Errorf(inv.P, "no driver is configured for %s", inv.Function)
		}
		res, err := Lookup(ctx, reg, inv.Function, args)
		if err != nil {
			return nil, &Error{Pos: inv.P, Msg: fmt.Sprintf("fn::invoke %s: %v", inv.Function, err), Err: err}
		}
		return res, nil
	}
}

// Result is what a lookup gave, marked secret the way Pulumi marks an
// invoke's result: when any of its arguments holds a secret, however deep
// and however it was made (secret config, fn::secret, a stack's secure
// value, a secret output, anything computed from one), every result is
// secret, since the lookup may have built any of them from it
// (getIAMPolicy's policyData holds its members, and its id is a checksum
// of that).
type Result struct {
	// Secret reports that an argument held a secret.
	Secret bool
	// Fields are the results by field, each a value.Secret when Secret:
	// what a plan shows of the lookup, and state keeps of it sealed.
	Fields map[string]any
	// Value is what references to the lookup see: the results (the one
	// fn::invoke's return names, if it names one), inside one
	// value.Secret when Secret, so that every field read from it is
	// secret too.
	Value any
	// ID is the results' id, in clear only when not Secret.
	ID string
}

// ResultOf marks res, what the lookup inv returned for args (as
// evaluated: secrets still marked), as Result says.
func ResultOf(inv *specs.Invoke, args any, res map[string]any) Result {
	r := Result{Secret: value.ContainsSecret(args), Fields: res}
	var v any = res
	if inv.Return != "" {
		v = res[inv.Return]
	}
	r.Value = value.Wrap(v, r.Secret)
	if r.Secret {
		r.Fields = value.SecretFields(res)
		return r
	}
	r.ID, _ = res["id"].(string)
	return r
}

// GetIsSecret reports whether a get whose id and state evaluated to id
// and state (nil for none) is secret as a whole: either holds a secret.
func GetIsSecret(id any, state map[string]any) bool {
	return value.ContainsSecret(id) || value.ContainsSecret(state)
}

// GetResultOf marks live, what the get r read, as a Result: with secret
// (GetIsSecret), every field is secret, as a lookup's results are when an
// argument is; otherwise only those r's additionalSecretOutputs names
// (SecretOutputs).
func GetResultOf(r *specs.Resource, live map[string]any, secret bool) Result {
	if !secret {
		id, _ := live["id"].(string)
		return Result{Fields: SecretOutputs(r, live, false), Value: SecretOutputs(r, live, true), ID: id}
	}
	return Result{Secret: true, Fields: value.SecretFields(live), Value: value.Secret{Value: live}}
}

// withheldText stands in for the message of a cloud API's error about a
// call with a secret argument.
const withheldText = "(its message is not shown: it may quote a secret argument)"

// SecretCallError returns err, the error of a lookup called with args or of
// a get's read (args then its id and state, as evaluated), with nothing
// that could show a secret args holds: the clear text of each is redacted,
// and the message of a cloud API's error (resources.APIError) is withheld,
// its status and code kept, since an API may quote a part of an argument
// that is not the whole secret (GCP names the service of an id
// "services/NAME"). It returns err itself when args holds no secret. An
// *Error keeps its position; errors.Is and errors.As still see err.
func SecretCallError(err error, args any) error {
	if err == nil || !value.ContainsSecret(args) {
		return err
	}
	red := value.RedactionOf(args)
	hide := func(msg string) string {
		var api *resources.APIError
		if errors.As(err, &api) && api.Message != "" {
			msg = strings.ReplaceAll(msg, api.Message, withheldText)
		}
		return red.String(msg)
	}
	var ee *Error
	if errors.As(err, &ee) {
		return &Error{Pos: ee.Pos, Msg: hide(ee.Msg), Err: err}
	}
	return &hiddenError{msg: hide(err.Error()), err: err}
}

// hiddenError is an error whose text is another's, less a secret.
type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg }
func (e *hiddenError) Unwrap() error { return e.err }
