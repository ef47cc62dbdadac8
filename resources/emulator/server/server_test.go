package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reconcile/resources/emulator/server"
)

func start(t *testing.T, dir string) *server.Server {
	t.Helper()
	srv, err := server.Start(server.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestStartWritesPrivateCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := start(t, dir)
	for _, name := range []string{"oci_config", "oci_api_key.pem", "env"} {
		fi, err := os.Stat(filepath.Join(dir, "credentials", name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	env, _ := os.ReadFile(filepath.Join(dir, "credentials", "env"))
	if !strings.Contains(string(env), "DD_API_KEY="+srv.Creds.DatadogAPIKey) {
		t.Errorf("env file = %q, want the Datadog API key", env)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "credentials", "oci_config"))
	if !strings.Contains(string(cfg), "tenancy="+server.Tenancy) || !strings.Contains(string(cfg), "key_file="+filepath.Join(dir, "credentials", "oci_api_key.pem")) {
		t.Errorf("oci_config = %q, want the fixed tenancy and the key beside it", cfg)
	}
	if fi, err := os.Stat(filepath.Join(dir, "emulator.db")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("emulator.db: %v, mode %v; want mode 0600", err, fi.Mode().Perm())
	}
}

func TestCredentialsSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := server.Start(server.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	first := srv.Creds
	srv.Close()
	again := start(t, dir)
	if again.Creds != first {
		t.Errorf("credentials changed across a restart")
	}
}

func TestListensOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", "10.1.2.3:8080", ":8080", "example.com:80"} {
		if srv, err := server.Start(server.Options{Listen: addr, DataDir: t.TempDir()}); err == nil {
			srv.Close()
			t.Errorf("Start(%q) succeeded, want a refusal", addr)
		} else if !strings.Contains(err.Error(), "loopback") {
			t.Errorf("Start(%q) error = %v, want one naming loopback", addr, err)
		}
	}
}

func TestAdminAPI(t *testing.T) {
	t.Parallel()
	srv := start(t, t.TempDir())
	resp, err := http.Get(srv.URL + "/_emulator/credentials")
	if err != nil {
		t.Fatal(err)
	}
	var doc server.CredentialsDoc
	json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if doc.Env["DD_APP_KEY"] != srv.Creds.DatadogAppKey || !strings.Contains(doc.OCIPrivateKey, "PRIVATE KEY") || !strings.Contains(doc.OCIConfig, "key_file=oci_api_key.pem") {
		t.Errorf("credentials document = %+v, want the keys and an OCI config", doc)
	}

	put := func(body string) int {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/_emulator/settings", bytes.NewBufferString(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := put(`{"faultRate": 2}`); code != http.StatusBadRequest {
		t.Errorf("faultRate 2: status %d, want 400", code)
	}
	if code := put(`{"latencyMS": 5, "bogus": 1}`); code != http.StatusBadRequest {
		t.Errorf("unknown field: status %d, want 400", code)
	}
	if code := put(`{"faultRate": 1, "faultStatuses": [503]}`); code != http.StatusOK {
		t.Fatalf("valid settings: status %d, want 200", code)
	}
	resp, err = http.Get(srv.URL + "/api/v2/current_user")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 503 || body["errors"] == nil {
		t.Errorf("with faultRate 1: status %d body %v, want 503 with a Datadog error body", resp.StatusCode, body)
	}
	resp, _ = http.Get(srv.URL + "/_emulator/stats")
	var stats map[string]int
	json.NewDecoder(resp.Body).Decode(&stats)
	resp.Body.Close()
	if stats["faultsInjected"] != 1 {
		t.Errorf("stats = %v, want one fault injected", stats)
	}
	resp, _ = http.Get(srv.URL + "/_emulator/health")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("health: %d, want 200 even with faults on (admin calls are never faulted)", resp.StatusCode)
	}
}

// TestRequestBodiesBounded: every API the emulator serves, and its admin
// API, refuses a body over 1 MiB rather than reading it all.
func TestRequestBodiesBounded(t *testing.T) {
	t.Parallel()
	srv := start(t, t.TempDir())
	body := `{"x":"` + strings.Repeat("a", 1<<20) + `"}`
	for name, tc := range map[string]struct {
		method, path string
		header       map[string]string
		want         int
	}{
		"OCI":      {method: "POST", path: "/20221001/endpoints", want: http.StatusRequestEntityTooLarge},
		"GCP":      {method: "POST", path: "/v1/services/x:getIamPolicy", header: map[string]string{"Authorization": "Bearer " + srv.Creds.GoogleAccessToken}, want: http.StatusBadRequest},
		"Datadog":  {method: "POST", path: "/api/v2/restriction_policy/dashboard:x", header: map[string]string{"DD-API-KEY": srv.Creds.DatadogAPIKey, "DD-APPLICATION-KEY": srv.Creds.DatadogAppKey}, want: http.StatusBadRequest},
		"settings": {method: "PUT", path: "/_emulator/settings", want: http.StatusBadRequest},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s %s with a body over 1 MiB: %s, want %d", tc.method, tc.path, resp.Status, tc.want)
			}
		})
	}
}
