package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"reconcile/resources"
	"reconcile/state"
)

// runResource carries out the planned action of one managed resource.
func (a *applier) runResource(ctx context.Context, r *Resource, c *Change) error {
	val, err := a.evaluator(ctx).eval(r.Properties)
	if err != nil {
		return a.fail(r.Name, r.Pos, err)
	}
	desired := r.Schema.ApplyDefaults(val.(map[string]any))
	if containsUnknown(desired) {
		return a.fail(r.Name, r.Pos, fmt.Errorf("inputs of %q are still unknown after their dependencies were applied", r.Name))
	}
	desired = (&planner{reg: a.reg}).normalize(r.Type, desired)
	// Ignored fields keep the value the plan compared against (the prior or
	// live one, or the imported object's), as the plan shows them.
	switch c.Action {
	case NoOp, Update, Replace, Import:
		for _, po := range r.Options.IgnoreChanges {
			if !containsUnknown(c.After[po.Top]) {
				applyIgnore(po, c.After, desired)
			}
		}
	}
	if err := checkAgainstPlan(r, c, desired); err != nil {
		return a.fail(r.Name, r.Pos, err)
	}
	pl := &planner{spec: a.spec, reg: a.reg, results: map[string]*nodeResult{}}
	opts, err := pl.evalOptionsWith(r, a.evaluator(ctx))
	if err != nil {
		if len(pl.diags) > 0 {
			err = DiagError(pl.diags)
		}
		return a.fail(r.Name, r.Pos, err)
	}
	rec := state.Record{Name: r.Name, Type: r.Type, Kind: KindResource, Dependencies: a.resourceDeps(r.Name),
		Protect: opts.protect, RetainOnDelete: opts.retainOnDelete, DeleteBeforeReplace: opts.deleteBeforeReplace}
	d, ok := a.reg.Drivers[r.Type]
	if !ok && c.Action != NoOp {
		return a.fail(r.Name, r.Pos, fmt.Errorf("no driver is configured for %s", r.Type))
	}
	plain, _ := revealSecrets(desired)
	want := resources.Attrs(plain.(map[string]any))
	prior := a.prior[r.Name]
	timeout := func(op string) time.Duration { return r.Options.CustomTimeouts[op] }

	switch c.Action {
	case NoOp:
		before := c.Before
		// References see the desired inputs, secrets included (state and
		// plan files hold them sealed), with the prior outputs.
		a.setValue(r.Name, updatedView(r.Schema, before, desired, prior.Inputs))
		rec.ID = prior.ID
		rec.Inputs = prior.Inputs
		rec.Outputs = outputsOnly(r, before, prior.Outputs)
		rec.Deposed = prior.Deposed
		if err := a.put(r.Name, r.Pos, rec); err != nil {
			return err
		}
		return a.deleteDeposed(ctx, r, c, d, timeout("delete"))

	case Create:
		return a.create(ctx, r, c, d, rec, desired, want, timeout("create"))

	case Update:
		got, err := a.update(ctx, c, d, prior.ID, prior.Inputs, want, timeout("update"))
		if err != nil {
			return a.fail(r.Name, r.Pos, fmt.Errorf("update %s %q: %w", r.Type, prior.ID, err))
		}
		rec.Deposed = prior.Deposed
		if err := a.record(r, rec, prior.ID, desired, got, Update); err != nil {
			return err
		}
		return a.deleteDeposed(ctx, r, c, d, timeout("delete"))

	case Import:
		got, err := a.driverRead(ctx, r, c.ImportID)
		if err != nil {
			return a.fail(r.Name, r.Pos, fmt.Errorf("import %s %q: %w", r.Type, c.ImportID, err))
		}
		live := inputsOf(r.Schema, got)
		rec.ID = c.ImportID
		rec.Inputs, rec.Outputs = live, got
		if _, err := a.st.Put(rec); err != nil {
			return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", err))
		}
		a.count(Import)
		cc := &Change{Addr: c.Addr}
		if changed := diffInputs(r.Schema, managedInputs(r.Schema, live, desired, nil), desired, nil, cc); len(changed) > 0 {
			got, err = a.update(ctx, c, d, c.ImportID, live, want, timeout("update"))
			if err != nil {
				return a.fail(r.Name, r.Pos, fmt.Errorf("update imported %s %q: %w", r.Type, c.ImportID, err))
			}
		}
		return a.record(r, rec, c.ImportID, desired, got, -1)

	case Replace:
		if c.DeleteBeforeReplace || opts.deleteBeforeReplace {
			if prior.ID != "" && prior.Tainted == "" || prior.ID != "" {
				if _, err := a.operation(ctx, c, Delete, timeout("delete"), func(ctx context.Context) (string, error) {
					err := d.Delete(ctx, prior.ID)
					if errors.Is(err, resources.ErrNotFound) {
						err = nil
					}
					return prior.ID, err
				}); err != nil {
					return a.fail(r.Name, r.Pos, fmt.Errorf("delete %s %q before replacing it: %w", r.Type, prior.ID, err))
				}
				if err := a.st.Delete(r.Name); err != nil && !errors.Is(err, state.ErrNoRecord) {
					return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", err))
				}
			}
			if err := a.create(ctx, r, c, d, rec, desired, want, timeout("create")); err != nil {
				return err
			}
			a.mu.Lock()
			a.counts[Create]--
			a.counts[Replace]++
			a.mu.Unlock()
			return nil
		}
		// Create the new object first; keep the old id as deposed until its
		// delete succeeds, so that a crash in between loses neither.
		rec.Deposed = append(append([]string(nil), prior.Deposed...), prior.ID)
		if err := a.create(ctx, r, c, d, rec, desired, want, timeout("create")); err != nil {
			return err
		}
		a.mu.Lock()
		a.counts[Create]--
		a.mu.Unlock()
		cur, _, _ := a.st.Get(r.Name)
		var remaining []string
		for _, old := range cur.Deposed {
			_, err := a.operation(ctx, c, Delete, timeout("delete"), func(ctx context.Context) (string, error) {
				err := d.Delete(ctx, old)
				if errors.Is(err, resources.ErrNotFound) {
					err = nil
				}
				return old, err
			})
			if err != nil {
				remaining = append(remaining, old)
				a.fail(r.Name, r.Pos, fmt.Errorf("delete replaced %s %q: %w (it stays in state and is deleted on the next apply)", r.Type, old, err))
			}
		}
		cur.Deposed = remaining
		if _, err := a.st.Put(cur); err != nil {
			return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", err))
		}
		if len(remaining) > 0 {
			return errors.New("replace incomplete")
		}
		a.count(Replace)
		return nil
	}
	return a.fail(r.Name, r.Pos, fmt.Errorf("unexpected action %s", c.Action))
}

// deleteDeposed deletes the objects that an earlier replacement left in
// state as deposed because their delete failed, and records the ones that
// still could not be deleted.
func (a *applier) deleteDeposed(ctx context.Context, r *Resource, c *Change, d resources.Driver, timeout time.Duration) error {
	cur, ok, err := a.st.Get(r.Name)
	if err != nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("read state: %w", err))
	}
	if !ok || len(cur.Deposed) == 0 {
		return nil
	}
	if d == nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("no driver is configured for %s", r.Type))
	}
	var remaining []string
	var firstErr error
	for _, old := range cur.Deposed {
		_, err := a.operation(ctx, c, Delete, timeout, func(ctx context.Context) (string, error) {
			err := d.Delete(ctx, old)
			if errors.Is(err, resources.ErrNotFound) {
				err = nil
			}
			return old, err
		})
		if err != nil {
			remaining = append(remaining, old)
			firstErr = a.fail(r.Name, r.Pos, fmt.Errorf("delete replaced %s %q: %w (it stays in state and is deleted on the next apply)", r.Type, old, err))
		}
	}
	cur.Deposed = remaining
	if _, err := a.st.Put(cur); err != nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", err))
	}
	return firstErr
}

// create records the intent, calls the driver and records the result.
func (a *applier) create(ctx context.Context, r *Resource, c *Change, d resources.Driver, rec state.Record, desired map[string]any, want resources.Attrs, timeout time.Duration) error {
	token := newToken()
	if err := a.st.PutIntent(state.Intent{Name: r.Name, Type: r.Type, Token: token, Inputs: seal(desired, r.Name).(map[string]any), Time: time.Now().UTC()}); err != nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", err))
	}
	var got resources.Attrs
	id, err := a.operation(resources.WithIdempotencyToken(ctx, token), c, Create, timeout, func(ctx context.Context) (string, error) {
		id, g, err := d.Create(ctx, want)
		got = g
		return id, err
	})
	if err != nil && id == "" {
		_ = a.st.ClearIntent(r.Name)
		if len(rec.Deposed) > 0 {
			// keep the old object recorded
			return a.fail(r.Name, r.Pos, fmt.Errorf("create %s: %w", r.Type, err))
		}
		return a.fail(r.Name, r.Pos, fmt.Errorf("create %s: %w", r.Type, err))
	}
	if err != nil {
		rec.Tainted = err.Error()
	}
	if got == nil {
		got = resources.Attrs{}
	}
	if e := a.record(r, rec, id, desired, got, Create); e != nil {
		return e
	}
	_ = a.st.ClearIntent(r.Name)
	if err != nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("create %s: %w (the object %q stays in state and is replaced on the next apply)", r.Type, err, id))
	}
	return nil
}

// update calls the driver's Update inside an operation.
func (a *applier) update(ctx context.Context, c *Change, d resources.Driver, id string, prior map[string]any, want resources.Attrs, timeout time.Duration) (resources.Attrs, error) {
	var got resources.Attrs
	priorPlain := resources.Attrs(prior)
	_, err := a.operation(ctx, c, Update, timeout, func(ctx context.Context) (string, error) {
		g, err := d.Update(ctx, id, priorPlain, want)
		got = g
		return id, err
	})
	return got, err
}

// record writes the resource's new state and publishes its value. act is
// counted unless negative.
func (a *applier) record(r *Resource, rec state.Record, id string, desired map[string]any, got resources.Attrs, act Action) error {
	attrs := map[string]any(resources.CanonAttrs(got))
	if attrs == nil {
		attrs = map[string]any{}
	}
	attrs["id"] = id
	view := mergeAttrs(attrs, desired)
	rec.ID = id
	rec.Inputs = seal(desired, r.Name).(map[string]any)
	rec.Outputs = outputsOnly(r, sealAt(attrs, desired, r.Name), nil)
	if _, err := a.st.Put(rec); err != nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", err))
	}
	a.setValue(r.Name, view)
	if act >= 0 {
		a.count(act)
	}
	return nil
}

// sealAt seals the values of attrs at the top-level keys where desired holds
// a secret, so that the cloud's echo of a secret input is not stored.
func sealAt(attrs, desired map[string]any, salt string) map[string]any {
	out := mergeAttrs(attrs)
	for k, v := range desired {
		if containsSecret(v) {
			out[k] = seal(v, salt)
		}
	}
	return out
}

// outputsOnly keeps the attributes that are not inputs, plus the id.
func outputsOnly(r *Resource, attrs map[string]any, fallback map[string]any) map[string]any {
	if attrs == nil {
		return fallback
	}
	out := map[string]any{}
	for k, v := range attrs {
		if pr, ok := r.Schema.Root.Properties[k]; ok && !pr.ReadOnly {
			continue
		}
		out[k] = v
	}
	return out
}

// checkAgainstPlan refuses to apply values that differ from what the plan
// showed as known.
func checkAgainstPlan(r *Resource, c *Change, desired map[string]any) error {
	if c.After == nil || c.Action == NoOp {
		return nil
	}
	for _, k := range r.Schema.Inputs() {
		planned, ok := c.After[k]
		if !ok || containsUnknown(planned) {
			continue
		}
		if !valuesEqual(nil, desired[k], seal(planned, c.Addr), c.Addr) && !valuesEqual(nil, desired[k], planned, c.Addr) {
			return fmt.Errorf("input %q is %s now but %s in the plan: make a new plan", k, render1(desired[k]), render1(planned))
		}
	}
	return nil
}
