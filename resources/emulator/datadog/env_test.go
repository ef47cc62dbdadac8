package datadog_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/datadog"
)

const roleA = "role:00000000-0000-0000-0000-000000000001"

// env is a seeded emulator served over HTTP.
type env struct {
	url   string
	creds emulator.Credentials
	em    *datadog.Emulator
}

// newEnv starts a seeded emulator on a fresh store.
func newEnv(t *testing.T) *env {
	t.Helper()
	store, err := emulator.OpenStore(filepath.Join(t.TempDir(), "emulator.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	em := datadog.New(store, creds)
	if err := em.Seed(); err != nil {
		t.Fatalf("Seed() = %v", err)
	}
	srv := httptest.NewServer(em)
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, creds: creds, em: em}
}

// call makes a raw request to the emulator with the given keys.
func (e *env) call(t *testing.T, method, path, apiKey, appKey, body string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if apiKey != "" {
		req.Header.Set("DD-API-KEY", apiKey)
	}
	if appKey != "" {
		req.Header.Set("DD-APPLICATION-KEY", appKey)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}
