package refresh

import (
	"context"
	"sync"

	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// Bulk is what the bulk reads of a refresh found (resources.BulkReader):
// the live attributes of objects, by type and id, as Read would return
// them. The zero value and nil hold nothing.
type Bulk struct {
	found map[string]map[string]resources.Attrs // type → id → attributes
}

// ReadBulk reads in bulk, with the BulkReader of each driver that has one,
// every object recs records (managed resources and gets with an id), up to
// parallelism calls at once, and returns what it found. The output-only
// fields a bulk read lacks (BulkOmitted) take the values state records. A
// bulk read that fails finds nothing: its objects are read one by one.
func ReadBulk(ctx context.Context, reg resources.Registry, recs []state.Record, parallelism int) *Bulk {
	type group struct {
		br   resources.BulkReader
		objs []resources.BulkObject
		recs map[string]state.Record // by id
	}
	groups := map[string]*group{}
	for _, rec := range recs {
		if rec.Kind != kind.Resource && rec.Kind != kind.Get || rec.ID == "" {
			continue
		}
		br, ok := reg.Drivers[rec.Type].(resources.BulkReader)
		if !ok {
			continue
		}
		g := groups[rec.Type]
		if g == nil {
			g = &group{br: br, recs: map[string]state.Record{}}
			groups[rec.Type] = g
		}
		if _, dup := g.recs[rec.ID]; dup {
			continue
		}
		g.recs[rec.ID] = rec
		g.objs = append(g.objs, resources.BulkObject{ID: rec.ID, Attrs: resources.Attrs(eval.Merge(rec.Inputs, rec.Outputs))})
	}
	b := &Bulk{found: map[string]map[string]resources.Attrs{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for typ, g := range groups {
		wg.Go(func() {
			got, err := g.br.ReadMany(ctx, g.objs, parallelism)
			if err != nil {
				return
			}
			omitted := g.br.BulkOmitted()
			found := make(map[string]resources.Attrs, len(got))
			for id, a := range got {
				rec, ok := g.recs[id]
				if !ok || a == nil {
					continue // not asked for
				}
				// a is ours: Lookup makes the canonical copies.
				for _, f := range omitted {
					if v, ok := rec.Outputs[f]; ok {
						a[f] = v
					} else {
						delete(a, f)
					}
				}
				found[id] = a
			}
			mu.Lock()
			b.found[typ] = found
			mu.Unlock()
		})
	}
	wg.Wait()
	return b
}

// Lookup returns what the bulk read found of the object id of type typ, in
// canonical form and with its "id", as ReadObject returns what Read finds;
// false when it found nothing (the object is to be read with Read).
func (b *Bulk) Lookup(typ, id string) (map[string]any, bool) {
	if b == nil {
		return nil, false
	}
	a, ok := b.found[typ][id]
	if !ok {
		return nil, false
	}
	out := map[string]any(resources.CanonAttrs(a)) // a copy: callers change it
	if _, ok := out["id"]; !ok {
		out["id"] = id
	}
	return out, true
}

// Has reports whether the bulk read found the object id of type typ: it
// exists.
func (b *Bulk) Has(typ, id string) bool {
	if b == nil {
		return false
	}
	_, ok := b.found[typ][id]
	return ok
}

// Len returns how many objects the bulk read found.
func (b *Bulk) Len() int {
	if b == nil {
		return 0
	}
	n := 0
	for _, m := range b.found {
		n += len(m)
	}
	return n
}
