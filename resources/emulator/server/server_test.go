package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
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

// TestDatadogRateLimitSetting: the Datadog rate limit starts at
// Options.DatadogRateLimit (1000 by default), and datadogRateLimit in the
// settings changes it, lifts it (negative) or brings it back to the start
// value (0, or left out).
func TestDatadogRateLimitSetting(t *testing.T) {
	t.Parallel()
	if got := settingsOf(t, start(t, t.TempDir())).DatadogRateLimit; got != 1000 {
		t.Errorf("default datadogRateLimit = %d, want 1000", got)
	}
	srv, err := server.Start(server.Options{DataDir: t.TempDir(), DatadogRateLimit: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if got := settingsOf(t, srv).DatadogRateLimit; got != 3 {
		t.Errorf("datadogRateLimit with Options.DatadogRateLimit 3 = %d, want 3", got)
	}
	// The limit counts calls in calendar minutes: keep the calls of one
	// check within one.
	if s := time.Now().Unix() % 60; s >= 55 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	call := func() *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v2/current_user", nil)
		req.Header.Set("DD-API-KEY", srv.Creds.DatadogAPIKey)
		req.Header.Set("DD-APPLICATION-KEY", srv.Creds.DatadogAppKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for i := 1; i <= 4; i++ {
		resp := call()
		want := 200
		if i == 4 {
			want = 429
		}
		if resp.StatusCode != want || resp.Header.Get("X-RateLimit-Limit") != "3" {
			t.Errorf("call %d with a limit of 3: %d, X-RateLimit-Limit %q; want %d and 3", i, resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"), want)
		}
	}

	if got := putSettings(t, srv, `{"datadogRateLimit": -5}`).DatadogRateLimit; got != -1 {
		t.Errorf("PUT datadogRateLimit -5 answers %d, want -1 (no limit)", got)
	}
	for i := range 10 {
		if resp := call(); resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Limit") != "" {
			t.Fatalf("call %d without a limit: %d, X-RateLimit-Limit %q; want 200 and no header", i+1, resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"))
		}
	}
	if got := putSettings(t, srv, `{"datadogRateLimit": 2000}`).DatadogRateLimit; got != 2000 {
		t.Errorf("PUT datadogRateLimit 2000 answers %d", got)
	}
	if resp := call(); resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Limit") != "2000" {
		t.Errorf("with a limit of 2000: %d, X-RateLimit-Limit %q; want 200 and 2000", resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"))
	}
	if got := putSettings(t, srv, `{"latencyMs": 0}`).DatadogRateLimit; got != 3 {
		t.Errorf("PUT without datadogRateLimit answers %d, want the start value 3", got)
	}
	if got := settingsOf(t, srv).DatadogRateLimit; got != 3 {
		t.Errorf("GET settings after a PUT without datadogRateLimit: %d, want the start value 3", got)
	}
	if resp := call(); resp.Header.Get("X-RateLimit-Limit") != "3" {
		t.Errorf("back to the start value: X-RateLimit-Limit %q, want 3", resp.Header.Get("X-RateLimit-Limit"))
	}
}

func settingsOf(t *testing.T, srv *server.Server) server.Settings {
	t.Helper()
	resp, err := http.Get(srv.URL + "/_emulator/settings")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s server.Settings
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func putSettings(t *testing.T, srv *server.Server, body string) server.Settings {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/_emulator/settings", bytes.NewBufferString(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s server.Settings
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != 200 {
		t.Fatalf("PUT settings %s: %d %v", body, resp.StatusCode, err)
	}
	return s
}

// TestTrainingSettings: a model trains for trainingDelayMs (1000 by
// default, none when negative), and trainingFailure makes the trainings
// started afterwards fail with that text, seen through the real API.
func TestTrainingSettings(t *testing.T) {
	t.Parallel()
	srv := start(t, t.TempDir())
	if got := settingsOf(t, srv); got.TrainingDelayMS != 1000 || got.TrainingFailure != "" {
		t.Errorf("default training settings = %d %q, want 1000 and no failure", got.TrainingDelayMS, got.TrainingFailure)
	}
	if got := putSettings(t, srv, `{"trainingDelayMs": -1, "trainingFailure": "Training failed: no labels"}`); got.TrainingDelayMS != -1 || got.TrainingFailure != "Training failed: no labels" {
		t.Errorf("PUT training settings answers %d %q", got.TrainingDelayMS, got.TrainingFailure)
	}
	c, err := ailanguage.NewAIServiceLanguageClientWithConfigurationProvider(common.NewRawConfigurationProvider(
		srv.Creds.OCITenancy, srv.Creds.OCIUser, srv.Creds.OCIRegion, srv.Creds.OCIFingerprint, srv.Creds.OCIPrivateKey, nil))
	if err != nil {
		t.Fatal(err)
	}
	c.Host = srv.URL
	comp := server.Tenancy
	list, err := c.ListProjects(t.Context(), ailanguage.ListProjectsRequest{CompartmentId: &comp})
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("ListProjects = %v, %v", list.Items, err)
	}
	m, err := c.CreateModel(t.Context(), ailanguage.CreateModelRequest{CreateModelDetails: ailanguage.CreateModelDetails{
		CompartmentId: &comp, ProjectId: list.Items[0].Id, ModelDetails: ailanguage.TextClassificationModelDetails{},
		TrainingDataset: ailanguage.DataScienceLabelingDataset{DatasetId: common.String("ocid1.datalabelingdataset.oc1.iad.x")},
	}})
	if err != nil {
		t.Fatalf("CreateModel: %v", err)
	}
	got, err := c.GetModel(t.Context(), ailanguage.GetModelRequest{ModelId: m.Id})
	if err != nil || got.LifecycleState != ailanguage.ModelLifecycleStateFailed || *got.LifecycleDetails != "Training failed: no labels" {
		t.Errorf("model after a failing training without delay = %s %v, %v", got.LifecycleState, got.LifecycleDetails, err)
	}
	if got := putSettings(t, srv, `{}`); got.TrainingDelayMS != 1000 || got.TrainingFailure != "" {
		t.Errorf("PUT {} answers training settings %d %q, want the defaults", got.TrainingDelayMS, got.TrainingFailure)
	}
}
