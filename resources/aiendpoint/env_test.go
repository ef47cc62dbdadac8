package aiendpoint

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/internal/conntest"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/oci"
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

// testEnv is one emulator with its own store, served over HTTP, and a
// driver pointed at it through a real OCI config file.
type testEnv struct {
	t      *testing.T
	dir    string
	creds  emulator.Credentials
	store  *emulator.Store
	emu    *oci.Emulator
	srv    *httptest.Server
	config string // OCI config file trusted by the emulator
	driver *Driver
	conns  conntest.Counter // TCP connections the server accepted

	compartment, otherCompartment, project, activeModel, failedModel string
}

type envOptions struct {
	dir  string                          // reuse the data of an earlier env (restart); default a new temp dir
	wrap func(http.Handler) http.Handler // wraps the emulator, e.g. to inject faults
	now  func() time.Time                // the emulator's clock
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
	env.emu = oci.New(store, creds)
	if opts.now != nil {
		env.emu.SetClock(opts.now)
	}
	if err := env.emu.Seed(); err != nil {
		t.Fatal(err)
	}
	env.compartment, env.otherCompartment, env.project, env.activeModel, env.failedModel = env.emu.SeedIDs()
	var h http.Handler = env.emu
	if opts.wrap != nil {
		h = opts.wrap(h)
	}
	env.srv = httptest.NewUnstartedServer(h)
	env.srv.Config.ConnState = env.conns.ConnState
	env.srv.Start()
	t.Cleanup(env.srv.Close)
	env.config = writeOCIConfig(t, env.dir, "trusted", creds, creds.OCIPrivateKey)
	env.driver = env.newDriver(env.config)
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

func (env *testEnv) newDriver(configFile string) *Driver {
	return New(Config{ConfigFile: configFile, Host: env.srv.URL, PollInterval: 10 * time.Millisecond})
}

// writeOCIConfig writes an OCI config file (profile DEFAULT) for creds
// whose key_file holds keyPEM, and returns its path.
func writeOCIConfig(t *testing.T, dir, name string, creds emulator.Credentials, keyPEM string) string {
	t.Helper()
	keyFile := filepath.Join(dir, name+"_api_key.pem")
	if err := os.WriteFile(keyFile, []byte(keyPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[DEFAULT]\nuser=%s\nfingerprint=%s\nkey_file=%s\ntenancy=%s\nregion=%s\n",
		creds.OCIUser, creds.OCIFingerprint, keyFile, creds.OCITenancy, creds.OCIRegion)
	path := filepath.Join(dir, name+"_oci_config")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// client returns the driver's SDK client, for calls the driver does not make.
func (env *testEnv) client() ailanguage.AIServiceLanguageClient {
	env.t.Helper()
	c, err := env.driver.sdk()
	if err != nil {
		env.t.Fatal(err)
	}
	return c
}

// inputs are typical desired inputs in the env's root compartment.
func (env *testEnv) inputs(displayName string) resources.Attrs {
	return resources.Attrs{
		"compartmentId": env.compartment,
		"modelId":       env.activeModel,
		"displayName":   displayName,
	}
}

// create creates an endpoint through the driver and fails the test if it
// does not become ACTIVE.
func (env *testEnv) create(want resources.Attrs) (string, resources.Attrs) {
	env.t.Helper()
	id, got, err := env.driver.Create(env.t.Context(), want)
	if err != nil {
		env.t.Fatalf("Create(%v): %v", want, err)
	}
	return id, got
}

// steppingClock advances by step on every reading, so that an emulated
// lifecycle progresses with the number of requests, not with wall time.
type steppingClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}
