package bolt_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/reconcile-dev/reconcile/state/bolt"
	"github.com/reconcile-dev/reconcile/state/kv"
	"github.com/reconcile-dev/reconcile/state/kv/kvtest"
)

func TestContract(t *testing.T) {
	t.Parallel()
	kvtest.Run(t, kvtest.Harness{New: func(t *testing.T) kv.Backend {
		return bolt.New(filepath.Join(t.TempDir(), ".reconcile", "state.db"))
	}})
}

// open opens stack of b, closed when t ends.
func open(t *testing.T, b kv.Backend, stack string, opts kv.Options) *bolt.Store {
	t.Helper()
	s, err := b.Open(t.Context(), stack, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", stack, err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*bolt.Store)
}

// meta is what the model's Init holds: the format and serial in their
// stored form (8 bytes, then a 4-byte check), and a sealed lineage.
var meta = []kv.Op{
	{Key: "meta/format", Value: []byte{0, 0, 0, 0, 0, 0, 0, 2, 0xa, 0xb, 0xc, 0xd}},
	{Key: "meta/serial", Value: []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}},
	{Key: "meta/lineage", Value: []byte("lineage-check")},
}

// raw returns every bucket, key and value of the file at path, as
// "bucket key=value" lines, read with bbolt alone.
func raw(t *testing.T, path string) []string {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			out = append(out, fmt.Sprintf("%s seq=%d", name, b.Sequence()))
			return b.ForEach(func(k, v []byte) error {
				out = append(out, fmt.Sprintf("%s %x=%x", name, k, v))
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// u64 is n as 8 bytes big-endian.
func u64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// TestLayout checks that the model's keys are kept where format 2 keeps
// them, byte for byte, and read back and listed from there.
func TestLayout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, bolt.New(path), bolt.DefaultStack, kv.Options{Write: true, Init: meta})
	bt := &kv.Batch{}
	bt.Put("meta/serial", []byte{0, 0, 0, 0, 0, 0, 0, 7, 9, 9, 9, 9})
	bt.Put("meta/count", []byte("count"))
	bt.Put("outputs", []byte("outputs"))
	bt.Put("records/ep01", []byte("r1"))
	bt.Put("versions/ep01\x0000000000000000000007", []byte("v7"))
	bt.Put("versions/ep01\x0000000000000000000300", []byte("v300"))
	bt.Put("history/00000000000000000007/00000000000000000003", []byte("h"))
	bt.Put("intents/ep02", []byte("i"))
	if err := s.Write(t.Context(), bt); err != nil {
		t.Fatal(err)
	}
	s.Close()
	want := []string{
		"history seq=3",
		fmt.Sprintf("history %x=%x", append(u64(7), u64(3)...), "h"),
		"intents seq=0",
		fmt.Sprintf("intents %x=%x", "ep02", "i"),
		"meta seq=0",
		fmt.Sprintf("meta %x=%x", "count", "count"),
		fmt.Sprintf("meta %x=%x", "format", u64(2)),
		fmt.Sprintf("meta %x=%x", "format.crc", []byte{0xa, 0xb, 0xc, 0xd}),
		fmt.Sprintf("meta %x=%x", "lineage", "lineage-check"),
		fmt.Sprintf("meta %x=%x", "outputs", "outputs"),
		fmt.Sprintf("meta %x=%x", "serial", u64(7)),
		fmt.Sprintf("meta %x=%x", "serial.crc", []byte{9, 9, 9, 9}),
		"records seq=0",
		fmt.Sprintf("records %x=%x", "ep01", "r1"),
		"versions seq=0",
		fmt.Sprintf("versions %x=%x", append([]byte("ep01\x00"), u64(7)...), "v7"),
		fmt.Sprintf("versions %x=%x", append([]byte("ep01\x00"), u64(300)...), "v300"),
	}
	if got := raw(t, path); !slices.Equal(got, want) {
		t.Errorf("the file holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	r := open(t, bolt.New(path), bolt.DefaultStack, kv.Options{})
	var keys []string
	err := r.Read(t.Context(), func(vw kv.View) error {
		return vw.Scan("", "", false, func(k string, v []byte) error {
			keys = append(keys, fmt.Sprintf("%q=%x", k, v))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{
		fmt.Sprintf("%q=%x", "history/00000000000000000007/00000000000000000003", "h"),
		fmt.Sprintf("%q=%x", "intents/ep02", "i"),
		fmt.Sprintf("%q=%x", "meta/count", "count"),
		fmt.Sprintf("%q=%x", "meta/format", []byte{0, 0, 0, 0, 0, 0, 0, 2, 0xa, 0xb, 0xc, 0xd}),
		fmt.Sprintf("%q=%x", "meta/lineage", "lineage-check"),
		fmt.Sprintf("%q=%x", "meta/serial", []byte{0, 0, 0, 0, 0, 0, 0, 7, 9, 9, 9, 9}),
		fmt.Sprintf("%q=%x", "outputs", "outputs"),
		fmt.Sprintf("%q=%x", "records/ep01", "r1"),
		fmt.Sprintf("%q=%x", "versions/ep01\x0000000000000000000007", "v7"),
		fmt.Sprintf("%q=%x", "versions/ep01\x0000000000000000000300", "v300"),
	}
	if !slices.Equal(keys, wantKeys) {
		t.Errorf("Scan of everything =\n%s\nwant\n%s", strings.Join(keys, "\n"), strings.Join(wantKeys, "\n"))
	}
}

// TestFormat1Values checks that a value the file keeps without a check,
// as format 1 keeps the format and serial, reads back as its 8 bytes.
func TestFormat1Values(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range []string{"meta", "records", "versions", "history", "intents"} {
			if _, err := tx.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		m := tx.Bucket([]byte("meta"))
		return errors.Join(m.Put([]byte("format"), u64(1)), m.Put([]byte("serial"), u64(4)), m.Put([]byte("lineage"), []byte("l")))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, bolt.New(path), bolt.DefaultStack, kv.Options{})
	var got [][]byte
	err = s.Read(t.Context(), func(vw kv.View) error {
		got, err = vw.GetMany([]string{"meta/format", "meta/serial", "meta/lineage", "meta/key"})
		return err
	})
	if err != nil || !bytes.Equal(got[0], u64(1)) || !bytes.Equal(got[1], u64(4)) || string(got[2]) != "l" || got[3] != nil {
		t.Errorf("GetMany of a format 1 file's meta = %x, %v", got, err)
	}
}

// checkUntouched writes data as a file with mode 0644, opens it for
// writing and for reading, with and without Init, and checks that each
// Open fails with an error wrapping kv.ErrCorrupt and naming the file, and
// that the file and its directory are left as they were.
func checkUntouched(t *testing.T, data []byte) {
	t.Helper()
	for _, opts := range []kv.Options{{}, {Write: true}, {Init: meta}, {Write: true, Init: meta}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "state.db")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := bolt.New(path).Open(t.Context(), bolt.DefaultStack, opts)
		if err == nil {
			s.Close()
			t.Errorf("Open(write %v) = a store, want ErrCorrupt", opts.Write)
		} else if !errors.Is(err, kv.ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("%q", path)) {
			t.Errorf("Open(write %v) = %v, want ErrCorrupt naming the file", opts.Write, err)
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
			t.Errorf("after Open(write %v), the file changed", opts.Write)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("after Open(write %v), mode = %v (%v), want 0644", opts.Write, fi.Mode(), err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("after Open(write %v), the directory holds %v", opts.Write, entries)
		}
	}
}

func TestCorruptFiles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, bolt.New(path), bolt.DefaultStack, kv.Options{Write: true, Init: meta})
	bt := &kv.Batch{}
	for i := range 200 {
		bt.Put(fmt.Sprintf("records/r%03d", i), bytes.Repeat([]byte("x"), 500))
	}
	if err := s.Write(t.Context(), bt); err != nil {
		t.Fatal(err)
	}
	s.Close()
	real, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	emptyBolt := filepath.Join(t.TempDir(), "empty.db")
	db, err := bbolt.Open(emptyBolt, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	noBuckets, _ := os.ReadFile(emptyBolt)
	for name, data := range map[string][]byte{
		"empty file":           {},
		"text":                 []byte("terraform state v4\n"),
		"truncated":            real[:100],
		"meta pages only":      real[:2*page],
		"half the pages":       real[:len(real)/2],
		"bbolt without bucket": noBuckets,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkUntouched(t, data)
		})
	}
}

func TestModes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".reconcile", "state.db")
	b := bolt.New(path)
	s := open(t, b, bolt.DefaultStack, kv.Options{Write: true, Init: meta, Holder: []byte("me\n")})
	for file, want := range map[string]os.FileMode{
		path:               0o600,
		path + ".lock":     0o600,
		filepath.Dir(path): 0o700 | os.ModeDir,
	} {
		if fi, err := os.Stat(file); err != nil || fi.Mode() != want {
			t.Errorf("mode of %q = %v (%v), want %v", file, fi.Mode(), err, want)
		}
	}
	if data, _ := os.ReadFile(path + ".lock"); string(data) != "me\n" {
		t.Errorf("holder file holds %q, want the Holder given", data)
	}
	s.Close()
	if _, err := os.Stat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close, the holder file is there (%v)", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	open(t, b, bolt.DefaultStack, kv.Options{}).Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("a reader changed the mode to %v", fi.Mode())
	}
	open(t, b, bolt.DefaultStack, kv.Options{Write: true}).Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after a writer opened a 0644 file = %v, want 0600", fi.Mode())
	}
	if got := dirNames(t, filepath.Dir(path)); !slices.Equal(got, []string{"state.db"}) {
		t.Errorf("files beside the state = %q, want state.db alone", got)
	}
}

// dirNames returns the names in dir, sorted.
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

func TestPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := bolt.New(filepath.Join(dir, "state.db"))
	if got := b.Path("prod"); got != filepath.Join(dir, "state.prod.db") {
		t.Errorf("Path(prod) = %q", got)
	}
	for _, stack := range []string{bolt.DefaultStack, "prod", "prod.eu"} {
		open(t, b, stack, kv.Options{Write: true, Init: meta}).Close()
	}
	// Files that are no stack's: the holder file of one, a temporary
	// file, another program's.
	for _, name := range []string{"state.prod.db.lock", "state.db.123.new", "other.db"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := b.Stacks(t.Context()); err != nil || !slices.Equal(got, []string{"default", "prod", "prod.eu"}) {
		t.Errorf("Stacks = %q, %v", got, err)
	}
	if _, err := b.Open(t.Context(), "../x", kv.Options{Write: true, Init: meta}); err == nil {
		t.Errorf("Open of stack ../x succeeded")
	}
}

// TestRemoveWaits checks that Remove waits for the lock of the file it
// removes, and names its holder when it gives up.
func TestRemoveWaits(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	b := bolt.New(path)
	w := open(t, b, "prod", kv.Options{Write: true, Init: meta, Holder: []byte("holder")})
	err := b.Remove(t.Context(), "prod", 100*time.Millisecond)
	var locked *kv.LockedError
	if !errors.As(err, &locked) || string(locked.Holder) != "holder" {
		t.Fatalf("Remove of a stack a writer holds = %v, want a *LockedError naming it", err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Remove(t.Context(), "prod", time.Minute) }()
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, filepath.Dir(path)); len(got) != 0 {
		t.Errorf("after Remove, the directory holds %q", got)
	}
}

// TestReplacedWhileWaiting checks that a writer that waited for the lock
// of a file removed meanwhile does not write into the removed file, but
// into the one at the path.
func TestReplacedWhileWaiting(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	b := bolt.New(path)
	open(t, b, bolt.DefaultStack, kv.Options{Write: true, Init: meta}).Close()
	// A reader: the writer checks the file beside it, and then waits for
	// the write lock.
	w := open(t, b, bolt.DefaultStack, kv.Options{})
	done := make(chan error, 1)
	waiting := make(chan struct{})
	go func() {
		s, err := b.Open(t.Context(), bolt.DefaultStack, kv.Options{Write: true, Init: meta, LockTimeout: time.Minute,
			OnWait: func([]byte) { close(waiting) }})
		if err == nil {
			err = s.Write(t.Context(), &kv.Batch{Ops: []kv.Op{{Key: "records/new", Value: []byte("v")}}})
			s.Close()
		}
		done <- err
	}()
	// Remove the file under the writer, as Remove would, and let go.
	<-waiting
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r := open(t, b, bolt.DefaultStack, kv.Options{})
	var v []byte
	_ = r.Read(t.Context(), func(vw kv.View) error { v, _ = vw.Get("records/new"); return nil })
	if string(v) != "v" {
		t.Errorf("records/new = %q in the file at the path, want the write there", v)
	}
}
