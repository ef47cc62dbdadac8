package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/schemas"
	"github.com/reconcile-dev/reconcile/state"
)

// Refresh-only plans and their apply: accept the cloud's values into state
// for the nodes that changed (or were deleted) outside reconcile, changing
// nothing in the cloud. After it, Drift reports nothing and a normal plan
// shows the changes that take the cloud back to the specs.

// RefreshOnly carries out a refresh-only plan (Plan.RefreshOnly):
// for each Refresh change it writes what the plan read from the cloud into
// state (a node deleted outside reconcile is removed from state), and
// nothing else. It makes no cloud call. Each node is written in its own
// state transaction; a node whose record changed since the plan was made
// fails and is left as it is. The history records opts.Command.
func RefreshOnly(ctx context.Context, pl *plan.Plan, st state.Backend, opts Options) (*report.Apply, error) {
	if !pl.RefreshOnly {
		return nil, errors.New("not a refresh-only plan")
	}
	key, err := st.SecretKey()
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	res := &report.Apply{Counts: map[plan.Action]int{}}
	emit := func(e report.Event) {
		if opts.Observer != nil {
			opts.Observer(e)
		}
	}
	for i := range pl.Changes {
		c := &pl.Changes[i]
		if c.Action != plan.Refresh {
			continue
		}
		if ctx.Err() != nil {
			res.Skipped = append(res.Skipped, c.Addr)
			continue
		}
		start := time.Now()
		emit(report.Event{Addr: c.Addr, Type: c.Type, Action: plan.Refresh, Phase: report.Started, ID: c.ID, Pos: c.Pos})
		if err := refreshState(st, c, key); err != nil {
			res.Failed = append(res.Failed, report.NodeError{Addr: c.Addr, Pos: c.Pos, Err: err})
			emit(report.Event{Addr: c.Addr, Type: c.Type, Action: plan.Refresh, Phase: report.Failed, ID: c.ID, Message: err.Error(), Elapsed: time.Since(start)})
			continue
		}
		res.Counts[plan.Refresh]++
		emit(report.Event{Addr: c.Addr, Type: c.Type, Action: plan.Refresh, Phase: report.Done, ID: c.ID, Elapsed: time.Since(start)})
	}
	if err := st.AddHistory(state.HistoryEntry{Time: time.Now().UTC(), Command: opts.Command, Counts: applyCounts(res)}); err != nil {
		return res, fmt.Errorf("record history: %w", err)
	}
	return res, nil
}

// refreshState writes one Refresh change into state.
func refreshState(st state.Backend, c *plan.Change, key []byte) error {
	rec, ok, err := st.Get(c.Addr)
	if err != nil {
		return fmt.Errorf("read state: %w", err)
	}
	if !ok || rec.Type != c.Type || rec.Kind != c.Kind || rec.ID != c.ID {
		return fmt.Errorf("%q changed in state since the plan was made; make a new plan", c.Addr)
	}
	if c.After == nil { // gone from the cloud
		if rec.Kind == kind.Resource && len(rec.Deposed) > 0 {
			// Keep the replaced objects still to delete; forget the one
			// that is gone, so that the next apply creates it again.
			rec.ID, rec.Inputs, rec.Outputs, rec.Tainted = "", nil, nil, ""
			_, err := st.Put(rec)
			return writeErr(err)
		}
		if err := st.Delete(c.Addr); err != nil && !errors.Is(err, state.ErrNoRecord) {
			return writeErr(err)
		}
		return nil
	}
	switch rec.Kind {
	case kind.Resource:
		s, ok := schemas.Lookup(rec.Type)
		if !ok {
			return fmt.Errorf("unknown type %s in state", rec.Type)
		}
		inputs, outputs := map[string]any{}, map[string]any{}
		for k, v := range c.After {
			if pr, isProp := s.Root.Properties[k]; isProp && !pr.ReadOnly {
				if _, managed := rec.Inputs[k]; managed {
					inputs[k] = value.Seal(v, value.Sealer{Key: key, Name: c.Addr})
					continue
				}
			}
			outputs[k] = value.Seal(v, value.Sealer{Key: key, Name: c.Addr}) // an input the specs leave to the cloud is kept as an output
		}
		outputs["id"] = rec.ID
		rec.Inputs, rec.Outputs = inputs, outputs
	default:
		rec.Outputs = eval.Merge(c.After)
		if id := str(c.After["id"]); id != "" && rec.Kind == kind.Lookup {
			rec.ID = id
		}
	}
	_, err = st.Put(rec)
	return writeErr(err)
}

func writeErr(err error) error {
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}
