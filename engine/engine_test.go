package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
	"github.com/reconcile-dev/reconcile/state"
)

// fakeCloud is a test driver: objects live in a map; each operation can be
// made to fail through the function fields, which are safe when unset and
// are called with the cloud's lock held.
type fakeCloud struct {
	mu      sync.Mutex
	objects map[string]resources.Attrs
	next    int
	calls   []string
	reads   int
	// external are the objects made outside reconcile (put), which state
	// need not reference.
	external map[string]bool

	// failCreate fails a create before anything is made.
	failCreate func(want resources.Attrs) error
	// taintCreate fails a create after the object was made: Create returns
	// the new id together with the error, as an endpoint that ends FAILED.
	taintCreate func(want resources.Attrs) error
	failUpdate  func(id string) error
	failDelete  func(id string) error
	// refuseInUse makes Delete refuse, as OCI refuses to delete a model
	// an endpoint deploys (409 Conflict), an object whose id is a word of
	// another object's attribute.
	refuseInUse bool
}

func newFakeCloud() *fakeCloud {
	return &fakeCloud{objects: map[string]resources.Attrs{}, external: map[string]bool{}}
}

func (f *fakeCloud) log(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

// callLog returns the calls made so far: "create DISPLAYNAME",
// "update ID", "delete ID".
func (f *fakeCloud) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// readCount returns how many times Read was called.
func (f *fakeCloud) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// put stores an object made outside reconcile.
func (f *fakeCloud) put(id string, attrs resources.Attrs) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := resources.Attrs{"id": id}
	for k, v := range attrs {
		o[k] = v
	}
	f.objects[id] = o
	f.external[id] = true
}

// remove deletes an object outside reconcile.
func (f *fakeCloud) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.objects, id)
}

// object returns a copy of the object id, if it exists.
func (f *fakeCloud) object(id string) (resources.Attrs, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.objects[id]
	if !ok {
		return nil, false
	}
	out := resources.Attrs{}
	for k, v := range o {
		out[k] = v
	}
	return out, true
}

// ids returns the ids of every object, sorted.
func (f *fakeCloud) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id := range f.objects {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (f *fakeCloud) Read(_ context.Context, id string) (resources.Attrs, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	o, ok := f.objects[id]
	if !ok {
		return nil, resources.ErrNotFound
	}
	out := resources.Attrs{}
	for k, v := range o {
		out[k] = v
	}
	return out, nil
}

func (f *fakeCloud) Create(_ context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log("create %v", want["displayName"])
	if f.failCreate != nil {
		if err := f.failCreate(want); err != nil {
			return "", nil, err
		}
	}
	f.next++
	id := fmt.Sprintf("ocid1.ailanguageendpoint.oc1..fake%d", f.next)
	o := resources.Attrs{"id": id, "state": "ACTIVE", "projectId": "ocid1.project"}
	for k, v := range want {
		o[k] = v
	}
	if f.taintCreate != nil {
		if err := f.taintCreate(want); err != nil {
			o["state"] = "FAILED"
			f.objects[id] = o
			return id, nil, err
		}
	}
	f.objects[id] = o
	return id, o, nil
}

func (f *fakeCloud) Update(_ context.Context, id string, _, want resources.Attrs) (resources.Attrs, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log("update %s", id)
	if f.failUpdate != nil {
		if err := f.failUpdate(id); err != nil {
			return nil, err
		}
	}
	o, ok := f.objects[id]
	if !ok {
		return nil, resources.ErrNotFound
	}
	for k, v := range want {
		o[k] = v
	}
	out := resources.Attrs{}
	for k, v := range o {
		out[k] = v
	}
	return out, nil
}

func (f *fakeCloud) Delete(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log("delete %s", id)
	if f.failDelete != nil {
		if err := f.failDelete(id); err != nil {
			return err
		}
	}
	if _, ok := f.objects[id]; !ok {
		return resources.ErrNotFound
	}
	if f.refuseInUse {
		for _, other := range slices.Sorted(maps.Keys(f.objects)) {
			for k, v := range f.objects[other] {
				if s, ok := v.(string); ok && other != id && k != "id" && slices.Contains(strings.Fields(s), id) {
					return fmt.Errorf("409 Conflict: %s is in use: %s.%s refers to it", id, other, k)
				}
			}
		}
	}
	delete(f.objects, id)
	return nil
}

// fakeFunc is a test lookup: it records the arguments of every call and
// answers with result (by default an id made from the arguments).
type fakeFunc struct {
	mu     sync.Mutex
	calls  []resources.Attrs
	result func(args resources.Attrs) (resources.Attrs, error)
}

// errNoCancel is returned by a fake whose context cannot be cancelled: the
// engine must pass its caller's context down to every cloud call.
var errNoCancel = errors.New("called with a context that cannot be cancelled")

func (f *fakeFunc) Invoke(ctx context.Context, args resources.Attrs) (resources.Attrs, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ctx.Done() == nil {
		return nil, errNoCancel
	}
	f.calls = append(f.calls, args)
	if f.result != nil {
		return f.result(args)
	}
	return resources.Attrs{"id": fmt.Sprint(args)}, nil
}

// invocations returns the arguments of every call so far.
func (f *fakeFunc) invocations() []resources.Attrs {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]resources.Attrs(nil), f.calls...)
}

// Type tokens of the tests.
const (
	endpointToken = "oci:AiLanguage:Endpoint"
	userToken     = "datadog:getCurrentUser"
	iamToken      = "gcp:endpoints:getServiceIamPolicy"
)

// harness runs plans and applies against a fake cloud and a real state file
// in a temporary directory.
type harness struct {
	t     *testing.T
	cloud *fakeCloud
	user  *fakeFunc // datadog:getCurrentUser
	iam   *fakeFunc // gcp:endpoints:getServiceIamPolicy
	path  string
	reg   resources.Registry

	// serial is the state's serial after the last apply; forgotten counts
	// the objects applies forgot (retainOnDelete), which state no longer
	// references.
	serial    int64
	forgotten int
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	c := newFakeCloud()
	user := &fakeFunc{result: func(resources.Attrs) (resources.Attrs, error) {
		return resources.Attrs{"id": "user-1", "email": "ada@example.com", "handle": "ada@example.com", "name": "Ada", "orgId": "org-1"}, nil
	}}
	iam := &fakeFunc{result: func(args resources.Attrs) (resources.Attrs, error) {
		name := fmt.Sprint(args["serviceName"])
		return resources.Attrs{"id": "services/" + name, "etag": "etag-of-" + name, "policyData": "{}"}, nil
	}}
	return &harness{t: t, cloud: c, user: user, iam: iam, path: filepath.Join(t.TempDir(), "state.db"),
		reg: resources.Registry{
			Drivers:   map[string]resources.Driver{endpointToken: c},
			Functions: map[string]resources.Function{userToken: user, iamToken: iamFunc{iam, iamComparer}},
		}}
}

// iamComparer compares IAM policy results as the real lookup does.
var iamComparer = endpointsiam.NewServiceIamPolicy(endpointsiam.Config{}).(resources.ResultComparer)

// iamFunc is a fake IAM policy lookup that compares its results with the
// real lookup's ResultComparer.
type iamFunc struct {
	*fakeFunc
	resources.ResultComparer
}

func (h *harness) load(src string) *specs.Spec {
	h.t.Helper()
	spec, diags := specs.Load(h.t.TempDir(), []specs.Source{{Name: "spec.yaml", Data: []byte(src)}}, nil)
	if diags.HasErrors() {
		h.t.Fatalf("load: %v", diags.Err())
	}
	return spec
}

// reading calls fn with the state file opened read-only.
func (h *harness) reading(fn func(st *state.Store)) {
	h.t.Helper()
	st, err := state.Open(h.path, state.Options{ReadOnly: true, Create: true})
	if err != nil {
		h.t.Fatal(err)
	}
	defer st.Close()
	fn(st)
}

// makePlan plans src against the state file, read-only, and returns the
// diagnostics instead of failing on them.
func (h *harness) makePlan(src string, opts planner.Options) (p *plan.Plan, diags diag.Diagnostics) {
	h.t.Helper()
	h.reading(func(st *state.Store) { p, diags = planner.Plan(h.t.Context(), h.load(src), st, h.reg, opts) })
	return p, diags
}

func (h *harness) plan(src string, opts planner.Options) *plan.Plan {
	h.t.Helper()
	p, diags := h.makePlan(src, opts)
	if diags.HasErrors() {
		h.t.Fatalf("plan: %v", diags.Err())
	}
	return p
}

// apply plans src with refresh and applies the plan.
func (h *harness) apply(src string) (*plan.Plan, *report.Apply) {
	h.t.Helper()
	return h.applyWith(src, planner.Options{Refresh: true}, apply.Options{Command: "apply"})
}

// destroy plans the deletion of everything and applies it.
func (h *harness) destroy(src string) (*plan.Plan, *report.Apply) {
	h.t.Helper()
	return h.applyWith(src, planner.Options{Refresh: true, Destroy: true}, apply.Options{Command: "destroy"})
}

func (h *harness) applyWith(src string, po planner.Options, ao apply.Options) (*plan.Plan, *report.Apply) {
	h.t.Helper()
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		h.t.Fatal(err)
	}
	defer st.Close()
	spec := h.load(src)
	p, diags := planner.Plan(h.t.Context(), spec, st, h.reg, po)
	if diags.HasErrors() {
		h.t.Fatalf("plan: %v", diags.Err())
	}
	res, err := apply.Apply(h.t.Context(), p, spec, st, h.reg, ao)
	if err != nil {
		h.t.Fatal(err)
	}
	h.checkInvariants(st, res)
	return p, res
}

// checkInvariants checks, after every apply, what must hold whatever the
// apply did, as bbolt's test harness checks its own after every
// transaction: the serial only grew; no create is left unresolved but one
// that failed or was interrupted; and every object the fake cloud made is
// referenced exactly once by state (as a record's object or a deposed one),
// apart from those an unresolved create may have made and those forgotten.
func (h *harness) checkInvariants(st state.Backend, res *report.Apply) {
	h.t.Helper()
	m, err := st.Meta()
	if err != nil {
		h.t.Fatal(err)
	}
	if m.Serial < h.serial {
		h.t.Errorf("invariant: the serial went back from %d to %d", h.serial, m.Serial)
	}
	h.serial = m.Serial
	h.forgotten += res.Counts[plan.Forget]

	undone := map[string]bool{}
	for _, f := range slices.Concat(res.Failed, res.Interrupted) {
		undone[f.Addr] = true
	}
	ins, err := st.Intents()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, in := range ins {
		if !undone[in.Name] {
			h.t.Errorf("invariant: the create of %s is left unresolved, but it neither failed nor was interrupted", in.Name)
		}
	}

	recs, err := st.List()
	if err != nil {
		h.t.Fatal(err)
	}
	refs := map[string][]string{}
	for _, r := range recs {
		if r.Kind != kind.Resource || r.Type != endpointToken {
			continue
		}
		if r.ID != "" {
			refs[r.ID] = append(refs[r.ID], r.Name)
		}
		for _, d := range r.Deposed {
			refs[d] = append(refs[d], r.Name+" (deposed)")
		}
	}
	for id, by := range refs {
		if len(by) > 1 {
			h.t.Errorf("invariant: object %s is referenced %d times by state: %v", id, len(by), by)
		}
	}
	h.cloud.mu.Lock()
	defer h.cloud.mu.Unlock()
	var unreferenced []string
	for id := range h.cloud.objects {
		if len(refs[id]) == 0 && !h.cloud.external[id] {
			unreferenced = append(unreferenced, id)
		}
	}
	if len(unreferenced) > len(ins)+h.forgotten {
		slices.Sort(unreferenced)
		h.t.Errorf("invariant: objects made by reconcile that state does not reference: %v (%d unresolved creates, %d forgotten)", unreferenced, len(ins), h.forgotten)
	}
}

// mustApply applies src and fails the test if any node failed.
func (h *harness) mustApply(src string) (*plan.Plan, *report.Apply) {
	h.t.Helper()
	p, res := h.apply(src)
	if res.Err() != nil {
		h.t.Fatalf("apply: %v: %v", res.Err(), res.Failed)
	}
	return p, res
}

// records reads every record of the state file, by name.
func (h *harness) records() map[string]state.Record {
	h.t.Helper()
	var rs []state.Record
	var err error
	h.reading(func(st *state.Store) { rs, err = st.List() })
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]state.Record{}
	for _, r := range rs {
		out[r.Name] = r
	}
	return out
}

// record reads one record of the state file; the test fails without it.
func (h *harness) record(name string) state.Record {
	h.t.Helper()
	r, ok := h.records()[name]
	if !ok {
		h.t.Fatalf("state has no record %q", name)
	}
	return r
}

// stateKey reads the state's key for digests and plan files.
func (h *harness) stateKey() []byte {
	h.t.Helper()
	var key []byte
	var err error
	h.reading(func(st *state.Store) { key, err = st.SecretKey() })
	if err != nil {
		h.t.Fatal(err)
	}
	return key
}

// signed returns pf written with key and read back, as a plan file saved
// by plan and read by apply.
func signed(t *testing.T, pf plan.File, key []byte) *plan.File {
	t.Helper()
	var buf bytes.Buffer
	if err := plan.WriteFile(&buf, pf, "test", key); err != nil {
		t.Fatal(err)
	}
	out, err := plan.ReadFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return &out
}

// meta reads the lineage and serial of the state file.
func (h *harness) meta() state.Meta {
	h.t.Helper()
	var m state.Meta
	var err error
	h.reading(func(st *state.Store) { m, err = st.Meta() })
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

// change returns the change of addr in p; the test fails without it.
func change(t *testing.T, p *plan.Plan, addr string) plan.Change {
	t.Helper()
	for _, c := range p.Changes {
		if c.Addr == addr {
			return c
		}
	}
	t.Fatalf("plan has no change for %q; it has %s", addr, actions(p))
	return plan.Change{}
}

// diagText joins the diagnostics, with their details, one per line.
func diagText(ds diag.Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

func actions(p *plan.Plan) string {
	var parts []string
	for _, c := range p.Changes {
		parts = append(parts, c.Addr+":"+c.Action.String())
	}
	return strings.Join(parts, " ")
}

const twoEndpoints = `
resources:
  a:
    type: oci:AiLanguage:Endpoint
    properties:
      compartment_id: ocid1.compartment.oc1..x
      modelId: ocid1.ailanguagemodel.oc1..m
      displayName: first
  b:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ocid1.compartment.oc1..x
      modelId: ocid1.ailanguagemodel.oc1..m
      displayName: second-${a.id}
      description: ${a.displayName}
outputs:
  bId: ${b.id}
`

func TestApplyCreatesThenNoChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p, res := h.apply(twoEndpoints)
	if got, want := actions(p), "a:create b:create"; got != want {
		t.Fatalf("first plan = %q, want %q", got, want)
	}
	if res.Err() != nil || res.Counts[plan.Create] != 2 {
		t.Fatalf("apply: counts %v, failed %v", res.Counts, res.Failed)
	}
	if res.Outputs["bId"] == nil {
		t.Errorf("outputs = %v, want bId", res.Outputs)
	}
	p2 := h.plan(twoEndpoints, planner.Options{Refresh: true})
	if p2.HasChanges() {
		t.Errorf("second plan = %q, want no changes", actions(p2))
	}
}

// endpoint returns the YAML of one oci:AiLanguage:Endpoint resource named
// name, with displayName and the compartment and model every test uses.
// Each line of more is "key: value" (flow YAML allowed) and goes under
// properties, or under options when it starts with "options.".
func endpoint(name, displayName string, more ...string) string {
	props := map[string]string{
		"compartmentId": "ocid1.compartment.oc1..x",
		"modelId":       "ocid1.ailanguagemodel.oc1..m1",
		"displayName":   displayName,
	}
	var opts []string
	for _, m := range more {
		if o, ok := strings.CutPrefix(m, "options."); ok {
			opts = append(opts, o)
			continue
		}
		k, v, _ := strings.Cut(m, ":")
		props[k] = strings.TrimSpace(v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %s:\n    type: oci:AiLanguage:Endpoint\n    properties:\n", name)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if props[k] == "" {
			continue // a key given without a value is left out
		}
		fmt.Fprintf(&b, "      %s: %s\n", k, props[k])
	}
	if len(opts) > 0 {
		b.WriteString("    options:\n")
		for _, o := range opts {
			fmt.Fprintf(&b, "      %s\n", o)
		}
	}
	return b.String()
}

// resourcesOf is a spec declaring the given resources (from endpoint).
func resourcesOf(rs ...string) string {
	return "resources:\n" + strings.Join(rs, "")
}

// TestStateLock checks that a second writer cannot open a state that a
// writer holds, and that it names the holder.
func TestStateLock(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st, err := state.Open(h.path, state.Options{Command: "reconcile apply", Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for name, opts := range map[string]state.Options{
		"writer": {LockTimeout: 50 * time.Millisecond},
		"reader": {LockTimeout: 50 * time.Millisecond, ReadOnly: true},
	} {
		t.Run(name, func(t *testing.T) {
			st2, err := state.Open(h.path, opts)
			if err == nil {
				st2.Close()
				t.Fatalf("state.Open(%+v) while a writer holds the state succeeded, want a *state.LockedError", opts)
			}
			var le *state.LockedError
			if !errors.As(err, &le) {
				t.Fatalf("state.Open(%+v) = %v (%T), want a *state.LockedError", opts, err, err)
			}
			if le.Holder.PID != os.Getpid() || le.Holder.Command != "reconcile apply" {
				t.Errorf("holder = %+v, want pid %d and command %q", le.Holder, os.Getpid(), "reconcile apply")
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
				t.Errorf("error %q does not name the holder's pid", err)
			}
		})
	}
}
