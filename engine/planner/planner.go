package planner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/reconcile-dev/reconcile/engine/dag"
	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/refresh"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/kind"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/internal/intern"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
	"github.com/reconcile-dev/reconcile/state"
)

// Options control planning.
type Options struct {
	// Refresh reads every managed resource from the cloud first, so that
	// the plan compares the specs with the live objects.
	Refresh bool
	// Destroy plans the deletion of every managed resource.
	Destroy bool
	// RefreshOnly plans only to accept the cloud's values into state: one
	// Refresh change per node in state that changed or was deleted outside
	// reconcile, and nothing the specs ask for (see plan.Plan.RefreshOnly).
	RefreshOnly bool
	// Parallelism bounds concurrent cloud reads; 0 means 10.
	Parallelism int
	// Targets, when not empty, limits the plan to these nodes and what
	// they depend on (plan.Plan.Targets): no other node is evaluated,
	// read or changed. A target the specs no longer declare that state
	// holds is deleted. With Destroy, it limits the destroy to these
	// resources and the resources that depend on them in state.
	Targets []string
	// Replace names managed resources to replace even where nothing
	// forces it (plan.ReasonReplaceRequested).
	Replace []string
	// AllowSelfLockout lets the plan's writes remove the caller's own
	// access to an access policy (plan.Plan.AllowSelfLockout); without
	// it, such a write is an error.
	AllowSelfLockout bool
	// Pack keeps the values of each create and update packed from when it
	// is planned (plan.Change.Pack): a plan of thousands of them then holds
	// a fraction of their memory. Readers of a change's values call
	// plan.Change.Values; apply unpacks each change when it runs.
	Pack bool
	// ShowOnly plans for a reader alone: the plan is shown as text,
	// Markdown or events, and neither applied, saved nor written as JSON.
	// None of those shows a no-op's values, so a no-op keeps none once
	// planned (what references to it see is kept apart, for as long as
	// they need it). Each resource's inputs expression is let go once
	// evaluated too (specs.Resource.Properties): the specs given cannot be
	// planned again.
	ShowOnly bool
	// KeepInputs plans for an apply that follows in the same process,
	// with the same specs (the CLI's apply): a resource whose inputs the
	// apply would evaluate to what the plan did has them kept, packed, in
	// its change (plan.Change.KeepInputs), and its inputs expression let
	// go, for the apply to send as planned. Those inputs are known, hold
	// no secret, call no function of the schemas, and read nothing but
	// config and the ids of resources whose object stays (no-ops and
	// updates), which the apply does not change.
	KeepInputs bool
	// Records, when not nil, are the state's records as the caller listed
	// them (state.ListLazy), to share with the apply of the plan
	// (apply.Options.Records): the planner reads them rather than listing
	// its own. It lets each one's values go once its node is planned, as
	// with its own: the apply reads again those it needs.
	Records []state.LazyRecord
	// KeepRecordValues keeps the values of Records for the apply rather
	// than letting them go: for a state whose reads are round trips
	// (etcd), where reading each again would cost one per node run.
	KeepRecordValues bool
}

// nodeResult is what planning learned about one node.
type nodeResult struct {
	value  any          // what references to the node see
	change *plan.Change // into planner.changes; nil for none
}

type planner struct {
	ctx     context.Context // for lookups run while evaluating
	spec    *specs.Spec
	reg     resources.Registry
	opts    Options
	records []state.LazyRecord           // read from state
	prior   map[string]*state.LazyRecord // into records, by name
	lineage string
	key     []byte        // the state's key for digests of secrets
	st      state.Backend // for the size of the records the apply writes
	env     eval.Env
	invoke  func(inv *specs.Invoke, args map[string]any) (map[string]any, error)

	sel  *selection    // what Targets and Replace select
	bulk *refresh.Bulk // with Refresh: what the bulk reads found

	// changes holds the change of every node, by its index in the graph's
	// order (slot), so that the plan's list of changes is made of it in
	// place rather than copied from one allocation per node.
	changes []plan.Change
	slot    map[string]int

	mu      sync.Mutex
	results map[string]*nodeResult
	// readers lets the value of a node go once no node left to plan
	// reads it, unless an output does (see done): with Pack, a create's
	// values are then held packed alone.
	readers *dag.Readers
	diags   diag.Diagnostics
	// iam collects what each resource writes of an IAM policy, as
	// planned, to refuse two that would undo each other's writes where
	// Load could not tell (a name known only once planned).
	iam specs.IAMCheck
}

// newChange sets the change of the node name to c and returns it, for the
// planner to fill in.
func (p *planner) newChange(name string, c plan.Change) *plan.Change {
	i := p.slot[name]
	p.changes[i] = c
	return &p.changes[i]
}

// priorHeads returns the records of state without their values (see
// state.LazyRecord), sorted by name.
func (p *planner) priorHeads() []state.Record {
	p.mu.Lock() // against forgetPrior
	defer p.mu.Unlock()
	out := make([]state.Record, 0, len(p.records))
	for i := range p.records {
		out = append(out, p.records[i].Head)
	}
	return out
}

// record returns the record of name in state, its values decoded for the
// caller. An error says the record could not be decoded.
func (p *planner) record(name string) (state.Record, bool, error) {
	l, ok := p.prior[name]
	if !ok {
		return state.Record{}, false, nil
	}
	in := interns.Get().(*intern.Table)
	defer interns.Put(in)
	r, err := l.Full(in)
	if err != nil {
		return state.Record{}, false, fmt.Errorf("read state: %w", err)
	}
	return r, true, nil
}

// interns make the strings of the records the nodes being planned decode,
// so that records decoded one after another share them.
var interns = sync.Pool{New: func() any { return intern.New() }}

// sealer seals the secrets of the node name.
func (p *planner) sealer(name string) value.Sealer { return value.Sealer{Key: p.key, Name: name} }

func (p *planner) lookup(name string) (any, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.results[name]
	if !ok {
		return nil, false
	}
	return r.value, true
}

func (p *planner) addDiag(d diag.Diagnostic) {
	p.mu.Lock()
	p.diags = append(p.diags, d)
	p.mu.Unlock()
}

// done notes that node, which depended on deps, is planned, and lets go of
// the values no node left to plan reads. A value let go is nil: its node's
// change, if any, stays.
func (p *planner) done(node string, deps []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readers.Done(node, deps, func(name string) {
		if r, ok := p.results[name]; ok {
			r.value = nil
		}
	})
}

func (p *planner) set(name string, r *nodeResult) {
	p.mu.Lock()
	p.results[name] = r
	p.mu.Unlock()
}

// Plan computes what apply would do to make the cloud match the spec.
// It reads state and, for lookups, gets and refresh, the cloud; it never
// changes anything. Problems in the spec found while evaluating come back as
// diagnostics; a failed cloud read is an error diagnostic naming the node.
//
// A plan interrupted by the end of ctx (a signal) returns one error
// diagnostic saying so, not one per node that the interruption reached.
func Plan(ctx context.Context, spec *specs.Spec, st state.Backend, reg resources.Registry, opts Options) (*plan.Plan, diag.Diagnostics) {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 10
	}
	var pl *plan.Plan
	var diags diag.Diagnostics
	if opts.RefreshOnly {
		pl, diags = refresh.Plan(ctx, spec, st, reg, opts.Parallelism)
	} else {
		pl, diags = makePlan(ctx, spec, st, reg, opts)
	}
	if ctx.Err() != nil {
		return nil, diag.Diagnostics{diag.Errorf(diag.Pos{}, "the plan was interrupted (%v): nothing was planned or changed", context.Cause(ctx))}
	}
	return pl, diags
}

func makePlan(ctx context.Context, spec *specs.Spec, st state.Backend, reg resources.Registry, opts Options) (*plan.Plan, diag.Diagnostics) {
	v, err := state.ReadLazyView(st, opts.Records)
	if err != nil {
		return nil, diag.Diagnostics{diag.Errorf(diag.Pos{}, "%v", err)}
	}
	meta, records, key := v.Meta, v.Records, v.Key
	g := spec.Graph()
	p := &planner{ctx: ctx, spec: spec, reg: reg, opts: opts, records: records, prior: make(map[string]*state.LazyRecord, len(records)),
		results: make(map[string]*nodeResult, len(g.Order())), lineage: meta.Lineage, key: key, st: st}
	for i := range records {
		p.prior[records[i].Head.Name] = &records[i]
	}
	p.changes, p.slot = make([]plan.Change, len(g.Order())), make(map[string]int, len(g.Order()))
	for i, name := range g.Order() {
		p.slot[name] = i
	}
	p.env = eval.EnvFunc(p.lookup)
	if p.ctx == nil {
		p.ctx = context.Background()
	}
	p.invoke = eval.Invoker(p.ctx, reg)
	if p.sel = p.selectNodes(); p.diags.HasErrors() {
		return nil, p.diags.Sort()
	}
	if opts.Refresh {
		// Objects a driver reads in bulk are read before the walk, in a
		// few calls; the others, one by one as the walk reaches them.
		bulk, err := p.bulkRecords()
		if err != nil {
			return nil, diag.Diagnostics{diag.Errorf(diag.Pos{}, "%v", err)}
		}
		p.bulk = refresh.ReadBulk(ctx, reg, bulk, opts.Parallelism)
	}
	nodes, deps := g.Order(), g.DepsMap()
	if p.sel.targeted() {
		nodes, deps = nil, map[string][]string{}
		for _, name := range g.Order() {
			if p.sel.walks(name) {
				nodes = append(nodes, name)
				deps[name] = g.Deps(name)
			}
		}
	}
	p.readers = dag.CountReaders(nodes, deps, spec.OutputsDeps())
	errs := dag.Walk(ctx, nodes, deps, opts.Parallelism, func(ctx context.Context, name string) error {
		defer p.done(name, deps[name])
		return p.planNode(ctx, name)
	})
	for _, name := range slices.Sorted(maps.Keys(errs)) {
		if err := errs[name]; err != nil && !errors.Is(err, dag.ErrSkipped) && !errors.Is(err, errReported) {
			p.addDiag(diag.Errorf(spec.DeclaredAt(name), "%s: %v", name, err))
		}
	}
	for _, d := range p.iam.Conflicts() {
		p.addDiag(d)
	}
	pl := &plan.Plan{Lineage: meta.Lineage, Serial: meta.Serial, SpecHash: spec.Hash, Destroy: opts.Destroy, AllowSelfLockout: opts.AllowSelfLockout}
	if p.sel.targeted() {
		pl.Targets = slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(opts.Targets)))))
	}
	deletes := p.planDeletes(ctx)
	// The nodes' changes, in the graph's order, moved to the front of
	// p.changes (each to a slot no later than its own); the results that
	// point into it are not read again.
	n := 0
	for i, name := range g.Order() {
		if r, ok := p.results[name]; ok && r.change != nil {
			p.changes[n] = p.changes[i]
			n++
		}
	}
	clear(p.changes[n:])
	pl.Changes = append(p.changes[:n], deletes...)
	if !p.diags.HasErrors() && !opts.Destroy {
		pl.Outputs = p.outputs()
	}
	return pl, p.diags.Sort()
}

// bulkRecords returns, decoded, the records of state whose driver reads
// objects in bulk (resources.BulkReader), for refresh.ReadBulk.
func (p *planner) bulkRecords() ([]state.Record, error) {
	var out []state.Record
	for i := range p.records {
		if _, ok := p.reg.Drivers[p.records[i].Head.Type].(resources.BulkReader); !ok {
			continue
		}
		r, err := p.records[i].Full(nil)
		if err != nil {
			return nil, fmt.Errorf("read state: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// errReported marks a node whose problem is already a diagnostic.
var errReported = errors.New("reported")

func (p *planner) fail(pos diag.Pos, format string, args ...any) error {
	p.addDiag(diag.Errorf(pos, format, args...))
	return errReported
}

func (p *planner) failDetail(pos diag.Pos, detail, format string, args ...any) error {
	d := diag.Errorf(pos, format, args...)
	d.Detail = detail
	p.addDiag(d)
	return errReported
}

func (p *planner) evalErr(err error, fallback diag.Pos, name string) error {
	var ee *eval.Error
	if errors.As(err, &ee) {
		return p.fail(ee.Pos, "%s", ee.Msg)
	}
	return p.fail(fallback, "%s: %v", name, err)
}

func (p *planner) evaluator() *eval.Evaluator {
	return &eval.Evaluator{Spec: p.spec, Env: p.env, Invoke: p.invoke}
}

func (p *planner) planNode(ctx context.Context, name string) error {
	s := p.spec
	if _, ok := s.Config[name]; ok {
		p.set(name, &nodeResult{value: s.Values[name]})
		return nil
	}
	if p.opts.Destroy {
		// A destroy deletes what state holds, in the order state records;
		// it evaluates nothing the specs declare.
		p.set(name, &nodeResult{value: value.Unknown{}})
		return nil
	}
	if v, ok := s.Variables[name]; ok {
		return p.planVariable(ctx, v)
	}
	r := s.Resources[name]
	if r.Get != nil {
		return p.planGet(ctx, r)
	}
	if err := p.planResource(ctx, r); err != nil {
		return err
	}
	p.forgetPrior(r)
	return nil
}

// forgetPrior drops the values of r's record once r is planned (see
// state.LazyRecord.Drop), so that the plan's memory holds them only where
// its changes and values refer to them. Nothing reads them after:
// planDeletes, the one reader of records after the walk, skips a record
// that its resource declares with the same type.
func (p *planner) forgetPrior(r *specs.Resource) {
	rec, ok := p.prior[r.Name]
	if !ok || rec.Head.Kind != kind.Resource || rec.Head.Type != r.Type || p.opts.KeepRecordValues {
		return
	}
	p.mu.Lock() // against priorHeads
	rec.Drop()
	p.mu.Unlock()
}

func (p *planner) planVariable(ctx context.Context, v *specs.Variable) error {
	inv, isLookup := v.Expr.(*specs.Invoke)
	if !isLookup {
		val, err := p.evaluator().Eval(v.Expr)
		if err != nil {
			return p.evalErr(err, v.Pos, v.Name)
		}
		p.set(v.Name, &nodeResult{value: val})
		return nil
	}
	// A lookup: read now when its arguments are known, else at apply.
	ev := p.evaluator()
	args, err := ev.Eval(inv.Args)
	if err != nil {
		return p.evalErr(err, v.Pos, v.Name)
	}
	c := p.newChange(v.Name, plan.Change{Addr: v.Name, Type: inv.Function, Kind: kind.Lookup, Action: plan.Read, Pos: v.Pos, After: args.(map[string]any)})
	prior, hasPrior, err := p.record(v.Name)
	if err != nil {
		return p.fail(v.Pos, "%s: %v", v.Name, err)
	}
	if hasPrior {
		c.Before = value.UnsealForDisplay(prior.Outputs).(map[string]any)
	}
	if value.ContainsUnknown(args) {
		c.Deferred = true
		c.Reason = plan.ReasonReadDeferred
		p.set(v.Name, &nodeResult{value: value.Unknown{}, change: c})
		return nil
	}
	if msg := p.validateValues(inv.Function, inv.Args, args.(map[string]any), func() string { return "fn::invoke " + inv.Function }); msg {
		return errReported
	}
	plain, _ := value.Reveal(args)
	// Its own invoker, whose calls (and their retries) name the lookup.
	res, err := eval.Invoker(resources.WithNode(p.ctx, v.Name), p.reg)(inv, plain.(map[string]any))
	if err != nil {
		return p.evalErr(eval.SecretCallError(err, args), inv.P, v.Name)
	}
	// An argument that holds a secret makes every result secret.
	out := eval.ResultOf(inv, args, res)
	c.After, c.ID = out.Fields, out.ID
	if hasPrior && p.opts.Refresh && prior.Kind == kind.Lookup && prior.Type == inv.Function &&
		value.Same(value.SealTo(args, prior.Inputs, p.sealer(v.Name)), prior.Inputs) {
		// Same arguments as at the last apply: a new result is drift.
		if s, ok := schemas.Lookup(inv.Function); ok && out.Secret {
			c.Drift = secretDrift(s, p.sealer(v.Name), prior.Outputs, res, true)
		} else if ok {
			c.Drift, c.DriftDetails, c.DriftAccess = refresh.LookupDrift(s, p.reg.Functions[inv.Function], prior.Outputs, res)
		}
	}
	p.set(v.Name, &nodeResult{value: out.Value, change: c})
	return nil
}

// secretDrift is the drift of a lookup's results, or of what a get reads,
// when they are secret as a whole: the fields of s (output-only ones for
// a lookup, with outputOnly, as refresh.LookupDrift compares; the others
// for a get, as refresh.GetDrift does) whose live value, sealed, is not
// the one state keeps in applied. Each is shown as a secret on both sides,
// and described no further.
func secretDrift(s *schemas.Schema, sl value.Sealer, applied, live map[string]any, outputOnly bool) []plan.FieldDrift {
	var out []plan.FieldDrift
	for _, k := range s.Outputs() {
		pr := s.Root.Properties[k]
		if pr == nil || pr.ReadOnly != outputOnly {
			continue
		}
		a, l := applied[k], live[k]
		if l != nil {
			l = sl.Sealed(l, a)
		}
		if !value.Same(a, l) {
			out = append(out, plan.FieldDrift{Path: k, Applied: value.Secret{}, Live: value.Wrap(live[k], true)})
		}
	}
	return out
}

// validateValues checks evaluated inputs against the schema and reports
// violations at the positions of the expressions. It reports whether any
// was found.
func (p *planner) validateValues(token string, obj specs.Expr, vals map[string]any, what func() string) bool {
	s, ok := schemas.Lookup(token)
	if !ok {
		return false
	}
	ds := specs.ValueViolations(s, obj, vals, what)
	for _, d := range ds {
		p.addDiag(d)
	}
	return len(ds) > 0
}

func (p *planner) planGet(ctx context.Context, r *specs.Resource) error {
	ev := p.evaluator()
	id, err := ev.Eval(r.Get.ID)
	if err != nil {
		return p.evalErr(err, r.Pos, r.Name)
	}
	var want map[string]any
	if r.Get.State != nil {
		w, err := ev.Eval(r.Get.State)
		if err != nil {
			return p.evalErr(err, r.Pos, r.Name)
		}
		want = w.(map[string]any)
	}
	// An id or a state entry that holds a secret makes all it reads secret.
	secret := eval.GetIsSecret(id, want)
	c := p.newChange(r.Name, plan.Change{Addr: r.Name, Type: r.Type, Kind: kind.Get, Action: plan.Read, Pos: r.Pos})
	prior, hasPrior, err := p.record(r.Name)
	if err != nil {
		return p.fail(r.Pos, "%s: %v", r.Name, err)
	}
	if hasPrior {
		c.Before = value.UnsealForDisplay(prior.Outputs).(map[string]any)
		c.ID = prior.ID
	}
	idStr, _ := value.Reveal(id)
	if value.ContainsUnknown(id) {
		c.Deferred = true
		c.After = map[string]any{"id": id}
		p.set(r.Name, &nodeResult{value: value.Unknown{}, change: c})
		return nil
	}
	sid, ok := idStr.(string)
	if !ok || sid == "" {
		return p.fail(r.Get.ID.Pos(), "get.id of %q must be a non-empty string, got %s", r.Name, value.Describe(idStr))
	}
	shown := strconv.Quote(sid) // the id in messages
	if secret {
		shown = value.SensitiveText
	}
	if !hasPrior || prior.Kind != kind.Get || prior.Type != r.Type || !sameGetID(prior, sid, p.sealer(r.Name)) {
		hasPrior = false // not what the get read at the last apply
	}
	live, err := p.readGet(ctx, r, sid, prior, hasPrior)
	if errors.Is(err, resources.ErrNotFound) {
		return p.fail(r.Get.ID.Pos(), "get %q: %s %s does not exist", r.Name, r.Type, shown)
	}
	if err != nil {
		return p.fail(r.Pos, "get %q: read %s %s: %v", r.Name, r.Type, shown, eval.SecretCallError(err, []any{value.Wrap(id, secret), want}))
	}
	if r.Get.State != nil {
		for _, en := range r.Get.State.Entries {
			w := want[en.Key] // a secret stays wrapped: value.OneLine hides it
			if value.ContainsUnknown(w) {
				continue
			}
			if got := live[en.Key]; !value.Equal(r.Schema.Root.Properties[en.Key], w, got, p.sealer(r.Name)) {
				if secret {
					// The cloud's value of a secret field, or of a get
					// made secret, is secret too.
					got = value.Secret{Value: got}
				}
				p.addDiag(diag.Errorf(en.KeyPos, "get %q: state field %q is %s in the specs but %s in the cloud", r.Name, en.Raw, value.OneLine(w), value.OneLine(got)))
			}
		}
	}
	if hasPrior && p.opts.Refresh {
		if secret {
			c.Drift = secretDrift(r.Schema, p.sealer(r.Name), prior.Outputs, live, false)
		} else {
			c.Drift = refresh.GetDrift(r.Schema, p.sealer(r.Name), prior.Outputs, live)
		}
	}
	got := eval.GetResultOf(r, live, secret)
	c.ID, c.After = sid, got.Fields
	if secret {
		c.ID = "" // the id is secret: the plan keeps it sealed in After only
	}
	p.set(r.Name, &nodeResult{value: got.Value, change: c})
	return nil
}

// sameGetID reports whether prior, a get's record, read the object sid:
// its id is sid, or, for a get secret as a whole, which state records
// without its id, its sealed id field is sid's digest.
func sameGetID(prior state.Record, sid string, sl value.Sealer) bool {
	if prior.ID != "" || !value.IsSealed(prior.Outputs["id"]) {
		return prior.ID == sid
	}
	return value.Same(sl.Sealed(sid, prior.Outputs["id"]), prior.Outputs["id"])
}

// read calls the driver's Read with the resource's read timeout.
func (p *planner) read(ctx context.Context, r *specs.Resource, id string) (map[string]any, error) {
	return refresh.ReadObject(ctx, p.reg, r, id)
}

// readGet reads the object sid of the get r: what the bulk read found of
// it, unless it drifted from what the get read at the last apply, prior
// when read (then, as otherwise, the driver's Read).
func (p *planner) readGet(ctx context.Context, r *specs.Resource, sid string, prior state.Record, read bool) (map[string]any, error) {
	if live, ok := p.bulk.Lookup(r.Type, sid); ok {
		if !read || len(refresh.GetDrift(r.Schema, p.sealer(r.Name), prior.Outputs, live)) == 0 {
			return live, nil
		}
	}
	return p.read(ctx, r, sid)
}

// planResource plans the change of a resource: create it, or compare the
// specs with its record (refreshed from the cloud when asked).
func (p *planner) planResource(ctx context.Context, r *specs.Resource) (err error) {
	ev := p.evaluator()
	// The value is the evaluator's new map, ours to fill.
	desired, err := ev.Inputs(r)
	if err != nil {
		return p.evalErr(err, r.Pos, r.Name)
	}
	r.Schema.FillDefaults(desired)
	if p.validateValues(r.Type, r.Inputs(), desired, func() string { return fmt.Sprintf("%s %q", r.Type, r.Name) }) {
		return errReported
	}
	p.iam.Add(r, desired)
	inputs, given := r.Inputs(), desired // for the driver's checks (checkInputs)
	if p.opts.ShowOnly {
		r.LetInputsGo()
	}
	desired = eval.Normalize(p.reg, r.Type, desired)
	opts, err := p.evalOptions(r, ev)
	if err != nil {
		return err
	}
	c := p.newChange(r.Name, plan.Change{Addr: r.Name, Type: r.Type, Kind: kind.Resource, Pos: r.Pos, After: desired, DeleteBeforeReplace: opts.DeleteBeforeReplace})
	// Once the action is chosen (whichever way below), what it writes of
	// an access policy is reviewed against the live policy: the inputs
	// alone, as the views made of desired below add its outputs to it.
	defer func() {
		if err == nil {
			err = p.reviewAccess(ctx, r.Name, r.Pos, c, eval.Inputs(r.Schema, desired))
		}
	}()
	if p.opts.KeepInputs {
		p.keepInputs(r, c, desired)
	}
	prior, hasPrior, err := p.record(r.Name)
	if err != nil {
		return p.fail(r.Pos, "%s: %v", r.Name, err)
	}
	if hasPrior && (prior.Kind != kind.Resource || prior.Type != r.Type) {
		// The name now declares something else: the old object goes.
		if prior.Kind == kind.Resource {
			return p.failDetail(r.TypePos, "rename the new resource, or remove the old one from state with `reconcile state rm`", "resource %q changed type from %s to %s", r.Name, prior.Type, r.Type)
		}
		hasPrior = false
	}
	if p.checkInputs(ctx, r, inputs, given, prior, hasPrior) {
		return errReported
	}
	if !hasPrior || prior.ID == "" {
		if r.Options.Import != "" {
			return p.planImport(ctx, r, c, desired)
		}
		return p.planCreate(r, c, desired)
	}
	c.ID = prior.ID
	c.Deposed = prior.Deposed
	before, err := p.priorObject(ctx, r, c, prior, desired)
	if err != nil || c.Action == plan.Create {
		return err
	}
	c.Before = eval.SecretOutputs(r, value.UnsealForDisplay(before).(map[string]any), false)
	if prior.Tainted != "" {
		c.Action, c.Reason, c.ReasonDetail = plan.Replace, plan.ReasonTainted, prior.Tainted
		return p.finishReplace(r, c, opts, desired)
	}
	return p.planChange(r, c, prior, opts, before, desired)
}

// keepInputs keeps the inputs of r, desired, in c for the apply, and lets
// its inputs expression go, when the apply would evaluate them to the same
// (see Options.KeepInputs).
func (p *planner) keepInputs(r *specs.Resource, c *plan.Change, desired map[string]any) {
	read, pure := r.InputsRead()
	if !pure || value.ContainsUnknown(desired) {
		return
	}
	for _, ref := range read {
		if !p.stays(ref) {
			return
		}
	}
	pk := packers.Get().(*value.Packer)
	kept := c.KeepInputs(pk, desired)
	packers.Put(pk)
	if kept {
		r.LetInputsGo()
	}
}

// stays reports whether what ref reads is the same when the apply runs as
// when it was planned: config, a built-in, or the id of a managed
// resource whose object stays (a no-op or an update), planned already.
func (p *planner) stays(ref *specs.Ref) bool {
	if _, ok := p.spec.Config[ref.Root]; ok || ref.Root == specs.BuiltinRoot {
		return true
	}
	if len(ref.Path) != 1 || ref.Path[0].IsIndex || ref.Path[0].Key != "id" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	res, ok := p.results[ref.Root]
	if !ok || res.change == nil {
		return false
	}
	c := res.change
	return c.Kind == kind.Resource && (c.Action == plan.NoOp || c.Action == plan.Update)
}

// planCreate plans the create of r.
func (p *planner) planCreate(r *specs.Resource, c *plan.Change, desired map[string]any) error {
	c.Action = plan.Create
	if err := p.checkRecordSize(r, c, desired, nil); err != nil {
		return err
	}
	c.After = eval.CreatedView(r.Schema, desired)
	p.set(r.Name, &nodeResult{value: eval.CreatedRefView(r.Schema, c.After), change: c})
	p.pack(c)
	return nil
}

// pack packs the values of c with Options.Pack. The value references see
// shares their maps until it is let go (see done).
func (p *planner) pack(c *plan.Change) {
	if !p.opts.Pack {
		return
	}
	pk := packers.Get().(*value.Packer)
	c.Pack(pk)
	packers.Put(pk)
}

// packers are the Packers of the nodes being planned at once.
var packers = sync.Pool{New: func() any { return new(value.Packer) }}

// priorObject returns the object of r's record as the plan compares it:
// the record's, or with refresh, the cloud's, its drift noted in c. An
// object deleted outside reconcile is planned as a create.
func (p *planner) priorObject(ctx context.Context, r *specs.Resource, c *plan.Change, prior state.Record, desired map[string]any) (map[string]any, error) {
	if !p.opts.Refresh || prior.Tainted != "" {
		before := eval.Merge(prior.Inputs, prior.Outputs)
		before["id"] = prior.ID
		if names := eval.SecretNotGiven(r, desired); len(names) > 0 {
			// State keeps the outputs made secret only as digests: what
			// references them needs them read.
			live, err := p.read(ctx, r, prior.ID)
			if err != nil {
				return nil, p.fail(r.Pos, "read %q for its secret outputs: read %s %q: %v", r.Name, r.Type, prior.ID, err)
			}
			for _, k := range names {
				before[k] = live[k]
			}
		}
		return before, nil
	}
	d := p.reg.Drivers[r.Type]
	live, fromBulk := p.bulk.Lookup(r.Type, prior.ID)
	for {
		if !fromBulk {
			var err error
			live, err = p.read(ctx, r, prior.ID)
			switch {
			case errors.Is(err, resources.ErrNotFound):
				c.Reason = plan.ReasonDeletedOutside
				c.DeletedOutside, c.DeletedID = true, prior.ID
				c.ID = ""
				return nil, p.planCreate(r, c, desired)
			case err != nil:
				return nil, p.fail(r.Pos, "refresh %q: read %s %q: %v", r.Name, r.Type, prior.ID, err)
			}
		}
		c.Drift, c.DriftDetails, c.DriftAccess = refresh.ResourceDrift(r.Schema, d, p.sealer(r.Name), prior.Inputs, live, r.Options.IgnoreChanges)
		if !fromBulk || len(c.Drift) == 0 {
			break
		}
		fromBulk = false // drifted: read it whole, as it is now
	}
	// The cloud echoes secret inputs in clear: seal them as state does, so
	// that they compare but are never shown or saved. Map entries the cloud
	// adds by itself are its own business.
	before := value.SealLike(live, desired, p.sealer(r.Name)).(map[string]any)
	return eval.WithoutVendorKeys(d, before, desired, prior.Inputs), nil
}

// planChange compares the inputs the specs give r with its object and
// plans nothing, an update in place, or a replacement, with its reason.
func (p *planner) planChange(r *specs.Resource, c *plan.Change, prior state.Record, opts eval.Options, before, desired map[string]any) error {
	c.Options = optionChanges(prior, opts)
	var changed []string
	if len(r.Options.IgnoreChanges) == 0 {
		changed = eval.DiffManaged(r.Schema, before, desired, prior.Inputs, p.sealer(r.Name))
	} else {
		changed = eval.DiffInputs(r.Schema, eval.ManagedInputs(r.Schema, before, desired, prior.Inputs), desired, r.Options.IgnoreChanges, p.sealer(r.Name))
	}
	reason, paths := replaceReason(r, changed)
	switch {
	case len(paths) > 0:
		c.Action, c.Reason, c.ReplacePaths = plan.Replace, reason, paths
		return p.finishReplace(r, c, opts, desired)
	case p.sel.replace[r.Name]:
		c.Action, c.Reason = plan.Replace, plan.ReasonReplaceRequested
		return p.finishReplace(r, c, opts, desired)
	case len(changed) == 0 && len(c.Options) > 0:
		// Only options change: a change of state, none in the cloud.
		c.Action, c.Reason = plan.Update, plan.ReasonOptionsChanged
		for _, o := range c.Options {
			c.ReasonFields = append(c.ReasonFields, o.Name)
		}
	case len(changed) == 0:
		c.Action = plan.NoOp
	default:
		c.Action = plan.Update
	}
	if c.Action == plan.Update {
		if err := p.checkRecordSize(r, c, desired, prior.Outputs); err != nil {
			return err
		}
	}
	// References see the desired inputs (secrets wrapped, not sealed as in
	// state) with the prior outputs.
	view := before // a no-op keeps one copy of the same values, not two
	if c.Action != plan.NoOp || !eval.ViewIsBefore(r.Schema, before, desired, prior.Inputs) {
		view = eval.UpdatedView(r.Schema, before, desired, prior.Inputs)
	}
	c.After = eval.SecretOutputs(r, view, false)
	if c.Action == plan.Update {
		sameSecrets(c, changed)
	}
	c.Idle = p.idle(r, c, prior)
	p.set(r.Name, &nodeResult{value: eval.SecretOutputs(r, view, true), change: c})
	switch {
	case c.Action == plan.Update:
		p.pack(c)
	case c.Action == plan.NoOp && p.opts.ShowOnly:
		c.Before, c.After = nil, nil
	}
	return nil
}

// idle reports whether apply can leave r alone: its change is a no-op and
// the record apply would write is the one state holds. No earlier
// replacement left objects deposed to delete, no secret is to be sealed,
// and the plan's view of it gives the outputs, dependencies and options
// that state holds.
func (p *planner) idle(r *specs.Resource, c *plan.Change, prior state.Record) bool {
	return c.Action == plan.NoOp && len(c.Options) == 0 && r.Get == nil &&
		prior.Kind == kind.Resource && prior.Type == r.Type && prior.Tainted == "" && len(prior.Deposed) == 0 &&
		!value.ContainsSecret(c.After) && !value.ContainsSecret(prior.Inputs) &&
		p.spec.SameResourceDeps(r.Name, prior.Dependencies) && eval.SameOutputs(prior.Outputs, c.Before, prior.Inputs)
}

// replaceReason returns the fields among those changed that force a
// replacement, and why: a field the cloud cannot change in place, or one
// that replaceOnChanges names. With none, there is no reason to replace.
func replaceReason(r *specs.Resource, changed []string) (plan.Reason, []string) {
	force := map[string]bool{}
	for _, po := range r.Options.ReplaceOnChanges {
		force[po.Top] = true
	}
	reason := plan.ReasonReplaceOnChanges
	var paths []string
	for _, k := range changed {
		if pr := r.Schema.Root.Properties[k]; pr != nil && pr.ReplaceOnChange {
			paths = append(paths, k)
			reason = plan.ReasonCannotUpdate
		} else if force[k] {
			paths = append(paths, k)
		}
	}
	if len(paths) == 0 {
		return plan.ReasonNone, nil
	}
	return reason, paths
}

// sameSecrets shows an unchanged secret input as unchanged: Before holds it
// sealed and After in clear, so a renderer could not tell that they match.
// Before may share its maps with the prior object, so it is copied first.
func sameSecrets(c *plan.Change, changed []string) {
	copied := false
	for k, v := range c.After {
		if value.ContainsSecret(v) && !slices.Contains(changed, k) {
			if !copied {
				c.Before, copied = maps.Clone(c.Before), true
			}
			c.Before[k] = v
		}
	}
}

func (p *planner) finishReplace(r *specs.Resource, c *plan.Change, opts eval.Options, desired map[string]any) error {
	if opts.Protect {
		return p.failDetail(r.Pos, fmt.Sprintf("the change needs a replacement (%s); set protect: false and apply, then apply the change", c.ReasonText()), "resource %q is protected and cannot be replaced", r.Name)
	}
	// An object known by its inputs that keeps its id cannot be made
	// again while the old one exists: the old one goes first.
	if n, ok := p.reg.Drivers[r.Type].(resources.NaturalID); ok && !c.DeleteBeforeReplace && c.ID != "" {
		if plain, _ := value.Reveal(desired); !value.ContainsUnknown(plain) {
			if id, known := n.IDFor(plain.(map[string]any)); known && id == c.ID {
				c.DeleteBeforeReplace = true
			}
		}
	}
	if err := p.checkRecordSize(r, c, desired, nil); err != nil {
		return err
	}
	c.After = eval.CreatedView(r.Schema, desired)
	p.set(r.Name, &nodeResult{value: eval.CreatedRefView(r.Schema, c.After), change: c})
	return nil
}

func (p *planner) planImport(ctx context.Context, r *specs.Resource, c *plan.Change, desired map[string]any) error {
	c.Action, c.ImportID = plan.Import, r.Options.Import
	if err := p.checkRecordSize(r, c, desired, nil); err != nil {
		return err
	}
	if owner, ok := refresh.ManagedBy(p.priorHeads(), r.Type, r.Options.Import); ok && owner != r.Name {
		return p.failDetail(r.Options.ImportPos, fmt.Sprintf("two names would own one object; to rename it, run 'reconcile state mv %s %s' and remove options.import", owner, r.Name),
			"import %q: %s %q is already managed in this state as %q", r.Name, r.Type, r.Options.Import, owner)
	}
	if !p.opts.Refresh {
		c.Reason = plan.ReasonImportUnread
		c.After = eval.CreatedView(r.Schema, desired)
		c.After["id"] = r.Options.Import // known: it is the id adopted
		p.set(r.Name, &nodeResult{value: eval.CreatedRefView(r.Schema, c.After), change: c})
		return nil
	}
	live, err := p.read(ctx, r, r.Options.Import)
	if errors.Is(err, resources.ErrNotFound) {
		return p.fail(r.Options.ImportPos, "import %q: %s %q does not exist", r.Name, r.Type, r.Options.Import)
	}
	if err != nil {
		return p.fail(r.Options.ImportPos, "import %q: read %s %q: %v", r.Name, r.Type, r.Options.Import, err)
	}
	live = value.SealLike(live, desired, p.sealer(r.Name)).(map[string]any)
	live = eval.WithoutVendorKeys(p.reg.Drivers[r.Type], live, desired)
	c.Before, c.ID = eval.SecretOutputs(r, value.UnsealForDisplay(live).(map[string]any), false), r.Options.Import
	changed := eval.DiffInputs(r.Schema, eval.ManagedInputs(r.Schema, live, desired, nil), desired, r.Options.IgnoreChanges, p.sealer(r.Name))
	if len(changed) > 0 {
		c.Reason, c.ReasonFields = plan.ReasonImportThenUpdate, changed
	}
	view := eval.UpdatedView(r.Schema, live, desired, nil)
	c.After = eval.SecretOutputs(r, view, false)
	sameSecrets(c, changed)
	p.set(r.Name, &nodeResult{value: eval.SecretOutputs(r, view, true), change: c})
	return nil
}

// optionChanges lists the options that differ between what state records
// and what the specs now say, sorted by name.
func optionChanges(prior state.Record, now eval.Options) []plan.OptionChange {
	var out []plan.OptionChange
	for _, o := range []plan.OptionChange{
		{Name: "deleteBeforeReplace", Before: prior.DeleteBeforeReplace, After: now.DeleteBeforeReplace},
		{Name: "protect", Before: prior.Protect, After: now.Protect},
		{Name: "retainOnDelete", Before: prior.RetainOnDelete, After: now.RetainOnDelete},
	} {
		if o.Before != o.After {
			out = append(out, o)
		}
	}
	return out
}

func (p *planner) evalOptions(r *specs.Resource, ev *eval.Evaluator) (eval.Options, error) {
	opts, err := eval.ResourceOptions(r, ev)
	if err != nil {
		return opts, p.evalErr(err, r.Pos, r.Name)
	}
	return opts, nil
}

// planDeletes plans the deletion of every managed resource in state that the
// specs no longer declare (every one, for a destroy), in reverse dependency
// order.
func (p *planner) planDeletes(ctx context.Context) []plan.Change {
	var gone []state.Record
	for i := range p.records { // in any order: reverseDeleteOrder sorts them
		rec := p.records[i].Head
		if rec.Kind != kind.Resource || rec.ID == "" && len(rec.Deposed) == 0 {
			continue
		}
		if r, declared := p.spec.Resources[rec.Name]; declared && !p.opts.Destroy && r.Get == nil && r.Type == rec.Type {
			continue
		}
		if !p.sel.mayDelete(rec.Name) {
			continue // not targeted
		}
		full, err := p.records[i].Full(nil)
		if err != nil {
			p.addDiag(diag.Errorf(diag.Pos{}, "read state: %v", err))
			continue
		}
		gone = append(gone, full)
	}
	order := reverseDeleteOrder(gone)
	var out []plan.Change
	var mu sync.Mutex
	byName := map[string]*plan.Change{}
	for _, rec := range order {
		c := plan.Change{Addr: rec.Name, Type: rec.Type, Kind: kind.Resource, Action: plan.Delete, Reason: plan.ReasonNotDeclared, ID: rec.ID, Before: value.UnsealForDisplay(eval.Merge(rec.Inputs, rec.Outputs)).(map[string]any)}
		if p.opts.Destroy {
			c.Reason = plan.ReasonDestroy
		}
		c.Before["id"] = rec.ID
		switch {
		case rec.RetainOnDelete:
			c.Action, c.Reason = plan.Forget, plan.ReasonRetainOnDelete
		case rec.Protect:
			d := diag.Errorf(diag.Pos{}, "resource %q is protected and cannot be deleted", rec.Name)
			d.Detail = "protect is recorded in state: declare it again, or set protect: false on it and apply before removing it, or run `reconcile state rm " + rec.Name + "` to forget it without deleting"
			p.addDiag(d)
		}
		out = append(out, c)
	}
	for i := range out {
		byName[out[i].Addr] = &out[i]
	}
	if p.opts.Refresh {
		var names []string
		for _, c := range out {
			if c.Action == plan.Delete && c.ID != "" {
				names = append(names, c.Addr)
			}
		}
		dag.Walk(ctx, names, nil, p.opts.Parallelism, func(ctx context.Context, name string) error {
			c := byName[name]
			d, ok := p.reg.Drivers[c.Type]
			if !ok || p.bulk.Has(c.Type, c.ID) {
				return nil
			}
			if _, err := d.Read(resources.WithNode(ctx, name), c.ID); errors.Is(err, resources.ErrNotFound) {
				mu.Lock()
				c.Action, c.Reason = plan.Forget, plan.ReasonGoneOutside
				c.DeletedOutside, c.DeletedID = true, c.ID
				mu.Unlock()
			}
			return nil
		})
	}
	p.reviewDeletes(ctx, out)
	return out
}

// reverseDeleteOrder orders records so that each comes before the records
// it depends on.
func reverseDeleteOrder(recs []state.Record) []state.Record {
	byName := map[string]state.Record{}
	for _, r := range recs {
		byName[r.Name] = r
	}
	deps := map[string][]string{}
	for _, r := range recs {
		deps[r.Name] = []string{}
		for _, d := range r.Dependencies {
			if _, ok := byName[d]; ok && d != r.Name {
				deps[r.Name] = append(deps[r.Name], d)
			}
		}
	}
	order := dag.New(deps).Order()
	if len(order) < len(recs) { // a cycle in old state: fall back to names
		order = slices.Sorted(maps.Keys(byName))
	}
	out := make([]state.Record, 0, len(order))
	for i := len(order) - 1; i >= 0; i-- {
		out = append(out, byName[order[i]])
	}
	return out
}

func (p *planner) outputs() map[string]any {
	out := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(p.spec.Outputs)) {
		o := p.spec.Outputs[name]
		if !p.sel.walksAll(p.spec.OutputDeps(name)) {
			continue // a targeted plan did not plan what it needs
		}
		v, err := p.evaluator().Eval(o.Expr)
		if err != nil {
			_ = p.evalErr(err, o.Pos, name)
			continue
		}
		out[name] = v
	}
	return out
}
