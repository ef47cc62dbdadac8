package statetest

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state"
)

// testRecordLimit: a record that CheckRecordSize accepts is written, by Put
// and by PutAndClearIntent (after its intent, which holds its inputs); one
// it refuses is refused by Put too, with ErrTooLarge, and nothing is
// written. A backend whose limit is too large to reach in a test (bbolt's,
// 2 GiB) is checked only for what it says.
func testRecordLimit(t *testing.T, open Opener) {
	s := newStore(t, open)
	limit := s.RecordLimit()
	if limit.Bytes <= 0 || limit.Why == "" {
		t.Fatalf("RecordLimit() = %+v, want a size and what sets it", limit)
	}
	if limit.Bytes > 64<<20 {
		if err := state.CheckRecordSize(s, state.Record{Name: "small", Inputs: map[string]any{"a": "b"}}); err != nil {
			t.Errorf("CheckRecordSize of a small record = %v", err)
		}
		t.Skipf("a record of the limit, %d bytes, is too large for a test", limit.Bytes)
	}
	// sized returns a record of name whose size CheckRecordSize counts
	// as n bytes: a blob of the limit's size tells it what the rest of the
	// record counts.
	sized := func(name string, n int) state.Record {
		t.Helper()
		r := state.Record{Name: name, Type: "oci:AiLanguage:Endpoint", Kind: kind.Resource, ID: "ocid1.x",
			Inputs: map[string]any{"blob": strings.Repeat("x", limit.Bytes)}}
		var tl *state.TooLargeError
		if err := state.CheckRecordSize(s, r); !errors.As(err, &tl) {
			t.Fatalf("CheckRecordSize of a record larger than the limit = %v, want a *TooLargeError", err)
		}
		r.Inputs = map[string]any{"blob": strings.Repeat("x", n-(tl.Size-limit.Bytes))}
		return r
	}
	at := sized("at", limit.Bytes)
	if err := state.CheckRecordSize(s, at); err != nil {
		t.Fatalf("CheckRecordSize of a record of exactly the limit = %v", err)
	}
	if _, err := s.Put(at); err != nil {
		t.Errorf("Put of a record of the limit, %d bytes = %v", limit.Bytes, err)
	}
	in := sized("created", limit.Bytes)
	if err := s.PutIntent(state.Intent{Name: in.Name, Type: in.Type, Token: "t", Inputs: in.Inputs}); err != nil {
		t.Errorf("PutIntent with the inputs of a record of the limit = %v", err)
	}
	if _, err := s.PutAndClearIntent(in); err != nil {
		t.Errorf("PutAndClearIntent of a record of the limit = %v", err)
	}

	over := sized("over", limit.Bytes+1)
	var tl *state.TooLargeError
	if err := state.CheckRecordSize(s, over); !errors.As(err, &tl) || !errors.Is(err, state.ErrTooLarge) || tl.Size != limit.Bytes+1 ||
		!strings.Contains(err.Error(), `"over"`) || !strings.Contains(err.Error(), state.FormatSize(limit.Bytes)) {
		t.Errorf("CheckRecordSize of a record one byte over the limit = %v, want a *TooLargeError naming it, its size and the limit", err)
	}
	before := mustSerial(t, s)
	if _, err := s.Put(sized("over", 2*limit.Bytes)); !errors.Is(err, state.ErrTooLarge) {
		t.Errorf("Put of a record of twice the limit = %v, want ErrTooLarge", err)
	}
	if _, ok, _ := s.Get("over"); ok || mustSerial(t, s) != before {
		t.Errorf("a refused Put wrote something")
	}
}

// testDeletedOutside: a record deleted from the store behind reconcile's
// back is found missing, by the record count every write keeps, when the
// state is next read whole: reading it fails with ErrCorrupt naming the
// record and the serial of its last version, so that no plan is made
// without it. Writes that add, replace, delete and rename records keep the
// count true.
func testDeletedOutside(t *testing.T, open Opener) {
	s := newStore(t, open)
	_, ok := s.(KeyDeleter)
	if !ok {
		t.Skip("the Store cannot delete its keys behind its back")
	}
	mustPut(t, s, state.Record{Name: "ep01", ID: "id-1"})
	kept := mustPut(t, s, state.Record{Name: "ep02", ID: "id-2"})
	mustPut(t, s, state.Record{Name: "ep01", ID: "id-1b"})
	mustPut(t, s, state.Record{Name: "gone", ID: "id-3"})
	if err := s.Delete("gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename("ep01", "ep03"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIntent(state.Intent{Name: "ep04", Token: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutAndClearIntent(state.Record{Name: "ep04", ID: "id-4"}); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Dump()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Read whole, by a reader and a writer: all as written.
	for _, opts := range []state.Options{{ReadOnly: true}, {}} {
		r := mustOpen(t, open, opts)
		if got, err := r.Dump(); err != nil || !got.Equal(snap) {
			t.Errorf("Dump() after reopening %+v = %v, %v, want %v", opts, got, err, snap)
		}
		r.Close()
	}

	w := mustOpen(t, open, state.Options{})
	w.(KeyDeleter).DeleteRecordKey(t, "ep02")
	w.Close()
	for _, opts := range []state.Options{{ReadOnly: true}, {}} {
		for name, read := range map[string]func(s Store) error{
			"List": func(s Store) error { _, err := s.List(); return err },
			"Dump": func(s Store) error { _, err := s.Dump(); return err },
		} {
			s, err := open(t, opts)
			if err == nil {
				err = read(s)
				s.Close()
			}
			var ce *state.CountError
			if !errors.Is(err, state.ErrCorrupt) || !errors.As(err, &ce) || len(ce.Missing) != 1 ||
				ce.Missing[0] != (state.MissingRecord{Name: "ep02", Serial: kept.Serial}) || !strings.Contains(err.Error(), `"ep02"`) {
				t.Errorf("open %+v and %s after record ep02 was deleted outside = %v, want a CountError naming ep02 at serial %d", opts, name, err, kept.Serial)
			}
		}
	}
}

// testNoRecordCount: a state without a record count (a reconcile that
// predates it wrote it) is read without the check, and its next write
// counts the records again, so that a record deleted outside after it is
// found missing.
func testNoRecordCount(t *testing.T, open Opener) {
	s := newStore(t, open)
	kd, ok := s.(KeyDeleter)
	if !ok {
		t.Skip("the Store cannot delete its keys behind its back")
	}
	mustPut(t, s, state.Record{Name: "a"})
	mustPut(t, s, state.Record{Name: "b"})
	kd.DeleteRecordCount(t)
	kd.DeleteRecordKey(t, "b") // unseen: nothing counts the records
	s.Close()
	s = mustOpen(t, open, state.Options{})
	if rs, err := s.List(); err != nil || len(rs) != 1 {
		t.Fatalf("List() of a state without a record count = %v, %v, want a alone", rs, err)
	}
	put := mustPut(t, s, state.Record{Name: "c"}) // counts the records again: a, c
	s.(KeyDeleter).DeleteRecordKey(t, "c")
	s.Close()
	for _, opts := range []state.Options{{ReadOnly: true}, {}} {
		s, err := open(t, opts)
		if err == nil {
			_, err = s.List()
			s.Close()
		}
		// b is found missing too, now that a count tells to look.
		var ce *state.CountError
		if !errors.As(err, &ce) || ce.Want != 2 || ce.Have != 1 || !reflect.DeepEqual(ce.Missing, []state.MissingRecord{{Name: "b", Serial: 2}, {Name: "c", Serial: put.Serial}}) {
			t.Errorf("open %+v and List after c was deleted outside = %v, want a CountError: 1 record of 2, b and c missing", opts, err)
		}
	}
}
