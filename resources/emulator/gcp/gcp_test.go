package gcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	servicemanagement "google.golang.org/api/servicemanagement/v1"

	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
)

// call makes a raw request to the emulator and returns status and body.
func (e *env) call(t *testing.T, method, path, token, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestEmulatorGetIamPolicyBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.creds.GoogleAccessToken
	path := "/v1/services/" + inventory + ":getIamPolicy?alt=json&prettyPrint=false"
	for name, tc := range map[string]struct {
		path, token, body string
		wantStatus        int
		wantBody          string // substring
	}{
		"no body (Terraform)":      {path, tok, "", 200, `{"etag":"ACAB"}`},
		"empty object":             {path, tok, "{}", 200, `{"etag":"ACAB"}`},
		"null (nil request)":       {path, tok, "null", 200, `{"etag":"ACAB"}`},
		"version 0":                {path, tok, `{"options":{"requestedPolicyVersion":0}}`, 200, `{"etag":"ACAB"}`},
		"version 1":                {path, tok, `{"options":{"requestedPolicyVersion":1}}`, 200, `{"etag":"ACAB"}`},
		"version 3":                {path, tok, `{"options":{"requestedPolicyVersion":3}}`, 200, `{"etag":"ACAB"}`},
		"version 2":                {path, tok, `{"options":{"requestedPolicyVersion":2}}`, 400, `"status":"INVALID_ARGUMENT"`},
		"unknown field":            {path, tok, `{"option":{}}`, 400, `"status":"INVALID_ARGUMENT"`},
		"no token":                 {path, "", "", 401, `"status":"UNAUTHENTICATED"`},
		"wrong token":              {path, "ya29.other", "", 401, `"status":"UNAUTHENTICATED"`},
		"unknown service":          {"/v1/services/nope:getIamPolicy?prettyPrint=false", tok, "", 403, `"message":"Service 'nope' not found or permission denied.","status":"PERMISSION_DENIED","details":[`},
		"unknown consumer":         {"/v1/services/" + orders + "/consumers/nobody:getIamPolicy?prettyPrint=false", tok, "", 200, `{"etag":"ACAB"}`},
		"GET is not a route":       {path, tok, "", 404, `"status":"NOT_FOUND"`},
		"unknown verb":             {"/v1/services/" + orders + ":undelete?prettyPrint=false", tok, "{}", 404, `"status":"NOT_FOUND"`},
		"alt=proto is not served":  {"/v1/services/" + orders + ":getIamPolicy?alt=proto", tok, "", 400, `"INVALID_ARGUMENT"`},
		"pretty print by default":  {"/v1/services/" + inventory + ":getIamPolicy", tok, "", 200, "{\n  \"etag\": \"ACAB\"\n}"},
		"service with seed policy": {"/v1/services/" + orders + ":getIamPolicy?prettyPrint=false", tok, "", 200, `"version":1,"bindings":[{"role":"roles/servicemanagement.serviceConsumer"`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			method := http.MethodPost
			if strings.HasPrefix(name, "GET") {
				method = http.MethodGet
			}
			status, body := e.call(t, method, tc.path, tc.token, tc.body)
			if status != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Errorf("%s %s body %q = %d %s\nwant %d containing %s", method, tc.path, tc.body, status, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
}

func TestEmulatorErrorBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, body := e.call(t, http.MethodPost, "/v1/services/nope:getIamPolicy?alt=json&prettyPrint=false", e.creds.GoogleAccessToken, "")
	var got struct {
		Error struct {
			Code    int
			Message string
			Status  string
			Details []map[string]any
		}
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("error body %s: %v", body, err)
	}
	var info map[string]any
	for _, d := range got.Error.Details {
		if d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" {
			info = d
		}
	}
	if status != 403 || got.Error.Code != 403 || got.Error.Status != "PERMISSION_DENIED" || info == nil ||
		info["domain"] != "servicemanagement.googleapis.com" {
		t.Errorf("unknown service: %d %s, want 403 PERMISSION_DENIED with an ErrorInfo detail", status, body)
	}
}

func TestEmulatorServicesListAndGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	svc := e.sdk(t)
	ctx := t.Context()

	var names []string
	err := svc.Services.List().PageSize(1).Pages(ctx, func(r *servicemanagement.ListServicesResponse) error {
		if len(r.Services) > 1 {
			t.Errorf("page of %d services, want at most 1", len(r.Services))
		}
		for _, s := range r.Services {
			if s.ProducerProjectId != gcp.SeedProducerProject {
				t.Errorf("service %s producerProjectId = %q, want %q", s.ServiceName, s.ProducerProjectId, gcp.SeedProducerProject)
			}
			names = append(names, s.ServiceName)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("services.list: %v", err)
	}
	if want := []string{inventory, orders}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("services.list = %v, want %v", names, want)
	}

	r, err := svc.Services.List().ProducerProjectId("someone-else").Context(ctx).Do()
	if err != nil || len(r.Services) != 0 {
		t.Errorf("services.list(producerProjectId=someone-else) = %v, %v; want no services", r, err)
	}

	r, err = svc.Services.List().ConsumerId("project:" + consumer).Context(ctx).Do()
	if err != nil || len(r.Services) != 1 || r.Services[0].ServiceName != orders {
		t.Errorf("services.list(consumerId=project:%s) = %v, %v; want [%s]", consumer, r, err, orders)
	}

	got, err := svc.Services.Get(orders).Context(ctx).Do()
	if err != nil || got.ServiceName != orders || got.ProducerProjectId != gcp.SeedProducerProject {
		t.Errorf("services.get(%s) = %+v, %v", orders, got, err)
	}
	if _, err := svc.Services.Get("nope").Context(ctx).Do(); httpStatus(err) != http.StatusForbidden {
		t.Errorf("services.get(nope) error = %v, want 403", err)
	}
}

func TestEmulatorSetIamPolicyValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.creds.GoogleAccessToken
	for name, tc := range map[string]struct {
		body       string
		wantStatus int
		wantBody   string
	}{
		"no policy":   {`{}`, 400, "INVALID_ARGUMENT"},
		"bad version": {`{"policy":{"version":2}}`, 400, "INVALID_ARGUMENT"},
		"bad role":    {`{"policy":{"bindings":[{"role":"owner","members":["user:a@b.c"]}]}}`, 400, "INVALID_ARGUMENT"},
		"bad member": {`{"policy":{"bindings":[{"role":"roles/viewer","members":["a@b.c"]}]}}`, 400,
			`"message":"The member a@b.c is of an unknown type. Please set a valid type prefix for the member.","status":"INVALID_ARGUMENT"`},
		"condition v1":   {`{"policy":{"bindings":[{"role":"roles/viewer","members":["user:a@b.c"],"condition":{"expression":"true"}}]}}`, 400, "INVALID_ARGUMENT"},
		"bad mask":       {`{"policy":{},"updateMask":"owners"}`, 400, "INVALID_ARGUMENT"},
		"unknown etag":   {`{"policy":{"etag":"BwAAAAAAAAA="}}`, 409, `"status":"ABORTED"`},
		"empty bindings": {`{"policy":{"etag":"ACAB","bindings":[{"role":"roles/viewer"}]}}`, 200, `{"version":1,"etag":"`},
		"deduplicates members": {`{"policy":{"bindings":[{"role":"roles/viewer","members":["user:a@b.c","user:a@b.c"]}]}}`, 200,
			`"bindings":[{"role":"roles/viewer","members":["user:a@b.c"]}]`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A consumer of its own, so that cases do not see each other's writes.
			path := "/v1/services/" + orders + "/consumers/" + strings.ReplaceAll(name, " ", "-") + ":setIamPolicy?prettyPrint=false"
			status, body := e.call(t, http.MethodPost, path, tok, tc.body)
			if status != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Errorf("POST %s %s = %d %s\nwant %d containing %s", path, tc.body, status, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
}

func TestEmulatorTestIamPermissions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := e.sdk(t).Services.TestIamPermissions("services/"+orders, &servicemanagement.TestIamPermissionsRequest{
		Permissions: []string{"servicemanagement.services.get", "storage.buckets.get"},
	}).Context(t.Context()).Do()
	if err != nil || strings.Join(r.Permissions, ",") != "servicemanagement.services.get" {
		t.Errorf("testIamPermissions = %v, %v; want [servicemanagement.services.get]", r, err)
	}
}

func TestEmulatorSeedIdempotentAndPersistent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "emulator.db")
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	start := func() (*env, func()) {
		store, err := emulator.OpenStore(path)
		if err != nil {
			t.Fatal(err)
		}
		em := gcp.New(store, creds)
		if err := em.Seed(); err != nil {
			t.Fatalf("Seed() = %v", err)
		}
		srv := httptest.NewServer(em)
		return &env{url: srv.URL, creds: creds}, func() { srv.Close(); store.Close() }
	}

	e, stop := start()
	set, err := e.sdk(t).Services.SetIamPolicy("services/"+orders, &servicemanagement.SetIamPolicyRequest{
		Policy: &servicemanagement.Policy{Bindings: []*servicemanagement.Binding{
			{Role: "roles/servicemanagement.serviceConsumer", Members: []string{"user:carol@acme.example"}},
		}},
	}).Context(t.Context()).Do()
	if err != nil {
		t.Fatalf("setIamPolicy: %v", err)
	}
	stop()

	// A restart seeds again; the change made before survives.
	e, stop = start()
	defer stop()
	got, err := e.sdk(t).Services.GetIamPolicy("services/"+orders, &servicemanagement.GetIamPolicyRequest{}).Context(t.Context()).Do()
	if err != nil {
		t.Fatalf("getIamPolicy after restart: %v", err)
	}
	if got.Etag != set.Etag || len(got.Bindings) != 1 || got.Bindings[0].Role != "roles/servicemanagement.serviceConsumer" ||
		strings.Join(got.Bindings[0].Members, ",") != "user:carol@acme.example" {
		t.Errorf("after restart: etag %q bindings %+v\nwant etag %q and only user:carol@acme.example as serviceConsumer", got.Etag, got.Bindings, set.Etag)
	}
}
