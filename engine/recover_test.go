package engine_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// tokenCloud is a fakeCloud whose creates honour idempotency tokens, as
// OCI's do: a create with a token seen before returns the first object.
// It recovers interrupted creates by token unless recover is false.
type tokenCloud struct {
	*fakeCloud
	recover bool

	mu      sync.Mutex
	byToken map[string]string
	creates int // creates that made an object
	// onCreate, when set, runs after a create made its object and before
	// it returns: a test snapshots the state there, as if the process died.
	onCreate func(id string)
	// block, when set, makes each create wait for it (or for ctx) before
	// making anything; started receives the display name of each create as
	// it starts to wait.
	block   chan struct{}
	started chan string
	// dead makes every create fail without making anything: the process
	// running the apply is gone.
	dead bool
}

func newTokenCloud(recover bool) *tokenCloud {
	return &tokenCloud{fakeCloud: newFakeCloud(), recover: recover, byToken: map[string]string{}}
}

func (c *tokenCloud) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	tok := resources.IdempotencyToken(ctx)
	c.mu.Lock()
	id, seen := c.byToken[tok]
	dead := c.dead
	c.mu.Unlock()
	if dead {
		return "", nil, errors.New("the process is dead")
	}
	if seen && tok != "" {
		got, err := c.Read(ctx, id)
		return id, got, err
	}
	if c.started != nil {
		c.started <- want["displayName"].(string)
	}
	if c.block != nil {
		select {
		case <-c.block:
		case <-ctx.Done():
			return "", nil, ctx.Err()
		}
	}
	id, got, err := c.fakeCloud.Create(ctx, want)
	if id != "" {
		c.mu.Lock()
		c.byToken[tok] = id
		c.creates++
		c.mu.Unlock()
		if c.onCreate != nil {
			c.onCreate(id)
		}
	}
	return id, got, err
}

// recoverer adds Recover to a tokenCloud.
type recoverer struct{ *tokenCloud }

func (c recoverer) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	if len(req.Hidden) > 0 {
		return "", nil, errors.New("cannot replay: secret inputs " + strings.Join(req.Hidden, ","))
	}
	c.mu.Lock()
	id, ok := c.byToken[req.Token]
	c.mu.Unlock()
	if !ok {
		return "", nil, nil
	}
	got, err := c.Read(ctx, id)
	if errors.Is(err, resources.ErrNotFound) {
		return "", nil, nil
	}
	return id, got, err
}

func (c *tokenCloud) driver() resources.Driver {
	if c.recover {
		return recoverer{c}
	}
	return c
}

func (c *tokenCloud) createCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.creates
}

// useCloud makes h's endpoints go to c.
func (h *harness) useCloud(c *tokenCloud) {
	h.cloud = c.fakeCloud
	h.reg.Drivers[endpointToken] = c.driver()
}

// crashDuringCreate applies src with the first create making its object
// and then the process dying before recording it: the state file is what it
// was at that moment, and no later create makes anything.
func (h *harness) crashDuringCreate(c *tokenCloud, src string) {
	h.t.Helper()
	var snapshot []byte
	c.onCreate = func(string) {
		if snapshot == nil {
			b, err := os.ReadFile(h.path)
			if err != nil {
				h.t.Fatal(err)
			}
			snapshot = b
			c.mu.Lock()
			c.dead = true
			c.mu.Unlock()
		}
	}
	h.applyWith(src, planner.Options{Refresh: true}, apply.Options{Command: "apply", Parallelism: 1})
	c.onCreate = nil
	c.mu.Lock()
	c.dead = false
	c.mu.Unlock()
	if snapshot == nil {
		h.t.Fatal("no create ran")
	}
	if err := os.WriteFile(h.path, snapshot, 0o600); err != nil {
		h.t.Fatal(err)
	}
	// The process died: what it wrote after the snapshot never was.
	h.serial = h.meta().Serial
}

// resolve runs ResolveIntents on h's state.
func (h *harness) resolve() *report.Intents {
	h.t.Helper()
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		h.t.Fatal(err)
	}
	defer st.Close()
	rep, err := apply.ResolveIntents(h.t.Context(), st, h.reg, apply.ResolveOptions{LandingWindow: 10 * time.Millisecond})
	if err != nil {
		h.t.Fatal(err)
	}
	return rep
}

// lateLanding is a recoverer whose first lookup finds nothing, and whose
// interrupted create lands right after it: the API had the request and
// made the object a moment after the process died.
type lateLanding struct {
	recoverer
	landed bool
}

func (c *lateLanding) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	id, got, err := c.recoverer.Recover(ctx, req)
	if id == "" && err == nil && !c.landed {
		c.landed = true
		made, _, err := c.fakeCloud.Create(ctx, req.Want)
		if err != nil {
			return "", nil, err
		}
		c.mu.Lock()
		c.byToken[req.Token] = made
		c.creates++
		c.mu.Unlock()
	}
	return id, got, err
}

// TestResolveIntentsLateLanding: a create the dead run sent that lands
// after the first lookup is adopted, not cleared (which would make the
// next apply create a second object).
func TestResolveIntentsLateLanding(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	h.useCloud(c)
	src := resourcesOf(endpoint("a", "first"))
	// The apply dies while its create waits to be sent: the intent is
	// written, nothing is made yet.
	var snapshot []byte
	c.block, c.started = make(chan struct{}), make(chan string, 1)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-c.started
		b, err := os.ReadFile(h.path)
		if err == nil {
			snapshot = b
		}
		cancel()
	}()
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	spec := h.load(src)
	p, diags := planner.Plan(ctx, spec, st, h.reg, planner.Options{Refresh: true})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	apply.Apply(ctx, p, spec, st, h.reg, apply.Options{Command: "apply"})
	st.Close()
	c.block, c.started = nil, nil
	if snapshot == nil || c.createCount() != 0 {
		t.Fatalf("the create was not interrupted before making anything (%d made)", c.createCount())
	}
	if err := os.WriteFile(h.path, snapshot, 0o600); err != nil {
		t.Fatal(err)
	}
	h.serial = h.meta().Serial

	h.reg.Drivers[endpointToken] = &lateLanding{recoverer: recoverer{c}}
	if got := outcomes(h.resolve()); got != "a:adopted" {
		t.Fatalf("ResolveIntents = %q, want a:adopted: the create landed within the window", got)
	}
	h.mustApply(src)
	if n := c.createCount(); n != 1 || len(c.ids()) != 1 {
		t.Errorf("%d objects made, cloud holds %v; want one", n, c.ids())
	}
}

func (h *harness) intents() []state.Intent {
	h.t.Helper()
	var ins []state.Intent
	var err error
	h.reading(func(st *state.Store) { ins, err = st.Intents() })
	if err != nil {
		h.t.Fatal(err)
	}
	return ins
}

func outcomes(rep *report.Intents) string {
	var parts []string
	for _, r := range rep.Intents {
		parts = append(parts, r.Name+":"+r.Outcome.String())
	}
	return strings.Join(parts, " ")
}

// TestResolveIntentsAdoptsCrashedCreate: the process dies after the cloud
// made the object and before state recorded it. The next run adopts the
// object; nothing is created twice.
func TestResolveIntentsAdoptsCrashedCreate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	h.useCloud(c)
	src := resourcesOf(endpoint("a", "first", "options.protect: true"), endpoint("b", "second", "description: ${a.id}"))
	h.crashDuringCreate(c, src)
	if _, ok := h.records()["a"]; ok {
		t.Fatal("the snapshot already records a")
	}
	if ins := h.intents(); len(ins) != 1 || ins[0].Name != "a" || !ins[0].Protect {
		t.Fatalf("intents after the crash = %+v, want a's, with protect", ins)
	}
	rep := h.resolve()
	if got := outcomes(rep); got != "a:adopted" {
		t.Fatalf("ResolveIntents = %q, want a:adopted", got)
	}
	r := h.record("a")
	if r.ID != c.ids()[0] || r.Inputs["displayName"] != "first" || !r.Protect || r.Outputs["state"] != "ACTIVE" {
		t.Errorf("adopted record = %+v, want the object %s with its inputs, outputs and protect", r, c.ids()[0])
	}
	if ins := h.intents(); len(ins) != 0 {
		t.Errorf("intents after resolving = %+v, want none", ins)
	}
	if p := h.plan(src, planner.Options{Refresh: true}); actions(p) != "a:no-op b:create" {
		t.Errorf("plan after adopting a = %q, want a:no-op b:create", actions(p))
	}
	h.mustApply(src)
	if n := c.createCount(); n != 2 || len(c.ids()) != 2 {
		t.Errorf("%d creates made %v, want 2 objects", n, c.ids())
	}
	if h.record("b").Inputs["description"] != h.record("a").ID {
		t.Errorf("b does not refer to the adopted a")
	}
}

// TestResolveIntentsClearsWhenNothingMade: the process died before the
// create reached the cloud.
func TestResolveIntentsClearsWhenNothingMade(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	h.useCloud(c)
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	err = st.PutIntent(state.Intent{Name: "a", Type: endpointToken, Token: "never-sent", Inputs: map[string]any{"displayName": "first"}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(h.resolve()); got != "a:cleared" {
		t.Fatalf("ResolveIntents = %q, want a:cleared", got)
	}
	if len(h.intents()) != 0 || len(h.records()) != 0 {
		t.Errorf("state after clearing: intents %v, records %v; want none", h.intents(), h.records())
	}
	h.mustApply(resourcesOf(endpoint("a", "first")))
	if len(c.ids()) != 1 {
		t.Errorf("cloud holds %v, want one object", c.ids())
	}
}

// TestResolveIntentsReplacement: a replacement that creates first dies
// after the new object was made; the new one is adopted and the old one
// kept as deposed, then deleted.
func TestResolveIntentsReplacement(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	h.useCloud(c)
	h.mustApply(resourcesOf(endpoint("a", "first", "options.replaceOnChanges: [displayName]")))
	old := h.record("a").ID
	src := resourcesOf(endpoint("a", "second", "options.replaceOnChanges: [displayName]"))
	h.crashDuringCreate(c, src)
	if got := outcomes(h.resolve()); got != "a:adopted" {
		t.Fatalf("ResolveIntents = %q, want a:adopted", got)
	}
	r := h.record("a")
	if r.ID == old || r.Inputs["displayName"] != "second" || len(r.Deposed) != 1 || r.Deposed[0] != old {
		t.Fatalf("record after adopting the replacement = id %s inputs %v deposed %v; want the new object, the old one deposed", r.ID, r.Inputs, r.Deposed)
	}
	h.mustApply(src)
	if ids := c.ids(); len(ids) != 1 || ids[0] != r.ID {
		t.Errorf("cloud after the next apply = %v, want just %s", ids, r.ID)
	}
}

// TestResolveIntentsKeptThenReplayed: a driver that cannot recover leaves
// the intent; the next apply creates the node with the same token (and
// gets the first object back) when the inputs are the same, and refuses to
// create it when they changed.
func TestResolveIntentsKeptThenReplayed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(false)
	h.useCloud(c)
	src := resourcesOf(endpoint("a", "first"))
	h.crashDuringCreate(c, src)
	rep := h.resolve()
	if got := outcomes(rep); got != "a:kept" || rep.Intents[0].Err == nil {
		t.Fatalf("ResolveIntents = %q (%v), want a:kept with a reason", got, rep.Intents)
	}
	_, res := h.apply(resourcesOf(endpoint("a", "changed")))
	if len(res.Failed) != 1 || !strings.Contains(res.Failed[0].Err.Error(), "could not be resolved") {
		t.Fatalf("apply with other inputs: failed %v, want a refusal to create a", res.Failed)
	}
	if n := c.createCount(); n != 1 {
		t.Fatalf("%d objects made, want still 1", n)
	}
	h.mustApply(src)
	if n := c.createCount(); n != 1 || h.record("a").ID != c.ids()[0] {
		t.Errorf("after the replay: %d objects made, a = %s; want the first object %v", n, h.record("a").ID, c.ids())
	}
	if len(h.intents()) != 0 {
		t.Errorf("intents left: %v", h.intents())
	}
}

// TestResolveIntentsSecretInputs: a create whose inputs held a secret
// cannot be replayed from state; the apply that gives the same secret
// replays it with its token.
func TestResolveIntentsSecretInputs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	h.useCloud(c)
	src := resourcesOf(endpoint("a", "first", "description: {fn::secret: hunter2}"))
	h.crashDuringCreate(c, src)
	ins := h.intents()
	if len(ins) != 1 {
		t.Fatalf("intents = %v", ins)
	}
	b, _ := os.ReadFile(h.path)
	if strings.Contains(string(b), "hunter2") {
		t.Fatal("the state file holds the secret in clear")
	}
	if got := outcomes(h.resolve()); got != "a:kept" {
		t.Fatalf("ResolveIntents = %q, want a:kept", got)
	}
	h.mustApply(src)
	if n := c.createCount(); n != 1 {
		t.Errorf("%d objects made, want 1", n)
	}
}

// TestResolveIntentsSuperseded: the node was imported after the crash.
func TestResolveIntentsSuperseded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(false)
	h.useCloud(c)
	h.crashDuringCreate(c, resourcesOf(endpoint("a", "first")))
	c.put("ocid1.other", resources.Attrs{"displayName": "other", "state": "ACTIVE"})
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = apply.Import(t.Context(), st, h.reg, "a", endpointToken, "ocid1.other")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(h.resolve()); got != "a:superseded" {
		t.Errorf("ResolveIntents = %q, want a:superseded", got)
	}
	if len(h.intents()) != 0 {
		t.Errorf("intents left: %v", h.intents())
	}
}

// TestResolveIntentsCrashAfterRecord: the process died between recording
// the object and clearing the intent: the record stands.
func TestResolveIntentsCrashAfterRecord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := newTokenCloud(true)
	h.useCloud(c)
	h.mustApply(resourcesOf(endpoint("a", "first")))
	r := h.record("a")
	var tok string
	for k, v := range c.byToken {
		if v == r.ID {
			tok = k
		}
	}
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	err = st.PutIntent(state.Intent{Name: "a", Type: endpointToken, Token: tok, Inputs: r.Inputs, Time: r.UpdatedAt.Add(-time.Second)})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(h.resolve()); got != "a:superseded" {
		t.Errorf("ResolveIntents = %q, want a:superseded", got)
	}
	if h.record("a").ID != r.ID || c.createCount() != 1 {
		t.Errorf("record %s, %d creates; want %s and 1", h.record("a").ID, c.createCount(), r.ID)
	}
}

// TestApplyKeepsIntentOfUnknownOutcome: a create that failed in a way that
// leaves unknown whether it made the object (a connection reset, a 5xx
// after the retries) keeps its intent, for the next run to resolve; what
// the driver says was refused (a 4xx, bad input, an object already there)
// clears it. The verdict is the driver's: the engine reads no status code.
func TestApplyKeepsIntentOfUnknownOutcome(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		err      error
		wantKept bool
	}{
		"connection reset": {errors.New("connection reset by peer"), true},
		"503":              {&resources.APIError{Service: "oci", Status: 503, Message: "busy"}, true},
		"429":              {&resources.APIError{Service: "oci", Status: 429, Message: "slow down"}, true},
		"400 unmarked":     {&resources.APIError{Service: "oci", Status: 400, Message: "bad"}, true},
		"400 refused":      {resources.Refused(&resources.APIError{Service: "oci", Status: 400, Message: "bad"}), false},
		"bad input":        {&resources.AttrError{Path: []string{"displayName"}, Err: errors.New("too long")}, false},
		"already exists":   {&resources.ExistsError{Type: endpointToken, ID: "ocid1.there"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.cloud.failCreate = func(resources.Attrs) error { return tc.err }
			_, res := h.apply(resourcesOf(endpoint("a", "a")))
			if len(res.Failed) != 1 {
				t.Fatalf("failed = %v, want a", res.Failed)
			}
			if kept := len(h.intents()) == 1; kept != tc.wantKept {
				t.Errorf("intent kept = %v, want %v", kept, tc.wantKept)
			}
			if tc.wantKept && !strings.Contains(res.Failed[0].Err.Error(), "next apply finds out") {
				t.Errorf("error %q does not say the next apply finds out", res.Failed[0].Err)
			}
		})
	}
}
