package restrictionpolicy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/internal/conntest"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/datadog"
	"github.com/reconcile-dev/reconcile/resources/restrictionpolicy"
)

type attrs = resources.Attrs

const (
	roleA = "role:00000000-0000-0000-0000-000000000001"
	roleB = "role:00000000-0000-0000-0000-000000000002"
	teamA = "team:11111111-2222-3333-4444-555555555555"
	userA = "user:aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
)

// env is a seeded emulator served over HTTP.
type env struct {
	url   string
	creds emulator.Credentials
	em    *datadog.Emulator
	conns *conntest.Counter // TCP connections the server accepted
}

// newEnv starts a seeded emulator on a store at path (a fresh one when
// empty); wrap, when not nil, wraps its handler (to inject faults or record
// requests).
func newEnv(t *testing.T, path string, creds *emulator.Credentials, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "emulator.db")
	}
	store, err := emulator.OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if creds == nil {
		c, err := emulator.NewCredentials()
		if err != nil {
			t.Fatal(err)
		}
		creds = &c
	}
	em := seedCaller(t, store, *creds)
	var h http.Handler = em
	if wrap != nil {
		h = wrap(h)
	}
	conns := &conntest.Counter{}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = conns.ConnState
	srv.Start()
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, creds: *creds, em: em, conns: conns}
}

// seedCaller returns an emulator on store whose current user, the caller
// of the API, is in roleA (unless the store has a user already): bindings
// that give roleA the highest relation of a resource type keep the
// caller's own access, which Datadog refuses to lower.
func seedCaller(t *testing.T, store *emulator.Store, creds emulator.Credentials) *datadog.Emulator {
	t.Helper()
	em := datadog.New(store, creds)
	if err := store.Update(func(tx emulator.Tx) error {
		_, _, err := em.SeedFrom(tx, datadog.SeedData{User: &datadog.UserSeed{RoleID: strings.TrimPrefix(roleA, "role:")}})
		return err
	}); err != nil {
		t.Fatalf("SeedFrom() = %v", err)
	}
	if err := em.Seed(); err != nil {
		t.Fatalf("Seed() = %v", err)
	}
	return em
}

// writeOutside writes the policy of rid as another admin would, in the UI
// or with allow_self_lockout=true: its bindings need not keep the
// caller's access.
func (e *env) writeOutside(t *testing.T, rid string, bindings ...restrictionpolicy.Binding) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"data": map[string]any{"id": rid, "type": "restriction_policy",
		"attributes": map[string]any{"bindings": bindings}}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), "POST", e.url+"/api/v2/restriction_policy/"+rid+"?allow_self_lockout=true", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("DD-API-KEY", e.creds.DatadogAPIKey)
	req.Header.Set("DD-APPLICATION-KEY", e.creds.DatadogAppKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 {
		t.Fatalf("write the policy of %s outside: %d %s", rid, resp.StatusCode, b)
	}
}

func (e *env) config() restrictionpolicy.Config {
	return restrictionpolicy.Config{BaseURL: e.url, APIKey: e.creds.DatadogAPIKey, AppKey: e.creds.DatadogAppKey}
}

func binding(relation string, principals ...string) map[string]any {
	ps := make([]any, len(principals))
	for i, p := range principals {
		ps[i] = p
	}
	return map[string]any{"relation": relation, "principals": ps}
}

// recorder wraps a handler and records "METHOD PATH" of each request.
type recorder struct {
	mu   sync.Mutex
	reqs []string
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, r.Method+" "+r.URL.EscapedPath())
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (rec *recorder) take() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := rec.reqs
	rec.reqs = nil
	return out
}

// TestContract runs the driver life cycle: create, read, update in place,
// read, delete, read.
func TestContract(t *testing.T) {
	t.Parallel()
	var rec recorder
	e := newEnv(t, "", nil, rec.wrap)
	d := restrictionpolicy.New(e.config())
	ctx := t.Context()
	const rid = "dashboard:abc-def-ghi"

	want := attrs{"resourceId": rid, "bindings": []any{binding("editor", roleA)}}
	id, got, err := d.Create(ctx, d.Normalize(want))
	if err != nil {
		t.Fatalf("Create(%v) error: %v", want, err)
	}
	wantGot := attrs{"id": rid, "resourceId": rid, "bindings": []any{binding("editor", roleA)}}
	if id != rid || !resources.Equal(got, wantGot) {
		t.Fatalf("Create(%v) = %q, %v; want %q, %v", want, id, got, rid, wantGot)
	}
	if got, err := d.Read(ctx, id); err != nil || !resources.Equal(got, wantGot) {
		t.Fatalf("Read(%q) = %v, %v; want %v", id, got, err, wantGot)
	}

	rec.take()
	want2 := attrs{"resourceId": rid, "bindings": []any{binding("viewer", "org:"+orgOf(t, e)), binding("editor", roleB, roleA)}}
	got, err = d.Update(ctx, id, want, d.Normalize(want2))
	if err != nil {
		t.Fatalf("Update(%q, %v) error: %v", id, want2, err)
	}
	if reqs := rec.take(); len(reqs) != 1 || reqs[0] != "POST /api/v2/restriction_policy/"+rid {
		t.Errorf("Update sent %v, want one POST (never a delete then a create)", reqs)
	}
	wantGot2 := attrs{"id": rid, "resourceId": rid,
		"bindings": []any{binding("editor", roleA, roleB), binding("viewer", "org:"+orgOf(t, e))}}
	if !resources.Equal(got, wantGot2) {
		t.Errorf("Update(%q, %v) = %v, want %v", id, want2, got, wantGot2)
	}
	if got, err := d.Read(ctx, id); err != nil || !resources.Equal(got, wantGot2) {
		t.Errorf("Read(%q) after update = %v, %v; want %v", id, got, err, wantGot2)
	}

	if err := d.Delete(ctx, id); err != nil {
		t.Fatalf("Delete(%q) error: %v", id, err)
	}
	if got, err := d.Read(ctx, id); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Read(%q) after delete = %v, %v; want ErrNotFound", id, got, err)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Errorf("second Delete(%q) = %v, want nil", id, err)
	}
}

func orgOf(t *testing.T, e *env) string {
	t.Helper()
	_, org := e.em.CurrentUser()
	if org == "" {
		t.Fatal("CurrentUser() org is empty after Seed")
	}
	return org
}

// TestCreateRefusesExistingPolicy: the API's POST is an upsert, so Create
// reads first and does not take over a policy made outside this state.
func TestCreateRefusesExistingPolicy(t *testing.T) {
	t.Parallel()
	var rec recorder
	e := newEnv(t, "", nil, rec.wrap)
	ctx := t.Context()
	const rid = "notebook:42"
	// Someone else's policy, made in the UI or by another stack.
	theirs := []restrictionpolicy.Binding{{Relation: "viewer", Principals: []string{teamA}}}
	e.writeOutside(t, rid, theirs...)
	rec.take()
	d := restrictionpolicy.New(e.config())
	want := attrs{"resourceId": rid, "bindings": []any{binding("editor", userA)}}
	id, got, err := d.Create(ctx, want)
	var ee *resources.ExistsError
	if !errors.As(err, &ee) || ee.ID != rid || ee.Type != "datadog:RestrictionPolicy" || id != "" || got != nil {
		t.Fatalf("Create(%v) over an existing policy = %q, %v, %v; want an *ExistsError for %q", want, id, got, err, rid)
	}
	if !errors.Is(err, resources.ErrAlreadyExists) || !errors.Is(err, resources.ErrRefused) {
		t.Errorf("Create error %v does not match ErrAlreadyExists and ErrRefused", err)
	}
	if reqs := rec.take(); len(reqs) != 1 || !strings.HasPrefix(reqs[0], "GET ") {
		t.Errorf("Create over an existing policy sent %v, want one GET and no write", reqs)
	}
	p, err := restrictionpolicy.NewClient(e.config()).GetRestrictionPolicy(ctx, rid)
	if err != nil || len(p.Bindings) != 1 || p.Bindings[0].Relation != "viewer" || len(p.Bindings[0].Principals) != 1 || p.Bindings[0].Principals[0] != teamA {
		t.Errorf("stored policy after the refused create = %+v, %v; want theirs unchanged, %+v", p, err, theirs)
	}
}

// TestReadWithoutPolicy: a resource without bindings has no policy, whether
// it never had one or it was deleted outside.
func TestReadWithoutPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	d := restrictionpolicy.New(e.config())
	other := restrictionpolicy.New(e.config()) // another user of the API
	ctx := t.Context()
	if got, err := d.Read(ctx, "dashboard:never-restricted"); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Read of a resource without a policy = %v, %v; want ErrNotFound", got, err)
	}
	const rid = "slo:0f6e3bd9-3c73-4c09-a3bc-6d0c4a0b7c55"
	if _, _, err := d.Create(ctx, d.Normalize(attrs{"resourceId": rid, "bindings": []any{binding("editor", roleA)}})); err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ctx, rid); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Read(ctx, rid); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Read(%q) after an out-of-band delete = %v, %v; want ErrNotFound", rid, got, err)
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	d := restrictionpolicy.New(restrictionpolicy.Config{})
	for name, tc := range map[string]struct {
		a, b      attrs
		wantEqual bool
	}{
		"bindings reordered": {
			a:         attrs{"resourceId": "dashboard:x", "bindings": []any{binding("viewer", teamA), binding("editor", roleA, roleB)}},
			b:         attrs{"resourceId": "dashboard:x", "bindings": []any{binding("editor", roleA, roleB), binding("viewer", teamA)}},
			wantEqual: true,
		},
		"principals reordered": {
			a:         attrs{"resourceId": "dashboard:x", "bindings": []any{binding("editor", roleB, userA, roleA)}},
			b:         attrs{"resourceId": "dashboard:x", "bindings": []any{binding("editor", roleA, roleB, userA)}},
			wantEqual: true,
		},
		"same relation twice, reordered": {
			a:         attrs{"resourceId": "dashboard:x", "bindings": []any{binding("editor", roleB), binding("editor", roleA)}},
			b:         attrs{"resourceId": "dashboard:x", "bindings": []any{binding("editor", roleA), binding("editor", roleB)}},
			wantEqual: true,
		},
		"missing bindings stay missing": {
			a:         attrs{"resourceId": "dashboard:x"},
			b:         attrs{"resourceId": "dashboard:x", "bindings": []any{}},
			wantEqual: false,
		},
		"duplicate relations are not merged": {
			a:         attrs{"resourceId": "dashboard:x", "bindings": []any{binding("editor", roleB), binding("editor", roleA)}},
			b:         attrs{"resourceId": "dashboard:x", "bindings": []any{binding("editor", roleA, roleB)}},
			wantEqual: false,
		},
		"different principal": {
			a:         attrs{"resourceId": "dashboard:x", "bindings": []any{binding("editor", roleA)}},
			b:         attrs{"resourceId": "dashboard:x", "bindings": []any{binding("editor", roleB)}},
			wantEqual: false,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			na, nb := d.Normalize(tc.a), d.Normalize(tc.b)
			if got := resources.Equal(na, nb); got != tc.wantEqual {
				t.Errorf("Normalize(%v) = %v\nNormalize(%v) = %v\nequal = %v, want %v", tc.a, na, tc.b, nb, got, tc.wantEqual)
			}
			if tc.wantEqual {
				ba, _ := na["bindings"].([]any)
				bb, _ := nb["bindings"].([]any)
				if !resources.SetEqual(ba, bb) {
					t.Errorf("SetEqual(%v, %v) = false, want true", ba, bb)
				}
			}
		})
	}
}

func TestReadMatchesNormalizedInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	d := restrictionpolicy.New(e.config())
	const rid = "workflow:7b2e"
	want := attrs{"resourceId": rid, "bindings": []any{binding("viewer", userA, teamA), binding("runner", roleB), binding("editor", roleA)}}
	if _, _, err := d.Create(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	got, err := d.Read(t.Context(), rid)
	if err != nil {
		t.Fatal(err)
	}
	if n := d.Normalize(want); !resources.Equal(got["bindings"], n["bindings"]) {
		t.Errorf("Read bindings %v != Normalize(want) bindings %v: a plan would show a false diff", got["bindings"], n["bindings"])
	}
}

func TestInputErrors(t *testing.T) {
	t.Parallel()
	d := restrictionpolicy.New(restrictionpolicy.Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", AppKey: "a"})
	for name, tc := range map[string]struct {
		want     attrs
		wantPath string
	}{
		"no resourceId":           {attrs{"bindings": []any{}}, "resourceId"},
		"resourceId without type": {attrs{"resourceId": "abc"}, "resourceId"},
		"no bindings":             {attrs{"resourceId": "dashboard:x"}, "bindings"},
		"empty bindings":          {attrs{"resourceId": "dashboard:x", "bindings": []any{}}, "bindings"},
		"bindings not a list":     {attrs{"resourceId": "dashboard:x", "bindings": "editor"}, "bindings"},
		"binding without relation": {attrs{"resourceId": "dashboard:x",
			"bindings": []any{map[string]any{"principals": []any{roleA}}}}, "bindings.0.relation"},
		"binding without principals": {attrs{"resourceId": "dashboard:x",
			"bindings": []any{map[string]any{"relation": "editor"}}}, "bindings.0.principals"},
		"principal not a string": {attrs{"resourceId": "dashboard:x",
			"bindings": []any{binding("editor"), map[string]any{"relation": "viewer", "principals": []any{int64(1)}}}}, "bindings.1.principals.0"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := d.Create(t.Context(), tc.want)
			var ae *resources.AttrError
			if !errors.As(err, &ae) || strings.Join(ae.Path, ".") != tc.wantPath || !errors.Is(err, resources.ErrRefused) {
				t.Errorf("Create(%v) error = %v, want an AttrError on %q, refused", tc.want, err, tc.wantPath)
			}
		})
	}
	_, err := d.Update(t.Context(), "dashboard:x", nil, attrs{"resourceId": "dashboard:y", "bindings": []any{binding("editor", roleA)}})
	var ae *resources.AttrError
	if !errors.As(err, &ae) || ae.Path[0] != "resourceId" {
		t.Errorf("Update changing resourceId: error = %v, want an AttrError on resourceId", err)
	}
}

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	d := restrictionpolicy.New(e.config())
	badKeys := e.config()
	badKeys.AppKey = "not-the-app-key"
	for name, tc := range map[string]struct {
		call        func() error
		wantStatus  int
		wantMsg     string
		wantRefused bool // Create made nothing
	}{
		"malformed resource id": {
			call:       func() error { _, err := d.Read(t.Context(), "malformed"); return err },
			wantStatus: 400, wantMsg: "Invalid resource: 'malformed' is not in a valid format",
		},
		"unsupported resource type": {
			call: func() error {
				_, _, err := d.Create(t.Context(), attrs{"resourceId": "gizmo:1", "bindings": []any{binding("editor", roleA)}})
				return err
			},
			wantStatus: 400, wantMsg: "Invalid resource type: 'gizmo' does not support restriction policies", wantRefused: true,
		},
		"principal not in the valid format": {
			call: func() error {
				_, _, err := d.Create(t.Context(), attrs{"resourceId": "dashboard:1",
					"bindings": []any{binding("editor", roleA), binding("viewer", "role:bob")}})
				return err
			},
			wantStatus:  400,
			wantMsg:     "Invalid principal: 'role:bob' is not in a valid format",
			wantRefused: true,
		},
		"principal of an unknown type": {
			call: func() error {
				_, _, err := d.Create(t.Context(), attrs{"resourceId": "security-rule:1",
					"bindings": []any{binding("editor", roleA, "group:4dee724d-00cc-11ea-a77b-570c9d03c6c5")}})
				return err
			},
			wantStatus: 400,
			wantMsg: `Invalid request: [PrincipalTypeInvalidForRelation] principal "group:4dee724d-00cc-11ea-a77b-570c9d03c6c5" ` +
				`is not supported by "editor" relation, supported types: "org, role, team, user"`,
			wantRefused: true,
		},
		"bad keys on create": {
			call: func() error {
				_, _, err := restrictionpolicy.New(badKeys).Create(t.Context(), attrs{"resourceId": "dashboard:1", "bindings": []any{binding("editor", roleA)}})
				return err
			},
			wantStatus: 403, wantMsg: "Forbidden", wantRefused: true,
		},
		"bad keys": {
			call:       func() error { _, err := restrictionpolicy.New(badKeys).Read(t.Context(), "dashboard:1"); return err },
			wantStatus: 403, wantMsg: "Forbidden",
		},
		"bad keys on current user": {
			call: func() error {
				_, err := restrictionpolicy.NewCurrentUser(badKeys).Invoke(t.Context(), nil)
				return err
			},
			wantStatus: 403, wantMsg: "Forbidden",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := tc.call()
			var ae *resources.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error = %v, want a *resources.APIError", err)
			}
			if ae.Service != "datadog" || ae.Status != tc.wantStatus || ae.Message != tc.wantMsg {
				t.Errorf("error = %+v, want datadog %d %q", *ae, tc.wantStatus, tc.wantMsg)
			}
			if tc.wantRefused && !errors.Is(err, resources.ErrRefused) {
				t.Errorf("error %v does not match ErrRefused", err)
			}
			for _, secret := range []string{e.creds.DatadogAPIKey, e.creds.DatadogAppKey, badKeys.AppKey} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q reveals a key", err)
				}
			}
		})
	}
}

// TestBadKeys: missing keys, and keys holding a control character (which
// Go's transport would refuse to send), fail at once as configuration
// errors, naming the variable but never the key.
func TestBadKeys(t *testing.T) {
	t.Parallel()
	var rec recorder
	e := newEnv(t, "", nil, rec.wrap)
	good := e.config()
	with := func(api, app string) restrictionpolicy.Config {
		c := good
		c.APIKey, c.AppKey = api, app
		return c
	}
	for name, tc := range map[string]struct {
		cfg         restrictionpolicy.Config
		wantMention string
	}{
		"both missing":         {with("", ""), "DD_API_KEY and DD_APP_KEY not set"},
		"app key missing":      {with(good.APIKey, ""), "DD_APP_KEY not set"},
		"api key missing":      {with("", good.AppKey), "DD_API_KEY not set"},
		"api key newline":      {with(good.APIKey+"\n", good.AppKey), "DD_API_KEY holds a newline"},
		"app key CR LF":        {with(good.APIKey, good.AppKey+"\r\n"), "DD_APP_KEY holds a carriage return"},
		"api key control char": {with("\x01"+good.APIKey, good.AppKey), "DD_API_KEY holds the control character U+0001"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			id, _, err := restrictionpolicy.New(tc.cfg).Create(t.Context(), attrs{"resourceId": "dashboard:keys", "bindings": []any{binding("editor", roleA)}})
			if id != "" || err == nil || !strings.Contains(err.Error(), tc.wantMention) || !errors.Is(err, resources.ErrRefused) {
				t.Errorf("Create with %s = %q, %v; want a refused configuration error saying %q", name, id, err, tc.wantMention)
			}
			if _, err := restrictionpolicy.NewCurrentUser(tc.cfg).Invoke(t.Context(), nil); err == nil || !strings.Contains(err.Error(), tc.wantMention) {
				t.Errorf("current user with %s = %v, want an error saying %q", name, err, tc.wantMention)
			}
			if err != nil && good.APIKey != "" && (strings.Contains(err.Error(), good.APIKey) || strings.Contains(err.Error(), good.AppKey)) {
				t.Errorf("error %q reveals a key", err)
			}
		})
	}
	t.Cleanup(func() {
		if reqs := rec.take(); len(reqs) != 0 {
			t.Errorf("requests sent with bad keys: %v, want none", reqs)
		}
	})
}

// TestCreateOutcomes: a create whose POST the API refuses made nothing;
// one whose POST failed otherwise may have written the policy.
func TestCreateOutcomes(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		status      int
		header      http.Header
		wantRefused bool
		wantMention string
	}{
		"403 refused":                 {status: 403, wantRefused: true, wantMention: "datadog API: 403: injected"},
		"404 refused":                 {status: 404, wantRefused: true, wantMention: "datadog API: 404: injected"},
		"501 unknown":                 {status: 501, wantMention: "datadog API: 501: injected"},
		"409 unknown":                 {status: 409, wantMention: "datadog API: 409: injected"},
		"throttled past the deadline": {status: 429, header: http.Header{"Retry-After": {"97200"}}, wantMention: "datadog API throttled the request until "},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "", nil, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method != http.MethodPost {
						h.ServeHTTP(w, r)
						return
					}
					for k, v := range tc.header {
						w.Header()[k] = v
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(tc.status)
					io.WriteString(w, `{"errors":["injected"]}`)
				})
			})
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			id, _, err := restrictionpolicy.New(e.config()).Create(ctx, attrs{"resourceId": "dashboard:outcome", "bindings": []any{binding("editor", roleA)}})
			if id != "" || err == nil || !strings.Contains(err.Error(), tc.wantMention) {
				t.Fatalf("Create = %q, %v; want no id and an error saying %q", id, err, tc.wantMention)
			}
			if got := errors.Is(err, resources.ErrRefused); got != tc.wantRefused {
				t.Errorf("Create error %v: refused = %v, want %v", err, got, tc.wantRefused)
			}
		})
	}
}

func TestCurrentUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	got, err := restrictionpolicy.NewCurrentUser(e.config()).Invoke(t.Context(), attrs{})
	if err != nil {
		t.Fatalf("Invoke() error: %v", err)
	}
	user, org := e.em.CurrentUser()
	want := attrs{"id": user, "orgId": org, "email": "ops@acme.example", "handle": "ops@acme.example", "name": "Acme Ops"}
	if !resources.Equal(got, want) || user == "" || org == "" || user == org {
		t.Errorf("Invoke() = %v, want %v", got, want)
	}
}

func TestRetriesRateLimit(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	e := newEnv(t, "", nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				w.Header().Set("X-RateLimit-Limit", "1")
				w.Header().Set("X-RateLimit-Period", "10")
				w.Header().Set("X-RateLimit-Remaining", "0")
				w.Header().Set("X-RateLimit-Reset", "0")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"errors":["Too many requests"]}`)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	d := restrictionpolicy.New(e.config())
	_, got, err := d.Create(t.Context(), attrs{"resourceId": "dashboard:rl", "bindings": []any{binding("editor", roleA)}})
	if err != nil {
		t.Fatalf("Create after a 429: %v", err)
	}
	// The read of the current policy is throttled, retried, then the POST.
	if n := calls.Load(); n != 3 || got["id"] != "dashboard:rl" {
		t.Errorf("Create after a 429 = %v with %d requests, want success after 3", got, n)
	}
}

func TestRestartPersistence(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "emulator.db")
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	const rid = "synthetics-test:abc-123"
	want := attrs{"id": rid, "resourceId": rid, "bindings": []any{binding("editor", roleA)}}

	store, err := emulator.OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	em := seedCaller(t, store, creds)
	srv := httptest.NewServer(em)
	cfg := restrictionpolicy.Config{BaseURL: srv.URL, APIKey: creds.DatadogAPIKey, AppKey: creds.DatadogAppKey}
	if _, _, err := restrictionpolicy.New(cfg).Create(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	user, org := em.CurrentUser()
	srv.Close()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	e := newEnv(t, path, &creds, nil) // seeds again
	if u, o := e.em.CurrentUser(); u != user || o != org {
		t.Errorf("CurrentUser() after restart = %s, %s; want %s, %s (seed must not replace the user)", u, o, user, org)
	}
	got, err := restrictionpolicy.New(e.config()).Read(t.Context(), rid)
	if err != nil || !resources.Equal(got, want) {
		t.Errorf("Read(%q) after restart = %v, %v; want %v", rid, got, err, want)
	}
}

func TestIDFor(t *testing.T) {
	t.Parallel()
	d := restrictionpolicy.New(restrictionpolicy.Config{})
	if id, ok := d.IDFor(resources.Attrs{"resourceId": "dashboard:abc", "bindings": []any{}}); !ok || id != "dashboard:abc" {
		t.Errorf("IDFor = %q, %v; want dashboard:abc", id, ok)
	}
	if _, ok := d.IDFor(resources.Attrs{"bindings": []any{}}); ok {
		t.Errorf("IDFor without a resourceId knows an id")
	}
}

// TestSelfLockoutRefused: bindings that would lower the caller's own
// access are refused by the API (the driver never sends
// allow_self_lockout), and the error says what to do; nothing changes.
func TestSelfLockoutRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	d := restrictionpolicy.New(e.config())
	ctx := t.Context()
	const rid = "dashboard:lockout"
	mine := attrs{"resourceId": rid, "bindings": []any{binding("editor", roleA)}}
	if _, _, err := d.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func(want attrs) error{
		"update": func(want attrs) error { _, err := d.Update(ctx, rid, mine, want); return err },
		"create": func(want attrs) error {
			want = attrs{"resourceId": "dashboard:lockout-new", "bindings": want["bindings"]}
			_, _, err := d.Create(ctx, want)
			return err
		},
	} {
		for _, tc := range []struct {
			bindings []any
			wantMsg  string
		}{
			{[]any{binding("viewer", roleA), binding("editor", roleB)}, "(from editor to viewer)"},
			{[]any{binding("editor", roleB, teamA, userA)}, "(from editor to no access)"},
		} {
			err := call(attrs{"resourceId": rid, "bindings": tc.bindings})
			var ae *resources.APIError
			if !errors.As(err, &ae) || ae.Status != 400 || ae.Message != "Invalid request: users cannot decrease their own level of access "+tc.wantMsg {
				t.Fatalf("%s to %v: error %v, want the API's 400 %s", name, tc.bindings, err, tc.wantMsg)
			}
			for _, hint := range []string{"application key (DD_APP_KEY)", "org (org:ORG_ID)", "datadog:getCurrentUser"} {
				if !strings.Contains(err.Error(), hint) {
					t.Errorf("%s to %v: error %q does not say %q", name, tc.bindings, err, hint)
				}
			}
			if name == "create" && !errors.Is(err, resources.ErrRefused) {
				t.Errorf("create to %v: error %v does not match ErrRefused", tc.bindings, err)
			}
		}
	}
	if got, err := d.Read(ctx, rid); err != nil || !resources.Equal(got["bindings"], mine["bindings"]) {
		t.Errorf("Read after the refused updates = %v, %v; want %v unchanged", got, err, mine["bindings"])
	}
	if got, err := d.Read(ctx, "dashboard:lockout-new"); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Read of the refused create = %v, %v; want ErrNotFound", got, err)
	}
}

// TestNormalizeKeepsCanonicalBindings checks Normalize's shortcut: bindings
// already in canonical form are kept as they are (shared, not rebuilt), and
// only those. Each random value is normalized twice: once as it is, once
// with its principals as []string, which never takes the shortcut; the two
// must agree, and the first must share the input exactly when the input is
// the canonical form itself.
func TestNormalizeKeepsCanonicalBindings(t *testing.T) {
	t.Parallel()
	d := restrictionpolicy.New(restrictionpolicy.Config{})
	rels := []string{"editor", "viewer", "runner"}
	principals := []string{roleA, roleB, teamA, userA}
	rng := rand.New(rand.NewPCG(5, 6))
	shared := 0
	for i := range 2000 {
		var bs []any
		for range 1 + rng.IntN(3) {
			ps := []any{}
			for range 1 + rng.IntN(3) {
				ps = append(ps, principals[rng.IntN(len(principals))])
			}
			b := map[string]any{"relation": rels[rng.IntN(len(rels))], "principals": ps}
			if rng.IntN(20) == 0 {
				b["note"] = "extra"
			}
			bs = append(bs, b)
		}
		if i%2 == 0 {
			bs = d.Normalize(attrs{"bindings": bs})["bindings"].([]any) // canonical
		}
		slow := make([]any, len(bs))
		for j, b := range bs {
			m := b.(map[string]any)
			var strs []string
			for _, p := range m["principals"].([]any) {
				strs = append(strs, p.(string))
			}
			slow[j] = map[string]any{"relation": m["relation"], "principals": strs}
		}
		want := d.Normalize(attrs{"bindings": slow})["bindings"].([]any)
		got := d.Normalize(attrs{"bindings": bs})["bindings"].([]any)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Normalize(%v) = %v, want %v", bs, got, want)
		}
		isShared := len(got) > 0 && &got[0] == &bs[0]
		if isCanon := reflect.DeepEqual(bs, want); isShared != isCanon {
			t.Fatalf("Normalize(%v): shared = %v, but the input is canonical = %v", bs, isShared, isCanon)
		}
		if isShared {
			shared++
		}
	}
	if shared < 1000 {
		t.Errorf("only %d of 2000 canonical inputs were kept as they were", shared)
	}
}
