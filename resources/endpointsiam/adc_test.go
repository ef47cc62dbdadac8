//go:build unix

package endpointsiam_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/internal/fifotest"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
)

// TestCredentialsFileBounded runs alone: it sets environment variables. A
// GOOGLE_APPLICATION_CREDENTIALS that is not a regular file of bounded size
// fails at once, before the Google library reads it.
func TestCredentialsFileBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := fifotest.New(t, dir, "fifo")
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 2<<20); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ path, want string }{
		"FIFO":      {fifo, fmt.Sprintf("GOOGLE_APPLICATION_CREDENTIALS: %q is a named pipe (FIFO), not a regular file", fifo)},
		"/dev/zero": {"/dev/zero", `GOOGLE_APPLICATION_CREDENTIALS: "/dev/zero" is a character device, not a regular file`},
		"too large": {big, "holds 2097152 bytes, over the limit of 1048576 bytes (1 MiB)"},
	} {
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", tc.path)
		fn := endpointsiam.NewServiceIamPolicy(endpointsiam.Config{Endpoint: "http://127.0.0.1:1/"})
		_, err := fn.Invoke(t.Context(), resources.Attrs{"serviceName": orders})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, resources.ErrRefused) {
			t.Errorf("%s: Invoke = %v, want a refused configuration error saying %q", name, err, tc.want)
		}
	}
}
