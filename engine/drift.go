package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"reconcile/resources"
	"reconcile/schemas"
	"reconcile/state"
)

// DriftStatus says how a node moved away from what was last applied.
type DriftStatus string

// Drift statuses.
const (
	DriftChanged DriftStatus = "changed" // inputs differ from the last apply
	DriftDeleted DriftStatus = "deleted" // the object is gone from the cloud
	DriftResult  DriftStatus = "result"  // a lookup or get now returns something else
)

// FieldDrift is one field whose live value differs from the applied one.
type FieldDrift struct {
	Path    string
	Applied any // as last applied (a Secret when it is secret)
	Live    any // as the cloud has it now (a Secret when it is secret)
}

// DriftItem is one node that drifted.
type DriftItem struct {
	Addr    string
	Type    string
	Kind    string
	ID      string
	Status  DriftStatus
	Fields  []FieldDrift // sorted by path
	Details []string     // extra lines, such as IAM binding changes
}

// DriftError is a node that could not be read.
type DriftError struct {
	Addr string
	Err  error
}

// DriftReport is the outcome of Drift.
type DriftReport struct {
	Lineage string
	Serial  int64
	Checked int
	Items   []DriftItem // sorted by address
	Errors  []DriftError
}

// HasDrift reports whether anything drifted.
func (r *DriftReport) HasDrift() bool { return len(r.Items) > 0 }

// Drift reads every managed resource, get and lookup recorded in state from
// the cloud and compares it with what was last applied. It changes nothing.
// Only inputs that were applied are compared (a field the specs leave to the
// cloud is not drift), under each field's schema (sets, empty values),
// after the driver's normalisation; output-only fields and fields named by
// ignoreChanges in spec (which may be nil) are left out.
func Drift(ctx context.Context, spec *Spec, st *state.Store, reg resources.Registry, parallelism int) (*DriftReport, error) {
	meta, err := st.Meta()
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	recs, err := st.List()
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	rep := &DriftReport{Lineage: meta.Lineage, Serial: meta.Serial}
	byName := map[string]state.Record{}
	var names []string
	for _, r := range recs {
		if r.Kind == KindResource && r.ID == "" {
			continue
		}
		byName[r.Name] = r
		names = append(names, r.Name)
	}
	rep.Checked = len(names)
	var mu sync.Mutex
	walk(ctx, names, nil, parallelism, func(ctx context.Context, name string) error {
		item, err := driftOf(ctx, spec, reg, byName[name])
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			rep.Errors = append(rep.Errors, DriftError{Addr: name, Err: err})
		} else if item != nil {
			rep.Items = append(rep.Items, *item)
		}
		return nil
	})
	sort.Slice(rep.Items, func(i, j int) bool { return rep.Items[i].Addr < rep.Items[j].Addr })
	sort.Slice(rep.Errors, func(i, j int) bool { return rep.Errors[i].Addr < rep.Errors[j].Addr })
	return rep, nil
}

func driftOf(ctx context.Context, spec *Spec, reg resources.Registry, rec state.Record) (*DriftItem, error) {
	s, ok := schemas.Lookup(rec.Type)
	if !ok {
		return nil, fmt.Errorf("unknown type %s in state", rec.Type)
	}
	item := &DriftItem{Addr: rec.Name, Type: rec.Type, Kind: rec.Kind, ID: rec.ID}
	switch rec.Kind {
	case KindLookup:
		fn, ok := reg.Functions[rec.Type]
		if !ok {
			return nil, fmt.Errorf("no driver is configured for %s", rec.Type)
		}
		if containsSealed(rec.Inputs) {
			return nil, nil // arguments were secret: they cannot be replayed
		}
		res, err := fn.Invoke(ctx, resources.Attrs(rec.Inputs))
		if err != nil {
			return nil, err
		}
		live := map[string]any(resources.CanonAttrs(res))
		for _, k := range s.Outputs() {
			if pr := s.Root.Properties[k]; pr != nil && pr.ReadOnly && !resources.Equal(rec.Outputs[k], live[k]) {
				item.Fields = append(item.Fields, FieldDrift{Path: k, Applied: rec.Outputs[k], Live: live[k]})
			}
		}
		if a, b := str(rec.Outputs["policyData"]), str(live["policyData"]); a != b {
			item.Details = policyDataChanges(a, b)
		}
		item.Status = DriftResult
	default:
		d, ok := reg.Drivers[rec.Type]
		if !ok {
			return nil, fmt.Errorf("no driver is configured for %s", rec.Type)
		}
		got, err := d.Read(ctx, rec.ID)
		if errors.Is(err, resources.ErrNotFound) {
			if rec.Kind == KindGet {
				item.Status, item.Details = DriftDeleted, []string{"the object read with get no longer exists"}
			} else {
				item.Status = DriftDeleted
			}
			return item, nil
		}
		if err != nil {
			return nil, err
		}
		live := map[string]any(resources.CanonAttrs(got))
		if rec.Kind == KindGet {
			item.Status = DriftResult
			for _, k := range s.Outputs() {
				if k == "id" {
					continue
				}
				if pr := s.Root.Properties[k]; pr != nil && !pr.ReadOnly && !valuesEqual(pr, live[k], rec.Outputs[k], rec.Name) {
					item.Fields = append(item.Fields, FieldDrift{Path: k, Applied: rec.Outputs[k], Live: live[k]})
				}
			}
			break
		}
		item.Status = DriftChanged
		applied, liveIn := rec.Inputs, inputsOf(s, live)
		if n, ok := d.(resources.Normalizer); ok {
			if !containsSealed(applied) {
				applied = map[string]any(resources.CanonAttrs(n.Normalize(resources.Attrs(applied))))
			}
			liveIn = map[string]any(resources.CanonAttrs(n.Normalize(resources.Attrs(liveIn))))
		}
		ignored := map[string]bool{}
		if spec != nil {
			if r, ok := spec.Resources[rec.Name]; ok {
				for _, po := range r.Options.IgnoreChanges {
					ignored[po.Top] = true
				}
			}
		}
		for _, k := range s.Inputs() {
			a, managed := rec.Inputs[k]
			if !managed || ignored[k] {
				continue
			}
			a = applied[k]
			l := liveIn[k]
			if isSealed(a) {
				if !resources.Equal(seal(Secret{Value: l}, rec.Name), a) {
					item.Fields = append(item.Fields, FieldDrift{Path: k, Applied: Secret{}, Live: Secret{}})
				}
				continue
			}
			if !valuesEqual(s.Root.Properties[k], l, a, rec.Name) {
				item.Fields = append(item.Fields, FieldDrift{Path: k, Applied: a, Live: l})
			}
		}
	}
	if len(item.Fields) == 0 && len(item.Details) == 0 {
		return nil, nil
	}
	return item, nil
}

// policyDataChanges describes how two IAM policies (policyData JSON text)
// differ, one line per role: members added and removed.
func policyDataChanges(before, after string) []string {
	members := func(text string) map[string]map[string]bool {
		var p struct {
			Bindings []struct {
				Role    string   `json:"role"`
				Members []string `json:"members"`
			} `json:"bindings"`
		}
		_ = json.Unmarshal([]byte(text), &p)
		out := map[string]map[string]bool{}
		for _, b := range p.Bindings {
			if out[b.Role] == nil {
				out[b.Role] = map[string]bool{}
			}
			for _, m := range b.Members {
				out[b.Role][m] = true
			}
		}
		return out
	}
	a, b := members(before), members(after)
	roles := map[string]bool{}
	for r := range a {
		roles[r] = true
	}
	for r := range b {
		roles[r] = true
	}
	var lines []string
	for _, role := range sortedKeys(roles) {
		var added, removed []string
		for m := range b[role] {
			if !a[role][m] {
				added = append(added, "+"+m)
			}
		}
		for m := range a[role] {
			if !b[role][m] {
				removed = append(removed, "-"+m)
			}
		}
		sort.Strings(added)
		sort.Strings(removed)
		if len(added)+len(removed) > 0 {
			lines = append(lines, fmt.Sprintf("binding %s: %s", role, joinSpace(append(removed, added...))))
		}
	}
	return lines
}

func joinSpace(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += " "
		}
		out += s
	}
	return out
}
