package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// realState writes a state with enough records to span many pages and
// returns its bytes and its high-water mark (the bytes bbolt says it uses).
func realState(t *testing.T) (data []byte, used int) {
	t.Helper()
	path := statePath(t)
	s := openStore(t, path, Options{Create: true})
	for i := range 200 {
		mustPut(t, s, Record{Name: fmt.Sprintf("r%03d", i), Outputs: map[string]any{"pad": strings.Repeat("x", 300)}})
	}
	s.Close()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error {
		used = int(tx.Size())
		return nil
	})
	data, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, used
}

// foreignBolt returns the bytes of a bbolt file written by another program.
func foreignBolt(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("sessions"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// emptyBolt returns the bytes of a bbolt file without any bucket.
func emptyBolt(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "empty.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// edited returns a copy of the state data changed by edit.
func edited(t *testing.T, data []byte, edit func(tx *bolt.Tx) error) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(edit)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withMeta returns a copy of the state data with meta key set to value.
func withMeta(t *testing.T, data []byte, key, value []byte) []byte {
	t.Helper()
	return edited(t, data, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(key, value)
	})
}

// checkRefused writes data as a state file with mode 0644, opens it as a
// writer and as a reader, each with and without Create, and checks that
// every Open fails with an error wrapping want and naming the file (and
// mentioning mention, unless it is empty), and that the file and its
// directory are left exactly as they were.
func checkRefused(t *testing.T, data []byte, want error, mention string) {
	t.Helper()
	for _, opts := range []Options{{}, {ReadOnly: true}, {Create: true}, {ReadOnly: true, Create: true}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "state.db")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path, opts)
		if err == nil {
			s.Close()
			t.Errorf("Open(%+v) = a store, want an error wrapping %v", opts, want)
		} else {
			if !errors.Is(err, want) {
				t.Errorf("Open(%+v) = %v, want an error wrapping %v", opts, err, want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", path)) {
				t.Errorf("Open(%+v) error %q does not name %q", opts, err, path)
			}
			if !strings.Contains(err.Error(), mention) {
				t.Errorf("Open(%+v) error %q does not mention %s", opts, err, mention)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("after Open(%+v), the file changed (%d bytes, was %d; %v)", opts, len(got), len(data), err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("after Open(%+v), mode = %v (%v), want 0644 unchanged", opts, fi.Mode(), err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("after Open(%+v), the directory holds %v, want only state.db", opts, entries)
		}
	}
}

func TestCorruptFileUntouched(t *testing.T) {
	t.Parallel()
	real, used := realState(t)
	page := os.Getpagesize()
	if used <= 4*page {
		t.Fatalf("real state uses %d bytes, want more than 4 pages for the truncation cases", used)
	}
	garbage := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	zeroed := bytes.Clone(real)
	clear(zeroed[2*page:])

	for name, data := range map[string][]byte{
		// A 0-byte file is what a writer of an older reconcile killed
		// before it initialized a new state left behind.
		"empty file":                 {},
		"bbolt file without buckets": emptyBolt(t),
		"random bytes":               garbage,
		"text":                       []byte("terraform state v4\n"),
		"truncated to 100 bytes":     real[:100],
		"only the meta pages":        real[:2*page],
		"last used page missing":     real[:used-page],
		"half the used pages":        real[:used/2],
		"data pages zeroed":          zeroed,
		"another program's bbolt":    foreignBolt(t),
		"format version zero":        withMeta(t, real, keyFormat, u64(0)),
		"format version unreadable":  withMeta(t, real, keyFormat, []byte("1")),
		"no lineage":                 withMeta(t, real, keyLineage, nil),
		"no intents bucket": edited(t, real, func(tx *bolt.Tx) error {
			return tx.DeleteBucket(bucketIntents)
		}),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkRefused(t, data, ErrCorrupt, "")
		})
	}
}

func TestNewerFormatRefused(t *testing.T) {
	t.Parallel()
	real, _ := realState(t)
	newer := u64(FormatVersion + 1)
	for name, data := range map[string][]byte{
		// The format value and its check are encoded alike in every format.
		"format checked": edited(t, real, func(tx *bolt.Tx) error {
			return putCheckedInt(tx.Bucket(bucketMeta), keyFormat, keyFormatCheck, FormatVersion+1)
		}),
		// A later format might check it some other way.
		"format unchecked": edited(t, real, func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			return errors.Join(meta.Put(keyFormat, newer), meta.Delete(keyFormatCheck))
		}),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkRefused(t, data, ErrNewerFormat, fmt.Sprintf("file format %d", FormatVersion+1))
			path := filepath.Join(t.TempDir(), "state.db")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path, Options{})
			if err == nil || !strings.Contains(err.Error(), "upgrade reconcile") {
				t.Errorf("Open of a format %d state = %v, want an error saying to upgrade reconcile", FormatVersion+1, err)
			}
		})
	}
}

// TestFormat1ReaderSeesNewerFormat checks that a reconcile that reads only
// format 1 would refuse this package's files as newer, asking for an
// upgrade, rather than call them damaged: its Open checked, in this order,
// that the format and serial values are 8 bytes long and that there is a
// lineage, and only then compared the format version.
func TestFormat1ReaderSeesNewerFormat(t *testing.T) {
	t.Parallel()
	real, _ := realState(t)
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, real, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		format, lineage, serial := meta.Get(keyFormat), meta.Get(keyLineage), meta.Get(keySerial)
		switch {
		case len(format) != 8:
			return fmt.Errorf("bad format version %x", format)
		case len(serial) != 8:
			return fmt.Errorf("bad serial %x", serial)
		case len(lineage) == 0:
			return errors.New("no lineage")
		case binary.BigEndian.Uint64(format) != FormatVersion:
			return fmt.Errorf("file format %d, want %d", binary.BigEndian.Uint64(format), FormatVersion)
		}
		return nil
	})
	if err != nil {
		t.Errorf("format 1's meta check of a format %d state = %v, want it to reach the format version, %d", FormatVersion, err, FormatVersion)
	}
}
