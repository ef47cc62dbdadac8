package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// resourceOp is what every action on a resource needs: the node, its
// change, its driver, its inputs as the specs now give them, and the record
// before and after.
type resourceOp struct {
	r        *specs.Resource
	c        *plan.Change
	d        resources.Driver // nil when none is configured and none is needed
	opts     eval.Options
	prior    state.Record    // the record before the apply
	hasPrior bool            // state held prior
	rec      state.Record    // the record to write: name, type, options
	desired  map[string]any  // the inputs, secrets wrapped
	want     resources.Attrs // the inputs in clear, for the driver
}

func (o *resourceOp) timeout(op string) time.Duration { return o.r.Options.CustomTimeouts[op] }

// runResource carries out the change of a resource.
func (a *applier) runResource(ctx context.Context, r *specs.Resource, c *plan.Change) (err error) {
	o, err := a.prepareResource(ctx, r, c)
	if err != nil {
		return err
	}
	action := c.Action
	if action == plan.Update && c.Reason == plan.ReasonOptionsChanged {
		action = plan.NoOp // nothing changes in the cloud: only the record
		defer func() {
			if err == nil {
				a.count(plan.Update)
			}
		}()
	}
	switch action {
	case plan.NoOp:
		return a.keepResource(ctx, o)
	case plan.Create:
		return a.create(ctx, o, o.rec)
	case plan.Update:
		return a.updateResource(ctx, o)
	case plan.Import:
		return a.importResource(ctx, o)
	case plan.Replace:
		if c.DeleteBeforeReplace || o.opts.DeleteBeforeReplace {
			return a.replaceDeleteFirst(ctx, o)
		}
		return a.replaceCreateFirst(ctx, o)
	}
	return a.fail(r.Name, r.Pos, fmt.Errorf("unexpected action %s", c.Action))
}

// prepareResource evaluates the inputs and options of r now that its
// dependencies are applied, and checks them against what the plan showed.
// Inputs the plan kept are taken as they are.
func (a *applier) prepareResource(ctx context.Context, r *specs.Resource, c *plan.Change) (*resourceOp, error) {
	// The inputs the planner kept, when it kept them, are those the
	// evaluation would give (planner.Options.KeepInputs).
	val, kept, err := c.KeptInputs()
	if !kept {
		val, err = a.evaluator(ctx).Inputs(r)
	}
	if err != nil {
		return nil, a.fail(r.Name, r.Pos, err)
	}
	if a.opts.Consume {
		r.LetInputsGo()
	}
	desired := r.Schema.ApplyDefaults(val)
	a.noteSecrets(r.Name, desired)
	if value.ContainsUnknown(desired) {
		return nil, a.fail(r.Name, r.Pos, fmt.Errorf("inputs of %q are still unknown after their dependencies were applied", r.Name))
	}
	desired = eval.Normalize(a.reg, r.Type, desired)
	// Ignored fields keep the value the plan compared against (the prior or
	// live one, or the imported object's), as the plan shows them.
	switch c.Action {
	case plan.NoOp, plan.Update, plan.Replace, plan.Import:
		for _, po := range r.Options.IgnoreChanges {
			if !value.ContainsUnknown(c.After[po.Top]) {
				eval.ApplyIgnore(po, c.After, desired)
			}
		}
	}
	if err := checkAgainstPlan(r, c, desired, a.sealer(r.Name)); err != nil {
		return nil, a.fail(r.Name, r.Pos, err)
	}
	opts, err := eval.ResourceOptions(r, a.evaluator(ctx))
	if err != nil {
		return nil, a.fail(r.Name, r.Pos, err)
	}
	d, ok := a.reg.Drivers[r.Type]
	if !ok && c.Action != plan.NoOp {
		return nil, a.fail(r.Name, r.Pos, fmt.Errorf("no driver is configured for %s", r.Type))
	}
	prior, hasPrior, err := a.priorRecord(r.Name)
	if err != nil {
		return nil, a.fail(r.Name, r.Pos, err)
	}
	plain, _ := value.Reveal(desired)
	return &resourceOp{
		r: r, c: c, d: d, opts: opts, prior: prior, hasPrior: hasPrior, desired: desired, want: resources.Attrs(plain.(map[string]any)),
		rec: state.Record{Name: r.Name, Type: r.Type, Kind: kind.Resource, Dependencies: a.spec.ResourceDeps(r.Name),
			Protect: opts.Protect, RetainOnDelete: opts.RetainOnDelete, DeleteBeforeReplace: opts.DeleteBeforeReplace},
	}, nil
}

// keepResource records a resource that does not change in the cloud (its
// options may); what earlier replacements left deposed stays recorded, for
// its deposed node to delete.
func (a *applier) keepResource(ctx context.Context, o *resourceOp) error {
	r, before, prior, rec := o.r, o.c.Before, o.prior, o.rec
	// References see the desired inputs, secrets included (state and plan
	// files hold them sealed), with the prior outputs.
	view := eval.UpdatedView(r.Schema, before, o.desired, prior.Inputs)
	rec.ID = prior.ID
	// An input recorded in clear that the specs now mark secret (it was
	// imported before) is sealed from now on.
	rec.Inputs = value.SealLike(prior.Inputs, o.desired, a.sealer(r.Name)).(map[string]any)
	rec.Outputs = eval.Outputs(before, prior.Inputs)
	if names := eval.SecretNotGiven(r, o.desired); len(names) > 0 {
		// State keeps these outputs only as digests, and a plan file
		// too: what references them needs them read again.
		got, err := a.driverRead(ctx, r, prior.ID)
		if err != nil {
			return a.fail(r.Name, r.Pos, fmt.Errorf("read %s %q for its secret outputs: %w", r.Type, prior.ID, err))
		}
		for _, k := range names {
			view[k] = got[k]
			rec.Outputs[k] = value.Seal(value.Wrap(got[k], got[k] != nil), a.sealer(r.Name))
		}
	}
	rec.Outputs = value.Seal(rec.Outputs, a.sealer(r.Name)).(map[string]any)
	a.setValue(r.Name, eval.SecretOutputs(r, view, true))
	rec.Deposed = prior.Deposed
	return a.putOver(r.Name, r.Pos, rec, prior, o.hasPrior)
}

// updateResource updates a resource in place.
func (a *applier) updateResource(ctx context.Context, o *resourceOp) error {
	r, id := o.r, o.prior.ID
	if err := a.checkSize(o, o.rec, value.Seal(o.desired, a.sealer(r.Name)).(map[string]any), o.prior.Outputs, "update"); err != nil {
		return err
	}
	got, err := a.update(ctx, o.c, o.d, id, o.prior.Inputs, o.want, o.timeout("update"))
	if err != nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("update %s %q: %w", r.Type, id, err))
	}
	rec := o.rec
	rec.Deposed = o.prior.Deposed
	return a.record(o, rec, id, got, plan.Update, false)
}

// importResource records the object the plan imports, then updates it
// where it differs from the specs.
func (a *applier) importResource(ctx context.Context, o *resourceOp) error {
	r, c, id := o.r, o.c, o.c.ImportID
	got, err := a.driverRead(ctx, r, id)
	if err != nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("import %s %q: %w", r.Type, id, err))
	}
	live := eval.Inputs(r.Schema, got)
	rec := o.rec
	rec.ID = id
	// What the specs mark secret is sealed from the first version on, be
	// the live value the same or not.
	sl := a.sealer(r.Name)
	rec.Inputs = value.SealLike(live, o.desired, sl).(map[string]any)
	rec.Outputs = value.Seal(value.SealLike(eval.SecretOutputs(r, map[string]any(got), false), o.desired, sl), sl).(map[string]any)
	if _, cut, err := putFitted(a.st, a.st.Put, rec); err != nil || cut != nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", errors.Join(err, cut)))
	}
	a.count(plan.Import)
	if changed := eval.DiffInputs(r.Schema, eval.ManagedInputs(r.Schema, live, o.desired, nil), o.desired, nil, a.sealer(r.Name)); len(changed) > 0 {
		got, err = a.update(ctx, c, o.d, id, live, o.want, o.timeout("update"))
		if err != nil {
			return a.fail(r.Name, r.Pos, fmt.Errorf("update imported %s %q: %w", r.Type, id, err))
		}
	}
	return a.record(o, rec, id, got, -1, false)
}

// replaceDeleteFirst replaces a resource whose old object must be gone
// before the new one can be made (deleteBeforeReplace). What earlier
// replacements left deposed stays recorded, for its deposed node.
func (a *applier) replaceDeleteFirst(ctx context.Context, o *resourceOp) error {
	r, id := o.r, o.prior.ID
	rec := o.rec
	rec.Deposed = o.prior.Deposed
	if id != "" {
		if err := a.deleteObject(ctx, o.c, o.d, id, o.timeout("delete")); err != nil {
			return a.fail(r.Name, r.Pos, fmt.Errorf("delete %s %q before replacing it: %w", r.Type, id, err))
		}
		if err := a.st.Delete(r.Name); err != nil && !errors.Is(err, state.ErrNoRecord) {
			return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", err))
		}
	}
	if err := a.create(ctx, o, rec); err != nil {
		return err
	}
	a.recount(plan.Create, plan.Replace)
	return nil
}

// replaceCreateFirst replaces a resource by creating the new object first
// and recording it with the old one's id kept as deposed. The old object
// is deleted by the resource's deposed node, once what depends on the
// resource has moved to the new one (see scheduleDeposed); until then, and
// after a crash, state names both.
func (a *applier) replaceCreateFirst(ctx context.Context, o *resourceOp) error {
	rec := o.rec
	rec.Deposed = slices.Clone(o.prior.Deposed)
	if o.prior.ID != "" && !slices.Contains(rec.Deposed, o.prior.ID) {
		rec.Deposed = append(rec.Deposed, o.prior.ID)
	}
	if err := a.create(ctx, o, rec); err != nil {
		return err
	}
	a.mu.Lock()
	a.createdFirst[o.r.Name] = true
	a.mu.Unlock()
	return nil
}

// runDeposed deletes the objects that the replacement of addr, in this
// apply or an earlier one, left deposed, now that everything depending on
// addr has finished. A replacement made in this apply counts as one once
// its old object is deleted.
func (a *applier) runDeposed(ctx context.Context, addr string) error {
	r, c := a.spec.Resources[addr], a.changes[addr]
	if err := a.deleteDeposed(ctx, r, c, a.reg.Drivers[r.Type], r.Options.CustomTimeouts["delete"]); err != nil {
		return err
	}
	a.mu.Lock()
	replaced := a.createdFirst[addr]
	a.mu.Unlock()
	if replaced {
		a.recount(plan.Create, plan.Replace)
	}
	return nil
}

// deleteObject deletes object id of c's node. An object that is gone
// already counts as deleted: this is the one delete of the apply.
func (a *applier) deleteObject(ctx context.Context, c *plan.Change, d resources.Driver, id string, timeout time.Duration) error {
	// The events name the object deleted, which may be a deposed one.
	oc := *c
	oc.ID = id
	_, err := a.op.run(ctx, &oc, plan.Delete, timeout, func(ctx context.Context) (string, error) {
		if err := d.Delete(ctx, id); err != nil && !errors.Is(err, resources.ErrNotFound) {
			return id, err
		}
		return id, nil
	})
	return err
}

// deleteDeposed deletes the objects that replacements left in state as
// deposed (see replaceCreateFirst; an earlier apply's, when their delete
// failed or did not happen), and records the ones that still could not be
// deleted.
func (a *applier) deleteDeposed(ctx context.Context, r *specs.Resource, c *plan.Change, d resources.Driver, timeout time.Duration) error {
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
		if err := a.deleteObject(ctx, c, d, old, timeout); err != nil {
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
//
// The intent (node, type, idempotency token, inputs with secrets sealed)
// is written, and synced, before the driver is called, and cleared only
// once the outcome is known: the object recorded, or the API's refusal
// (a 4xx answer, bad inputs) showing that nothing was made. Otherwise (the
// process dies, the apply is cancelled, the API never answered) the intent
// stays, and the next run resolves it before planning (ResolveIntents).
//
// A node whose earlier create is still unresolved (ResolveIntents kept its
// intent: it could not replay a create whose inputs held a secret, or the
// API did not answer) is resolved here first, now that the specs give its
// inputs in clear: when they are the same as the interrupted create's, the
// driver's Recover looks for what that create made, with its token, and
// what it finds is recorded as this create's result; a driver without
// Recover gets the create with the interrupted create's token. With other
// inputs the node is not created at all (see unresolvedError).
func (a *applier) create(ctx context.Context, o *resourceOp, rec state.Record) error {
	r, c, d, want, timeout := o.r, o.c, o.d, o.want, o.timeout("create")
	sealed := value.Seal(o.desired, a.sealer(r.Name)).(map[string]any)
	if err := a.checkSize(o, rec, sealed, nil, "create"); err != nil {
		return err
	}
	token := newToken()
	if in, ok := a.intents[r.Name]; ok {
		if in.Type != r.Type || !value.Same(in.Inputs, sealed) {
			return a.fail(r.Name, r.Pos, unresolvedError(in))
		}
		token = in.Token
		if rv, ok := d.(resources.Recoverer); ok {
			var got resources.Attrs
			id, err := a.op.run(resources.WithIdempotencyToken(ctx, token), c, plan.Create, timeout, func(ctx context.Context) (string, error) {
				id, g, err := rv.Recover(ctx, resources.RecoverRequest{Token: in.Token, Want: want, Time: in.Time})
				got = g
				return id, err
			})
			if id == "" && err != nil {
				return a.fail(r.Name, r.Pos, fmt.Errorf("an earlier create of %s %q, started %s, was interrupted, and what it made cannot be told: %w; not creating it again, which could make a second object",
					r.Type, r.Name, in.Time.UTC().Format(time.RFC3339), err))
			}
			if id != "" {
				return a.finishCreate(ctx, o, rec, token, sealed, id, got, err)
			}
			// It made nothing: create the node anew.
			token = newToken()
		}
	}
	if err := a.st.PutIntent(a.intentOf(r, rec, token, sealed)); err != nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", err))
	}
	var got resources.Attrs
	id, err := a.op.run(resources.WithIdempotencyToken(ctx, token), c, plan.Create, timeout, func(ctx context.Context) (string, error) {
		id, g, err := d.Create(ctx, want)
		got = g
		return id, err
	})
	return a.finishCreate(ctx, o, rec, token, sealed, id, got, err)
}

// finishCreate records the outcome of a create (id, got, err, as the
// driver's Create returns them) made with token and clears its intent when
// the outcome is known.
func (a *applier) finishCreate(ctx context.Context, o *resourceOp, rec state.Record, token string, sealed map[string]any, id string, got resources.Attrs, err error) error {
	r := o.r
	interrupted := err != nil && ctx.Err() != nil
	if err != nil && id == "" && errors.Is(err, state.ErrLockLost) {
		// Not started, or stopped by the lost lock: its intent stays (no
		// state write could clear it now), and the run that holds the
		// lock resolves it, as after a crash.
		return a.fail(r.Name, r.Pos, fmt.Errorf("create %s: %w", r.Type, err))
	}
	if err != nil && id == "" {
		// What the create made is the driver's verdict: a refusal made
		// nothing; anything else leaves it open.
		if errors.Is(err, resources.ErrRefused) && !interrupted {
			_ = a.st.ClearIntent(r.Name)
			var exists *resources.ExistsError
			if errors.As(err, &exists) {
				return a.fail(r.Name, r.Pos, fmt.Errorf("create %s: %w, made outside this state (in the console, or by another stack); reconcile does not take it over by writing on it. "+
					"To manage it, adopt it: set options.import: %s on %q, or run 'reconcile import %s %s --type %s'; otherwise declare another object",
					r.Type, err, exists.ID, r.Name, r.Name, exists.ID, r.Type))
			}
			return a.fail(r.Name, r.Pos, fmt.Errorf("create %s: %w", r.Type, err))
		}
		return a.fail(r.Name, r.Pos, fmt.Errorf("create %s: %w (whether it made an object is not known yet: the next apply finds out with its idempotency token before planning)", r.Type, err))
	}
	// An object was made. Its create failed (it ended unusable: tainted),
	// or how it ended is not known (interrupted, timed out, the API
	// unreachable): the intent then stays, with the object's id, and the
	// next run finds out, as after a crash, instead of replacing an object
	// that may well be healthy.
	unusable := err != nil && errors.Is(err, resources.ErrUnusable) && !interrupted
	unknown := err != nil && !unusable
	if unusable {
		rec.Tainted = err.Error()
	}
	if got == nil {
		got = resources.Attrs{}
	}
	act := plan.Create
	if err != nil {
		act = -1 // failed, tainted or not known: counted as failed only
	}
	// The record and the intent's end are one write when the outcome is
	// known.
	if e := a.record(o, rec, id, got, act, !unknown); e != nil {
		return e
	}
	if unknown {
		intent := a.intentOf(r, rec, token, sealed)
		intent.ID = id
		_ = a.st.PutIntent(intent)
		return a.fail(r.Name, r.Pos, fmt.Errorf("create %s: %w (the object %q is recorded in state; the next apply checks how its create ended)", r.Type, err, id))
	}
	if unusable {
		return a.fail(r.Name, r.Pos, fmt.Errorf("create %s: %w (the object %q stays in state and is replaced on the next apply)", r.Type, err, id))
	}
	return nil
}

// intentOf is the intent of a create of r with token and inputs, to be
// recorded as rec.
func (a *applier) intentOf(r *specs.Resource, rec state.Record, token string, inputs map[string]any) state.Intent {
	return state.Intent{Name: r.Name, Type: r.Type, Token: token, Inputs: inputs, Time: time.Now().UTC(),
		Dependencies: rec.Dependencies, Protect: rec.Protect, RetainOnDelete: rec.RetainOnDelete, DeleteBeforeReplace: rec.DeleteBeforeReplace}
}

// unresolvedError is the failure of a node whose earlier, interrupted
// create could not be resolved and whose inputs changed since, so that
// replaying it with its token is impossible: creating the node again might
// make a second object.
func unresolvedError(in state.Intent) error {
	return fmt.Errorf("an earlier create of %q (%s, started %s, idempotency token %s) was interrupted and could not be resolved, "+
		"and the inputs changed since, so it cannot be replayed; not creating it again, which could make a second object. "+
		"Look for an object the earlier create made; if there is one, adopt it with 'reconcile import %s ID --type %s' "+
		"(or options.import), else run 'reconcile state rm %s' to forget the interrupted create",
		in.Name, in.Type, in.Time.UTC().Format(time.RFC3339), in.Token, in.Name, in.Type, in.Name)
}

// update calls the driver's Update inside an operation.
func (a *applier) update(ctx context.Context, c *plan.Change, d resources.Driver, id string, prior map[string]any, want resources.Attrs, timeout time.Duration) (resources.Attrs, error) {
	var got resources.Attrs
	priorPlain := resources.Attrs(prior)
	_, err := a.op.run(ctx, c, plan.Update, timeout, func(ctx context.Context) (string, error) {
		g, err := d.Update(ctx, id, priorPlain, want)
		got = g
		return id, err
	})
	return got, err
}

// record writes the resource's new state and publishes its value. act is
// counted unless negative.
func (a *applier) record(o *resourceOp, rec state.Record, id string, got resources.Attrs, act plan.Action, clearIntent bool) error {
	r, desired := o.r, o.desired
	attrs := map[string]any(resources.CanonAttrs(got))
	if attrs == nil {
		attrs = map[string]any{}
	}
	attrs["id"] = id
	view := eval.SecretOutputs(r, eval.Merge(attrs, desired), true)
	rec.ID = id
	rec.Inputs = value.Seal(desired, a.sealer(r.Name)).(map[string]any)
	rec.Outputs = eval.Outputs(value.Seal(sealAt(eval.SecretOutputs(r, attrs, false), desired, a.sealer(r.Name)), a.sealer(r.Name)).(map[string]any), desired)
	put := a.st.Put
	if clearIntent {
		put = a.st.PutAndClearIntent
	}
	rec, cut, err := putFitted(a.st, put, rec)
	if err != nil {
		return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", err))
	}
	if err := a.sealPast(rec, o.prior, o.hasPrior); err != nil {
		return a.fail(r.Name, r.Pos, err)
	}
	a.setValue(r.Name, view)
	if cut != nil {
		// Recorded, so that it can be managed and deleted, but not whole.
		return a.fail(r.Name, r.Pos, fmt.Errorf("write state: %w", cut))
	}
	if act >= 0 {
		a.count(act)
	}
	return nil
}

// sealAt seals the values of attrs at the top-level keys where desired holds
// a secret, so that the cloud's echo of a secret input is not stored.
func sealAt(attrs, desired map[string]any, sl value.Sealer) map[string]any {
	out := eval.Merge(attrs)
	for k, v := range desired {
		if value.ContainsSecret(v) {
			out[k] = value.Seal(v, sl)
		}
	}
	return out
}

// checkAgainstPlan refuses to apply values that differ from what the plan
// showed as known.
func checkAgainstPlan(r *specs.Resource, c *plan.Change, desired map[string]any, sl value.Sealer) error {
	if c.After == nil || c.Action == plan.NoOp {
		return nil
	}
	for _, k := range r.Schema.Inputs() {
		planned, ok := c.After[k]
		if !ok || value.ContainsUnknown(planned) {
			continue
		}
		if !value.Equal(nil, desired[k], value.Seal(planned, sl), sl) && !value.Equal(nil, desired[k], planned, sl) {
			return fmt.Errorf("input %q is %s now but %s in the plan: make a new plan", k, value.OneLine(desired[k]), value.OneLine(planned))
		}
	}
	return nil
}
