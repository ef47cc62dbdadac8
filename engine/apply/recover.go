package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/reconcile-dev/reconcile/engine/dag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
	"github.com/reconcile-dev/reconcile/state"
)

// intentCounts is what history records of resolved intents.
func intentCounts(r *report.Intents) state.Counts {
	return state.Counts{
		Adopted: r.Count(report.IntentAdopted), Recorded: r.Count(report.IntentRecorded), Cleared: r.Count(report.IntentCleared),
		Superseded: r.Count(report.IntentSuperseded), Kept: r.Count(report.IntentKept),
	}
}

// ResolveOptions control ResolveIntents.
type ResolveOptions struct {
	// Parallelism bounds concurrent lookups; 0 means 10.
	Parallelism int
	// Observer receives progress events (Action Create, Phase Running)
	// while a lookup waits, for example for the object's create to end.
	Observer func(report.Event)
	// ProgressInterval is how often a running lookup reports; 0 means 10 s.
	ProgressInterval time.Duration
	// LandingWindow is how long a request sent by the run that died may
	// still take to land; 0 means DefaultLandingWindow.
	LandingWindow time.Duration
}

// DefaultLandingWindow is how long after the run that died a request it
// sent may still land: an API may have received the create before the
// process died and make the object a moment later. A lookup that finds
// nothing sooner after resolution starts looks again once the window has
// passed, before the create is said to have made nothing.
const DefaultLandingWindow = 2 * time.Second

// ResolveIntents resolves the creates that an earlier run started but did
// not see to their end (the process was killed, or stopped before the
// answer came): for each intent left in st, the driver's Recoverer looks
// for what the create made, by its idempotency token or by a marker the
// create sets (see resources.Recoverer), and:
//   - an object found is adopted into state as the create would have
//     recorded it: the intent's inputs, outputs from the object, its
//     dependencies and options (tainted if it is not usable; an object it
//     replaced stays recorded as deposed and is deleted by the next apply);
//   - when the create made nothing, the intent is cleared and the next plan
//     creates the node;
//   - when the node was recorded after the create started, the intent is
//     stale and cleared;
//   - otherwise (no Recoverer, a secret input a replay would need, an API
//     error) the intent is kept and the report says why: the next apply
//     then creates the node only by replaying that create, with its token,
//     if its inputs are unchanged.
//
// Apply, destroy and import run it before anything else; plans and drift,
// which only read state, report the intents left (see PendingIntents).
func ResolveIntents(ctx context.Context, st state.Backend, reg resources.Registry, opts ResolveOptions) (*report.Intents, error) {
	rep := &report.Intents{}
	ins, err := st.Intents()
	if err != nil {
		return rep, fmt.Errorf("read state: %w", err)
	}
	if len(ins) == 0 {
		return rep, nil
	}
	if st.ReadOnly() {
		return rep, fmt.Errorf("resolve interrupted creates: %w", state.ErrReadOnly)
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = 10
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = 10 * time.Second
	}
	if opts.LandingWindow <= 0 {
		opts.LandingWindow = DefaultLandingWindow
	}
	// The run that made the intents has ended (its lock is this run's
	// now): what it sent lands by the end of the window from here.
	settled := time.Now().Add(opts.LandingWindow)
	byName := map[string]state.Intent{}
	var names []string
	for _, in := range ins {
		byName[in.Name] = in
		names = append(names, in.Name)
	}
	var mu sync.Mutex
	var writeErr error
	dag.Walk(ctx, names, nil, opts.Parallelism, func(ctx context.Context, name string) error {
		r, err := resolveIntent(ctx, st, reg, byName[name], opts, settled)
		mu.Lock()
		defer mu.Unlock()
		rep.Intents = append(rep.Intents, r)
		if err != nil && writeErr == nil {
			writeErr = err
		}
		return nil
	})
	sort.Slice(rep.Intents, func(i, j int) bool { return rep.Intents[i].Name < rep.Intents[j].Name })
	if n := len(rep.Intents) - rep.Count(report.IntentKept); n > 0 {
		if err := st.AddHistory(state.HistoryEntry{Time: time.Now().UTC(), Command: "resolve interrupted creates", Counts: intentCounts(rep)}); err != nil && writeErr == nil {
			writeErr = fmt.Errorf("record history: %w", err)
		}
	}
	return rep, writeErr
}

// PendingIntents returns the creates an earlier run left unresolved, for a
// command that only reads state to report them.
func PendingIntents(st state.Backend) ([]state.Intent, error) {
	ins, err := st.Intents()
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	return ins, nil
}

// resolveIntent resolves one intent. The error is a failure to write
// state; the lookup's own failure is in the result.
func resolveIntent(ctx context.Context, st state.Backend, reg resources.Registry, in state.Intent, opts ResolveOptions, settled time.Time) (report.ResolvedIntent, error) {
	res := report.ResolvedIntent{Name: in.Name, Type: in.Type, Time: in.Time}
	keep := func(err error) (report.ResolvedIntent, error) {
		res.Outcome, res.Err = report.IntentKept, err
		return res, nil
	}
	rec, hasRec, err := st.Get(in.Name)
	if err != nil {
		return keep(err)
	}
	clear := func(outcome report.IntentOutcome) (report.ResolvedIntent, error) {
		res.Outcome = outcome
		if err := st.ClearIntent(in.Name); err != nil {
			return res, fmt.Errorf("write state: %w", err)
		}
		return res, nil
	}
	// A node recorded with another object after the create started was
	// imported or created since: what the create made, if anything, is not
	// the node's. (The create itself records its object before clearing the
	// intent; an interrupted one that knew the object's id put it in the
	// intent.)
	if hasRec && rec.Kind == kind.Resource && rec.ID != "" && rec.ID != in.ID && rec.UpdatedAt.After(in.Time) {
		res.ID = rec.ID
		return clear(report.IntentSuperseded)
	}
	s, ok := schemas.Lookup(in.Type)
	if !ok {
		return keep(fmt.Errorf("unknown type %q", in.Type))
	}
	d, ok := reg.Drivers[s.Token]
	if !ok {
		return keep(fmt.Errorf("no driver is configured for %s", s.Token))
	}
	rv, ok := d.(resources.Recoverer)
	if !ok {
		return keep(fmt.Errorf("the %s driver cannot look up what an interrupted create made", s.Token))
	}
	want, hidden := recoverInputs(in.Inputs)
	req := resources.RecoverRequest{Token: in.Token, Want: want, Hidden: hidden, Time: in.Time}
	c := &plan.Change{Addr: in.Name, Type: in.Type}
	emit := func(report.Event) {}
	if opts.Observer != nil {
		emit = opts.Observer
	}
	op := &operator{st: st, emit: emit, interval: opts.ProgressInterval}
	var got resources.Attrs
	id, err := op.run(resources.WithIdempotencyToken(ctx, in.Token), c, plan.Create, 0, func(ctx context.Context) (string, error) {
		id, g, err := rv.Recover(ctx, req)
		if wait := time.Until(settled); id == "" && err == nil && wait > 0 {
			// Nothing yet: look again once what the run that died sent
			// has surely landed.
			resources.Progress(ctx, "nothing found yet; looking again in %s, once a request the interrupted run sent has surely landed", wait.Round(100*time.Millisecond))
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return "", ctx.Err()
			}
			id, g, err = rv.Recover(ctx, req)
		}
		got = g
		return id, err
	})
	switch {
	case id == "" && err == nil:
		return clear(report.IntentCleared)
	case id == "":
		return keep(err)
	case err != nil && (ctx.Err() != nil || !errors.Is(err, resources.ErrUnusable)):
		// The object exists, but how its create ends is still not known
		// (cancelled, timed out, the API unreachable): record the object,
		// keep the intent to check again how it ended.
		res.ID = id
		if _, _, werr := putFitted(st, st.Put, adoptedRecord(s, in, rec, hasRec, id, got, "")); werr != nil {
			return res, fmt.Errorf("write state: %w", werr)
		}
		in.ID = id
		if werr := st.PutIntent(in); werr != nil {
			return res, fmt.Errorf("write state: %w", werr)
		}
		return keep(err)
	}
	res.ID = id
	if err != nil {
		res.Tainted = err.Error()
	}
	// An object state cannot record whole is recorded smaller (see
	// fitRecord): by its id, at least, so that apply can replace it and
	// destroy delete it.
	adopted, _, werr := putFitted(st, st.Put, adoptedRecord(s, in, rec, hasRec, id, got, res.Tainted))
	if werr != nil {
		return res, fmt.Errorf("write state: %w", werr)
	}
	res.Tainted = adopted.Tainted
	if hasRec && rec.ID == id {
		return clear(report.IntentRecorded)
	}
	return clear(report.IntentAdopted)
}

// adoptedRecord is the record of the object id that the create of in made:
// the intent's inputs (secrets sealed), outputs from the object, the
// dependencies and options the create would have recorded. When the node
// is in state with another object (a replacement creating the new object
// first), that object is kept as deposed, for the next apply to delete.
func adoptedRecord(s *schemas.Schema, in state.Intent, prior state.Record, hasPrior bool, id string, got resources.Attrs, tainted string) state.Record {
	out := map[string]any{}
	for k, v := range resources.CanonAttrs(got) {
		if _, isInput := in.Inputs[k]; isInput {
			continue // an input: the intent's value is recorded
		}
		out[k] = v
	}
	out["id"] = id
	rec := state.Record{Name: in.Name, Type: s.Token, Kind: kind.Resource, ID: id, Inputs: in.Inputs, Outputs: out,
		Dependencies: in.Dependencies, Protect: in.Protect, RetainOnDelete: in.RetainOnDelete,
		DeleteBeforeReplace: in.DeleteBeforeReplace, Tainted: tainted}
	if hasPrior && prior.Kind == kind.Resource {
		rec.Deposed = append(rec.Deposed, prior.Deposed...)
		if prior.ID != "" && prior.ID != id && !slices.Contains(rec.Deposed, prior.ID) {
			rec.Deposed = append(rec.Deposed, prior.ID)
		}
	}
	return rec
}

// recoverInputs splits an intent's inputs into the plain ones and the
// names of the top-level ones that hold a sealed secret.
func recoverInputs(inputs map[string]any) (resources.Attrs, []string) {
	want := resources.Attrs{}
	var hidden []string
	for k, v := range inputs {
		if value.ContainsSealed(v) {
			hidden = append(hidden, k)
			continue
		}
		want[k] = v
	}
	sort.Strings(hidden)
	return want, hidden
}
