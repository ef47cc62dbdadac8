package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// limited is a state whose records may be no larger than limit bytes, as
// if on a backend that small.
type limited struct {
	*state.Store
	limit int
}

func (l limited) RecordLimit() state.RecordLimit {
	return state.RecordLimit{Bytes: l.limit, Why: "the test says so"}
}

// openLimited opens h's state as a writer whose records may be no larger
// than limit, closed at the end of the test.
func (h *harness) openLimited(limit int) limited {
	h.t.Helper()
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { st.Close() })
	return limited{st, limit}
}

// bigOutputs is a driver whose objects have a large output the specs do
// not set: what state would keep of them grows past what a create's
// inputs let the apply foresee.
type bigOutputs struct{ *fakeCloud }

func (b bigOutputs) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	id, got, err := b.fakeCloud.Create(ctx, want)
	if got != nil {
		got["lifecycleDetails"] = strings.Repeat("z", 8000)
	}
	return id, got, err
}

// TestRecordTooLarge: a create whose record the state could not write is
// refused by the plan, and, when the plan let it through (made against a
// state that took it), by the apply before anything is sent to the cloud.
// An object whose record, once made, does not fit (its outputs grew it) is
// recorded without its outputs rather than not at all, so that a destroy
// deletes it.
func TestRecordTooLarge(t *testing.T) {
	big := resourcesOf(endpoint("big", "big", "freeformTags: {note: "+strings.Repeat("y", 5000)+"}"))

	t.Run("plan", func(t *testing.T) {
		h := newHarness(t)
		st := h.openLimited(4000)
		_, diags := planner.Plan(t.Context(), h.load(big), st, h.reg, planner.Options{})
		if !diags.HasErrors() || !strings.Contains(diagText(diags), `"big" cannot be recorded in state`) || !strings.Contains(diagText(diags), "the test says so") {
			t.Errorf("plan of a create too large to record = %s, want it refused, naming it and the limit", diagText(diags))
		}
	})

	t.Run("apply", func(t *testing.T) {
		h := newHarness(t)
		spec := h.load(big)
		st := h.openLimited(1 << 20)
		p, diags := planner.Plan(t.Context(), spec, st, h.reg, planner.Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Err())
		}
		res, err := apply.Apply(t.Context(), p, spec, limited{st.Store, 4000}, h.reg, apply.Options{Command: "apply"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failed) != 1 || !errors.Is(res.Failed[0].Err, state.ErrTooLarge) || !strings.Contains(res.Failed[0].Err.Error(), "not sent to the cloud") {
			t.Errorf("apply of a create too large to record: failed %+v, want big refused before the create", res.Failed)
		}
		if calls := h.cloud.callLog(); len(calls) > 0 {
			t.Errorf("the apply called the cloud: %v", calls)
		}
		if ins, _ := st.Intents(); len(ins) > 0 {
			t.Errorf("the refused create left intents: %+v", ins)
		}
	})

	t.Run("made", func(t *testing.T) {
		{
			const limit = 7000
			h := newHarness(t)
			h.reg.Drivers[endpointToken] = bigOutputs{h.cloud}
			src := resourcesOf(endpoint("big", "big", "freeformTags: {note: "+strings.Repeat("y", 500)+"}"))
			spec := h.load(src)
			st := h.openLimited(limit)
			p, diags := planner.Plan(t.Context(), spec, st, h.reg, planner.Options{})
			if diags.HasErrors() {
				t.Fatal(diags.Err())
			}
			res, err := apply.Apply(t.Context(), p, spec, st, h.reg, apply.Options{Command: "apply"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Failed) != 1 || !errors.Is(res.Failed[0].Err, state.ErrTooLarge) {
				t.Errorf("apply of a create whose result is too large to record: failed %+v, want big failed, too large", res.Failed)
			}
			ids := h.cloud.ids()
			r, ok, err := st.Get("big")
			if err != nil || !ok || len(ids) != 1 || r.ID != ids[0] {
				t.Fatalf("state records %+v, %v, %v; the cloud holds %v: want the object recorded", r, ok, err, ids)
			}
			if ins, _ := st.Intents(); len(ins) > 0 {
				t.Errorf("the create left intents: %+v", ins)
			}
			if _, ok := r.Outputs["lifecycleDetails"]; ok {
				t.Errorf("the record kept the output that does not fit")
			}
			if r.Inputs == nil || r.Tainted != "" {
				t.Errorf("record %+v: want its inputs kept, untainted", r)
			}
			// The next apply does not fail on it again: with refresh, the
			// object is as the specs want it.
			p2, diags := planner.Plan(t.Context(), spec, st, h.reg, planner.Options{Refresh: true})
			if diags.HasErrors() {
				t.Fatal(diags.Err())
			}
			if res, err := apply.Apply(t.Context(), p2, spec, st, h.reg, apply.Options{Command: "apply"}); err != nil || res.Err() != nil {
				t.Errorf("the apply after: %v, %v (%+v)", err, res.Err(), res.Failed)
			}
			if ids := h.cloud.ids(); len(ids) != 1 {
				t.Errorf("after the apply after, the cloud holds %v, want the one object", ids)
			}
			// A destroy deletes it.
			dp, diags := planner.Plan(t.Context(), spec, st, h.reg, planner.Options{Destroy: true})
			if diags.HasErrors() {
				t.Fatal(diags.Err())
			}
			if res, err := apply.Apply(t.Context(), dp, spec, st, h.reg, apply.Options{Command: "destroy"}); err != nil || res.Err() != nil {
				t.Fatalf("destroy: %v, %v", err, res.Err())
			}
			if ids := h.cloud.ids(); len(ids) != 0 {
				t.Errorf("after the destroy the cloud holds %v", ids)
			}
		}
	})
}
