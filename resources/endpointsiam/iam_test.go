package endpointsiam_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	servicemanagement "google.golang.org/api/servicemanagement/v1"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

const (
	consumerRole   = "roles/servicemanagement.serviceConsumer"
	controllerRole = "roles/servicemanagement.serviceController"
)

func (e *env) client() *endpointsiam.Client {
	return endpointsiam.NewClient(e.config())
}

// policy reads a policy with the raw SDK in version 3.
func (e *env) policy(t *testing.T, resource string) *servicemanagement.Policy {
	t.Helper()
	svc := e.sdk(t)
	req := &servicemanagement.GetIamPolicyRequest{Options: &servicemanagement.GetPolicyOptions{RequestedPolicyVersion: 3}}
	var p *servicemanagement.Policy
	var err error
	if strings.Contains(resource, "/consumers/") {
		p, err = svc.Services.Consumers.GetIamPolicy(resource, req).Context(t.Context()).Do()
	} else {
		p, err = svc.Services.GetIamPolicy(resource, req).Context(t.Context()).Do()
	}
	if err != nil {
		t.Fatalf("getIamPolicy %s: %v", resource, err)
	}
	return p
}

// members returns the members of role (without condition) in a policy.
func members(p *servicemanagement.Policy, role string) []string {
	var out []string
	for _, b := range p.Bindings {
		if b.Role == role && b.Condition == nil {
			out = append(out, b.Members...)
		}
	}
	slices.Sort(out)
	return out
}

func doc(t *testing.T, bindings ...any) string {
	t.Helper()
	text, err := gcpiam.Document(bindings, nil)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func grant(role string, members ...any) map[string]any {
	return map[string]any{"role": role, "members": members}
}

func TestPolicyDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := t.Context()
	for name, tc := range map[string]struct {
		d        *endpointsiam.PolicyDriver
		inputs   resources.Attrs
		id       string
		resource string
		target   resources.Attrs
	}{
		"service": {endpointsiam.NewServicePolicy(e.client()), resources.Attrs{"serviceName": orders}, "services/" + orders, "services/" + orders,
			resources.Attrs{"serviceName": "services/" + orders}},
		"consumer": {endpointsiam.NewConsumersPolicy(e.client()), resources.Attrs{"serviceName": orders, "consumerProject": consumer},
			"services/" + orders + "/consumers/" + consumer, "services/" + orders + "/consumers/" + consumer,
			resources.Attrs{"serviceName": orders, "consumerProject": "services/" + orders + "/consumers/" + consumer}},
	} {
		t.Run(name, func(t *testing.T) {
			want := resources.Attrs{"policyData": doc(t, grant("roles/viewer", "user:jane@example.com", "group:ops@example.com"))}
			for k, v := range tc.inputs {
				want[k] = v
			}
			id, got, err := tc.d.Create(ctx, want)
			if err != nil {
				t.Fatalf("Create(%v): %v", want, err)
			}
			wantData := `{"bindings":[{"members":["group:ops@example.com","user:jane@example.com"],"role":"roles/viewer"}]}`
			if id != tc.id || got["policyData"] != wantData || got["etag"] == "" || got["id"] != tc.id {
				t.Fatalf("Create = %q, %v; want id %q and policyData %s", id, got, tc.id, wantData)
			}
			for k, v := range tc.target {
				if got[k] != v {
					t.Errorf("Create: %s = %v, want %v", k, got[k], v)
				}
			}
			// Authoritative: the seeded bindings are gone.
			if p := tc.d; p != nil {
				live := e.policy(t, tc.resource)
				if len(live.Bindings) != 1 || live.Version != 1 {
					t.Errorf("policy after Create = %+v, want the one binding of policyData", live)
				}
			}
			read, err := tc.d.Read(ctx, id)
			if err != nil || !resources.Equal(read, got) {
				t.Errorf("Read(%q) = %v, %v; want %v", id, read, err, got)
			}
			// Import ids as the provider takes them.
			short := strings.TrimPrefix(id, "services/")
			if name == "consumer" {
				short = orders + "/" + consumer
			}
			if r, err := tc.d.Read(ctx, short); err != nil || r["id"] != id {
				t.Errorf("Read(%q) = %v, %v; want the policy of %s", short, r, err, id)
			}

			want["policyData"] = doc(t, grant(controllerRole, "serviceAccount:esp@p.iam.gserviceaccount.com"))
			got, err = tc.d.Update(ctx, id, nil, want)
			if err != nil || !strings.Contains(got["policyData"].(string), controllerRole) {
				t.Fatalf("Update: %v, %v", got, err)
			}
			if err := tc.d.Delete(ctx, id); err != nil {
				t.Fatalf("Delete(%q): %v", id, err)
			}
			read, err = tc.d.Read(ctx, id)
			if err != nil || read["policyData"] != "{}" {
				t.Errorf("Read after Delete = %v, %v; want policyData {}", read, err)
			}
			if err := tc.d.Delete(ctx, id); err != nil {
				t.Errorf("Delete of an empty policy: %v", err)
			}
		})
	}
}

func TestPolicyDriverAuditConfigsAndConditions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	d := endpointsiam.NewServicePolicy(e.client())
	text, err := gcpiam.Document([]any{
		grant("roles/viewer", "user:a@example.com"),
		map[string]any{"role": "roles/viewer", "members": []any{"user:b@example.com"},
			"condition": map[string]any{"title": "until 2030", "expression": `request.time < timestamp("2030-01-01T00:00:00Z")`}},
	}, []any{map[string]any{"service": "allServices", "auditLogConfigs": []any{map[string]any{"logType": "DATA_READ"}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := d.Create(t.Context(), resources.Attrs{"serviceName": inventory, "policyData": text})
	if err != nil {
		t.Fatal(err)
	}
	if got["policyData"] != text {
		t.Errorf("Create: policyData %s\nwant %s", got["policyData"], text)
	}
	live := e.policy(t, "services/"+inventory)
	if live.Version != 3 || len(live.AuditConfigs) != 1 || len(live.Bindings) != 2 {
		t.Errorf("policy = %+v, want version 3 with the audit config and the conditional binding", live)
	}
}

func TestBindingDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := t.Context()
	d := endpointsiam.NewServiceBinding(e.client())
	want := resources.Attrs{"serviceName": orders, "role": consumerRole, "members": []any{"user:zed@example.com", "user:amy@example.com"}}
	id, got, err := d.Create(ctx, want)
	if err != nil {
		t.Fatalf("Create(%v): %v", want, err)
	}
	if wantID := "services/" + orders + " " + consumerRole; id != wantID || got["id"] != id {
		t.Errorf("Create id = %q (attrs %v), want %q", id, got["id"], wantID)
	}
	if !resources.Equal(got["members"], []any{"user:amy@example.com", "user:zed@example.com"}) || got["serviceName"] != "services/"+orders {
		t.Errorf("Create = %v", got)
	}
	live := e.policy(t, "services/"+orders)
	if m := members(live, consumerRole); !slices.Equal(m, []string{"user:amy@example.com", "user:zed@example.com"}) {
		t.Errorf("members of %s = %v: the binding is authoritative for its role", consumerRole, m)
	}
	if m := members(live, controllerRole); len(m) != 1 {
		t.Errorf("members of %s = %v: other roles must be kept", controllerRole, m)
	}

	want["members"] = []any{"user:amy@example.com", "group:g@example.com"}
	got, err = d.Update(ctx, id, nil, want)
	if err != nil || !resources.Equal(got["members"], []any{"group:g@example.com", "user:amy@example.com"}) {
		t.Fatalf("Update = %v, %v", got, err)
	}
	if _, err := d.Update(ctx, id, nil, resources.Attrs{"serviceName": orders, "role": "roles/viewer", "members": []any{"user:a@b.c"}}); !errors.As(err, new(*resources.AttrError)) {
		t.Errorf("Update changing the role: %v, want an AttrError", err)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(ctx, id); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Read after Delete: %v, want ErrNotFound", err)
	}
	if m := members(e.policy(t, "services/"+orders), controllerRole); len(m) != 1 {
		t.Errorf("Delete removed other roles: %s has %v", controllerRole, m)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Errorf("Delete of a binding already gone: %v", err)
	}
}

func TestBindingWithCondition(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := t.Context()
	d := endpointsiam.NewConsumersBinding(e.client())
	cond := map[string]any{"title": "office hours", "expression": "request.time.getHours() < 18", "description": ""}
	want := resources.Attrs{"serviceName": orders, "consumerProject": consumer, "role": consumerRole, "members": []any{"user:a@example.com"}, "condition": cond}
	id, got, err := d.Create(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	res := "services/" + orders + "/consumers/" + consumer
	if wantID := res + " " + consumerRole + " office hours"; id != wantID {
		t.Errorf("Create id = %q, want %q", id, wantID)
	}
	if !resources.Equal(got["condition"], map[string]any{"title": "office hours", "expression": "request.time.getHours() < 18"}) {
		t.Errorf("Create condition = %v", got["condition"])
	}
	// The unconditional binding of the role (seeded) is another binding.
	if m := members(e.policy(t, res), consumerRole); len(m) != 1 || m[0] != "serviceAccount:checkout@acme-consumer.iam.gserviceaccount.com" {
		t.Errorf("unconditional members of %s = %v, want the seeded one kept", consumerRole, m)
	}
	// An import id naming the title finds it.
	if r, err := d.Read(ctx, orders+"/"+consumer+" "+consumerRole+" office hours"); err != nil || r["id"] != id {
		t.Errorf("Read by import id = %v, %v", r, err)
	}
	// Another condition with the same title cannot be told apart by id.
	other := resources.Attrs{"serviceName": orders, "consumerProject": consumer, "role": consumerRole, "members": []any{"user:b@example.com"},
		"condition": map[string]any{"title": "office hours", "expression": "true"}}
	if _, _, err := d.Create(ctx, other); !errors.Is(err, resources.ErrRefused) || !strings.Contains(err.Error(), "another title") {
		t.Errorf("Create of a second condition titled alike: %v, want a refusal", err)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if m := members(e.policy(t, res), consumerRole); len(m) != 1 {
		t.Errorf("Delete of the conditional binding removed the unconditional one: %v", m)
	}
}

func TestMemberDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := t.Context()
	d := endpointsiam.NewServiceMember(e.client())
	want := resources.Attrs{"serviceName": "services/" + orders, "role": consumerRole, "member": "user:new@example.com"}
	id, got, err := d.Create(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if wantID := "services/" + orders + " " + consumerRole + " user:new@example.com"; id != wantID || got["member"] != "user:new@example.com" {
		t.Errorf("Create = %q, %v", id, got)
	}
	if m := members(e.policy(t, "services/"+orders), consumerRole); len(m) != 3 {
		t.Errorf("members of %s = %v, want the two seeded and the new one", consumerRole, m)
	}
	// Creating it again changes nothing.
	before := e.policy(t, "services/"+orders).Etag
	if _, _, err := d.Create(ctx, want); err != nil || e.policy(t, "services/"+orders).Etag != before {
		t.Errorf("second Create: %v, or the policy was written again", err)
	}
	if _, err := d.Read(ctx, orders+" "+consumerRole+" user:new@example.com"); err != nil {
		t.Errorf("Read by import id: %v", err)
	}
	if _, err := d.Read(ctx, "services/"+orders+" "+consumerRole+" user:nobody@example.com"); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Read of a member not granted: %v, want ErrNotFound", err)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if m := members(e.policy(t, "services/"+orders), consumerRole); len(m) != 2 {
		t.Errorf("members after Delete = %v, want the two seeded", m)
	}
	if _, err := d.Read(ctx, id); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Read after Delete: %v, want ErrNotFound", err)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Errorf("Delete of a member already gone: %v", err)
	}
	// The last member of a role takes its binding with it.
	solo := resources.Attrs{"serviceName": inventory, "role": "roles/viewer", "member": "user:solo@example.com"}
	id, _, err = d.Create(ctx, solo)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if p := e.policy(t, "services/"+inventory); len(p.Bindings) != 0 {
		t.Errorf("policy after deleting the last member = %+v, want no bindings", p.Bindings)
	}
}

func TestIamInputErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	cl := e.client()
	for name, tc := range map[string]struct {
		d    resources.Driver
		want resources.Attrs
		path string
	}{
		"policy without policyData": {endpointsiam.NewServicePolicy(cl), resources.Attrs{"serviceName": orders}, "policyData"},
		"policyData not JSON":       {endpointsiam.NewServicePolicy(cl), resources.Attrs{"serviceName": orders, "policyData": "roles/viewer"}, "policyData"},
		"policy with deleted member": {endpointsiam.NewServicePolicy(cl), resources.Attrs{"serviceName": orders,
			"policyData": `{"bindings":[{"role":"roles/viewer","members":["deleted:user:a@b.c?uid=1"]}]}`}, "policyData"},
		"binding without members": {endpointsiam.NewServiceBinding(cl), resources.Attrs{"serviceName": orders, "role": "roles/viewer", "members": []any{}}, "members"},
		"binding with a bad member": {endpointsiam.NewServiceBinding(cl), resources.Attrs{"serviceName": orders, "role": "roles/viewer",
			"members": []any{"user:a@b.c", "jane"}}, "members.1"},
		"member without role": {endpointsiam.NewServiceMember(cl), resources.Attrs{"serviceName": orders, "member": "user:a@b.c"}, "role"},
		"consumer of another service": {endpointsiam.NewConsumersMember(cl), resources.Attrs{"serviceName": orders,
			"consumerProject": "services/other/consumers/x", "role": "roles/viewer", "member": "user:a@b.c"}, "consumerProject"},
		"condition without expression": {endpointsiam.NewServiceMember(cl), resources.Attrs{"serviceName": orders, "role": "roles/viewer",
			"member": "user:a@b.c", "condition": map[string]any{"title": "t"}}, "condition.expression"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := tc.d.Create(t.Context(), tc.want)
			var ae *resources.AttrError
			if !errors.As(err, &ae) || strings.Join(ae.Path, ".") != tc.path || !errors.Is(err, resources.ErrRefused) {
				t.Errorf("Create(%v) = %v, want an AttrError at %s", tc.want, err, tc.path)
			}
		})
	}
	// An unknown service: the read before the write fails, nothing was written.
	_, _, err := endpointsiam.NewServiceMember(cl).Create(t.Context(), resources.Attrs{"serviceName": "nope.endpoints.acme-prod.cloud.goog",
		"role": "roles/viewer", "member": "user:a@b.c"})
	var api *resources.APIError
	if !errors.Is(err, resources.ErrRefused) || !errors.As(err, &api) || api.Status != 403 {
		t.Errorf("Create on an unknown service = %v, want the API's 403, refused", err)
	}
}

// TestConcurrentWriters adds different members to one role of one policy
// from many writers at once, each with its own client as separate
// processes would be, through the emulator over HTTP: every write that
// met a newer etag is read again and retried, so every member is there at
// the end. Writers sharing a client take turns instead.
func TestConcurrentWriters(t *testing.T) {
	// Not parallel: it changes the package's backoff, which the other
	// tests read; the parallel tests run once it has ended.
	defer endpointsiam.SetConflictBackoff(time.Millisecond, 20*time.Millisecond)()
	var conflicts atomic.Int32
	e := newEnv(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &statusRecorder{ResponseWriter: w}
			h.ServeHTTP(rec, r)
			if rec.status == http.StatusConflict {
				conflicts.Add(1)
			}
		})
	})
	const separate, shared = 24, 8
	for name, scope := range map[string]struct {
		member   func(*endpointsiam.Client) resources.Driver
		inputs   resources.Attrs
		resource string
	}{
		"service": {func(c *endpointsiam.Client) resources.Driver { return endpointsiam.NewServiceMember(c) },
			resources.Attrs{"serviceName": orders}, "services/" + orders},
		"consumer": {func(c *endpointsiam.Client) resources.Driver { return endpointsiam.NewConsumersMember(c) },
			resources.Attrs{"serviceName": orders, "consumerProject": consumer}, "services/" + orders + "/consumers/" + consumer},
	} {
		t.Run(name, func(t *testing.T) {
			before := members(e.policy(t, scope.resource), consumerRole)
			common := e.client()
			var wg sync.WaitGroup
			errs := make(chan error, separate+shared)
			var want []string
			for i := range separate + shared {
				member := fmt.Sprintf("user:writer-%02d@example.com", i)
				want = append(want, member)
				cl := common
				if i < separate {
					cl = e.client()
				}
				d := scope.member(cl)
				wg.Go(func() {
					in := resources.Attrs{"role": consumerRole, "member": member}
					for k, v := range scope.inputs {
						in[k] = v
					}
					if _, _, err := d.Create(t.Context(), in); err != nil {
						errs <- fmt.Errorf("Create(%s): %w", member, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			got := members(e.policy(t, scope.resource), consumerRole)
			want = slices.Sorted(slices.Values(append(want, before...)))
			if !slices.Equal(got, want) {
				t.Errorf("members of %s = %v (%d)\nwant %v (%d): a concurrent write was lost", consumerRole, got, len(got), want, len(want))
			}
		})
	}
	if conflicts.Load() == 0 {
		t.Errorf("no write met a newer etag: the test did not exercise conflicts")
	}
	t.Logf("%d writes met a newer etag and were retried", conflicts.Load())
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func TestIamRecover(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := t.Context()
	cl := e.client()
	for name, tc := range map[string]struct {
		d      resources.Driver
		want   resources.Attrs
		hidden string
	}{
		"policy": {endpointsiam.NewServicePolicy(cl), resources.Attrs{"serviceName": inventory,
			"policyData": `{"bindings":[{"members":["user:r@example.com"],"role":"roles/viewer"}]}`}, "policyData"},
		"binding": {endpointsiam.NewConsumersBinding(cl), resources.Attrs{"serviceName": orders, "consumerProject": "recover-b",
			"role": "roles/viewer", "members": []any{"user:r@example.com"}}, "members"},
		"member": {endpointsiam.NewConsumersMember(cl), resources.Attrs{"serviceName": orders, "consumerProject": "recover-m",
			"role": "roles/viewer", "member": "user:r@example.com"}, "member"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := tc.d.(resources.Recoverer)
			req := resources.RecoverRequest{Want: tc.want}
			if id, got, err := rec.Recover(ctx, req); id != "" || got != nil || err != nil {
				t.Errorf("Recover before any create = %q, %v, %v; want nothing made", id, got, err)
			}
			id, created, err := tc.d.Create(ctx, tc.want)
			if err != nil {
				t.Fatal(err)
			}
			gotID, got, err := rec.Recover(ctx, req)
			if err != nil || gotID != id || got["etag"] != created["etag"] {
				t.Errorf("Recover after the create = %q, %v, %v; want %q", gotID, got, err, id)
			}
			if _, _, err := rec.Recover(ctx, resources.RecoverRequest{Want: tc.want, Hidden: []string{tc.hidden}}); err == nil || !strings.Contains(err.Error(), "secret") {
				t.Errorf("Recover with %s secret = %v, want an error saying it cannot tell", tc.hidden, err)
			}
			if err := tc.d.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestIamNormalize(t *testing.T) {
	t.Parallel()
	cl := endpointsiam.NewClient(endpointsiam.Config{Endpoint: "http://127.0.0.1:1/", AccessToken: "unused"})
	for name, tc := range map[string]struct {
		n        resources.Normalizer
		in, want resources.Attrs
	}{
		"policy": {endpointsiam.NewServicePolicy(cl),
			resources.Attrs{"serviceName": orders, "policyData": `{"bindings":[{"role":"roles/a","members":["user:b@x","user:a@x","user:a@x"]}]}`},
			resources.Attrs{"serviceName": "services/" + orders, "policyData": `{"bindings":[{"members":["user:a@x","user:b@x"],"role":"roles/a"}]}`}},
		"policy text that does not parse": {endpointsiam.NewServicePolicy(cl),
			resources.Attrs{"serviceName": "services/" + orders, "policyData": `{`},
			resources.Attrs{"serviceName": "services/" + orders, "policyData": `{`}},
		"consumer binding": {endpointsiam.NewConsumersBinding(cl),
			resources.Attrs{"serviceName": "services/" + orders, "consumerProject": consumer, "role": "roles/a", "members": []any{"user:b@x", "user:a@x"},
				"condition": map[string]any{"title": "t", "expression": "e", "description": ""}},
			resources.Attrs{"serviceName": orders, "consumerProject": "services/" + orders + "/consumers/" + consumer, "role": "roles/a",
				"members": []any{"user:a@x", "user:b@x"}, "condition": map[string]any{"title": "t", "expression": "e"}}},
		"member": {endpointsiam.NewServiceMember(cl),
			resources.Attrs{"serviceName": orders, "role": "roles/a", "member": "user:a@x"},
			resources.Attrs{"serviceName": "services/" + orders, "role": "roles/a", "member": "user:a@x"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := tc.n.Normalize(tc.in); !resources.Equal(got, tc.want) {
				t.Errorf("Normalize(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestBindingDescribesMembers(t *testing.T) {
	t.Parallel()
	d := endpointsiam.NewServiceBinding(endpointsiam.NewClient(endpointsiam.Config{}))
	before := resources.Attrs{"role": "roles/viewer", "members": []any{"user:a@x", "user:b@x"}}
	after := resources.Attrs{"role": "roles/viewer", "members": []any{"user:b@x", "user:c@x"}}
	if got, want := d.DescribeResultChange(before, after), []string{"binding roles/viewer: -user:a@x +user:c@x"}; !slices.Equal(got, want) {
		t.Errorf("DescribeResultChange = %q, want %q", got, want)
	}
	if got := d.DescribeResultChange(before, before); got != nil {
		t.Errorf("DescribeResultChange of equal members = %q, want nil", got)
	}
	if !d.EqualResultField("members", []any{"user:a@x", "user:b@x"}, []any{"user:b@x", "user:a@x"}) {
		t.Errorf("EqualResultField(members) does not compare as sets")
	}
}

// TestWriteLandedButAnswerLost makes the first setIamPolicy land but
// answer 503: the transport sends it again with the etag it read, which
// is stale now (409), so the write is read again, found done, and the
// create succeeds without writing twice.
func TestWriteLandedButAnswerLost(t *testing.T) {
	// Not parallel: it changes the package's backoff, which the other
	// tests read; the parallel tests run once it has ended.
	defer endpointsiam.SetConflictBackoff(time.Millisecond, 10*time.Millisecond)()
	var sets, lost atomic.Int32
	e := newEnv(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, ":setIamPolicy") {
				h.ServeHTTP(w, r)
				return
			}
			if sets.Add(1) == 1 {
				h.ServeHTTP(&statusRecorder{ResponseWriter: discard{}}, r) // it lands
				lost.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte(`{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	d := endpointsiam.NewServiceMember(e.client())
	_, _, err := d.Create(t.Context(), resources.Attrs{"serviceName": inventory, "role": "roles/viewer", "member": "user:once@example.com"})
	if err != nil {
		t.Fatalf("Create after a lost answer: %v", err)
	}
	if got := members(e.policy(t, "services/"+inventory), "roles/viewer"); !slices.Equal(got, []string{"user:once@example.com"}) {
		t.Errorf("members = %v, want the member once", got)
	}
	if lost.Load() != 1 || sets.Load() != 2 {
		t.Errorf("setIamPolicy calls = %d (lost %d), want the lost one and one retry that met the newer etag", sets.Load(), lost.Load())
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
