//go:build unix

package aiendpoint

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reconcile-dev/reconcile/internal/fifotest"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// sparseFile makes a file of size bytes that takes no room on disk.
func sparseFile(t *testing.T, path string, size int64) string {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return path
}

// configWith writes an OCI config file whose profiles (name → key_file)
// hold creds, and returns its path.
func configWith(t *testing.T, dir, name string, creds emulator.Credentials, keyFiles ...string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(keyFiles); i += 2 {
		fmt.Fprintf(&b, "[%s]\nuser=%s\nfingerprint=%s\nkey_file=%s\ntenancy=%s\nregion=%s\n",
			keyFiles[i], creds.OCIUser, creds.OCIFingerprint, keyFiles[i+1], creds.OCITenancy, creds.OCIRegion)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDriverConfigFilesBounded: an OCI config file, or a key it names, that
// is not a regular file of bounded size fails at once, as a configuration
// error (refused: nothing sent), before the SDK reads it.
func TestDriverConfigFilesBounded(t *testing.T) {
	t.Parallel()
	creds, _ := sharedCreds(t)
	dir := t.TempDir()
	good := writeOCIConfig(t, dir, "good", creds, creds.OCIPrivateKey)
	goodKey := filepath.Join(dir, "good_api_key.pem")
	fifo := fifotest.New(t, dir, "fifo")
	bigConfig := sparseFile(t, filepath.Join(dir, "big_config"), 2<<20)
	bigKey := sparseFile(t, filepath.Join(dir, "big_key.pem"), 1<<20)
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
	t.Cleanup(srv.Close)

	for name, tc := range map[string]struct {
		config, profile string
		want            string
	}{
		"config is a FIFO":      {config: fifo, want: fmt.Sprintf("OCI config file: %q is a named pipe (FIFO), not a regular file", fifo)},
		"config is /dev/zero":   {config: "/dev/zero", want: `OCI config file: "/dev/zero" is a character device, not a regular file`},
		"config is a directory": {config: dir, want: "is a directory, not a regular file"},
		"config too large":      {config: bigConfig, want: "holds 2097152 bytes, over the limit of 1048576 bytes (1 MiB)"},
		"missing config":        {config: filepath.Join(dir, "nope"), want: "no such file or directory"},
		"unknown profile":       {config: good, profile: "PROD", want: `profile "PROD"`},
		"key_file is a FIFO": {config: configWith(t, dir, "key_fifo", creds, "DEFAULT", fifo),
			want: fmt.Sprintf(`profile "DEFAULT": key_file: %q is a named pipe (FIFO)`, fifo)},
		"key_file is /dev/zero": {config: configWith(t, dir, "key_zero", creds, "DEFAULT", "/dev/zero"),
			want: `key_file: "/dev/zero" is a character device, not a regular file`},
		"key_file too large": {config: configWith(t, dir, "key_big", creds, "DEFAULT", bigKey),
			want: "key_file: " + fmt.Sprintf("%q", bigKey) + " holds 1048576 bytes, over the limit of 65536 bytes (64 KiB)"},
		"fallback DEFAULT key_file is a FIFO": {config: configWith(t, dir, "default_fifo", creds, "OTHER", goodKey, "DEFAULT", fifo), profile: "OTHER",
			want: `profile "DEFAULT": key_file: ` + fmt.Sprintf("%q", fifo) + " is a named pipe"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := New(Config{ConfigFile: tc.config, Profile: tc.profile, Host: srv.URL})
			want := resources.Attrs{"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1.iad.x"}
			id, _, err := d.Create(t.Context(), want)
			if id != "" || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Create with config %s = %q, %v; want an error saying %q", tc.config, id, err, tc.want)
			}
			if !errors.Is(err, resources.ErrRefused) {
				t.Errorf("Create error %v does not match ErrRefused", err)
			}
			if _, err := d.Read(t.Context(), "ocid1.ailanguageendpoint.oc1.iad.x"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read with config %s = %v; want the same error", tc.config, err)
			}
		})
	}
	t.Cleanup(func() {
		if n := requests.Load(); n != 0 {
			t.Errorf("%d requests sent with bad configurations, want 0", n)
		}
	})
}

// TestDriverSDKFilesBounded runs alone: it sets an environment variable.
// The SDK reads its developer tool configuration whole when it makes a
// client.
func TestDriverSDKFilesBounded(t *testing.T) {
	creds, _ := sharedCreds(t)
	dir := t.TempDir()
	config := writeOCIConfig(t, dir, "cfg", creds, creds.OCIPrivateKey)
	fifo := fifotest.New(t, dir, "fifo")
	t.Setenv("OCI_DEVELOPER_TOOL_CONFIGURATION_FILE_PATH", fifo)
	_, err := New(Config{ConfigFile: config, Host: "http://127.0.0.1:9"}).sdk()
	if want := fmt.Sprintf("OCI SDK configuration: %q is a named pipe (FIFO), not a regular file", fifo); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, resources.ErrRefused) {
		t.Errorf("connect with a FIFO as developer tool configuration = %v, want a refused error saying %q", err, want)
	}
}
