package aiendpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources"
)

type attrs = resources.Attrs

var inputKeys = []string{"compartmentId", "modelId", "definedTags", "description", "displayName", "freeformTags", "inferenceUnits"}

// checkInputs fails unless got holds exactly the normalized inputs of want.
func checkInputs(t *testing.T, d *Driver, call string, got, want attrs) {
	t.Helper()
	n := d.Normalize(want)
	got = withoutVendorTags(got, want) // OCI's tag defaults: see TestDriverKeepsTagDefaults
	for _, k := range inputKeys {
		if !resources.Equal(got[k], n[k]) {
			t.Errorf("%s: %s = %#v, want %#v", call, k, got[k], n[k])
		}
	}
}

// progressRecorder collects the messages a driver reports.
type progressRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (p *progressRecorder) ctx(ctx context.Context) context.Context {
	return resources.WithProgress(ctx, func(ev resources.ProgressEvent) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.msgs = append(p.msgs, ev.Message)
	})
}

func (p *progressRecorder) messages() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...)
}

// TestDriverContract is the contract every driver passes: create, read,
// update, read, delete, then read reports ErrNotFound.
func TestDriverContract(t *testing.T) {
	t.Parallel()
	// Every request moves the emulator's clock by a second: a create lasting
	// 5s takes a few polls however fast or slow the machine is.
	env := newEnv(t, envOptions{now: (&steppingClock{t: time.Now(), step: time.Second}).Now})
	env.emu.SetDelays(5*time.Second, 3*time.Second, 3*time.Second)
	d, ctx := env.driver, t.Context()

	want := env.inputs("contract")
	want["freeformTags"] = map[string]any{"team": "nlp"}
	var progress progressRecorder
	id, got, err := d.Create(progress.ctx(ctx), want)
	if err != nil {
		t.Fatalf("Create(%v): %v", want, err)
	}
	if !strings.HasPrefix(id, "ocid1.ailanguageendpoint.oc1.") || got["id"] != id || got["state"] != "ACTIVE" {
		t.Errorf("Create = %q, %v; want an endpoint OCID in state ACTIVE", id, got)
	}
	checkInputs(t, d, "Create", got, want)
	if got["projectId"] != env.project {
		t.Errorf("Create: projectId = %v, want the model's project %s", got["projectId"], env.project)
	}
	msgs := progress.messages()
	creating := regexp.MustCompile(`^state CREATING, work request \d+% complete$`)
	if len(msgs) < 2 || !creating.MatchString(msgs[0]) || msgs[len(msgs)-1] != "state ACTIVE, work request 100% complete" {
		t.Errorf("Create progress = %q; want CREATING polls ending with ACTIVE at 100%%", msgs)
	}

	read, err := d.Read(ctx, id)
	if err != nil {
		t.Fatalf("Read(%q): %v", id, err)
	}
	if !reflect.DeepEqual(read, got) {
		t.Errorf("Read(%q) = %v, want what Create returned, %v", id, read, got)
	}
	for _, k := range []string{"timeCreated", "timeUpdated"} {
		if _, err := time.Parse(time.RFC3339, read[k].(string)); err != nil {
			t.Errorf("Read: %s = %v, not RFC 3339: %v", k, read[k], err)
		}
	}

	next := env.inputs("contract-2")
	next["inferenceUnits"] = int64(2)
	updated, err := d.Update(ctx, id, want, next)
	if err != nil {
		t.Fatalf("Update(%q): %v", id, err)
	}
	checkInputs(t, d, "Update", updated, next)
	if read, err = d.Read(ctx, id); err != nil {
		t.Fatalf("Read(%q) after update: %v", id, err)
	}
	checkInputs(t, d, "Read after Update", read, next)
	if read["state"] != "ACTIVE" {
		t.Errorf("Read after Update: state = %v, want ACTIVE", read["state"])
	}

	if err := d.Delete(ctx, id); err != nil {
		t.Fatalf("Delete(%q): %v", id, err)
	}
	if _, err := d.Read(ctx, id); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Read(%q) after Delete = %v, want ErrNotFound", id, err)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Errorf("Delete(%q) of a deleted endpoint = %v, want nil", id, err)
	}
	if _, err := d.Update(ctx, id, next, want); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Update(%q) of a deleted endpoint = %v, want ErrNotFound", id, err)
	}
}

func TestDriverUpdateInPlace(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	env.emu.SetDelays(0, 30*time.Millisecond, 0)
	with := func(base attrs, kv ...any) attrs {
		out := attrs{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(out, kv[i].(string))
			} else {
				out[kv[i].(string)] = kv[i+1]
			}
		}
		return out
	}
	base := env.inputs("update")
	tags := with(base,
		"freeformTags", map[string]any{"team": "nlp", "env": "prod"},
		"definedTags", map[string]any{"Operations.CostCenter": "42", "Operations.Owner": "ana", "Finance.Budget": "b1"})
	for name, tc := range map[string]struct{ from, to attrs }{
		"displayName":           {from: base, to: with(base, "displayName", "renamed")},
		"add tags":              {from: base, to: tags},
		"change tags":           {from: tags, to: with(tags, "freeformTags", map[string]any{"team": "search"}, "definedTags", map[string]any{"Operations.CostCenter": "43"})},
		"remove tags":           {from: tags, to: base},
		"inferenceUnits":        {from: base, to: with(base, "inferenceUnits", int64(3))},
		"inferenceUnits to one": {from: with(base, "inferenceUnits", int64(4)), to: base},
		"description":           {from: with(base, "description", "first"), to: with(base, "description", "second")},
		"remove description":    {from: with(base, "description", "first"), to: base},
		"nothing changed":       {from: base, to: base},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			id, _ := env.create(tc.from)
			got, err := env.driver.Update(ctx, id, tc.from, tc.to)
			if err != nil {
				t.Fatalf("Update(%q, %v, %v): %v", id, tc.from, tc.to, err)
			}
			checkInputs(t, env.driver, "Update", got, tc.to)
			read, err := env.driver.Read(ctx, id)
			if err != nil {
				t.Fatalf("Read(%q): %v", id, err)
			}
			checkInputs(t, env.driver, "Read", read, tc.to)
			if read["id"] != id || read["state"] != "ACTIVE" {
				t.Errorf("Read after Update: id %v state %v, want %s ACTIVE", read["id"], read["state"], id)
			}
		})
	}
}

// TestDriverUpdateRepairsDrift checks that a field changed out of band is
// set back even when the desired value equals the last applied one.
func TestDriverUpdateRepairsDrift(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	ctx := t.Context()
	want := env.inputs("drift")
	id, _ := env.create(want)
	c := env.client()
	if _, err := c.UpdateEndpoint(ctx, ailanguage.UpdateEndpointRequest{EndpointId: &id,
		UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{DisplayName: common.String("changed-by-someone")}}); err != nil {
		t.Fatal(err)
	}
	got, err := env.driver.Update(ctx, id, want, want)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	checkInputs(t, env.driver, "Update", got, want)
}

func TestDriverChangeCompartment(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{now: (&steppingClock{t: time.Now(), step: time.Second}).Now})
	env.emu.SetDelays(0, 3*time.Second, 0)
	ctx := t.Context()
	from := env.inputs("mover")
	id, _ := env.create(from)
	to := env.inputs("moved")
	to["compartmentId"] = env.otherCompartment
	to["freeformTags"] = map[string]any{"moved": "yes"}
	var progress progressRecorder
	got, err := env.driver.Update(progress.ctx(ctx), id, from, to)
	if err != nil {
		t.Fatalf("Update(%q) to compartment %s: %v", id, env.otherCompartment, err)
	}
	checkInputs(t, env.driver, "Update", got, to)
	// The move has no work request; the update that follows has one.
	if msgs := progress.messages(); len(msgs) < 3 || msgs[0] != "state UPDATING" || !strings.Contains(msgs[len(msgs)-1], "work request 100% complete") {
		t.Errorf("Update progress = %q, want the compartment move (state UPDATING, no work request), then the update", msgs)
	}
	list, err := env.client().ListEndpoints(ctx, ailanguage.ListEndpointsRequest{CompartmentId: &env.otherCompartment})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || deref(list.Items[0].Id) != id {
		t.Errorf("ListEndpoints(other compartment) = %v, want just %s", list.Items, id)
	}
}

func TestDriverCreateWithFailedModel(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	want := env.inputs("doomed")
	want["modelId"] = env.failedModel
	id, got, err := env.driver.Create(t.Context(), want)
	if err == nil || id == "" {
		t.Fatalf("Create with a FAILED model = %q, %v, want an id and an error", id, err)
	}
	if !errors.Is(err, resources.ErrUnusable) || errors.Is(err, resources.ErrRefused) {
		t.Errorf("Create error %v: want it to match ErrUnusable (the engine taints the endpoint), not ErrRefused", err)
	}
	// The id is returned; the engine's message names it with the resource.
	for _, s := range []string{"FAILED", "only an ACTIVE model can be deployed", "Training failed"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Create error %q does not mention %q", err, s)
		}
	}
	if got["state"] != "FAILED" || got["lifecycleDetails"] == nil {
		t.Errorf("Create attrs = %v, want state FAILED with lifecycleDetails", got)
	}
	// The engine keeps the failed endpoint (tainted) and replaces it later.
	if err := env.driver.Delete(t.Context(), id); err != nil {
		t.Errorf("Delete of the failed endpoint: %v", err)
	}
}

func TestDriverCreateRejectsBadInputs(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	for name, tc := range map[string]struct {
		want attrs
		path string
	}{
		"no compartment":       {want: attrs{"modelId": env.activeModel}, path: "compartmentId"},
		"units not a number":   {want: attrs{"compartmentId": env.compartment, "modelId": env.activeModel, "inferenceUnits": "two"}, path: "inferenceUnits"},
		"defined tag bad key":  {want: attrs{"compartmentId": env.compartment, "modelId": env.activeModel, "definedTags": map[string]any{"nodot": "x"}}, path: "definedTags"},
		"freeform tag not str": {want: attrs{"compartmentId": env.compartment, "modelId": env.activeModel, "freeformTags": map[string]any{"n": int64(1)}}, path: "freeformTags"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := env.driver.Create(t.Context(), tc.want)
			var ae *resources.AttrError
			if !errors.As(err, &ae) || ae.Path[0] != tc.path || !errors.Is(err, resources.ErrRefused) {
				t.Errorf("Create(%v) = %v, want an AttrError on %s, refused", tc.want, err, tc.path)
			}
		})
	}
	t.Run("unknown model", func(t *testing.T) {
		t.Parallel()
		want := env.inputs("x")
		want["modelId"] = "ocid1.ailanguagemodel.oc1.iad.nosuchmodel"
		id, _, err := env.driver.Create(t.Context(), want)
		var ae *resources.APIError
		if id != "" || !errors.As(err, &ae) || ae.Status != 400 || ae.Code != "RelatedResourceNotAuthorizedOrNotFound" {
			t.Errorf("Create with unknown model = %q, %v; want no id and 400 RelatedResourceNotAuthorizedOrNotFound", id, err)
		}
		if !errors.Is(err, resources.ErrRefused) {
			t.Errorf("Create refused with 400: error %v does not match ErrRefused", err)
		}
	})
}

func TestDriverRetryTokenReplay(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	ctx := resources.WithIdempotencyToken(t.Context(), "apply-7f3a/sentiment:create")
	want := env.inputs("replayed")
	id1, _, err := env.driver.Create(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	id2, _, err := env.driver.Create(ctx, want)
	if err != nil {
		t.Fatalf("second Create with the same token: %v", err)
	}
	if id1 != id2 {
		t.Errorf("Create twice with one token = %q, %q; want the same endpoint", id1, id2)
	}
	list, err := env.client().ListEndpoints(t.Context(), ailanguage.ListEndpointsRequest{CompartmentId: &env.compartment, DisplayName: common.String("replayed")})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("ListEndpoints(displayName=replayed) has %d items, want 1", len(list.Items))
	}
}

func TestDriverRefusedCredentials(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	trusted, other := sharedCreds(t)
	for name, config := range map[string]string{
		"foreign key":                writeOCIConfig(t, t.TempDir(), "foreign", other, other.OCIPrivateKey),
		"trusted keyId, another key": writeOCIConfig(t, t.TempDir(), "impostor", trusted, other.OCIPrivateKey),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := env.newDriver(config).Read(t.Context(), "ocid1.ailanguageendpoint.oc1.iad.any")
			var ae *resources.APIError
			if !errors.As(err, &ae) || ae.Status != 401 || ae.Code != "NotAuthenticated" {
				t.Errorf("Read with %s = %v, want 401 NotAuthenticated", name, err)
			}
		})
	}
}

func TestDriverStaleIfMatch(t *testing.T) {
	t.Parallel()
	// The first PUT carries a stale if-match (if-match is not signed, so
	// changing it in transit keeps the signature valid): the driver must
	// re-read the etag and try once more.
	var mu sync.Mutex
	stale := 0
	env := newEnv(t, envOptions{wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if r.Method == http.MethodPut && stale == 0 {
				stale++
				r.Header.Set("if-match", "stale-etag")
			}
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}})
	ctx := t.Context()
	want := env.inputs("etag")
	id, _ := env.create(want)

	next := env.inputs("etag-2")
	got, err := env.driver.Update(ctx, id, want, next)
	if err != nil {
		t.Fatalf("Update after a 412: %v", err)
	}
	checkInputs(t, env.driver, "Update", got, next)
	mu.Lock()
	if stale != 1 {
		t.Errorf("the stale if-match was sent %d times, want 1", stale)
	}
	mu.Unlock()

	_, err = env.client().UpdateEndpoint(ctx, ailanguage.UpdateEndpointRequest{EndpointId: &id, IfMatch: common.String("not-the-etag"),
		UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{DisplayName: common.String("x")}})
	if se, ok := common.IsServiceError(err); !ok || se.GetHTTPStatusCode() != 412 || se.GetCode() != "NoEtagMatch" {
		t.Errorf("UpdateEndpoint with a stale if-match = %v, want 412 NoEtagMatch", err)
	}
}

// faultPlan answers the first requests matching method and path prefix with
// the given statuses before letting requests through.
type faultPlan struct {
	method, prefix string
	statuses       []int

	mu   sync.Mutex
	sent int
}

func (f *faultPlan) hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent
}

func (f *faultPlan) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		status := 0
		if r.Method == f.method && strings.HasPrefix(r.URL.Path, f.prefix) && f.sent < len(f.statuses) {
			status = f.statuses[f.sent]
			f.sent++
		}
		f.mu.Unlock()
		if status == 0 {
			h.ServeHTTP(w, r)
			return
		}
		code := map[int]string{409: "IncorrectState", 429: "TooManyRequests", 501: "MethodNotImplemented", 503: "ServiceUnavailable"}[status]
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("opc-request-id", "injected")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": "injected fault"})
	})
}

func TestDriverRetriesTransientFaults(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		plan       *faultPlan
		wantStatus int // 0: the create succeeds
	}{
		"429 then 503 on create":      {plan: &faultPlan{method: "POST", prefix: "/20221001/endpoints", statuses: []int{429, 503}}},
		"503 on work request polling": {plan: &faultPlan{method: "GET", prefix: "/20221001/workRequests/", statuses: []int{503, 502}}},
		"409 IncorrectState on get":   {plan: &faultPlan{method: "GET", prefix: "/20221001/endpoints/", statuses: []int{409}}},
		"501 is not retried":          {plan: &faultPlan{method: "POST", prefix: "/20221001/endpoints", statuses: []int{501}}, wantStatus: 501},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, envOptions{wrap: tc.plan.wrap})
			id, _, err := env.driver.Create(t.Context(), env.inputs("flaky"))
			var ae *resources.APIError
			switch {
			case tc.wantStatus == 0 && err != nil:
				t.Errorf("Create with faults %v = %v, want success after retries", tc.plan.statuses, err)
			case tc.wantStatus != 0 && (!errors.As(err, &ae) || ae.Status != tc.wantStatus || id != ""):
				t.Errorf("Create with faults %v = %q, %v; want a %d error", tc.plan.statuses, id, err, tc.wantStatus)
			case tc.wantStatus != 0 && errors.Is(err, resources.ErrRefused):
				t.Errorf("Create answered %d: error %v matches ErrRefused; a server error leaves the outcome unknown", tc.wantStatus, err)
			}
			if hits := tc.plan.hits(); hits != len(tc.plan.statuses) {
				t.Errorf("%d of %d faults were hit", hits, len(tc.plan.statuses))
			}
		})
	}
}

// deadlineAt is a context whose deadline passes when pass is called, not
// at a time: a test of a timeout then depends on events, not on how fast
// the machine is.
type deadlineAt struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func newDeadlineAt(parent context.Context) *deadlineAt {
	return &deadlineAt{Context: parent, done: make(chan struct{})}
}

func (c *deadlineAt) pass() { c.once.Do(func() { close(c.done) }) }

func (c *deadlineAt) Deadline() (time.Time, bool) { return time.Now().Add(time.Hour), true }
func (c *deadlineAt) Done() <-chan struct{}       { return c.done }

func (c *deadlineAt) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func TestDriverCreateTimeout(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	env.emu.SetDelays(time.Hour, 0, 0)
	// The deadline passes once the driver has seen the endpoint CREATING.
	deadline := newDeadlineAt(t.Context())
	ctx := resources.WithProgress(deadline, func(ev resources.ProgressEvent) {
		if strings.HasPrefix(ev.Message, "state CREATING") {
			deadline.pass()
		}
	})
	id, _, err := env.driver.Create(ctx, env.inputs("slow"))
	if err == nil || id == "" {
		t.Fatalf("Create beyond its deadline = %q, %v; want the id and a timeout error", id, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Create error %q does not wrap context.DeadlineExceeded", err)
	}
	if errors.Is(err, resources.ErrUnusable) || errors.Is(err, resources.ErrRefused) {
		t.Errorf("Create error %q matches ErrUnusable or ErrRefused; a wait that timed out leaves the outcome unknown", err)
	}
	if !regexp.MustCompile(`timed out after \S+ waiting for the endpoint to become ACTIVE \(still state CREATING, work request 0% complete\)`).MatchString(err.Error()) {
		t.Errorf("Create error %q does not say how long it waited and in which state", err)
	}
}

func TestDriverSurvivesEmulatorRestart(t *testing.T) {
	t.Parallel()
	first := newEnv(t, envOptions{})
	id, created := first.create(first.inputs("durable"))
	first.srv.Close()
	first.closeStore()

	second := newEnv(t, envOptions{dir: first.dir})
	c1, c2, p1, m1, f1 := first.emu.SeedIDs()
	if c2b, p2, m2, f2 := second.otherCompartment, second.project, second.activeModel, second.failedModel; c2 != c2b || p1 != p2 || m1 != m2 || f1 != f2 || c1 != second.compartment {
		t.Errorf("seed ids changed across a restart")
	}
	got, err := second.driver.Read(t.Context(), id)
	if err != nil {
		t.Fatalf("Read(%q) after restart: %v", id, err)
	}
	if !reflect.DeepEqual(got, created) {
		t.Errorf("Read(%q) after restart = %v, want %v", id, got, created)
	}
	if err := second.driver.Delete(t.Context(), id); err != nil {
		t.Errorf("Delete after restart: %v", err)
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	d := New(Config{})
	for name, tc := range map[string]struct{ in, want attrs }{
		"default units":      {in: attrs{"modelId": "m"}, want: attrs{"modelId": "m", "inferenceUnits": int64(1)}},
		"int units":          {in: attrs{"inferenceUnits": 3}, want: attrs{"inferenceUnits": int64(3)}},
		"float units":        {in: attrs{"inferenceUnits": 2.0}, want: attrs{"inferenceUnits": int64(2)}},
		"empty tags dropped": {in: attrs{"freeformTags": map[string]any{}, "definedTags": map[string]string{}}, want: attrs{"inferenceUnits": int64(1)}},
		"tags kept":          {in: attrs{"freeformTags": map[string]string{"a": "b"}}, want: attrs{"inferenceUnits": int64(1), "freeformTags": map[string]any{"a": "b"}}},
		"empty description":  {in: attrs{"description": ""}, want: attrs{"inferenceUnits": int64(1)}},
		"nil input":          {in: nil, want: attrs{"inferenceUnits": int64(1)}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := d.Normalize(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Normalize(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestTagFlattening(t *testing.T) {
	t.Parallel()
	nested := map[string]map[string]any{"Operations": {"CostCenter": "42", "Owner": "ana"}, "orcl-cloud": {"free-tier-retained": "true"}}
	flat := map[string]any{"Operations.CostCenter": "42", "Operations.Owner": "ana", "orcl-cloud.free-tier-retained": "true"}
	if got := flattenTags(nested); !reflect.DeepEqual(got, flat) {
		t.Errorf("flattenTags(%v) = %v, want %v", nested, got, flat)
	}
	if got, err := nestTags("definedTags", flat); err != nil || !reflect.DeepEqual(got, nested) {
		t.Errorf("nestTags(%v) = %v, %v; want %v", flat, got, err, nested)
	}
	if got := flattenTags(map[string]map[string]any{"ns": {"n": 1.5}}); got["ns.n"] != "1.5" {
		t.Errorf("flattenTags of a number = %v, want a string", got)
	}
	if _, err := nestTags("definedTags", map[string]any{"a.b.c": "x"}); err != nil {
		t.Errorf("nestTags(a.b.c): %v, want namespace a and key b.c", err)
	}
}

func TestDriverConfig(t *testing.T) {
	t.Parallel()
	creds, _ := sharedCreds(t)
	dir := t.TempDir()
	config := writeOCIConfig(t, dir, "cfg", creds, creds.OCIPrivateKey)
	raw, _ := os.ReadFile(config)
	withProfile := filepath.Join(dir, "with_profile")
	if err := os.WriteFile(withProfile, append(raw, []byte(strings.Replace(string(raw), "[DEFAULT]", "[OTHER]", 1)+"")...), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		cfg      Config
		wantErr  string
		wantHost string
	}{
		"missing file":    {cfg: Config{ConfigFile: filepath.Join(dir, "nope")}, wantErr: "nope"},
		"missing profile": {cfg: Config{ConfigFile: config, Profile: "PROD"}, wantErr: `profile "PROD"`},
		"profile region":  {cfg: Config{ConfigFile: config}, wantHost: "https://language.aiservice.us-ashburn-1.oci.oraclecloud.com"},
		"region override": {cfg: Config{ConfigFile: config, Region: "eu-frankfurt-1"}, wantHost: "https://language.aiservice.eu-frankfurt-1.oci.oraclecloud.com"},
		"named profile":   {cfg: Config{ConfigFile: withProfile, Profile: "OTHER"}, wantHost: "https://language.aiservice.us-ashburn-1.oci.oraclecloud.com"},
		"host override":   {cfg: Config{ConfigFile: config, Host: "http://127.0.0.1:9/"}, wantHost: "http://127.0.0.1:9"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := New(tc.cfg).sdk()
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("connect(%+v) = %v, want an error mentioning %q", tc.cfg, err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("connect(%+v): %v", tc.cfg, err)
			case c.Host != tc.wantHost:
				t.Errorf("connect(%+v): host %q, want %q", tc.cfg, c.Host, tc.wantHost)
			case c.Configuration.CircuitBreaker != nil || c.Configuration.RetryPolicy == nil || c.Configuration.RetryPolicy.MaximumNumberAttempts != 1:
				t.Errorf("connect(%+v): SDK retries or circuit breaker left on", tc.cfg)
			}
		})
	}
}

// TestDriverConfigFromEnv runs alone: it sets environment variables.
func TestDriverConfigFromEnv(t *testing.T) {
	creds, _ := sharedCreds(t)
	dir := t.TempDir()
	config := writeOCIConfig(t, dir, "cfg", creds, creds.OCIPrivateKey)
	raw, _ := os.ReadFile(config)
	if err := os.WriteFile(config, append(raw, []byte(strings.Replace(string(raw), "[DEFAULT]", "[OTHER]", 1))...), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OCI_CLI_CONFIG_FILE", config)
	t.Setenv("OCI_CLI_PROFILE", "OTHER")
	t.Setenv("OCI_REGION", "uk-london-1")
	c, err := New(Config{}).sdk()
	if err != nil {
		t.Fatalf("connect from environment: %v", err)
	}
	if want := "https://language.aiservice.uk-london-1.oci.oraclecloud.com"; c.Host != want {
		t.Errorf("host = %q, want %q", c.Host, want)
	}
	t.Setenv("OCI_CLI_PROFILE", "MISSING")
	if _, err := New(Config{}).sdk(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("profile %q", "MISSING")) {
		t.Errorf("connect with OCI_CLI_PROFILE=MISSING = %v, want a profile error", err)
	}
}

// TestDriverKeepsTagDefaults checks the Oracle-Tags tag defaults OCI puts on
// every new endpoint: the emulator adds CreatedBy (the caller) and CreatedOn
// on create and keeps them through an update that replaces definedTags; the
// driver reports them as vendor keys and does not send definedTags just
// because of them.
func TestDriverKeepsTagDefaults(t *testing.T) {
	t.Parallel()
	var puts atomic.Int64
	env := newEnv(t, envOptions{wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut {
				puts.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	}})
	ctx := t.Context()
	want := env.inputs("tag-defaults")
	id, got := env.create(want)
	tags, _ := got["definedTags"].(map[string]any)
	if tags["Oracle-Tags.CreatedBy"] != env.creds.OCIUser {
		t.Errorf("Create: definedTags = %v, want Oracle-Tags.CreatedBy = %s", tags, env.creds.OCIUser)
	}
	created, _ := tags["Oracle-Tags.CreatedOn"].(string)
	if _, err := time.Parse(time.RFC3339, created); err != nil {
		t.Errorf("Create: Oracle-Tags.CreatedOn = %q, not RFC 3339: %v", created, err)
	}
	if !env.driver.VendorKey("definedTags", "Oracle-Tags.CreatedBy") || env.driver.VendorKey("definedTags", "Operations.CostCenter") || env.driver.VendorKey("freeformTags", "Oracle-Tags.CreatedBy") {
		t.Errorf("VendorKey: want true for definedTags Oracle-Tags.* only")
	}

	// The user's own defined tags replace the others; the defaults stay.
	next := env.inputs("tag-defaults")
	next["definedTags"] = map[string]any{"Operations.CostCenter": "42"}
	updated, err := env.driver.Update(ctx, id, want, next)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	checkInputs(t, env.driver, "Update", updated, next)
	tags, _ = updated["definedTags"].(map[string]any)
	if tags["Oracle-Tags.CreatedBy"] != env.creds.OCIUser || tags["Oracle-Tags.CreatedOn"] != created || tags["Operations.CostCenter"] != "42" {
		t.Errorf("Update: definedTags = %v, want Operations.CostCenter and the Oracle-Tags defaults of the create", tags)
	}

	// Nothing else changes: no update call at all.
	before := puts.Load()
	if _, err := env.driver.Update(ctx, id, next, next); err != nil {
		t.Fatalf("Update without changes: %v", err)
	}
	if calls := puts.Load() - before; calls != 0 {
		t.Errorf("Update without changes sent %d update calls: the Oracle-Tags defaults must not count as a change", calls)
	}
}
