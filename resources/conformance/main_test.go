//go:build conformance

// Package conformance_test drives the emulator (reconcile/resources/emulator/server)
// with the vendors' official Go SDKs, unmodified apart from the address and
// the credentials, to check that the emulator speaks the real wire protocols:
//
//   - OCI AI Language: github.com/oracle/oci-go-sdk/v65/ailanguage, signing
//     with the config file the emulator writes to DIR/credentials/oci_config;
//   - GCP Service Management: google.golang.org/api/servicemanagement/v1 with
//     the emulator's OAuth access token;
//   - Datadog: github.com/DataDog/datadog-api-client-go/v2 (api/datadogV2
//     RestrictionPoliciesApi and UsersApi) with the emulator's API and
//     application keys.
//
// The tests live behind the "conformance" build tag because the Datadog client
// alone takes minutes and several GB of memory to compile; the product binary
// never imports it. Run them with
//
//	go test -tags conformance -count=1 ./resources/conformance/
//
// Every test starts its own emulator in-process on 127.0.0.1:0 with a
// t.TempDir() data directory.
package conformance_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

func TestMain(m *testing.M) {
	// The OCI SDK's per-service circuit breaker opens after a run of
	// failures; the tests provoke failures on purpose (412, 401), so it is
	// turned off as cloud-apis.md 2.10 advises for emulators.
	os.Setenv("OCI_SDK_DEFAULT_CIRCUITBREAKER_ENABLED", "false")
	os.Exit(m.Run())
}

// startEmulator starts an emulator with a fresh data directory and closes it
// when the test ends.
func startEmulator(t *testing.T) (*server.Server, string) {
	t.Helper()
	dir := t.TempDir()
	srv, err := server.Start(server.Options{Listen: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close emulator: %v", err)
		}
	})
	return srv, dir
}

// testContext is a context that ends with the test, bounded to a minute.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// eventually calls check every 50 ms until it returns nil or 30 s pass,
// then fails the test with its last error.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not true after 30s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
