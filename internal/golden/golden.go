// Package golden compares a test's output with a file checked in beside
// the test, or rewrites the file when the test runs with -update.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update rewrites golden files instead of comparing with them:
// go test ./PKG -run NAME -update. Review the diff like code.
var update = flag.Bool("update", false, "rewrite golden files")

// Check compares got with the golden file at path, or rewrites the file
// when -update is given. A mismatch names the file, shows the first line
// that differs and says how to accept the new output; pkg is the package's
// directory as go test takes it, e.g. "./engine/render".
func Check(t *testing.T, pkg, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	rerun := "go test " + pkg + " -run '^" + strings.ReplaceAll(t.Name(), "/", "$/^") + "$' -update"
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file: %v\n(to create it: %s)", err, rerun)
	}
	if bytes.Equal(got, want) {
		return
	}
	gotLines := strings.Split(string(got), "\n")
	wantLines := strings.Split(string(want), "\n")
	lineAt := func(lines []string, i int) string {
		if i < len(lines) {
			return lines[i]
		}
		return "(end of output)"
	}
	n := 0
	for n < len(gotLines) && n < len(wantLines) && gotLines[n] == wantLines[n] {
		n++
	}
	t.Errorf("output differs from %s at line %d:\n got: %q\nwant: %q\nIf the new output is right, rewrite the file with\n\t%s",
		path, n+1, lineAt(gotLines, n), lineAt(wantLines, n), rerun)
}
