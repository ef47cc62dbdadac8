// Package ailanguagetest starts the emulator of the OCI AI Language API
// over HTTP for the tests of the drivers that share
// reconcile/resources/ailanguage, and gives them a Config pointed at it.
package ailanguagetest

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/resources/ailanguage"
	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/oci"
)

// Env is one seeded emulator with its own store, served by httptest, and
// a Config (a real OCI config file and key) that it trusts.
type Env struct {
	Emu    *oci.Emulator
	URL    string
	Config ailanguage.Config

	Compartment, OtherCompartment, Project, ActiveModel, FailedModel string
}

var (
	credsOnce sync.Once
	creds     emulator.Credentials
	credsErr  error
)

// New starts an emulator for t, with a clock of now when it is not nil,
// stopped when t ends. Polls are 10ms apart.
func New(t *testing.T, now func() time.Time) *Env {
	t.Helper()
	credsOnce.Do(func() { creds, credsErr = emulator.NewCredentials() })
	if credsErr != nil {
		t.Fatal(credsErr)
	}
	dir := t.TempDir()
	store, err := emulator.OpenStore(filepath.Join(dir, "emulator.db"))
	if err != nil {
		t.Fatal(err)
	}
	emu := oci.New(store, creds)
	if now != nil {
		emu.SetClock(now)
	}
	if err := emu.Seed(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu)
	t.Cleanup(func() {
		srv.Close()
		if err := store.Close(); err != nil {
			t.Errorf("close the emulator's store: %v", err)
		}
	})
	key := filepath.Join(dir, "key.pem")
	cfg := filepath.Join(dir, "oci_config")
	text := fmt.Sprintf("[DEFAULT]\nuser=%s\nfingerprint=%s\nkey_file=%s\ntenancy=%s\nregion=%s\n",
		creds.OCIUser, creds.OCIFingerprint, key, creds.OCITenancy, creds.OCIRegion)
	if err := os.WriteFile(key, []byte(creds.OCIPrivateKey), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env := &Env{Emu: emu, URL: srv.URL, Config: ailanguage.Config{ConfigFile: cfg, Host: srv.URL, PollInterval: 10 * time.Millisecond}}
	env.Compartment, env.OtherCompartment, env.Project, env.ActiveModel, env.FailedModel = emu.SeedIDs()
	return env
}
