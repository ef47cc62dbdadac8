package restrictionpolicy_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"reconcile/resources"
	"reconcile/resources/emulator"
	"reconcile/resources/restrictionpolicy"
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
	em    *restrictionpolicy.Emulator
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
	em := restrictionpolicy.NewEmulator(store, *creds)
	if err := em.Seed(); err != nil {
		t.Fatalf("Seed() = %v", err)
	}
	var h http.Handler = em
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, creds: *creds, em: em}
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
	// No policy reads as bindings [], not ErrNotFound (see Driver.Read).
	wantGone := attrs{"id": rid, "resourceId": rid, "bindings": []any{}}
	if got, err := d.Read(ctx, id); err != nil || !resources.Equal(got, wantGone) {
		t.Errorf("Read(%q) after delete = %v, %v; want %v", id, got, err, wantGone)
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

func TestCreateReplacesExistingPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	d := restrictionpolicy.New(e.config())
	ctx := t.Context()
	const rid = "notebook:42"
	if _, _, err := d.Create(ctx, attrs{"resourceId": rid, "bindings": []any{binding("viewer", teamA)}}); err != nil {
		t.Fatal(err)
	}
	// Someone else's policy already there: Create upserts over it.
	_, got, err := d.Create(ctx, attrs{"resourceId": rid, "bindings": []any{binding("editor", userA)}})
	want := attrs{"id": rid, "resourceId": rid, "bindings": []any{binding("editor", userA)}}
	if err != nil || !resources.Equal(got, want) {
		t.Errorf("Create over an existing policy = %v, %v; want %v", got, err, want)
	}
}

func TestDriftToNoPolicyIsVisible(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	d := restrictionpolicy.New(e.config())
	other := restrictionpolicy.New(e.config()) // another user of the API
	ctx := t.Context()
	const rid = "slo:0f6e3bd9-3c73-4c09-a3bc-6d0c4a0b7c55"
	want := d.Normalize(attrs{"resourceId": rid, "bindings": []any{binding("editor", roleA)}})
	if _, _, err := d.Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ctx, rid); err != nil {
		t.Fatal(err)
	}
	got, err := d.Read(ctx, rid)
	if err != nil {
		t.Fatalf("Read(%q) = %v", rid, err)
	}
	if resources.Equal(got["bindings"], want["bindings"]) || !resources.Equal(got["bindings"], []any{}) {
		t.Errorf("Read(%q) bindings = %v after an out-of-band delete, want [] (drift from %v)", rid, got["bindings"], want["bindings"])
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
		"missing bindings equal empty bindings": {
			a:         attrs{"resourceId": "dashboard:x"},
			b:         attrs{"resourceId": "dashboard:x", "bindings": []any{}},
			wantEqual: true,
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
			if !errors.As(err, &ae) || strings.Join(ae.Path, ".") != tc.wantPath {
				t.Errorf("Create(%v) error = %v, want an AttrError on %q", tc.want, err, tc.wantPath)
			}
		})
	}
	_, err := d.Update(t.Context(), "dashboard:x", nil, attrs{"resourceId": "dashboard:y"})
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
		call       func() error
		wantStatus int
		wantMsg    string
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
			wantStatus: 400, wantMsg: "Invalid resource: 'gizmo:1' has an unsupported resource type 'gizmo'",
		},
		"relation not valid for type, and bad principal": {
			call: func() error {
				_, _, err := d.Create(t.Context(), attrs{"resourceId": "dashboard:1",
					"bindings": []any{binding("runner", roleA), binding("viewer", "bob")}})
				return err
			},
			wantStatus: 400,
			wantMsg: "Invalid relation: 'runner' is not a supported relation for resource type 'dashboard' (supported: viewer, editor); " +
				"Invalid principal: 'bob' is not in a valid format",
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
			for _, secret := range []string{e.creds.DatadogAPIKey, e.creds.DatadogAppKey, badKeys.AppKey} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q reveals a key", err)
				}
			}
		})
	}
}

func TestMissingKeys(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cfg         restrictionpolicy.Config
		wantMention []string
	}{
		"both":    {restrictionpolicy.Config{BaseURL: "http://127.0.0.1:1"}, []string{"DD_API_KEY and DD_APP_KEY not set"}},
		"app key": {restrictionpolicy.Config{BaseURL: "http://127.0.0.1:1", APIKey: "k"}, []string{"DD_APP_KEY not set"}},
		"api key": {restrictionpolicy.Config{BaseURL: "http://127.0.0.1:1", AppKey: "a"}, []string{"DD_API_KEY not set"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := restrictionpolicy.New(tc.cfg).Read(t.Context(), "dashboard:1")
			for _, m := range tc.wantMention {
				if err == nil || !strings.Contains(err.Error(), m) {
					t.Errorf("Read with %s missing: error = %v, want it to say %q", name, err, m)
				}
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
	if n := calls.Load(); n != 2 || got["id"] != "dashboard:rl" {
		t.Errorf("Create after a 429 = %v with %d requests, want success after 2", got, n)
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
	em := restrictionpolicy.NewEmulator(store, creds)
	if err := em.Seed(); err != nil {
		t.Fatal(err)
	}
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
