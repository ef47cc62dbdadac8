package apply

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reconcile-dev/reconcile/engine/dag"
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/outputs"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/refresh"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// Options control Apply.
type Options struct {
	// Parallelism bounds concurrent driver calls; 0 means 10.
	Parallelism int
	// Observer receives progress events; it must be safe for concurrent use.
	Observer func(report.Event)
	// ProgressInterval is how often a running operation reports that it is
	// still running; 0 means 10 s.
	ProgressInterval time.Duration
	// Command is recorded in the state history ("apply", "destroy").
	Command string
	// Stop, once closed, makes Apply start no new operation, while the
	// operations already running go on to their end (cancel ctx to abandon
	// them too); the result lists what was left undone. Nil means the stop
	// channel of the StopControl in ctx, if there is one (see
	// WithStopControl), else never.
	Stop <-chan struct{}
	// Consume lets Apply drop the planned values (Before, After) of each
	// resource change once it is carried out, and each resource's inputs
	// expression once evaluated (specs.Resource.Properties), for a caller
	// done with the plan and the specs: on a large apply they are much of
	// its memory.
	Consume bool
	// Records, when not nil, are the state's records as the caller listed
	// them (state.ListLazy), holding the state's lock since: Apply starts
	// from them rather than listing them again. Listing maps much of a
	// state file, its pages let go once read: a caller that lists before
	// it plans does so while little else is in memory. The planner lets
	// the values of those it planned go (planner.Options.Records), unless
	// told to keep them: Apply reads those of the nodes it runs again, one
	// by one.
	Records []state.LazyRecord
}

// applyCounts is what history records of an apply's result.
func applyCounts(r *report.Apply) state.Counts {
	return state.Counts{
		Create: r.Counts[plan.Create], Update: r.Counts[plan.Update], Replace: r.Counts[plan.Replace], Delete: r.Counts[plan.Delete],
		Read: r.Counts[plan.Read], Import: r.Counts[plan.Import], Forget: r.Counts[plan.Forget], Refresh: r.Counts[plan.Refresh],
		Failed: len(r.Failed), Skipped: len(r.Skipped), Interrupted: len(r.Interrupted), NotStarted: len(r.NotStarted),
	}
}

// Apply adds nodes of its own to the spec's graph, named with a prefix no
// spec name can have: one per resource that goes (deletePrefix), and one
// per resource whose replaced objects are to be deleted once what depends
// on it has moved to the new object (deposedPrefix).
const (
	deletePrefix  = "\x00delete:"
	deposedPrefix = "\x00deposed:"
)

type applier struct {
	spec    *specs.Spec
	st      state.Backend
	reg     resources.Registry
	opts    Options
	changes map[string]*plan.Change
	// prior is state's records as the apply started, by name: their heads
	// decoded, their values only as a node needs them (priorRecord), so
	// that a large apply holds a fraction of what they decode to.
	prior map[string]*state.LazyRecord
	// intents are the creates an earlier run left unresolved, by node.
	intents map[string]state.Intent
	sc      *StopControl // nil without one in ctx
	op      *operator
	// deposed lists the resources that have a deposed node, in schedule
	// order.
	deposed []string

	mu     sync.Mutex
	values map[string]any
	// readers lets a node's value go once no scheduled node left reads
	// it, unless an output does (see done).
	readers *dag.Readers
	counts  map[plan.Action]int
	failed  []report.NodeError
	redact  map[string]*value.Redaction // by node: the secrets of its inputs
	key     []byte                      // the state's key for digests of secrets
	// createdFirst are the resources replaced by creating the new object
	// first: counted as created until their deposed node deletes the old
	// one, then as replaced.
	createdFirst map[string]bool
}

// sealer seals the secrets of the node name.
func (a *applier) sealer(name string) value.Sealer { return value.Sealer{Key: a.key, Name: name} }

func (a *applier) lookup(name string) (any, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.values[name]
	return v, ok
}

func (a *applier) setValue(name string, v any) {
	a.mu.Lock()
	a.values[name] = v
	a.mu.Unlock()
}

// countReaders counts the readers of each node's value among nodes, and
// keeps the values the spec's outputs read.
func (a *applier) countReaders(nodes []string, deps map[string][]string) {
	a.readers = dag.CountReaders(nodes, deps, a.spec.OutputsDeps())
}

// done notes that node, which depended on deps, has finished, and lets go
// of the values no node left to run reads: node's own when nothing reads
// it, and those of deps it was the last to read.
func (a *applier) done(node string, deps []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.readers.Done(node, deps, func(name string) { delete(a.values, name) })
}

func (a *applier) count(act plan.Action) {
	a.mu.Lock()
	a.counts[act]++
	a.mu.Unlock()
}

// recount moves one completed operation from one action's count to
// another's (NoOp: to none), as when a create turns out to be part of a
// replacement.
func (a *applier) recount(from, to plan.Action) {
	a.mu.Lock()
	a.counts[from]--
	if to != plan.NoOp {
		a.counts[to]++
	}
	a.mu.Unlock()
}

func (a *applier) emit(e report.Event) {
	e.Message = a.redaction(e.Addr).String(e.Message)
	if a.opts.Observer != nil {
		a.opts.Observer(e)
	}
}

// Apply carries out a plan made from spec against the state in st. Nodes
// run in dependency order, independent branches in parallel; state is
// written after every operation. A failed node stops only its dependents.
// The returned error is for problems that prevent applying at all; failures
// of single nodes are in the result.
func Apply(ctx context.Context, pl *plan.Plan, spec *specs.Spec, st state.Backend, reg resources.Registry, opts Options) (*report.Apply, error) {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 10
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = 10 * time.Second
	}
	a, records, err := newApplier(ctx, spec, pl, st, reg, opts)
	if err != nil {
		return nil, err
	}
	stop := opts.Stop
	if a.sc != nil {
		a.sc.applying.Add(1)
		defer a.sc.applying.Add(-1)
		if stop == nil {
			stop = a.sc.ch
		}
	}
	nodes, deps := a.schedule(pl)
	a.countReaders(nodes, deps)
	errs := dag.WalkStop(ctx, stop, nodes, deps, opts.Parallelism, func(ctx context.Context, name string) error {
		defer a.done(name, deps[name])
		return a.run(ctx, name)
	})
	res := a.result(ctx, errs, stop)
	if pl.Destroy && len(pl.Targets) == 0 && res.Complete() {
		// Every managed resource is gone: what lookups and gets read is
		// no longer anybody's input.
		for _, l := range records {
			if rec := l.Head; rec.Kind == kind.Lookup || rec.Kind == kind.Get {
				if err := st.Delete(rec.Name); err != nil && !errors.Is(err, state.ErrNoRecord) {
					return res, fmt.Errorf("write state: %w", err)
				}
			}
		}
	}
	if !pl.Destroy && res.Complete() {
		// A targeted apply has the values of what it planned only: the
		// outputs that need more do not evaluate, and keep what state
		// recorded of them.
		ev := &eval.Evaluator{Spec: spec, Env: eval.EnvFunc(a.lookup)}
		res.Outputs = map[string]any{}
		for _, name := range slices.Sorted(maps.Keys(spec.Outputs)) {
			if v, err := ev.Eval(spec.Outputs[name].Expr); err == nil {
				res.Outputs[name] = v
			}
		}
	}
	// A complete destroy leaves no outputs; a targeted one leaves them be.
	if res.Complete() && !(pl.Destroy && len(pl.Targets) > 0) {
		if err := outputs.Record(st, a.key, spec, res.Outputs, len(pl.Targets) > 0, opts.Command); err != nil {
			return res, fmt.Errorf("record outputs: %w", err)
		}
	}
	if err := st.AddHistory(state.HistoryEntry{Time: time.Now().UTC(), Command: opts.Command, Counts: applyCounts(res)}); err != nil {
		return res, fmt.Errorf("record history: %w", err)
	}
	return res, nil
}

// newApplier reads what an apply starts from: the records and intents of
// st, and its key.
func newApplier(ctx context.Context, spec *specs.Spec, pl *plan.Plan, st state.Backend, reg resources.Registry, opts Options) (*applier, []state.LazyRecord, error) {
	records := opts.Records
	if records == nil {
		var err error
		if records, err = readRecords(st, spec, pl); err != nil {
			return nil, nil, fmt.Errorf("read state: %w", err)
		}
	}
	intents, err := st.Intents()
	if err != nil {
		return nil, nil, fmt.Errorf("read state: %w", err)
	}
	key, err := st.SecretKey()
	if err != nil {
		return nil, nil, fmt.Errorf("read state: %w", err)
	}
	a := &applier{key: key, spec: spec, st: st, reg: reg, opts: opts, changes: map[string]*plan.Change{}, prior: make(map[string]*state.LazyRecord, len(records)),
		intents: map[string]state.Intent{}, values: map[string]any{}, counts: map[plan.Action]int{}, redact: map[string]*value.Redaction{},
		createdFirst: map[string]bool{}, sc: StopControlOf(ctx)}
	a.op = &operator{st: st, emit: a.emit, interval: opts.ProgressInterval, sc: a.sc}
	for i := range records {
		a.prior[records[i].Head.Name] = &records[i]
	}
	for _, in := range intents {
		a.intents[in.Name] = in
	}
	return a, records, nil
}

// Hints returns what a saved plan tells its apply so that the apply's
// work is in proportion to the changes, not to the specs: the nodes it
// runs (see Needed), and the lines of the specs it may load without, the
// entries of the other resources (specs.Spec.Cuts). Both are nil when it
// runs every node.
func Hints(spec *specs.Spec, pl *plan.Plan) ([]string, []plan.FileCuts) {
	if pl.Destroy || pl.RefreshOnly {
		return nil, nil
	}
	needed := Needed(spec, pl)
	if len(needed) == len(spec.Graph().Order()) {
		return nil, nil
	}
	var cuts []plan.FileCuts
	for _, fc := range spec.Cuts(func(name string) bool { return needed[name] }) {
		cuts = append(cuts, plan.FileCuts(fc))
	}
	return slices.Sorted(maps.Keys(needed)), cuts
}

// Skip returns the cuts of a plan file as specs.LoadOptions.Skip takes
// them.
func Skip(cuts []plan.FileCuts) []specs.FileCuts {
	var out []specs.FileCuts
	for _, pc := range cuts {
		out = append(out, specs.FileCuts(pc))
	}
	return out
}

// maxGets is the most records an apply reads one by one rather than
// listing them all.
const maxGets = 256

// readRecords reads the records an apply of pl may read: of a Partial
// spec (which holds only what the apply runs), those of its nodes and of
// the plan's other changes, one by one when they are few; else all.
func readRecords(st state.Backend, spec *specs.Spec, pl *plan.Plan) ([]state.LazyRecord, error) {
	if !spec.Partial || pl.Destroy {
		return state.ListLazy(st)
	}
	names := slices.Clone(spec.Graph().Order())
	for i := range pl.Changes {
		if c := &pl.Changes[i]; c.Action != plan.NoOp {
			names = append(names, c.Addr)
		}
	}
	if slices.Sort(names); len(names) > maxGets {
		return state.ListLazy(st)
	}
	var out []state.Record
	for _, name := range slices.Compact(names) {
		r, ok, err := st.Get(name)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return state.WholeRecords(out), nil
}

// priorHead returns the record of name as the apply started, without its
// inputs and outputs.
func (a *applier) priorHead(name string) (state.Record, bool) {
	l, ok := a.prior[name]
	if !ok {
		return state.Record{}, false
	}
	return l.Head, true
}

// priorRecord returns the whole record of name as the apply started, its
// values decoded anew (the caller's); an error says state is damaged.
// Its node calls it before it writes the record: a record whose values
// the planner let go is read again from state then, unchanged since, as
// only its node writes it.
func (a *applier) priorRecord(name string) (state.Record, bool, error) {
	l, ok := a.prior[name]
	if !ok {
		return state.Record{}, false, nil
	}
	if l.Dropped() {
		r, ok, err := a.st.Get(name)
		if err != nil {
			return state.Record{}, false, fmt.Errorf("read state: %w", err)
		}
		return r, ok, nil
	}
	r, err := l.Full(nil)
	if err != nil {
		return state.Record{}, false, fmt.Errorf("read state: %w", err)
	}
	return r, true, nil
}

// result sums up the walk: what failed, was interrupted, skipped or not
// started, and whether and why it was stopped.
func (a *applier) result(ctx context.Context, errs map[string]error, stop <-chan struct{}) *report.Apply {
	res := &report.Apply{Counts: a.counts}
	deposedNotStarted := false
	for _, addr := range a.deposed {
		err, ok := errs[deposedPrefix+addr]
		if !ok {
			continue
		}
		if err == dag.ErrStopped || ctx.Err() != nil && err == ctx.Err() {
			deposedNotStarted = true
		}
		// Skipped (what depends on it, or the resource itself, failed),
		// not started, or its delete failed: what is still deposed stays
		// in state for the next apply to delete.
		if cur, ok, gerr := a.st.Get(addr); gerr == nil && ok && len(cur.Deposed) > 0 {
			res.Deposed = append(res.Deposed, report.Deposed{Addr: addr, Type: cur.Type, IDs: slices.Clone(cur.Deposed)})
		}
	}
	failed := map[string]bool{}
	for _, f := range a.failed {
		failed[f.Addr] = true
		if ctx.Err() != nil && (errors.Is(f.Err, context.Canceled) || errors.Is(f.Err, ctx.Err())) {
			res.Interrupted = append(res.Interrupted, f)
		} else {
			res.Failed = append(res.Failed, f)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(errs)) {
		err := errs[name]
		if strings.HasPrefix(name, deposedPrefix) {
			continue // in res.Deposed
		}
		// A delete's change is keyed by its node name, not its address.
		c, ok := a.changes[name]
		if !ok || c.Action == plan.NoOp || failed[displayName(name)] {
			continue
		}
		switch {
		case errors.Is(err, dag.ErrSkipped):
			res.Skipped = append(res.Skipped, displayName(name))
			a.emit(report.Event{Addr: c.Addr, Type: c.Type, Action: c.Action, Phase: report.Skipped})
		case err == dag.ErrStopped || ctx.Err() != nil && err == ctx.Err():
			res.NotStarted = append(res.NotStarted, displayName(name))
		}
	}
	sort.Slice(res.Failed, func(i, j int) bool { return res.Failed[i].Addr < res.Failed[j].Addr })
	sort.Slice(res.Interrupted, func(i, j int) bool { return res.Interrupted[i].Addr < res.Interrupted[j].Addr })
	if len(res.NotStarted) > 0 || len(res.Interrupted) > 0 || deposedNotStarted || isClosed(stop) {
		res.Stopped = "cancelled"
		if isClosed(stop) {
			res.Stopped = "stopped"
		}
		if a.sc != nil && a.sc.Reason() != "" {
			res.Stopped = "stopped by " + a.sc.Reason()
		}
	}
	return res
}

// displayName is the address of the resource a node acts on.
func displayName(node string) string {
	if addr, ok := strings.CutPrefix(node, deletePrefix); ok {
		return addr
	}
	if addr, ok := strings.CutPrefix(node, deposedPrefix); ok {
		return addr
	}
	return node
}

// schedule lists the nodes to run and their dependencies.
func (a *applier) schedule(pl *plan.Plan) ([]string, map[string][]string) {
	deps := map[string][]string{}
	var nodes []string
	deleted := map[string]bool{}
	var packer value.Packer
	for i := range pl.Changes {
		c := &pl.Changes[i]
		if c.Kind == kind.Resource && (c.Action == plan.Delete || c.Action == plan.Forget) {
			deleted[c.Addr] = true
			continue
		}
		a.changes[c.Addr] = c
		if a.opts.Consume && c.Kind == kind.Resource && c.Action == plan.Create {
			// Read only when the create runs (see run).
			c.Pack(&packer)
		}
	}
	scheduled := map[string]bool{}
	if !pl.Destroy {
		g := a.spec.Graph()
		// A targeted plan planned its targets and what they depend on;
		// nothing else runs.
		targeted := g.Closure(pl.Targets)
		needed := Needed(a.spec, pl)
		for _, name := range g.Order() {
			if len(pl.Targets) > 0 && !targeted[name] || !needed[name] {
				continue
			}
			nodes = append(nodes, name)
			deps[name] = g.Deps(name)
			scheduled[name] = true
		}
	}
	for i := range pl.Changes {
		c := &pl.Changes[i]
		if !deleted[c.Addr] || (c.Action != plan.Delete && c.Action != plan.Forget) {
			continue
		}
		node := deletePrefix + c.Addr
		a.changes[node] = c
		nodes = append(nodes, node)
		// Delete after everything that depended on it is gone or updated.
		for _, l := range a.prior {
			rec := &l.Head
			if !slices.Contains(rec.Dependencies, c.Addr) || rec.Name == c.Addr {
				continue
			}
			if deleted[rec.Name] {
				deps[node] = append(deps[node], deletePrefix+rec.Name)
			} else if scheduled[rec.Name] {
				deps[node] = append(deps[node], rec.Name)
			}
		}
	}
	if !pl.Destroy {
		nodes = a.scheduleDeposed(nodes, deps, scheduled, deleted)
	}
	return nodes, deps
}

// scheduleDeposed adds a deposed node for every scheduled resource that
// has, or may come to have, objects recorded as deposed: one replaced by
// creating the new object first, or one an earlier apply left deposed
// objects on. The node deletes them (deleteDeposed) once everything that
// depended on the resource has finished: the nodes that reference it,
// directly or through variables, and those whose record says they did
// (updated, replaced or deleted since), and the deposed nodes of those,
// so that a chain of replacements deletes its old objects dependents
// first. The old object is thus deleted only after what used it has moved
// to the new one, as the cloud may refuse to delete an object in use.
func (a *applier) scheduleDeposed(nodes []string, deps map[string][]string, scheduled, deleted map[string]bool) []string {
	has := map[string]bool{}
	var order []string
	for _, name := range nodes {
		r, isResource := a.spec.Resources[name]
		c := a.changes[name]
		if !isResource || r.Get != nil || c == nil || c.Kind != kind.Resource {
			continue
		}
		prior, ok := a.priorHead(name)
		hasDeposed := ok && prior.Kind == kind.Resource && len(prior.Deposed) > 0
		if hasDeposed || c.Action == plan.Replace && !c.DeleteBeforeReplace {
			has[name] = true
			order = append(order, name)
		}
	}
	if len(order) == 0 {
		return nodes
	}
	// What state says depended on each resource, read once.
	priorDependents := map[string][]string{}
	for _, l := range a.prior {
		rec := &l.Head
		for _, d := range rec.Dependencies {
			if has[d] && d != rec.Name {
				priorDependents[d] = append(priorDependents[d], rec.Name)
			}
		}
	}
	g := a.spec.Graph()
	for _, name := range order {
		node := deposedPrefix + name
		after := map[string]bool{name: true}
		dependent := func(n string) {
			after[n] = true
			if has[n] {
				after[deposedPrefix+n] = true
			}
		}
		// Through variables, to the resources that read it.
		seen := map[string]bool{}
		var visit func(n string)
		visit = func(n string) {
			for _, d := range g.Dependents(n) {
				if seen[d] || !scheduled[d] {
					continue
				}
				seen[d] = true
				dependent(d)
				if _, isResource := a.spec.Resources[d]; !isResource {
					visit(d)
				}
			}
		}
		visit(name)
		for _, n := range priorDependents[name] {
			if deleted[n] {
				after[deletePrefix+n] = true
			} else if scheduled[n] {
				dependent(n)
			}
		}
		nodes = append(nodes, node)
		deps[node] = slices.Sorted(maps.Keys(after))
		a.deposed = append(a.deposed, name)
	}
	return nodes
}

// Needed returns the nodes of spec that an apply of pl runs, before
// --target narrows them: all but the resources the plan found idle
// (plan.Change.Idle) that no node that runs, and no stack output, reads.
// An apply of a few changes to a large state does work in proportion to
// the changes.
func Needed(spec *specs.Spec, pl *plan.Plan) map[string]bool {
	idle := map[string]bool{}
	for i := range pl.Changes {
		if c := &pl.Changes[i]; c.Idle && c.Action == plan.NoOp && c.Kind == kind.Resource {
			idle[c.Addr] = true
		}
	}
	g := spec.Graph()
	var roots []string
	for _, name := range g.Order() {
		if !idle[name] {
			roots = append(roots, name)
		}
	}
	return g.Closure(append(roots, spec.OutputsDeps()...))
}

func (a *applier) run(ctx context.Context, node string) error {
	if addr, ok := strings.CutPrefix(node, deposedPrefix); ok {
		return a.runDeposed(ctx, addr)
	}
	if c, ok := a.changes[node]; ok && node != c.Addr {
		return a.runDelete(ctx, c)
	}
	s := a.spec
	if _, ok := s.Config[node]; ok {
		a.setValue(node, s.Values[node])
		return nil
	}
	if v, ok := s.Variables[node]; ok {
		return a.runVariable(ctx, v)
	}
	r := s.Resources[node]
	c, ok := a.changes[node]
	if !ok {
		return a.fail(r.Name, r.Pos, fmt.Errorf("the plan has no entry for %q: make a new plan", r.Name))
	}
	if err := c.Unpack(); err != nil {
		return a.fail(r.Name, r.Pos, err)
	}
	if r.Get != nil {
		return a.runGet(ctx, r, c)
	}
	err := a.runResource(ctx, r, c)
	if err == nil && a.opts.Consume && !slices.Contains(a.deposed, node) {
		// What the resource is now is in state and in a.values: its
		// planned values are not read again (a deposed node reads its
		// change).
		c.LetValuesGo()
	}
	return err
}

func (a *applier) fail(addr string, pos diag.Pos, err error) error {
	err = a.redaction(addr).Error(err)
	a.mu.Lock()
	a.failed = append(a.failed, report.NodeError{Addr: addr, Pos: pos, Err: err})
	a.mu.Unlock()
	return err
}

// noteSecrets records the secrets of a node's inputs (or arguments), so
// that its errors and progress messages, which a cloud API may make echo
// an input, never show them.
func (a *applier) noteSecrets(name string, v any) {
	if red := value.RedactionOf(v); red != nil {
		a.mu.Lock()
		a.redact[name] = red
		a.mu.Unlock()
	}
}

// redaction is the value.Redaction of a node's secrets; nil when it has none.
func (a *applier) redaction(name string) *value.Redaction {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.redact[name]
}

func (a *applier) evaluator(ctx context.Context) *eval.Evaluator {
	return &eval.Evaluator{Spec: a.spec, Env: eval.EnvFunc(a.lookup), Invoke: eval.Invoker(ctx, a.reg)}
}

func (a *applier) runVariable(ctx context.Context, v *specs.Variable) error {
	c, isLookup := a.changes[v.Name]
	if !isLookup {
		val, err := a.evaluator(ctx).Eval(v.Expr)
		if err != nil {
			return a.fail(v.Name, v.Pos, err)
		}
		a.setValue(v.Name, val)
		return nil
	}
	inv := v.Expr.(*specs.Invoke)
	if !c.Deferred && c.After != nil && !value.ContainsSealed(c.After) {
		// The plan read it: record its arguments (known, as they were then)
		// with the result, so that drift can read it again. A plan saved
		// to a file holds a secret result only sealed: that lookup is read
		// again below.
		args, err := (&eval.Evaluator{Spec: a.spec, Env: eval.EnvFunc(a.lookup)}).Eval(inv.Args)
		if err != nil {
			return a.fail(v.Name, v.Pos, err)
		}
		res, _ := value.RevealShared(c.After) // in memory: a secret result as the plan read it
		out := eval.ResultOf(inv, args, res.(map[string]any))
		a.setValue(v.Name, out.Value)
		return a.recordLookup(c, args.(map[string]any), out)
	}
	ev := a.evaluator(ctx)
	args, err := ev.Eval(inv.Args)
	if err != nil {
		return a.fail(v.Name, v.Pos, err)
	}
	a.noteSecrets(v.Name, args)
	start := time.Now()
	a.emit(report.Event{Addr: v.Name, Type: c.Type, Action: plan.Read, Phase: report.Started, Pos: v.Pos})
	plain, _ := value.Reveal(args)
	res, err := ev.Invoke(inv, plain.(map[string]any))
	if err != nil {
		err = eval.SecretCallError(err, args)
		a.emit(report.Event{Addr: v.Name, Type: c.Type, Action: plan.Read, Phase: report.Failed, Message: err.Error(), Elapsed: time.Since(start)})
		return a.fail(v.Name, v.Pos, err)
	}
	out := eval.ResultOf(inv, args, res)
	a.emit(report.Event{Addr: v.Name, Type: c.Type, Action: plan.Read, Phase: report.Done, Elapsed: time.Since(start), ID: out.ID})
	a.count(plan.Read)
	a.setValue(v.Name, out.Value)
	return a.recordLookup(c, args.(map[string]any), out)
}

// recordLookup records a lookup's arguments and results, sealed where
// secret: all of them when an argument was (eval.Result), the id then
// left out.
func (a *applier) recordLookup(c *plan.Change, args map[string]any, out eval.Result) error {
	sl := a.sealer(c.Addr)
	rec := state.Record{Name: c.Addr, Type: c.Type, Kind: kind.Lookup, ID: out.ID,
		Inputs: value.Seal(args, sl).(map[string]any), Outputs: value.Seal(out.Fields, sl).(map[string]any)}
	return a.put(c.Addr, c.Pos, rec)
}

func (a *applier) runGet(ctx context.Context, r *specs.Resource, c *plan.Change) error {
	ev := a.evaluator(ctx)
	id, err := ev.Eval(r.Get.ID)
	if err != nil {
		return a.fail(r.Name, r.Pos, err)
	}
	var want map[string]any
	if r.Get.State != nil {
		w, err := ev.Eval(r.Get.State)
		if err != nil {
			return a.fail(r.Name, r.Pos, err)
		}
		want, _ = w.(map[string]any)
	}
	secret := eval.GetIsSecret(id, want)
	a.noteSecrets(r.Name, value.Wrap(id, secret))
	live := c.After
	switch {
	case c.Deferred || live == nil || secret && value.ContainsSealed(live):
		// Not read by the plan, or held by a plan file only sealed.
		sid, _ := value.Reveal(id)
		got, err := a.driverRead(ctx, r, str(sid))
		if err != nil {
			shown := strconv.Quote(str(sid))
			if secret {
				shown = value.SensitiveText
			}
			err = eval.SecretCallError(err, []any{value.Wrap(id, secret), want})
			return a.fail(r.Name, r.Pos, fmt.Errorf("get %q: read %s %s: %w", r.Name, r.Type, shown, err))
		}
		live = got
		a.count(plan.Read)
	case secret:
		plain, _ := value.Reveal(live) // as the plan read it, in memory
		live = plain.(map[string]any)
	case len(r.Options.AdditionalSecretOutputs) > 0:
		// The plan holds the secret fields only as digests when it was
		// saved: read them again.
		got, err := a.driverRead(ctx, r, c.ID)
		if err != nil {
			return a.fail(r.Name, r.Pos, fmt.Errorf("get %q: read %s %q for its secret outputs: %w", r.Name, r.Type, c.ID, err))
		}
		live = got
	}
	got := eval.GetResultOf(r, live, secret)
	a.setValue(r.Name, got.Value)
	outs := value.Seal(got.Fields, a.sealer(r.Name)).(map[string]any)
	rec := state.Record{Name: r.Name, Type: r.Type, Kind: kind.Get, ID: got.ID, Outputs: outs, Dependencies: a.spec.ResourceDeps(r.Name)}
	return a.put(r.Name, r.Pos, rec)
}

func (a *applier) driverRead(ctx context.Context, r *specs.Resource, id string) (map[string]any, error) {
	return refresh.ReadObject(ctx, a.reg, r, id)
}

// put writes a record if it differs from what state holds.
func (a *applier) put(addr string, pos diag.Pos, rec state.Record) error {
	old, ok, err := a.priorRecord(addr)
	if err != nil {
		return a.fail(addr, pos, err)
	}
	return a.putOver(addr, pos, rec, old, ok)
}

// putOver is put for a caller that has decoded the prior record, old (ok
// when state holds one), already. It writes nothing to the cloud: a
// record too large for the backend is written smaller (see fitRecord).
func (a *applier) putOver(addr string, pos diag.Pos, rec, old state.Record, ok bool) error {
	// A record too large for the backend is written smaller (fitRecord),
	// without failing: nothing changed in the cloud, and the node's next
	// read gives what it leaves out.
	rec, _ = fitRecord(a.st, rec)
	if ok && sameRecord(old, rec) {
		return nil
	}
	rec, err := a.st.Put(rec)
	if err != nil {
		return a.fail(addr, pos, fmt.Errorf("write state: %w", err))
	}
	if err := a.sealPast(rec, old, ok); err != nil {
		return a.fail(addr, pos, err)
	}
	return nil
}

// sealPast seals, in every version state keeps of rec's node, the
// values that rec holds sealed but an earlier version holds in clear: an
// input imported (or applied) before the specs marked it secret, or the
// results of a lookup or get read before an argument of it was secret
// (with their id), leave no clear copy in state's history once they are.
// Nothing is done when old, the node's record as the apply started (ok
// when state held one), held no such value.
func (a *applier) sealPast(rec, old state.Record, ok bool) error {
	if !ok || !value.ContainsSealed(rec.Inputs) && !value.ContainsSealed(rec.Outputs) {
		return nil
	}
	sl := a.sealer(rec.Name)
	if _, changed := sealVersion(old, rec, sl); !changed {
		return nil
	}
	err := a.st.RewriteVersions(rec.Name, func(v state.Record) (state.Record, bool) {
		return sealVersion(v, rec, sl)
	})
	if err != nil {
		return fmt.Errorf("seal the earlier versions of %q: %w", rec.Name, err)
	}
	return nil
}

// sealVersion returns v, a version of rec's node, with its values sealed
// where rec holds them sealed (its inputs where rec's inputs are, its
// outputs where rec's inputs or outputs are), and without its id when rec
// is a lookup or get that keeps its id only sealed; and whether anything
// changed.
func sealVersion(v, rec state.Record, sl value.Sealer) (state.Record, bool) {
	in := value.SealWhere(v.Inputs, rec.Inputs, sl)
	out := value.SealWhere(value.SealWhere(v.Outputs, rec.Inputs, sl), rec.Outputs, sl)
	id := v.ID
	if rec.Kind != kind.Resource && rec.ID == "" && value.IsSealed(rec.Outputs["id"]) {
		id = ""
	}
	if value.Same(in, v.Inputs) && value.Same(out, v.Outputs) && id == v.ID {
		return v, false
	}
	v.Inputs, _ = in.(map[string]any)
	v.Outputs, _ = out.(map[string]any)
	v.ID = id
	return v, true
}

func sameRecord(a, b state.Record) bool {
	return a.Type == b.Type && a.Kind == b.Kind && a.ID == b.ID && a.Protect == b.Protect &&
		a.RetainOnDelete == b.RetainOnDelete && a.DeleteBeforeReplace == b.DeleteBeforeReplace &&
		a.Tainted == b.Tainted && len(a.Deposed) == 0 && len(b.Deposed) == 0 &&
		value.Same(a.Inputs, b.Inputs) && value.Same(a.Outputs, b.Outputs) && value.Same(a.Dependencies, b.Dependencies)
}

// ReportedRetry is a driver's report of a retried call as events carry it.
func ReportedRetry(r resources.RetryInfo) *report.Retry {
	return &report.Retry{Method: r.Method, Path: r.Path, Cause: r.Cause, Attempt: r.Attempt, Wait: r.Wait}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func newToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// operator runs the operations that change the cloud, for Apply and for
// the resolution of interrupted creates alike: each starts only while
// state's lock is held, reports progress events while it runs, and counts
// among the running operations of a graceful stop.
type operator struct {
	st       state.Backend
	emit     func(report.Event) // redacts, then passes to the observer
	interval time.Duration      // between progress events
	sc       *StopControl       // nil when nothing can stop the apply
}

// run runs fn, an operation of act on c's node, within timeout (0: none).
func (o *operator) run(ctx context.Context, c *plan.Change, act plan.Action, timeout time.Duration, fn func(ctx context.Context) (string, error)) (string, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	// No state write can fence a change in the cloud: it starts only while
	// the state's lock is surely held, and each request it makes leaves
	// only while it still is (resources.WithFence, which the drivers'
	// transport checks before every attempt). Once the lock is lost, the
	// operation is cancelled: what it waits for (an answer, a retry's
	// backoff, an object to become ready) is abandoned at once.
	if err := o.st.Held(); err != nil {
		return "", fmt.Errorf("not started: %w", err)
	}
	ctx = resources.WithFence(ctx, o.st.Held)
	if lost := o.st.Lost(); lost != nil {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		done := make(chan struct{})
		defer close(done)
		defer cancel(nil)
		go func() {
			select {
			case <-lost:
				cancel(o.st.Held())
			case <-done:
			}
		}()
	}
	start := time.Now()
	// The object a create makes has no id yet: c.ID, for a replacement, is
	// the old object's.
	startID := c.ID
	if act == plan.Create {
		startID = ""
	}
	var mu sync.Mutex
	last := ""
	ctx = resources.WithProgress(ctx, func(ev resources.ProgressEvent) {
		mu.Lock()
		last = ev.Message
		mu.Unlock()
		if ev.Retry != nil {
			// Every retry shows at once, not only at the next heartbeat.
			o.emit(report.Event{Addr: c.Addr, Type: c.Type, Action: act, Phase: report.Running, Elapsed: time.Since(start), Message: ev.Message, ID: startID,
				Retry: ReportedRetry(*ev.Retry)})
		}
	})
	if o.sc != nil {
		o.sc.running.Add(1)
		defer o.sc.running.Add(-1)
	}
	o.emit(report.Event{Addr: c.Addr, Type: c.Type, Action: act, Phase: report.Started, ID: startID, Pos: c.Pos})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(o.interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				mu.Lock()
				msg := last
				mu.Unlock()
				o.emit(report.Event{Addr: c.Addr, Type: c.Type, Action: act, Phase: report.Running, Elapsed: time.Since(start), Message: msg, ID: startID})
			}
		}
	}()
	id, err := fn(ctx)
	close(stop)
	wg.Wait()
	if err != nil && !errors.Is(err, state.ErrLockLost) {
		if held := o.st.Held(); held != nil {
			// Stopped by the lost lock, whatever the driver made of
			// the cancelled call: what it did is for the run that
			// holds the lock now to find out, as after a crash.
			err = fmt.Errorf("%w; stopped: %w", err, held)
		}
	}
	if err != nil {
		o.emit(report.Event{Addr: c.Addr, Type: c.Type, Action: act, Phase: report.Failed, Elapsed: time.Since(start), Message: err.Error(), ID: id})
		return id, err
	}
	o.emit(report.Event{Addr: c.Addr, Type: c.Type, Action: act, Phase: report.Done, Elapsed: time.Since(start), ID: id})
	return id, nil
}

func (a *applier) runDelete(ctx context.Context, c *plan.Change) error {
	prior, _ := a.priorHead(c.Addr)
	if c.Action == plan.Forget {
		if err := a.st.Delete(c.Addr); err != nil && !errors.Is(err, state.ErrNoRecord) {
			return a.fail(c.Addr, c.Pos, fmt.Errorf("write state: %w", err))
		}
		a.count(plan.Forget)
		return nil
	}
	if prior.Protect {
		return a.fail(c.Addr, c.Pos, fmt.Errorf("resource %q is protected and cannot be deleted", c.Addr))
	}
	d, ok := a.reg.Drivers[c.Type]
	if !ok {
		return a.fail(c.Addr, c.Pos, fmt.Errorf("no driver is configured for %s", c.Type))
	}
	ids := append([]string(nil), prior.Deposed...)
	if prior.ID != "" {
		ids = append(ids, prior.ID)
	}
	for _, id := range ids {
		if err := a.deleteObject(ctx, c, d, id, 0); err != nil {
			return a.fail(c.Addr, c.Pos, fmt.Errorf("delete %s %q: %w", c.Type, id, err))
		}
	}
	if err := a.st.Delete(c.Addr); err != nil && !errors.Is(err, state.ErrNoRecord) {
		return a.fail(c.Addr, c.Pos, fmt.Errorf("write state: %w", err))
	}
	a.count(plan.Delete)
	return nil
}

// isClosed reports whether ch is closed; a nil channel never is.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
