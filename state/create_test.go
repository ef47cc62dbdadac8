package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// dirNames returns the names of the entries of dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, e := range entries {
		ns = append(ns, e.Name())
	}
	return ns
}

func TestOpenMissingState(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]Options{
		"writer": {},
		"reader": {ReadOnly: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), ".reconcile")
			path := filepath.Join(dir, "state.db")
			s, err := Open(path, opts)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q, %+v) of a missing state = a store, want ErrNoState", path, opts)
			}
			if !errors.Is(err, ErrNoState) {
				t.Errorf("Open(%q, %+v) = %v, want an error wrapping ErrNoState", path, opts, err)
			}
			if want := fmt.Sprintf("state %q does not exist", path); err.Error() != want {
				t.Errorf("Open(%q, %+v) error = %q, want %q", path, opts, err, want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Open(%q, %+v) without Create made %q (stat: %v)", path, opts, dir, err)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		opts      Options
		wantFiles []string // beside the state while the Store is open
	}{
		"writer": {opts: Options{Create: true}, wantFiles: []string{"state.db", "state.db.lock"}},
		"reader": {opts: Options{Create: true, ReadOnly: true}, wantFiles: []string{"state.db"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := statePath(t)
			s := openStore(t, path, tc.opts)
			m, err := s.Meta()
			if err != nil || m.Lineage == "" || m.Serial != 0 || m.FormatVersion != FormatVersion {
				t.Errorf("Meta() of a new state = %+v, %v, want a lineage, serial 0, format %d", m, err, FormatVersion)
			}
			if rs, err := s.List(); err != nil || len(rs) != 0 {
				t.Errorf("List() of a new state = %q, %v, want nothing", names(rs), err)
			}
			if got := s.ReadOnly(); got != tc.opts.ReadOnly {
				t.Errorf("ReadOnly() = %v, want %v", got, tc.opts.ReadOnly)
			}
			for file, want := range map[string]os.FileMode{
				path:               0o600,
				filepath.Dir(path): 0o700 | os.ModeDir,
			} {
				if fi, err := os.Stat(file); err != nil || fi.Mode() != want {
					t.Errorf("mode of %q = %v (%v), want %v", file, fi.Mode(), err, want)
				}
			}
			if got := dirNames(t, filepath.Dir(path)); !slices.Equal(got, tc.wantFiles) {
				t.Errorf("files beside a new state = %q, want %q (no temporary file left)", got, tc.wantFiles)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			// The state exists now: Open without Create finds it, and
			// Create leaves it as it is.
			for _, opts := range []Options{{}, {ReadOnly: true}, {Create: true}} {
				s := openStore(t, path, opts)
				if got, err := s.Meta(); err != nil || got != m {
					t.Errorf("Meta() after reopening with %+v = %+v, %v, want %+v", opts, got, err, m)
				}
				s.Close()
			}
		})
	}
}

func TestCreateRace(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	const n = 8
	var (
		wg       sync.WaitGroup
		lineages [n]string
		errs     [n]error
	)
	for i := range n {
		wg.Go(func() {
			// Half writers, half readers, each with its own Open: bbolt's
			// flock serializes them as it would separate processes.
			s, err := Open(path, Options{Create: true, ReadOnly: i%2 == 1, LockTimeout: time.Minute})
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			m, err := s.Meta()
			lineages[i], errs[i] = m.Lineage, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d of %d racing to create %q = %v", i, n, path, err)
		}
	}
	for i, l := range lineages {
		if l == "" || l != lineages[0] {
			t.Errorf("Open %d racing to create the state got lineage %q, want %q like Open 0", i, l, lineages[0])
		}
	}
	if got := dirNames(t, filepath.Dir(path)); !slices.Equal(got, []string{"state.db"}) {
		t.Errorf("files beside the state after racing creates = %q, want only state.db", got)
	}
}
