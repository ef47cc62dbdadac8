package oci

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// RSA key generation is the slowest part of a test environment: generate
// the two credential sets once for the package.
var (
	credsOnce             sync.Once
	testCreds, otherCreds emulator.Credentials
	credsErr              error
)

func sharedCreds(t *testing.T) (emulator.Credentials, emulator.Credentials) {
	t.Helper()
	credsOnce.Do(func() {
		if testCreds, credsErr = emulator.NewCredentials(); credsErr == nil {
			otherCreds, credsErr = emulator.NewCredentials()
		}
	})
	if credsErr != nil {
		t.Fatalf("NewCredentials: %v", credsErr)
	}
	return testCreds, otherCreds
}

// testEnv is one seeded emulator with its own store, served over HTTP.
type testEnv struct {
	t     *testing.T
	dir   string
	creds emulator.Credentials
	store *emulator.Store
	emu   *Emulator
	srv   *httptest.Server

	compartment, otherCompartment, project, activeModel, failedModel string
}

type envOptions struct {
	dir string           // reuse the data of an earlier env (restart); default a new temp dir
	now func() time.Time // the emulator's clock
}

func newEnv(t *testing.T, opts envOptions) *testEnv {
	t.Helper()
	creds, _ := sharedCreds(t)
	env := &testEnv{t: t, dir: opts.dir, creds: creds}
	if env.dir == "" {
		env.dir = t.TempDir()
	}
	store, err := emulator.OpenStore(filepath.Join(env.dir, "emulator.db"))
	if err != nil {
		t.Fatal(err)
	}
	env.store = store
	t.Cleanup(func() { env.closeStore() })
	env.emu = New(store, creds)
	if opts.now != nil {
		env.emu.SetClock(opts.now)
	}
	if err := env.emu.Seed(); err != nil {
		t.Fatal(err)
	}
	env.compartment, env.otherCompartment, env.project, env.activeModel, env.failedModel = env.emu.SeedIDs()
	env.srv = httptest.NewServer(env.emu)
	t.Cleanup(env.srv.Close)
	return env
}

func (env *testEnv) closeStore() {
	if env.store != nil {
		if err := env.store.Close(); err != nil {
			env.t.Errorf("close store: %v", err)
		}
		env.store = nil
	}
}

// client returns an OCI SDK client signing with the trusted key and
// pointed at the emulator, with the SDK's retries and circuit breaker off
// so that every call is one request.
func (env *testEnv) client() ailanguage.AIServiceLanguageClient {
	env.t.Helper()
	c, err := ailanguage.NewAIServiceLanguageClientWithConfigurationProvider(common.NewRawConfigurationProvider(
		env.creds.OCITenancy, env.creds.OCIUser, env.creds.OCIRegion, env.creds.OCIFingerprint, env.creds.OCIPrivateKey, nil))
	if err != nil {
		env.t.Fatal(err)
	}
	c.Host = env.srv.URL
	noRetry := common.NoRetryPolicy()
	c.Configuration.RetryPolicy = &noRetry
	c.Configuration.CircuitBreaker = nil
	return c
}

// signer signs raw requests with creds' key, exactly as the SDK does.
func signer(t *testing.T, creds emulator.Credentials, keyPEM string) common.HTTPRequestSigner {
	t.Helper()
	return common.DefaultRequestSigner(common.NewRawConfigurationProvider(
		creds.OCITenancy, creds.OCIUser, creds.OCIRegion, creds.OCIFingerprint, keyPEM, nil))
}

// rawResponse is an answer to a raw request.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// code returns the OCI error code of the body.
func (r rawResponse) code() string {
	var e struct{ Code string }
	_ = json.Unmarshal(r.body, &e)
	return e.Code
}

func (r rawResponse) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// request builds a signed request; tweak, when set, may change it after
// signing (to tamper with it).
func (env *testEnv) request(method, path string, body any, header map[string]string, sign common.HTTPRequestSigner, tweak func(*http.Request)) rawResponse {
	env.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, ok := body.([]byte)
		if !ok {
			var err error
			if raw, err = json.Marshal(body); err != nil {
				env.t.Fatal(err)
			}
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(env.t.Context(), method, env.srv.URL+path, rd)
	if err != nil {
		env.t.Fatal(err)
	}
	req.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if sign != nil {
		if err := sign.Sign(req); err != nil {
			env.t.Fatal(err)
		}
	}
	if tweak != nil {
		tweak(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		env.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		env.t.Fatal(err)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: raw}
}

// do sends a request signed with the trusted key.
func (env *testEnv) do(method, path string, body any, header map[string]string) rawResponse {
	env.t.Helper()
	return env.request(method, path, body, header, signer(env.t, env.creds, env.creds.OCIPrivateKey), nil)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// fakeClock is a settable clock for the emulator's lifecycles.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Now().UTC().Truncate(time.Millisecond)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
