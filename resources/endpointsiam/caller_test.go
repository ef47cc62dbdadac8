package endpointsiam_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
)

// TestCallerFromTokenInfo: the caller of a bare access token is what
// Google's tokeninfo (the emulator's) says of it, asked with the token in
// a POST body; its account is the service account's project. A token
// tokeninfo does not know is a refusal whose error never quotes it.
func TestCallerFromTokenInfo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/tokeninfo" {
				if r.Method != http.MethodPost || r.URL.RawQuery != "" {
					t.Errorf("tokeninfo asked with %s ?%s: the token must travel in a POST body", r.Method, r.URL.RawQuery)
				}
				h.(*gcp.Emulator).TokenInfo(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	cfg := e.config()
	cfg.TokenInfoURL = e.url + "/tokeninfo"
	cl := endpointsiam.NewClient(cfg)
	caller, err := cl.Caller(t.Context())
	if err != nil || caller != gcp.Caller {
		t.Fatalf("Caller() = %q, %v; want %q", caller, err, gcp.Caller)
	}
	if a, err := cl.Account(t.Context()); err != nil || a != "project acme-prod" {
		t.Errorf("Account() = %q, %v; want project acme-prod", a, err)
	}

	cfg.AccessToken = "ya29.not-a-token-the-emulator-gave"
	_, err = endpointsiam.NewClient(cfg).Caller(t.Context())
	if err == nil || !errors.Is(err, resources.ErrRefused) || !strings.Contains(err.Error(), "invalid_token") {
		t.Errorf("Caller() with an unknown token = %v, want a refusal saying invalid_token", err)
	}
	if err != nil && strings.Contains(err.Error(), cfg.AccessToken) {
		t.Errorf("the error quotes the token: %v", err)
	}
}

// TestCallerFromKeyFile runs alone: it sets GOOGLE_APPLICATION_CREDENTIALS.
// The caller of a service account key is its client_email, read from the
// file without a request.
func TestCallerFromKeyFile(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	doc, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "acme-ci", "private_key_id": "k1", "private_key": string(pemKey),
		"client_email": "planner@acme-ci.iam.gserviceaccount.com", "client_id": "1", "token_uri": "http://127.0.0.1:1/token",
	})
	file := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", file)
	cl := endpointsiam.NewClient(endpointsiam.Config{Endpoint: "http://127.0.0.1:1/", TokenInfoURL: "http://127.0.0.1:1/tokeninfo"})
	caller, err := cl.Caller(t.Context())
	if err != nil || caller != "planner@acme-ci.iam.gserviceaccount.com" {
		t.Fatalf("Caller() = %q, %v; want the key's client_email", caller, err)
	}
	if a, _ := cl.Account(t.Context()); a != "project acme-ci" {
		t.Errorf("Account() = %q, want project acme-ci", a)
	}
}
