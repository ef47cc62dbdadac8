package statetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state"
)

// Fill writes into s, a new state, one value of every kind: records,
// versions, a tombstone, a renamed record, a redacted one, history entries
// (two at one serial), intents and outputs. Its serials:
//
//	1 put ep01    2 put ep02    3 put ep01 again    4 put gone
//	5 delete gone (a tombstone)    6 rename ep02 to ep03
//	7 put db, with its password then redacted in place
func Fill(t *testing.T, s Store) {
	t.Helper()
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	steps := []func() error{
		func() error {
			_, err := s.Put(state.Record{Name: "ep01", Type: "oci:AiLanguage:Endpoint", Kind: kind.Resource, ID: "id-1", Inputs: map[string]any{"displayName": "one", "units": 2, "ratio": 0.5}})
			return err
		},
		func() error {
			_, err := s.Put(state.Record{Name: "ep02", Kind: kind.Get, ID: "id-2", Dependencies: []string{"ep01"}})
			return err
		},
		func() error {
			_, err := s.Put(state.Record{Name: "ep01", Kind: kind.Resource, ID: "id-3", Outputs: map[string]any{"list": []any{"a", int64(1)}}, Deposed: []string{"id-1"}})
			return err
		},
		func() error { _, err := s.Put(state.Record{Name: "gone", Kind: kind.Lookup}); return err },
		func() error { return s.Delete("gone") },
		func() error {
			return s.AddHistory(state.HistoryEntry{Command: "apply", Counts: state.Counts{Create: 3}})
		},
		func() error { return s.AddHistory(state.HistoryEntry{Command: "plan", Time: at}) },
		func() error { return s.Rename("ep02", "ep03") },
		func() error {
			_, err := s.Put(state.Record{Name: "db", Kind: kind.Resource, Inputs: map[string]any{"password": "clear"}, Tainted: "create failed"})
			return err
		},
		func() error {
			return s.RewriteVersions("db", func(r state.Record) (state.Record, bool) {
				r.Inputs["password"] = map[string]any{"$secret": "hmac-sha256:00"}
				return r, true
			})
		},
		func() error { return s.AddHistory(state.HistoryEntry{Command: "state mv", Serial: 6}) },
		func() error {
			return s.PutIntent(state.Intent{Name: "ep09", Type: "oci:AiLanguage:Endpoint", Token: "t9", Inputs: map[string]any{"units": 1}, Protect: true})
		},
		func() error { return s.PutIntent(state.Intent{Name: "ep08", Token: "t8", ID: "id-8", Time: at}) },
		func() error {
			return s.PutOutputs(state.Outputs{Command: "apply", Values: map[string]any{"id": "id-3", "n": 2, "token": map[string]any{"$secret": "hmac-sha256:01"}}})
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("fill step %d: %v", i, err)
		}
	}
}

// checkSame checks that got, a store loaded from a Dump of want, reads the
// same as want through every read method.
func checkSame(t *testing.T, got, want Store) {
	t.Helper()
	gm, err1 := got.Meta()
	wm, err2 := want.Meta()
	if err1 != nil || err2 != nil || gm != wm {
		t.Errorf("Meta() of the copy = %+v, %v, want %+v, %v", gm, err1, wm, err2)
	}
	gk, _ := got.SecretKey()
	wk, _ := want.SecretKey()
	if string(gk) != string(wk) {
		t.Errorf("SecretKey() of the copy differs from the original's")
	}
	for name, read := range map[string]func(s Store) (any, error){
		"List":    func(s Store) (any, error) { return s.List() },
		"History": func(s Store) (any, error) { return s.History() },
		"Intents": func(s Store) (any, error) { return s.Intents() },
		"Outputs": func(s Store) (any, error) {
			o, ok, err := s.Outputs()
			return []any{o, ok}, err
		},
	} {
		g, err1 := read(got)
		w, err2 := read(want)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(g, w) {
			t.Errorf("%s() of the copy = %+v, %v, want %+v, %v", name, g, err1, w, err2)
		}
	}
	for _, name := range []string{"ep01", "ep02", "ep03", "gone", "db", "never"} {
		for serial := range wm.Serial + 2 {
			g, gok, err1 := got.Version(name, serial)
			w, wok, err2 := want.Version(name, serial)
			if err1 != nil || err2 != nil || gok != wok || !reflect.DeepEqual(g, w) {
				t.Errorf("Version(%q, %d) of the copy = %+v, %v, %v, want %+v, %v, %v", name, serial, g, gok, err1, w, wok, err2)
			}
		}
	}
}

// copyState dumps from, loads the dump into to, and checks the copy. It
// returns the dump.
func copyState(t *testing.T, from, to Store) state.Snapshot {
	t.Helper()
	snap, err := from.Dump()
	if err != nil {
		t.Fatalf("Dump() = %v", err)
	}
	if err := to.Load(snap); err != nil {
		t.Fatalf("Load(%v) into a new state = %v", snap, err)
	}
	if got, err := to.Dump(); err != nil || !got.Equal(snap) {
		t.Errorf("Dump() after Load(%v) = %v, %v, want the same", snap, got, err)
	}
	checkSame(t, to, from)
	// Again: a copy can be retried.
	if err := to.Load(snap); err != nil {
		t.Errorf("Load of the same snapshot again = %v, want nil", err)
	}
	return snap
}

func testDumpLoad(t *testing.T, open Opener) {
	from := newStore(t, open)
	Fill(t, from)
	snap, err := from.Dump()
	if err != nil {
		t.Fatalf("Dump() = %v", err)
	}
	if len(snap.Records) != 3 || len(snap.Versions) != 8 || len(snap.History) != 3 || len(snap.Intents) != 2 || snap.Meta.Serial != 7 {
		t.Errorf("Dump() of the filled state = %v, want 3 records, 8 versions, 3 history entries, 2 intents at serial 7", snap)
	}
	// The load target: another state, as a subtest opens.
	t.Run("copy", func(t *testing.T) {
		to := newStore(t, open)
		copyState(t, from, to)
		// The copy goes on as the original would.
		r, err := to.Put(state.Record{Name: "ep04"})
		if err != nil || r.Serial != 8 {
			t.Errorf("Put into the copy = %+v, %v, want serial 8", r, err)
		}
		if err := to.AddHistory(state.HistoryEntry{Command: "apply"}); err != nil {
			t.Errorf("AddHistory on the copy = %v", err)
		}
		if hs, _ := to.History(); len(hs) != 4 || hs[3].Serial != 8 {
			t.Errorf("History() of the copy after one more apply = %+v, want 4 entries, the last at serial 8", hs)
		}
		// Now it holds more than the snapshot: Load refuses it.
		if err := to.Load(snap); !errors.Is(err, state.ErrNotEmpty) {
			t.Errorf("Load into the copy after it changed = %v, want ErrNotEmpty", err)
		}
	})
	t.Run("into another state", func(t *testing.T) {
		to := newStore(t, open)
		mustPut(t, to, state.Record{Name: "mine"})
		before, _ := to.Dump()
		if err := to.Load(snap); !errors.Is(err, state.ErrNotEmpty) {
			t.Errorf("Load into a state of another lineage = %v, want ErrNotEmpty", err)
		}
		if after, _ := to.Dump(); !after.Equal(before) {
			t.Errorf("a refused Load changed the state: %v, was %v", after, before)
		}
	})
	t.Run("intents only", func(t *testing.T) {
		to := newStore(t, open)
		if err := to.PutIntent(state.Intent{Name: "x", Token: "t"}); err != nil {
			t.Fatal(err)
		}
		if err := to.Load(snap); !errors.Is(err, state.ErrNotEmpty) {
			t.Errorf("Load into a state holding an intent = %v, want ErrNotEmpty", err)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		to := newStore(t, open)
		bad := snap
		bad.Key = nil
		if err := to.Load(bad); err == nil {
			t.Errorf("Load of a snapshot without a key = nil, want an error")
		}
		if m, _ := to.Meta(); m.Serial != 0 {
			t.Errorf("a refused Load wrote serial %d", m.Serial)
		}
	})
}

// RunCopy copies a filled state from the backend from opens to the one to
// opens, with Dump and Load, and checks that the copy reads exactly as the
// original through every read method, that Load of the same snapshot
// again does nothing, and that the copy goes on from the same serial.
func RunCopy(t *testing.T, from, to Opener) {
	src := newStore(t, from)
	Fill(t, src)
	dst := newStore(t, to)
	copyState(t, src, dst)
	if r, err := dst.Put(state.Record{Name: "next"}); err != nil || r.Serial != 8 {
		t.Errorf("Put into the copy = %+v, %v, want serial 8", r, err)
	}
}
