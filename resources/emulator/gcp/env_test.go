package gcp_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	servicemanagement "google.golang.org/api/servicemanagement/v1"

	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
)

const (
	orders    = gcp.SeedService
	inventory = gcp.SeedEmptyService
	consumer  = gcp.SeedConsumer
)

// env is a seeded emulator served over HTTP.
type env struct {
	url   string
	creds emulator.Credentials
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
	em := gcp.New(store, creds)
	if err := em.Seed(); err != nil {
		t.Fatalf("Seed() = %v", err)
	}
	srv := httptest.NewServer(em)
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, creds: creds}
}

// sdk returns a Service Management client of the official Go SDK with the
// emulator's access token.
func (e *env) sdk(t *testing.T) *servicemanagement.APIService {
	t.Helper()
	hc := &http.Client{Transport: &oauth2.Transport{
		Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.creds.GoogleAccessToken}),
	}}
	svc, err := servicemanagement.NewService(t.Context(), option.WithEndpoint(e.url+"/"), option.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func httpStatus(err error) int {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return gerr.Code
	}
	return 0
}
