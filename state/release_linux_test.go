package state

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/reconcile-dev/reconcile/kind"
)

// mappedRSS returns how many bytes of path this process has resident
// through its mappings, as /proc/self/smaps counts them.
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	path, err := filepath.EvalSymlinks(path) // smaps names the file itself
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-"):
			// A mapping's first line: range, perms, offset, dev, inode[, path].
			in = len(fields) >= 6 && fields[5] == path
		case in && fields[0] == "Rss:":
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatalf("smaps: %q: %v", line, err)
			}
			total += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}

// usedSize returns how much of its file s uses: bbolt's high-water mark,
// below the size it grows the file to.
func usedSize(t *testing.T, s *Store) int64 {
	t.Helper()
	var size int64
	if err := s.rawDB().View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	return size
}

// openReader opens the state at path read-only, closed when t ends, and
// returns it with the size of the file it uses, most of which its check
// at Open left resident.
func openReader(t *testing.T, path string) (*Store, int64) {
	t.Helper()
	r := openStore(t, path, Options{ReadOnly: true})
	t.Cleanup(func() { r.Close() })
	size := usedSize(t, r)
	if got := mappedRSS(t, path); got < size/2 {
		// The check at Open reads every page: if this fails, the test no
		// longer tells a release from a file never read.
		t.Fatalf("after Open, %d bytes of the %d the state uses are resident, want at least %d", got, size, size/2)
	}
	return r, size
}

// TestReadsReleaseTheFile checks that a read of every record (List, Dump)
// leaves little of the file resident in the process.
func TestReadsReleaseTheFile(t *testing.T) {
	path := statePath(t)
	s := openStore(t, path, Options{Create: true})
	big := strings.Repeat("x", 2000)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 1600; i += 8 {
				if _, err := s.Put(Record{Name: "r" + strconv.Itoa(i), Kind: kind.Resource, ID: "id", Inputs: map[string]any{"v": big}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	r, size := openReader(t, path)
	rs, err := r.List()
	if err != nil || len(rs) != 1600 {
		t.Fatalf("List() = %d records, %v; want 1600", len(rs), err)
	}
	if got := mappedRSS(t, path); got > size/8 {
		t.Errorf("after List, %d bytes of the %d the state uses are resident, want at most %d", got, size, size/8)
	}
	// What was released reads back the same.
	for i := range 1600 {
		name := "r" + strconv.Itoa(i)
		if got, ok, err := r.Get(name); err != nil || !ok || got.Inputs["v"] != big {
			t.Fatalf("Get(%s) after List = %v, %v; want its inputs", name, ok, err)
		}
	}
	if got := mappedRSS(t, path); got < size/8 {
		t.Fatalf("after a Get of every record, %d bytes of the %d the state uses are resident, want at least %d", got, size, size/8)
	}
	if _, err := r.Dump(); err != nil {
		t.Fatal(err)
	}
	if got := mappedRSS(t, path); got > size/8 {
		t.Errorf("after Dump, %d bytes of the %d the state uses are resident, want at most %d", got, size, size/8)
	}
}

// TestCommitsReleaseTheFile checks that a long run of commits, as an
// apply makes, does not come to hold the file resident. The commits are
// made one after another, so that the pages they touch are the same from
// run to run.
func TestCommitsReleaseTheFile(t *testing.T) {
	path := statePath(t)
	s := openStore(t, path, Options{Create: true})
	defer s.Close()
	big := strings.Repeat("x", 2000)
	for i := range 3000 {
		if _, err := s.Put(Record{Name: "r" + strconv.Itoa(i), Kind: kind.Resource, ID: "id", Inputs: map[string]any{"v": big}}); err != nil {
			t.Fatal(err)
		}
	}
	size := usedSize(t, s)
	// Without the releases, about a third of it is resident here.
	if got := mappedRSS(t, path); got > size/8 {
		t.Errorf("after %d commits, %d bytes of the %d the state uses are resident, want at most %d", s.Commits(), got, size, size/8)
	}
}

// TestPrefetchReleasesTheFile checks that Prefetch reads the records of a
// read-only Store and lets the file's pages go, and that List and
// ListLazy then give the records it read, once, and after that read them
// again.
func TestPrefetchReleasesTheFile(t *testing.T) {
	path := statePath(t)
	s := openStore(t, path, Options{Create: true})
	big := strings.Repeat("x", 2000)
	for i := range 800 {
		if _, err := s.Put(Record{Name: "r" + strconv.Itoa(i), Kind: kind.Resource, ID: "id", Inputs: map[string]any{"v": big}}); err != nil {
			t.Fatal(err)
		}
	}
	want, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	s.Prefetch() // a writer's records may change: nothing is kept
	if _, ok := s.takePrefetched(); ok {
		t.Error("a writable Store kept what Prefetch read")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	r, size := openReader(t, path)
	r.Prefetch()
	if got := mappedRSS(t, path); got > size/8 {
		t.Errorf("after Prefetch, %d bytes of the %d the state uses are resident, want at most %d", got, size, size/8)
	}
	for _, list := range []string{"prefetched", "read again"} {
		got, err := r.List()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("List(), %s: %d records, %v; want the %d written", list, len(got), err, len(want))
		}
	}
	r.Prefetch()
	lazy, err := r.ListLazy()
	if err != nil || len(lazy) != len(want) {
		t.Fatalf("ListLazy() after Prefetch: %d records, %v; want %d", len(lazy), err, len(want))
	}
	for i := range lazy {
		if got, err := lazy[i].Full(nil); err != nil || !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("record %d after Prefetch: %+v, %v; want %+v", i, got, err, want[i])
		}
	}
}
