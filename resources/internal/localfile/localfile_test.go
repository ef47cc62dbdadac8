//go:build unix

package localfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reconcile/resources/internal/fifotest"
	"reconcile/resources/internal/localfile"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("[DEFAULT]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 2<<20); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	fifo := fifotest.New(t, dir, "fifo")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		path    string
		wantErr string // "" for none
	}{
		"small file":   {small, ""},
		"symlink":      {link, ""},
		"too large":    {big, "holds 2097152 bytes, more than the 1 MiB such a file may hold"},
		"FIFO":         {fifo, "is a named pipe (FIFO), not a regular file"},
		"/dev/zero":    {"/dev/zero", `"/dev/zero" is a character device, not a regular file`},
		"directory":    {dir, "is a directory, not a regular file"},
		"missing file": {filepath.Join(dir, "nope"), "no such file or directory"},
	} {
		err := localfile.Check(tc.path, 1<<20)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: Check(%q) = %v, want %q", name, tc.path, err, tc.wantErr)
		}
	}
	if b, err := localfile.Read(small, 1<<20); err != nil || string(b) != "[DEFAULT]\n" {
		t.Errorf("Read(%q) = %q, %v", small, b, err)
	}
	if _, err := localfile.Read(fifo, 1<<20); err == nil {
		t.Errorf("Read of a FIFO succeeded")
	}
}
