package state

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/kind"

	bolt "go.etcd.io/bbolt"
)

// sealInput is a RewriteVersions fn that replaces the clear value of the
// input "password" with a digest, and leaves records without one alone.
func sealInput(r Record) (Record, bool) {
	if _, ok := r.Inputs["password"].(string); !ok {
		return r, false
	}
	r.Inputs["password"] = map[string]any{"$secret": "hmac-sha256:00"}
	return r, true
}

// secretHistory writes a state in which db has had three clear passwords:
//
//	1 put db (clear-1)   2 put other   3 put db (clear-3)
//	4 delete db          5 put db (clear-5)
//
// and returns it with what Version returned for db at serials 1 to 5.
func secretHistory(t *testing.T) (*Store, []Record) {
	t.Helper()
	s := newStore(t)
	put := func(password string) {
		mustPut(t, s, Record{Name: "db", Kind: kind.Resource, ID: "id-" + password, Inputs: map[string]any{"password": password, "size": int64(2)}})
	}
	put("clear-1")
	mustPut(t, s, Record{Name: "other", Kind: kind.Resource, Inputs: map[string]any{"password": "clear-other"}})
	put("clear-3")
	if err := s.Delete("db"); err != nil {
		t.Fatal(err)
	}
	put("clear-5")
	versions := make([]Record, 6)
	for serial := range int64(6) {
		versions[serial], _, _ = s.Version("db", serial)
	}
	return s, versions
}

// storedValues returns every value stored in s's file, by bucket and key.
func storedValues(t *testing.T, s *Store) map[string][]byte {
	t.Helper()
	vs := map[string][]byte{}
	err := s.rawDB().View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				vs[string(name)+"/"+string(k)] = bytes.Clone(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestRewriteVersions(t *testing.T) {
	t.Parallel()
	s, before := secretHistory(t)
	var got []int64
	err := s.RewriteVersions("db", func(r Record) (Record, bool) {
		got = append(got, r.Serial)
		r, ok := sealInput(r)
		r.Name, r.Serial, r.UpdatedAt = "renamed", 99, time.Time{} // ignored
		return r, ok
	})
	if err != nil {
		t.Fatalf("RewriteVersions(db) = %v", err)
	}
	if want := []int64{5, 1, 3, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("RewriteVersions(db) called fn with serials %v, want %v (the current record, then every version but the tombstone)", got, want)
	}
	if serial := mustSerial(t, s); serial != 5 {
		t.Errorf("serial after RewriteVersions = %d, want 5, unchanged", serial)
	}
	sealed := map[string]any{"$secret": "hmac-sha256:00"}
	for serial, was := range before {
		r, ok, err := s.Version("db", int64(serial))
		if err != nil || ok != (was.Name != "") {
			t.Errorf("Version(db, %d) after RewriteVersions = %+v, %v, %v, want found = %v", serial, r, ok, err, was.Name != "")
			continue
		}
		if !ok {
			continue
		}
		want := was
		want.Inputs = map[string]any{"password": sealed, "size": int64(2)}
		if !reflect.DeepEqual(r, want) {
			t.Errorf("Version(db, %d) after RewriteVersions = %+v, want %+v", serial, r, want)
		}
	}
	cur, _, err := s.Get("db")
	if want := before[5]; err != nil || cur.Serial != want.Serial || !cur.UpdatedAt.Equal(want.UpdatedAt) || !reflect.DeepEqual(cur.Inputs["password"], sealed) {
		t.Errorf("Get(db) after RewriteVersions = %+v, %v, want serial %d, its time, and the password sealed", cur, err, want.Serial)
	}
	for k, v := range storedValues(t, s) {
		if bytes.Contains(v, []byte(`"clear-`)) && !bytes.Contains(v, []byte("clear-other")) {
			t.Errorf("after RewriteVersions, %q still holds a clear password: %s", k, v)
		}
	}
	if r, _, _ := s.Get("other"); r.Inputs["password"] != "clear-other" {
		t.Errorf("RewriteVersions(db) changed another record: %+v", r)
	}
	if hs, err := s.History(); err != nil || len(hs) != 0 {
		t.Errorf("History() after RewriteVersions = %+v, %v, want no entry", hs, err)
	}

	// What was rewritten passes every check on the next Open.
	path := s.Path()
	s.Close()
	again := openStore(t, path, Options{ReadOnly: true})
	if r, _, err := again.Version("db", 1); err != nil || !reflect.DeepEqual(r.Inputs["password"], sealed) {
		t.Errorf("Version(db, 1) after reopening = %+v, %v, want the password sealed", r, err)
	}
}

func TestRewriteVersionsSome(t *testing.T) {
	t.Parallel()
	s, before := secretHistory(t)
	err := s.RewriteVersions("db", func(r Record) (Record, bool) {
		if r.Serial != 3 {
			return Record{}, false
		}
		return sealInput(r)
	})
	if err != nil {
		t.Fatalf("RewriteVersions(db) = %v", err)
	}
	for serial, want := range map[int64]any{1: "clear-1", 2: "clear-1", 3: map[string]any{"$secret": "hmac-sha256:00"}, 5: "clear-5"} {
		if r, _, err := s.Version("db", serial); err != nil || !reflect.DeepEqual(r.Inputs["password"], want) || r.Serial != before[serial].Serial {
			t.Errorf("Version(db, %d) after rewriting serial 3 only = %+v, %v, want password %v", serial, r, err, want)
		}
	}
}

func TestRewriteVersionsDeleted(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustPut(t, s, Record{Name: "gone", Inputs: map[string]any{"password": "clear-1"}})
	if err := s.Delete("gone"); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err := s.RewriteVersions("gone", func(r Record) (Record, bool) {
		calls++
		return sealInput(r)
	})
	if err != nil || calls != 1 {
		t.Fatalf("RewriteVersions of a deleted record = %v after %d calls, want nil after 1 (its one version)", err, calls)
	}
	if r, _, _ := s.Version("gone", 1); r.Inputs["password"] == "clear-1" {
		t.Errorf("Version(gone, 1) after RewriteVersions = %+v, want the password sealed", r)
	}
}

func TestRewriteVersionsRefused(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	s := openStore(t, path, Options{Create: true})
	mustPut(t, s, Record{Name: "db", Inputs: map[string]any{"password": "clear-1"}})
	mustPut(t, s, Record{Name: "db", Inputs: map[string]any{"password": "clear-2"}})
	for name, tc := range map[string]struct {
		record string
		fn     func(Record) (Record, bool)
		want   error // nil: any error
	}{
		"never stored": {record: "nothing", fn: sealInput, want: ErrNoRecord},
		"unencodable": {record: "db", fn: func(r Record) (Record, bool) {
			if r.Serial == 1 { // after the current record was rewritten
				r.Inputs["password"] = make(chan int)
			} else {
				r, _ = sealInput(r)
			}
			return r, true
		}},
	} {
		before := storedValues(t, s)
		err := s.RewriteVersions(tc.record, tc.fn)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: RewriteVersions(%q) = %v, want an error wrapping %v", name, tc.record, err, tc.want)
		}
		if after := storedValues(t, s); !reflect.DeepEqual(after, before) {
			t.Errorf("%s: RewriteVersions(%q) that failed changed the state", name, tc.record)
		}
	}
	s.Close()

	r := openStore(t, path, Options{ReadOnly: true})
	if err := r.RewriteVersions("db", sealInput); !errors.Is(err, ErrReadOnly) {
		t.Errorf("RewriteVersions on a read-only store = %v, want ErrReadOnly", err)
	}
}
