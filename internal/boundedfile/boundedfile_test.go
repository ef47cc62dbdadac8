//go:build unix

package boundedfile_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/internal/boundedfile"
	"github.com/reconcile-dev/reconcile/internal/fifotest"
)

const limit = 1 << 10

// files makes, in a new directory, the files the tests read: at the limit,
// one byte over it, a sparse gigabyte, a FIFO, a subdirectory, a symbolic
// link to the file at the limit.
func files(t *testing.T) (dir string) {
	t.Helper()
	dir = t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("at-limit", bytes.Repeat([]byte("a"), limit))
	write("over-limit", bytes.Repeat([]byte("b"), limit+1))
	write("empty", nil)
	write("huge", nil)
	if err := os.Truncate(filepath.Join(dir, "huge"), 1<<30); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	fifotest.New(t, dir, "fifo")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("at-limit", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	return dir
}

type want struct {
	size int    // the length of what is read, when there is no error
	err  error  // what the error matches
	text string // what the error says
}

// cases are the files of files() and what reading them with limit gives;
// the texts quote the name as given.
func cases(name func(string) string) map[string]want {
	return map[string]want{
		"at-limit":   {size: limit},
		"link":       {size: limit},
		"empty":      {size: 0},
		"over-limit": {err: boundedfile.ErrTooLarge, text: `"` + name("over-limit") + `" holds 1025 bytes, over the limit of 1024 bytes (1 KiB)`},
		"huge":       {err: boundedfile.ErrTooLarge, text: `"` + name("huge") + `" holds 1073741824 bytes, over the limit of 1024 bytes (1 KiB)`},
		"fifo":       {err: boundedfile.ErrNotRegular, text: `"` + name("fifo") + `" is a named pipe (FIFO), not a regular file`},
		"sub":        {err: boundedfile.ErrNotRegular, text: `"` + name("sub") + `" is a directory, not a regular file`},
		"missing":    {err: fs.ErrNotExist, text: "no such file or directory"},
	}
}

func (w want) check(t *testing.T, what string, b []byte, err error) {
	t.Helper()
	switch {
	case w.err == nil && err != nil:
		t.Errorf("%s: error %v", what, err)
	case w.err == nil && len(b) != w.size:
		t.Errorf("%s: read %d bytes, want %d", what, len(b), w.size)
	case w.err != nil && (!errors.Is(err, w.err) || !strings.Contains(err.Error(), w.text)):
		t.Errorf("%s: error %v, want one matching %v and saying %q", what, err, w.err, w.text)
	case w.err != nil && b != nil:
		t.Errorf("%s: read %d bytes with an error", what, len(b))
	}
}

func TestRead(t *testing.T) {
	t.Parallel()
	dir := files(t)
	for name, w := range cases(func(n string) string { return filepath.Join(dir, n) }) {
		path := filepath.Join(dir, name)
		b, err := boundedfile.Read(path, limit)
		w.check(t, "Read("+name+")", b, err)
		if err := boundedfile.Check(path, limit); (err == nil) != (w.err == nil) || err != nil && (!errors.Is(err, w.err) || !strings.Contains(err.Error(), w.text)) {
			t.Errorf("Check(%s) = %v, want the error of Read", name, err)
		}
	}
	if b, err := boundedfile.Read(filepath.Join(dir, "at-limit"), limit); err != nil || !bytes.Equal(b, bytes.Repeat([]byte("a"), limit)) {
		t.Errorf("Read(at-limit) = %d bytes, %v; want its content", len(b), err)
	}
}

func TestReadIn(t *testing.T) {
	t.Parallel()
	dir := files(t)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, prefix := range []string{"", "sub/../"} {
		for name, w := range cases(func(n string) string { return prefix + n }) {
			b, err := boundedfile.ReadIn(root, prefix+name, limit)
			w.check(t, "ReadIn("+prefix+name+")", b, err)
		}
	}

	// Nothing outside the root is read: not by "..", nor by an absolute
	// path, nor through a symbolic link that leads out.
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out-link")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{rel, outside, "out-link"} {
		if b, err := boundedfile.ReadIn(root, name, limit); err == nil || !strings.Contains(err.Error(), "escapes") || !boundedfile.LeadsOut(err) {
			t.Errorf("ReadIn(%q) = %q, %v; want an error saying the path escapes the root, which LeadsOut knows", name, b, err)
		}
	}
	for _, name := range []string{"missing", "sub", "fifo"} {
		if _, err := boundedfile.ReadIn(root, name, limit); err == nil || boundedfile.LeadsOut(err) {
			t.Errorf("ReadIn(%q): error %v, which LeadsOut takes for one that leads out", name, err)
		}
	}
}

// TestDevices checks that an endless device is refused before a byte is
// read, in bounded time and memory.
func TestDevices(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/dev/zero", "/dev/urandom"} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		b, err := boundedfile.Read(path, 0)
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		text := `"` + path + `" is a character device, not a regular file`
		if !errors.Is(err, boundedfile.ErrNotRegular) || err.Error() != text || b != nil {
			t.Errorf("Read(%s) = %d bytes, %v; want %q", path, len(b), err, text)
		}
		if elapsed > 5*time.Second || after.TotalAlloc-before.TotalAlloc > 1<<20 {
			t.Errorf("Read(%s) took %s and allocated %d bytes", path, elapsed, after.TotalAlloc-before.TotalAlloc)
		}
	}
}

// TestDefaultLimit checks that a limit of zero or less is DefaultLimit.
func TestDefaultLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for size, ok := range map[int64]bool{boundedfile.DefaultLimit: true, boundedfile.DefaultLimit + 1: false} {
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
		for _, l := range []int64{0, -1} {
			if err := boundedfile.Check(path, l); (err == nil) != ok {
				t.Errorf("Check of %d bytes, limit %d = %v", size, l, err)
			}
		}
	}
	// The map above is walked in any order: make the file too large again.
	if err := os.Truncate(path, boundedfile.DefaultLimit+1); err != nil {
		t.Fatal(err)
	}
	if err := boundedfile.Check(path, 0); err == nil || !strings.HasSuffix(err.Error(), "over the limit of 8388608 bytes (8 MiB)") {
		t.Errorf("Check = %v, want the limit of 8 MiB", err)
	}
}

// TestSizeUnderstated reads files whose size the kernel gives as zero
// (those of /proc): what is read is bounded by the limit all the same.
func TestSizeUnderstated(t *testing.T) {
	t.Parallel()
	const path = "/proc/self/status"
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Skipf("%s: no file whose size is understated (%v)", path, err)
	}
	b, err := boundedfile.Read(path, limit*64)
	if err != nil || !bytes.Contains(b, []byte("Name:")) {
		t.Errorf("Read(%s) = %q, %v; want its content", path, b, err)
	}
	_, err = boundedfile.Read(path, 8)
	if want := `"` + path + `" grew past the limit of 8 bytes while it was read`; !errors.Is(err, boundedfile.ErrTooLarge) || err == nil || err.Error() != want {
		t.Errorf("Read(%s, 8) error = %v, want %q", path, err, want)
	}
}
