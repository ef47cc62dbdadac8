package bolt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// DefaultStack is the stack whose file is the path New is given.
const DefaultStack = "default"

var _ kv.Backend = (*Backend)(nil)

// Backend is the stacks of one state path: the default stack's file, and
// beside it, for every other stack, the file named for it (see Path).
type Backend struct {
	path string
}

// New returns the Backend whose default stack's file is path.
func New(path string) *Backend { return &Backend{path: path} }

// validStack is the form of a stack name.
var validStack = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

// Path returns the file of stack: the path New was given for DefaultStack,
// else that path with the stack's name put before its extension
// (.reconcile/state.db: .reconcile/state.prod.db).
func (b *Backend) Path(stack string) string {
	if stack == DefaultStack {
		return b.path
	}
	ext := filepath.Ext(b.path)
	return strings.TrimSuffix(b.path, ext) + "." + stack + ext
}

// file checks stack's name and returns its file.
func (b *Backend) file(stack string) (string, error) {
	if !validStack.MatchString(stack) || stack == "." || stack == ".." {
		return "", fmt.Errorf("bad stack name %q: use letters, digits, '-', '_' and '.'", stack)
	}
	return b.Path(stack), nil
}

// Shared is false: the files are this machine's.
func (b *Backend) Shared() bool { return false }

// Describe names the default stack's file.
func (b *Backend) Describe() string { return b.path }

// Close does nothing: a Backend holds nothing open.
func (b *Backend) Close() error { return nil }

// Stacks lists the stacks whose files exist: the default stack's, and
// those beside it named for a stack.
func (b *Backend) Stacks(ctx context.Context) ([]string, error) {
	ext := filepath.Ext(b.path)
	stem := strings.TrimSuffix(filepath.Base(b.path), ext)
	entries, err := os.ReadDir(filepath.Dir(b.path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list stacks %q: %w", b.path, err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if name == filepath.Base(b.path) {
			out = append(out, DefaultStack)
			continue
		}
		mid, ok := strings.CutPrefix(name, stem+".")
		if !ok {
			continue
		}
		stack, ok := strings.CutSuffix(mid, ext)
		if ok && validStack.MatchString(stack) && stack != "." && stack != ".." && !strings.Contains(stack, ".lock") {
			out = append(out, stack)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Remove deletes stack's file, and its holder file, under the file's
// exclusive lock, waiting for it up to timeout.
func (b *Backend) Remove(ctx context.Context, stack string, timeout time.Duration) error {
	path, err := b.file(stack)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(max(timeout, 0))
	for {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("remove state %q: %w", path, err)
		}
		err = lockUntil(ctx, f, deadline)
		switch {
		case err == errWouldBlock:
			f.Close()
			return &kv.LockedError{Where: path, Holder: readHolder(path)}
		case err != nil:
			f.Close()
			return fmt.Errorf("remove state %q: %w", path, err)
		}
		if !sameFile(f, path) {
			f.Close() // replaced while we waited: lock the new one
			continue
		}
		err = os.Remove(path)
		_ = os.Remove(holderPath(path))
		f.Close()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove state %q: %w", path, err)
		}
		syncDir(filepath.Dir(path))
		return nil
	}
}

// lockUntil takes the exclusive lock of f, trying until deadline.
func lockUntil(ctx context.Context, f *os.File, deadline time.Time) error {
	for {
		err := tryLock(f)
		if err != errWouldBlock || !time.Now().Before(deadline) {
			return err
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sameFile reports whether f is the file at path still.
func sameFile(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// syncDir makes a change of a directory's entries durable. It is best
// effort: some file systems refuse to sync a directory.
func syncDir(dir string) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = f.Sync()
	_ = f.Close()
}
