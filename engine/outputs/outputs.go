// Package outputs keeps the stack outputs in state: what apply records of
// them once it completes, secrets sealed as everything in state is, and,
// for 'reconcile output --show-secrets', a secret output's value computed
// again from the specs and state, where that can be done.
//
// Recording. At the end of a complete apply, each output the specs declare
// is evaluated against what the apply left; Record seals its secrets (a
// keyed digest, never the value) and writes the set with
// state.Backend.PutOutputs, unless it is what state holds already. A
// targeted apply evaluates only the outputs whose dependencies it
// planned: the others keep the value recorded before. A complete destroy
// records none. An apply that did not complete records nothing.
//
// Revealing. State holds a secret output only as its digest. Reveal
// evaluates the output again, with config and variables from the specs
// and resources, gets and lookups from their records in state (no cloud
// call), and shows the value only if its digest is the one recorded: what
// the last apply produced, not what the specs say now. An output made from
// a secret that state itself keeps only as a digest (a secret input of a
// resource, the results of a lookup or get read with a secret argument)
// cannot be computed again, and Reveal says so.
package outputs

import (
	"errors"
	"fmt"
	"maps"

	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state"
)

// Record writes evaluated, the outputs an apply computed (secrets as
// value.Secret), to st, sealed with key. With partial (a targeted apply),
// the outputs recorded before that the specs still declare and evaluated
// lacks keep their value. Outputs whose value is not known are left out.
// Nothing is written when the result is what st holds already.
func Record(st state.Backend, key []byte, spec *specs.Spec, evaluated map[string]any, partial bool, command string) error {
	prior, had, err := st.Outputs()
	if err != nil {
		return err
	}
	values := map[string]any{}
	if partial && had {
		for name, v := range prior.Values {
			if _, declared := spec.Outputs[name]; declared {
				values[name] = v
			}
		}
	}
	for name, v := range evaluated {
		if value.ContainsUnknown(v) {
			continue
		}
		values[name] = value.Seal(v, value.Sealer{Key: key})
	}
	if had && len(values) == len(prior.Values) && (len(values) == 0 || value.Same(values, prior.Values)) {
		return nil
	}
	return st.PutOutputs(state.Outputs{Command: command, Values: values})
}

// ErrNotShown is matched by the errors of Reveal: the value of the output
// cannot be shown, and the error says why.
var ErrNotShown = errors.New("the value cannot be shown")

// notShown is an error of Reveal.
type notShown struct{ msg string }

func (e *notShown) Error() string        { return e.msg }
func (e *notShown) Is(target error) bool { return target == ErrNotShown }

func notShownf(format string, args ...any) error {
	return &notShown{fmt.Sprintf(format, args...)}
}

// Reveal computes the output name again from spec and the records of st,
// and returns its value in clear if, sealed with key, it is recorded, the
// sealed value state holds for it. Otherwise it returns an error matching
// ErrNotShown that says why: the specs no longer declare the output, or it
// depends on a secret state keeps only as a digest, or the specs now give
// another value than the one the last apply recorded.
func Reveal(spec *specs.Spec, st state.Backend, key []byte, name string, recorded any) (any, error) {
	o, ok := spec.Outputs[name]
	if !ok {
		return nil, notShownf("the specs no longer declare the output %q, so its value cannot be computed again", name)
	}
	records, err := st.List()
	if err != nil {
		return nil, err
	}
	env := &stateEnv{spec: spec, records: map[string]state.Record{}, values: map[string]any{}}
	for _, r := range records {
		env.records[r.Name] = r
	}
	env.ev = &eval.Evaluator{Spec: spec, Env: env}
	v, err := env.ev.Eval(o.Expr)
	if err != nil {
		return nil, notShownf("it cannot be computed again from the specs and state: %v", err)
	}
	plain, _ := value.Reveal(v)
	switch {
	case value.ContainsSealed(plain):
		return nil, notShownf("it is made from a secret that state keeps only as a digest (a secret input of a resource, an output additionalSecretOutputs names, or a result of a lookup or get read with a secret argument), so its value cannot be computed again")
	case value.ContainsUnknown(plain):
		return nil, notShownf("it depends on a value that is not in state (a lookup read during apply, or a resource not yet created)")
	}
	// Sealed where the apply sealed it (the secret parts), or whole.
	sl := value.Sealer{Key: key}
	if !value.Same(value.Seal(v, sl), recorded) && !value.Same(value.Seal(value.Secret{Value: plain}, sl), recorded) {
		return nil, notShownf("the specs (or the config values given now) make another value than the one the last apply recorded; apply them, then ask again")
	}
	return plain, nil
}

// stateEnv resolves references as state left them: config values from the
// specs, plain variables evaluated from the specs, and resources, gets and
// lookups from their records. It never calls the cloud.
type stateEnv struct {
	spec    *specs.Spec
	records map[string]state.Record
	ev      *eval.Evaluator
	values  map[string]any // plain variables evaluated so far
	busy    map[string]bool
}

func (e *stateEnv) Lookup(name string) (any, bool) {
	if v, ok := e.spec.Values[name]; ok {
		return v, true
	}
	if _, ok := e.spec.Config[name]; ok {
		return nil, false // declared without a value: nothing to compute from
	}
	if v, ok := e.values[name]; ok {
		return v, true
	}
	if variable, ok := e.spec.Variables[name]; ok {
		if inv, isLookup := variable.Expr.(*specs.Invoke); isLookup {
			rec, ok := e.records[name]
			if !ok || rec.Kind != kind.Lookup {
				return nil, false
			}
			if inv.Return != "" {
				return rec.Outputs[inv.Return], true
			}
			return rec.Outputs, true
		}
		if e.busy[name] {
			return nil, false // a cycle: the specs refuse these
		}
		if e.busy == nil {
			e.busy = map[string]bool{}
		}
		e.busy[name] = true
		v, err := e.ev.Eval(variable.Expr)
		delete(e.busy, name)
		if err != nil {
			return nil, false
		}
		e.values[name] = v
		return v, true
	}
	rec, ok := e.records[name]
	if !ok {
		return nil, false
	}
	switch rec.Kind {
	case kind.Resource:
		view := eval.Merge(rec.Inputs, rec.Outputs)
		view["id"] = rec.ID
		return view, true
	case kind.Get:
		return maps.Clone(rec.Outputs), true
	}
	return nil, false
}
