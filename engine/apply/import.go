package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/refresh"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
	"github.com/reconcile-dev/reconcile/state"
)

// Import reads the object id of type typ and records it in state under
// name, as a managed resource whose applied inputs are its live inputs, less
// empty ones and the map entries the cloud adds by itself
// (resources.VendorKeys). It refuses a name already in state.
func Import(ctx context.Context, st state.Backend, reg resources.Registry, name, typ, id string) (state.Record, error) {
	s, ok := schemas.Lookup(typ)
	if !ok {
		return state.Record{}, fmt.Errorf("unknown type %q%s", typ, diag.DidYouMean(typ, schemas.Names()))
	}
	if s.Kind != schemas.Resource {
		return state.Record{}, fmt.Errorf("%s is a lookup; only resources can be imported", s.Token)
	}
	recs, err := st.List()
	if err != nil {
		return state.Record{}, err
	}
	for _, rec := range recs {
		if rec.Name == name {
			return state.Record{}, fmt.Errorf("%q is already in state; choose another name or remove it first with 'reconcile state rm %s'", name, name)
		}
	}
	if owner, ok := refresh.ManagedBy(recs, s.Token, id); ok {
		return state.Record{}, fmt.Errorf("%s %q is already managed in this state as %q: two names would own one object; to rename it, run 'reconcile state mv %s %s'", s.Token, id, owner, owner, name)
	}
	d, ok := reg.Drivers[s.Token]
	if !ok {
		return state.Record{}, fmt.Errorf("no driver is configured for %s", s.Token)
	}
	got, err := d.Read(ctx, id)
	if errors.Is(err, resources.ErrNotFound) {
		return state.Record{}, fmt.Errorf("%s %q does not exist", s.Token, id)
	}
	if err != nil {
		return state.Record{}, fmt.Errorf("read %s %q: %w", s.Token, id, err)
	}
	live := map[string]any(resources.CanonAttrs(got))
	// Tags the cloud adds by itself (OCI's Oracle-Tags) stay the cloud's.
	inputs := eval.WithoutVendorKeys(d, eval.Inputs(s, live))
	for k, v := range inputs {
		if value.CompareForm(s.Root.Properties[k], v) == nil {
			delete(inputs, k) // empty: leave it to the cloud
		}
	}
	outputs := map[string]any{}
	for k, v := range live {
		if pr, isProp := s.Root.Properties[k]; !isProp || pr.ReadOnly {
			outputs[k] = v // as apply records them: outputs only
		}
	}
	outputs["id"] = id
	rec, err := st.Put(state.Record{Name: name, Type: s.Token, Kind: kind.Resource, ID: id, Inputs: inputs, Outputs: outputs})
	if err != nil {
		return state.Record{}, fmt.Errorf("write state: %w", err)
	}
	_ = st.AddHistory(state.HistoryEntry{Time: time.Now().UTC(), Command: "import " + name, Counts: state.Counts{Import: 1}})
	return rec, nil
}
