package refresh

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/reconcile-dev/reconcile/engine/dag"
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
	"github.com/reconcile-dev/reconcile/state"
)

// Drift reads every managed resource, get and lookup recorded in state from
// the cloud and compares it with what was last applied. It changes nothing.
// Only inputs that were applied are compared (a field the specs leave to the
// cloud is not drift), under each field's schema (sets, empty values),
// after the driver's normalisation; output-only fields, map entries the
// cloud adds by itself (resources.VendorKeys) and fields named by
// ignoreChanges in spec (which may be nil) are left out.
func Drift(ctx context.Context, spec *specs.Spec, st state.Backend, reg resources.Registry, parallelism int) (*report.Drift, error) {
	v, err := state.ReadView(st)
	if err != nil {
		return nil, err
	}
	meta, recs, key := v.Meta, v.Records, v.Key
	rep := &report.Drift{Lineage: meta.Lineage, Serial: meta.Serial}
	refreshed := refreshRecords(ctx, spec, reg, key, recs, parallelism)
	if ctx.Err() != nil {
		// One error, not one per node the interruption reached.
		return nil, fmt.Errorf("drift was interrupted (%v): nothing was reported", context.Cause(ctx))
	}
	for _, r := range refreshed {
		rep.Checked++
		switch {
		case r.err != nil:
			rep.Errors = append(rep.Errors, report.DriftError{Addr: r.rec.Name, Type: r.rec.Type, Err: r.err})
		case r.item != nil:
			rep.Items = append(rep.Items, *r.item)
		}
	}
	return rep, nil
}

// refreshed is what reading one node of state from the cloud found.
type refreshed struct {
	rec  state.Record
	item *report.DriftItem // nil when nothing drifted, or the node cannot be read again
	// live is what the cloud has now: the attributes of a resource or a
	// get, the result of a lookup; nil when the object is gone or the
	// node was not read.
	live map[string]any
	err  error
}

// refreshRecords reads every record that can be read (all but resources
// without an id) from the cloud, up to parallelism at once, and returns
// what each one found, sorted by name.
func refreshRecords(ctx context.Context, spec *specs.Spec, reg resources.Registry, key []byte, recs []state.Record, parallelism int) []refreshed {
	var names []string
	byName := map[string]state.Record{}
	for _, r := range recs {
		if r.Kind == kind.Resource && r.ID == "" {
			continue
		}
		byName[r.Name] = r
		names = append(names, r.Name)
	}
	sort.Strings(names)
	out := make([]refreshed, len(names))
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	bulk := ReadBulk(ctx, reg, recs, parallelism)
	dag.Walk(ctx, names, nil, parallelism, func(ctx context.Context, name string) error {
		r := refreshRecord(ctx, spec, reg, key, byName[name], bulk)
		out[index[name]] = r // each goroutine writes its own element
		return nil
	})
	for i, n := range names {
		if out[i].rec.Name == "" { // not run: the context ended
			out[i] = refreshed{rec: byName[n], err: context.Cause(ctx)}
			if out[i].err == nil {
				out[i].err = errors.New("not read")
			}
		}
	}
	return out
}

// refreshRecord reads one record's object (or lookup result) from the
// cloud, or takes what bulk found of it, and compares it with what state
// holds. An object whose bulk attributes drifted is read again with Read.
func refreshRecord(ctx context.Context, spec *specs.Spec, reg resources.Registry, key []byte, rec state.Record, bulk *Bulk) refreshed {
	ctx = resources.WithNode(ctx, rec.Name) // its retries name it
	sl := value.Sealer{Key: key, Name: rec.Name}
	out := refreshed{rec: rec}
	s, ok := schemas.Lookup(rec.Type)
	if !ok {
		out.err = fmt.Errorf("unknown type %s in state", rec.Type)
		return out
	}
	item := &report.DriftItem{Addr: rec.Name, Type: rec.Type, Kind: rec.Kind, ID: rec.ID}
	switch rec.Kind {
	case kind.Lookup:
		if value.ContainsSealed(rec.Inputs) {
			return out // arguments were secret: they cannot be replayed
		}
		live, err := eval.Lookup(ctx, reg, rec.Type, rec.Inputs)
		if err != nil {
			out.err = err
			return out
		}
		out.live = live
		fn := reg.Functions[rec.Type]
		item.Status = report.DriftResult
		item.Fields, item.Details, item.Access = LookupDrift(s, fn, rec.Outputs, out.live)
	default:
		if rec.Kind == kind.Get && rec.ID == "" {
			return out // its id was secret: state keeps it only sealed
		}
		d, ok := reg.Drivers[rec.Type]
		if !ok {
			out.err = fmt.Errorf("no driver is configured for %s", rec.Type)
			return out
		}
		var r *specs.Resource
		if spec != nil {
			r = spec.Resources[rec.Name]
		}
		if r != nil {
			if t, ok := r.Options.CustomTimeouts["read"]; ok {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, t)
				defer cancel()
			}
		}
		var ignore []specs.PathOpt
		if r != nil && r.Get == nil && r.Type == rec.Type {
			ignore = r.Options.IgnoreChanges
		}
		live, fromBulk := bulk.Lookup(rec.Type, rec.ID)
		for {
			if !fromBulk {
				got, err := d.Read(ctx, rec.ID)
				if errors.Is(err, resources.ErrNotFound) {
					item.Status = report.DriftDeleted
					if rec.Kind == kind.Get {
						item.Details = []string{"the object read with get no longer exists"}
					}
					out.item = item
					return out
				}
				if err != nil {
					out.err = err
					return out
				}
				live = map[string]any(resources.CanonAttrs(got))
				if _, ok := live["id"]; !ok {
					live["id"] = rec.ID
				}
			}
			out.live = live
			if rec.Kind == kind.Get {
				item.Status = report.DriftResult
				item.Fields = GetDrift(s, sl, rec.Outputs, out.live)
			} else {
				item.Status = report.DriftChanged
				item.Fields, item.Details, item.Access = ResourceDrift(s, d, sl, rec.Inputs, out.live, ignore)
			}
			if !fromBulk || len(item.Fields) == 0 {
				break
			}
			fromBulk = false // drifted: read it whole, as it is now
		}
	}
	if len(item.Fields) > 0 || len(item.Details) > 0 {
		out.item = item
	}
	return out
}

// ResourceDrift compares the inputs last applied with the live attributes
// of a managed object: only the inputs that were applied, under their
// schema, after the driver's normalisation of both sides, without the map
// entries the cloud adds by itself, and with the fields named by ignore
// left out. Values secret in applied (sealed) are sealed alike in live, and
// shown as secrets. The fields are sorted by path. When some drifted and
// the driver is a resources.ResultComparer, the details are its
// description of the change, from the applied inputs to the live ones
// (both normalised), unless either holds a secret; and when it is a
// resources.AccessDescriber too, the members added and removed.
func ResourceDrift(s *schemas.Schema, d any, sl value.Sealer, applied, live map[string]any, ignore []specs.PathOpt) ([]plan.FieldDrift, []string, []plan.AccessChange) {
	liveIn := eval.WithoutVendorKeys(d, eval.Inputs(s, live), applied)
	a := applied
	if n, ok := d.(resources.Normalizer); ok {
		if !value.ContainsSealed(a) {
			a = map[string]any(resources.CanonAttrsShared(n.Normalize(resources.Attrs(a))))
		}
		liveIn = map[string]any(resources.CanonAttrsShared(n.Normalize(resources.Attrs(liveIn))))
	}
	// liveIn is a map of its own (made by Inputs, or by the driver), whose
	// top level ApplyIgnore sets (copying a map before it changes a key);
	// a is only read.
	for _, po := range ignore {
		eval.ApplyIgnore(po, a, liveIn)
	}
	var out []plan.FieldDrift
	for _, k := range s.Inputs() {
		if _, managed := applied[k]; !managed {
			continue
		}
		av := a[k]
		lv := value.SealAs(liveIn[k], av, sl)
		if !value.Equal(s.Root.Properties[k], lv, av, sl) {
			out = append(out, plan.FieldDrift{Path: k, Applied: value.UnsealForDisplay(av), Live: value.UnsealForDisplay(lv)})
		}
	}
	cmp, ok := d.(resources.ResultComparer)
	if len(out) == 0 || !ok || value.ContainsSealed(a) || value.ContainsSecret(liveIn) {
		return out, nil, nil
	}
	return out, cmp.DescribeResultChange(resources.Attrs(a), resources.Attrs(liveIn)), describeAccess(d, a, liveIn)
}

// describeAccess is what an AccessDescriber says of the members that the
// access granted by before and after differ by; nil for anything else.
func describeAccess(d any, before, after map[string]any) []plan.AccessChange {
	ad, ok := d.(resources.AccessDescriber)
	if !ok {
		return nil
	}
	return AccessChanges(ad.DescribeAccessChange(resources.Attrs(before), resources.Attrs(after)))
}

// AccessChanges converts what a driver says of access changes into the
// plan's terms, sorted (plan.SortAccess); nil for none.
func AccessChanges(in []resources.AccessChange) []plan.AccessChange {
	if len(in) == 0 {
		return nil
	}
	out := make([]plan.AccessChange, len(in))
	for i, c := range in {
		out[i] = plan.AccessChange{Resource: c.Resource, Role: c.Role, Condition: c.Condition, Member: c.Member, Added: c.Added}
	}
	plan.SortAccess(out)
	return out
}

// LookupDrift compares a lookup's results as last read with its live
// results: every output-only field; an IAM policy's policyData compares as
// a set of role bindings, and details say which members were added to and
// removed from which role, as the access changes do member by member.
func LookupDrift(s *schemas.Schema, fn resources.Function, applied, live map[string]any) ([]plan.FieldDrift, []string, []plan.AccessChange) {
	cmp, _ := fn.(resources.ResultComparer)
	equal := func(k string, a, l any) bool {
		if cmp != nil {
			return cmp.EqualResultField(k, a, l)
		}
		return resources.Equal(a, l)
	}
	var fields []plan.FieldDrift
	for _, k := range s.Outputs() {
		pr := s.Root.Properties[k]
		if pr == nil || !pr.ReadOnly {
			continue
		}
		if a, l := applied[k], live[k]; !equal(k, a, l) {
			fields = append(fields, plan.FieldDrift{Path: k, Applied: a, Live: l})
		}
	}
	if len(fields) == 0 || cmp == nil {
		return fields, nil, nil
	}
	return fields, cmp.DescribeResultChange(applied, live), describeAccess(fn, applied, live)
}

// GetDrift compares what a get read at the last apply with what it reads
// now: the input fields (output-only ones, such as state and timeUpdated,
// move on their own).
func GetDrift(s *schemas.Schema, sl value.Sealer, applied, live map[string]any) []plan.FieldDrift {
	var out []plan.FieldDrift
	for _, k := range s.Outputs() {
		if k == "id" {
			continue
		}
		if pr := s.Root.Properties[k]; pr != nil && !pr.ReadOnly && !value.Equal(pr, live[k], applied[k], sl) {
			out = append(out, plan.FieldDrift{Path: k, Applied: applied[k], Live: live[k]})
		}
	}
	return out
}

// Plan reads every node of state from the cloud, as Drift
// does, and plans one Refresh change for each that drifted and a NoOp for
// each of the others, sorted by address. The specs are read for
// ignoreChanges (ignored fields are not drift) and for positions only: a
// refresh-only plan never creates, updates or deletes anything in the
// cloud. A node that cannot be read is an error diagnostic.
func Plan(ctx context.Context, spec *specs.Spec, st state.Backend, reg resources.Registry, parallelism int) (*plan.Plan, diag.Diagnostics) {
	v, err := state.ReadView(st)
	if err != nil {
		return nil, diag.Diagnostics{diag.Errorf(diag.Pos{}, "%v", err)}
	}
	meta, recs, key := v.Meta, v.Records, v.Key
	pl := &plan.Plan{Lineage: meta.Lineage, Serial: meta.Serial, SpecHash: spec.Hash, RefreshOnly: true}
	var diags diag.Diagnostics
	for _, r := range refreshRecords(ctx, spec, reg, key, recs, parallelism) {
		rec := r.rec
		pos := spec.DeclaredAt(rec.Name)
		if r.err != nil {
			diags = append(diags, diag.Errorf(pos, "refresh %q: read %s %q: %v", rec.Name, rec.Type, rec.ID, r.err))
			continue
		}
		c := plan.Change{Addr: rec.Name, Type: rec.Type, Kind: rec.Kind, Action: plan.NoOp, ID: rec.ID, Pos: pos}
		if rec.Kind == kind.Resource {
			c.Before = eval.Merge(rec.Inputs, rec.Outputs)
			c.Before["id"] = rec.ID
		} else {
			c.Before = eval.Merge(rec.Outputs)
		}
		c.Before = value.UnsealForDisplay(c.Before).(map[string]any)
		if r.item == nil {
			c.After = c.Before
			pl.Changes = append(pl.Changes, c)
			continue
		}
		c.Action = plan.Refresh
		c.Drift, c.DriftDetails, c.DriftAccess = r.item.Fields, r.item.Details, r.item.Access
		if r.item.Status == report.DriftDeleted {
			c.DeletedOutside, c.DeletedID = true, rec.ID
		} else {
			c.After = refreshedAttrs(rec, r.live, reg)
		}
		pl.Changes = append(pl.Changes, c)
	}
	return pl, diags.Sort()
}

// refreshedAttrs is what a Refresh writes into state for rec, given what
// the cloud has now: for a lookup or a get, the live result; for a managed
// resource, the live value of every input that was applied (a secret one
// wrapped as Secret where state holds it sealed, without the map entries
// the cloud adds by itself) and the live outputs. Inputs the specs leave to
// the cloud stay out of state, as apply leaves them.
func refreshedAttrs(rec state.Record, live map[string]any, reg resources.Registry) map[string]any {
	if rec.Kind != kind.Resource {
		return eval.Merge(live)
	}
	s, ok := schemas.Lookup(rec.Type)
	if !ok {
		return eval.Merge(live)
	}
	live = eval.WithoutVendorKeys(reg.Drivers[rec.Type], live, rec.Inputs)
	out := map[string]any{}
	for k, v := range live {
		pr, isProp := s.Root.Properties[k]
		if !isProp || pr.ReadOnly {
			// An output state keeps sealed (additionalSecretOutputs)
			// stays secret.
			out[k] = value.SecretAs(v, rec.Outputs[k])
			continue
		}
		if applied, managed := rec.Inputs[k]; managed && v != nil {
			out[k] = value.SecretAs(v, applied)
		} else if !managed {
			out[k] = v // the cloud's to choose: kept as an output
		}
	}
	out["id"] = rec.ID
	return out
}

// ManagedBy returns the name of the managed resource of type typ in recs
// that holds the object id (as its object, or one a replacement left
// behind), if there is one.
func ManagedBy(recs []state.Record, typ, id string) (string, bool) {
	for _, rec := range recs {
		if rec.Kind != kind.Resource || rec.Type != typ {
			continue
		}
		if rec.ID == id || slices.Contains(rec.Deposed, id) {
			return rec.Name, true
		}
	}
	return "", false
}

// ReadObject reads the object id of r's type, within r's read timeout, in
// canonical form and always with its "id".
func ReadObject(ctx context.Context, reg resources.Registry, r *specs.Resource, id string) (map[string]any, error) {
	d, ok := reg.Drivers[r.Type]
	if !ok {
		return nil, fmt.Errorf("no driver is configured for %s", r.Type)
	}
	if t, ok := r.Options.CustomTimeouts["read"]; ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	got, err := d.Read(resources.WithNode(ctx, r.Name), id)
	if err != nil {
		return nil, err
	}
	// The driver's object is new and no one else's: its values are kept,
	// not copied, where they are canonical already.
	out := map[string]any(resources.CanonAttrsShared(got))
	if _, ok := out["id"]; !ok {
		out["id"] = id
	}
	return out, nil
}
