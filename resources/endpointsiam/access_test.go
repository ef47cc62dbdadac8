package endpointsiam_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	servicemanagement "google.golang.org/api/servicemanagement/v1"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

// me is the emulator's caller as an IAM member.
const me = "serviceAccount:" + gcp.Caller

func policyOf(bindings ...gcpiam.Binding) gcpiam.Policy { return gcpiam.Policy{Bindings: bindings} }

func bind(role string, members ...string) gcpiam.Binding {
	return gcpiam.Binding{Role: role, Members: members}
}

// TestLockouts pins which roles a write takes from the caller: those it
// has through a member that names it (itself, its user's domain,
// everyone) and keeps through no member that names it or may hold it (a
// group, a principal set). A group removed is not taken as the caller's.
func TestLockouts(t *testing.T) {
	t.Parallel()
	const (
		sa   = gcp.Caller
		user = "alice@acme.example"
		r1   = "roles/servicemanagement.serviceController"
		r2   = "roles/servicemanagement.serviceConsumer"
	)
	cond := &gcpiam.Expr{Title: "t", Expression: "true"}
	for name, tc := range map[string]struct {
		caller        string
		before, after gcpiam.Policy
		want          []string // "ROLE MEMBER" of each lockout
	}{
		"member removed":                  {sa, policyOf(bind(r1, me, "user:bob@x")), policyOf(bind(r1, "user:bob@x")), []string{r1 + " " + me}},
		"binding removed":                 {sa, policyOf(bind(r1, me)), policyOf(), []string{r1 + " " + me}},
		"one of two roles":                {sa, policyOf(bind(r1, me), bind(r2, me)), policyOf(bind(r2, me)), []string{r1 + " " + me}},
		"kept":                            {sa, policyOf(bind(r1, me)), policyOf(bind(r1, me, "user:bob@x")), nil},
		"kept through a group":            {sa, policyOf(bind(r1, me)), policyOf(bind(r1, "group:admins@acme.example")), nil},
		"kept through a principal set":    {sa, policyOf(bind(r1, me)), policyOf(bind(r1, "principalSet://iam.googleapis.com/x")), nil},
		"kept under a condition":          {sa, policyOf(bind(r1, me)), policyOf(gcpiam.Binding{Role: r1, Members: []string{me}, Condition: cond}), nil},
		"email without case":              {sa, policyOf(bind(r1, "serviceAccount:"+strings.ToUpper(sa))), policyOf(), []string{r1 + " serviceAccount:" + strings.ToUpper(sa)}},
		"group removed is not known":      {sa, policyOf(bind(r1, "group:admins@acme.example")), policyOf(), nil},
		"not the caller":                  {sa, policyOf(bind(r1, "user:bob@x")), policyOf(), nil},
		"user through its domain":         {user, policyOf(bind(r1, "domain:acme.example")), policyOf(bind(r1, "user:bob@x")), []string{r1 + " domain:acme.example"}},
		"user as a user":                  {user, policyOf(bind(r1, "user:"+user)), policyOf(), []string{r1 + " user:" + user}},
		"service account not in a domain": {sa, policyOf(bind(r1, "domain:acme-prod.iam.gserviceaccount.com")), policyOf(), nil},
		"everyone":                        {sa, policyOf(bind(r1, "allAuthenticatedUsers")), policyOf(bind(r1, "user:bob@x")), []string{r1 + " allAuthenticatedUsers"}},
		"a caller without email":          {"subject 1234", policyOf(bind(r1, "user:1234")), policyOf(), nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, l := range endpointsiam.Lockouts("services/s", tc.caller, tc.before, tc.after) {
				if l.Resource != "services/s" || l.Caller != tc.caller || !strings.Contains(l.Keep, l.Role) {
					t.Errorf("lockout %+v: want resource services/s, caller %s, and how to keep %s", l, tc.caller, l.Role)
				}
				got = append(got, l.Role+" "+l.Member)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("lockouts(%s, %v -> %v) = %q, want %q", tc.caller, tc.before, tc.after, got, tc.want)
			}
		})
	}
}

// TestAccessChanges: the members each binding (role and condition) gains
// and loses, sorted by role, condition, removed first, then member.
func TestAccessChanges(t *testing.T) {
	t.Parallel()
	cond := &gcpiam.Expr{Title: "until 2030", Expression: "request.time < timestamp(\"2030-01-01T00:00:00Z\")"}
	before := policyOf(bind("roles/b", "user:x@a", "user:y@a"), gcpiam.Binding{Role: "roles/a", Members: []string{"user:c@a"}, Condition: cond})
	after := policyOf(bind("roles/b", "user:y@a", "user:z@a"), bind("roles/a", "user:c@a"))
	got := endpointsiam.AccessChanges("services/s", before, after)
	want := []resources.AccessChange{
		{Resource: "services/s", Role: "roles/a", Member: "user:c@a", Added: true},
		{Resource: "services/s", Role: "roles/a", Condition: "until 2030", Member: "user:c@a"},
		{Resource: "services/s", Role: "roles/b", Member: "user:x@a"},
		{Resource: "services/s", Role: "roles/b", Member: "user:z@a", Added: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("accessChanges =\n%+v\nwant\n%+v", got, want)
	}
}

// withTokenInfo starts an emulator that also serves tokeninfo, and
// returns it with a client that asks it who the caller is.
func withTokenInfo(t *testing.T) (*env, *endpointsiam.Client) {
	t.Helper()
	e := newEnv(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/tokeninfo" {
				h.(*gcp.Emulator).TokenInfo(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	cfg := e.config()
	cfg.TokenInfoURL = e.url + "/tokeninfo"
	return e, endpointsiam.NewClient(cfg)
}

// setPolicy writes bindings as the policy of resource, as another user
// of the API would.
func (e *env) setPolicy(t *testing.T, resource string, bindings ...*servicemanagement.Binding) {
	t.Helper()
	req := &servicemanagement.SetIamPolicyRequest{Policy: &servicemanagement.Policy{Bindings: bindings}}
	if _, err := e.sdk(t).Services.SetIamPolicy(resource, req).Context(t.Context()).Do(); err != nil {
		t.Fatalf("setIamPolicy %s: %v", resource, err)
	}
}

// TestReviewAccess reviews writes of each IAM resource against the live
// policy: what each removes and adds, and the caller's roles it takes.
func TestReviewAccess(t *testing.T) {
	t.Parallel()
	e, cl := withTokenInfo(t)
	const svc = "services/" + inventory
	e.setPolicy(t, svc,
		&servicemanagement.Binding{Role: controllerRole, Members: []string{me, "user:ops@acme.example"}},
		&servicemanagement.Binding{Role: consumerRole, Members: []string{"user:jane@acme.example"}})
	orderDoc := doc(t, grant(consumerRole, "group:orders-clients@acme.example"))
	for name, tc := range map[string]struct {
		d        resources.AccessReviewer
		w        resources.AccessWrite
		changes  []string // "-ROLE MEMBER" or "+ROLE MEMBER"
		lockouts []string // "ROLE MEMBER"
	}{
		"policy create over a live one": {endpointsiam.NewServicePolicy(cl),
			resources.AccessWrite{Op: resources.WriteCreate, Want: resources.Attrs{"serviceName": orders, "policyData": orderDoc}},
			[]string{"-" + consumerRole + " user:alice@acme.example", "-" + controllerRole + " serviceAccount:orders-esp@acme-prod.iam.gserviceaccount.com"}, nil},
		"policy without the caller": {endpointsiam.NewServicePolicy(cl),
			resources.AccessWrite{Op: resources.WriteUpdate, ID: svc, Want: resources.Attrs{"serviceName": inventory, "policyData": doc(t, grant(controllerRole, "user:ops@acme.example"))}},
			[]string{"-" + consumerRole + " user:jane@acme.example", "-" + controllerRole + " " + me}, []string{controllerRole + " " + me}},
		"policy keeping the caller through a group": {endpointsiam.NewServicePolicy(cl),
			resources.AccessWrite{Op: resources.WriteUpdate, ID: svc, Want: resources.Attrs{"serviceName": inventory, "policyData": doc(t,
				grant(controllerRole, "group:deployers@acme.example", "user:ops@acme.example"), grant(consumerRole, "user:jane@acme.example"))}},
			[]string{"-" + controllerRole + " " + me, "+" + controllerRole + " group:deployers@acme.example"}, nil},
		"policy delete": {endpointsiam.NewServicePolicy(cl), resources.AccessWrite{Op: resources.WriteDelete, ID: svc},
			[]string{"-" + consumerRole + " user:jane@acme.example", "-" + controllerRole + " " + me, "-" + controllerRole + " user:ops@acme.example"}, []string{controllerRole + " " + me}},
		"binding without the caller": {endpointsiam.NewServiceBinding(cl),
			resources.AccessWrite{Op: resources.WriteUpdate, ID: svc + " " + controllerRole, Want: resources.Attrs{"serviceName": inventory, "role": controllerRole, "members": []any{"user:ops@acme.example"}}},
			[]string{"-" + controllerRole + " " + me}, []string{controllerRole + " " + me}},
		"binding of another role": {endpointsiam.NewServiceBinding(cl),
			resources.AccessWrite{Op: resources.WriteCreate, Want: resources.Attrs{"serviceName": inventory, "role": consumerRole, "members": []any{"user:bob@acme.example"}}},
			[]string{"-" + consumerRole + " user:jane@acme.example", "+" + consumerRole + " user:bob@acme.example"}, nil},
		"binding delete": {endpointsiam.NewServiceBinding(cl), resources.AccessWrite{Op: resources.WriteDelete, ID: svc + " " + controllerRole},
			[]string{"-" + controllerRole + " " + me, "-" + controllerRole + " user:ops@acme.example"}, []string{controllerRole + " " + me}},
		"member create": {endpointsiam.NewServiceMember(cl),
			resources.AccessWrite{Op: resources.WriteCreate, Want: resources.Attrs{"serviceName": inventory, "role": consumerRole, "member": "user:bob@acme.example"}},
			[]string{"+" + consumerRole + " user:bob@acme.example"}, nil},
		"member there already": {endpointsiam.NewServiceMember(cl),
			resources.AccessWrite{Op: resources.WriteCreate, Want: resources.Attrs{"serviceName": inventory, "role": consumerRole, "member": "user:jane@acme.example"}}, nil, nil},
		"member delete of the caller": {endpointsiam.NewServiceMember(cl), resources.AccessWrite{Op: resources.WriteDelete, ID: svc + " " + controllerRole + " " + me},
			[]string{"-" + controllerRole + " " + me}, []string{controllerRole + " " + me}},
		"member update writes nothing": {endpointsiam.NewServiceMember(cl), resources.AccessWrite{Op: resources.WriteUpdate, ID: svc + " " + controllerRole + " " + me,
			Want: resources.Attrs{"serviceName": inventory, "role": controllerRole, "member": me}}, nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.d.ReviewAccess(t.Context(), tc.w)
			if err != nil {
				t.Fatalf("ReviewAccess(%+v): %v", tc.w, err)
			}
			var changes, lockouts []string
			for _, c := range got.Changes {
				sign := "-"
				if c.Added {
					sign = "+"
				}
				changes = append(changes, sign+c.Role+" "+c.Member)
				if !strings.HasPrefix(c.Resource, "services/") {
					t.Errorf("change %+v: want the resource of the policy", c)
				}
			}
			for _, l := range got.Lockouts {
				lockouts = append(lockouts, l.Role+" "+l.Member)
				if l.Caller != gcp.Caller {
					t.Errorf("lockout %+v: caller %q, want %q", l, l.Caller, gcp.Caller)
				}
			}
			if !reflect.DeepEqual(changes, tc.changes) || !reflect.DeepEqual(lockouts, tc.lockouts) {
				t.Errorf("ReviewAccess(%+v) = changes %q, lockouts %q; want %q, %q", tc.w, changes, lockouts, tc.changes, tc.lockouts)
			}
		})
	}
}

// TestReviewAccessCallerUnknown: a write removing members cannot be
// reviewed when who the caller is cannot be told, unless the caller may
// lose its access anyway; a write adding members needs no caller.
func TestReviewAccessCallerUnknown(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil) // no tokeninfo
	cfg := e.config()
	cfg.TokenInfoURL = e.url + "/no-tokeninfo-here"
	d := endpointsiam.NewServiceBinding(endpointsiam.NewClient(cfg))
	remove := resources.AccessWrite{Op: resources.WriteCreate, Want: resources.Attrs{"serviceName": orders, "role": consumerRole, "members": []any{"user:bob@acme.example"}}}
	if _, err := d.ReviewAccess(t.Context(), remove); !errors.Is(err, resources.ErrRefused) || !strings.Contains(err.Error(), "--allow-self-lockout") {
		t.Errorf("ReviewAccess of a removal without a known caller = %v, want a refusal naming --allow-self-lockout, as the write's own check refuses it", err)
	}
	remove.AllowSelfLockout = true
	if got, err := d.ReviewAccess(t.Context(), remove); err != nil || len(got.Changes) != 3 || len(got.Lockouts) != 0 {
		t.Errorf("ReviewAccess allowing self-lockout = %+v, %v; want the changes and no lockout", got, err)
	}
	add := resources.AccessWrite{Op: resources.WriteCreate, Want: resources.Attrs{"serviceName": inventory, "role": consumerRole, "members": []any{"user:bob@acme.example"}}}
	if got, err := d.ReviewAccess(t.Context(), add); err != nil || len(got.Changes) != 1 {
		t.Errorf("ReviewAccess of an addition = %+v, %v; want one change", got, err)
	}
}

// TestWriteGuard: a write made with resources.WithSelfLockout(ctx, false)
// that would take the caller's own role is refused before it is sent,
// and writes nothing; allowed, or without the guard, it is written.
func TestWriteGuard(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		ctx     func(context.Context) context.Context
		refused bool
	}{
		"guarded":   {func(ctx context.Context) context.Context { return resources.WithSelfLockout(ctx, false) }, true},
		"allowed":   {func(ctx context.Context) context.Context { return resources.WithSelfLockout(ctx, true) }, false},
		"unguarded": {func(ctx context.Context) context.Context { return ctx }, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, cl := withTokenInfo(t)
			const svc = "services/" + inventory
			e.setPolicy(t, svc, &servicemanagement.Binding{Role: controllerRole, Members: []string{me}})
			ctx := tc.ctx(t.Context())
			_, _, err := endpointsiam.NewServiceBinding(cl).Create(ctx, resources.Attrs{"serviceName": inventory, "role": controllerRole, "members": []any{"user:ops@acme.example"}})
			got := members(e.policy(t, svc), controllerRole)
			if tc.refused {
				if !errors.Is(err, resources.ErrRefused) || !strings.Contains(err.Error(), "caller's own access") || !strings.Contains(err.Error(), "--allow-self-lockout") {
					t.Errorf("Create = %v, want a refusal naming the caller's own access and --allow-self-lockout", err)
				}
				if !reflect.DeepEqual(got, []string{me}) {
					t.Errorf("members after the refused write = %v, want the caller still", got)
				}
				// A write that keeps the caller goes through.
				if _, _, err := endpointsiam.NewServiceMember(cl).Create(ctx, resources.Attrs{"serviceName": inventory, "role": controllerRole, "member": "user:ops@acme.example"}); err != nil {
					t.Errorf("adding a member under the guard: %v", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, []string{"user:ops@acme.example"}) {
				t.Errorf("Create = %v, members %v; want the caller replaced", err, got)
			}
		})
	}
}
