package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/kind"

	bolt "go.etcd.io/bbolt"
)

// openStore opens the state at path and registers, with t.Cleanup, a full
// bbolt integrity check of the file followed by Close.
func openStore(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%q, %+v) = %v, want no error", path, opts, err)
	}
	t.Cleanup(func() {
		checkIntegrity(t, s)
		if err := s.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return s
}

// checkIntegrity runs bbolt's consistency check on an open store.
func checkIntegrity(t testing.TB, s *Store) {
	t.Helper()
	if s.closed.Load() {
		return
	}
	err := s.rawDB().View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			t.Errorf("integrity check of %q: %v", s.Path(), err)
		}
		return nil
	})
	if err != nil {
		t.Errorf("integrity check of %q: %v", s.Path(), err)
	}
}

// statePath returns a state path in a fresh directory whose parent does not
// exist yet, as .reconcile/state.db does in a new project.
func statePath(t testing.TB) string {
	return filepath.Join(t.TempDir(), ".reconcile", "state.db")
}

// newStore opens a new writable state in a temporary directory.
func newStore(t testing.TB) *Store {
	t.Helper()
	return openStore(t, statePath(t), Options{Create: true, Command: "reconcile test"})
}

// mustPut puts r and fails the test on error.
func mustPut(t testing.TB, s *Store, r Record) Record {
	t.Helper()
	got, err := s.Put(r)
	if err != nil {
		t.Fatalf("Put(%q) = %v", r.Name, err)
	}
	return got
}

// mustSerial returns the current serial.
func mustSerial(t testing.TB, s *Store) int64 {
	t.Helper()
	m, err := s.Meta()
	if err != nil {
		t.Fatalf("Meta() = %v", err)
	}
	return m.Serial
}

// names returns the names of rs.
func names(rs []Record) []string {
	var ns []string
	for _, r := range rs {
		ns = append(ns, r.Name)
	}
	return ns
}

func TestPutGet(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	in := Record{
		Name:                "sentiment",
		Type:                "oci:AiLanguage:Endpoint",
		Kind:                kind.Resource,
		ID:                  "ocid1.ailanguageendpoint.oc1.iad.x",
		Inputs:              map[string]any{"inferenceUnits": int64(2), "displayName": "sentiment-prod"},
		Outputs:             map[string]any{"id": "ocid1.ailanguageendpoint.oc1.iad.x", "state": "ACTIVE"},
		Dependencies:        []string{"compartment"},
		Protect:             true,
		RetainOnDelete:      true,
		DeleteBeforeReplace: true,
		Tainted:             "create: endpoint went to FAILED",
		Deposed:             []string{"ocid1.old"},
		Serial:              99, // ignored
	}
	before := time.Now()
	put := mustPut(t, s, in)
	if put.Serial != 1 {
		t.Errorf("Put(%q).Serial = %d, want 1", in.Name, put.Serial)
	}
	if put.UpdatedAt.Before(before.Add(-time.Second)) || put.UpdatedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("Put(%q).UpdatedAt = %v, want about %v", in.Name, put.UpdatedAt, before)
	}
	want := in
	want.Serial, want.UpdatedAt = put.Serial, put.UpdatedAt
	if !reflect.DeepEqual(put, want) {
		t.Errorf("Put(%q) = %+v, want %+v", in.Name, put, want)
	}
	got, ok, err := s.Get(in.Name)
	if err != nil || !ok {
		t.Fatalf("Get(%q) = _, %v, %v, want a record", in.Name, ok, err)
	}
	if !reflect.DeepEqual(got, put) {
		t.Errorf("Get(%q) = %+v, want %+v", in.Name, got, put)
	}
	if got, ok, err := s.Get("nothing"); ok || err != nil {
		t.Errorf("Get(%q) = %+v, %v, %v, want no record and no error", "nothing", got, ok, err)
	}
}

func TestValueRoundTrip(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for name, tc := range map[string]struct {
		put, want any
	}{
		"int":             {put: 2, want: int64(2)},
		"int64":           {put: int64(math.MaxInt64), want: int64(math.MaxInt64)},
		"negative int64":  {put: int64(math.MinInt64), want: int64(math.MinInt64)},
		"fraction":        {put: 2.5, want: 2.5},
		"integral float":  {put: 3.0, want: int64(3)},
		"huge float":      {put: 1e300, want: 1e300},
		"uint64 overflow": {put: uint64(math.MaxUint64), want: float64(math.MaxUint64)},
		"string":          {put: "ACTIVE", want: "ACTIVE"},
		"html characters": {put: "<a&b>", want: "<a&b>"},
		"bool":            {put: true, want: true},
		"null":            {put: nil, want: nil},
		"string list":     {put: []string{"a", "b"}, want: []any{"a", "b"}},
		"nested": {
			put:  map[string]any{"bindings": []any{map[string]any{"relation": "editor", "n": 1}}},
			want: map[string]any{"bindings": []any{map[string]any{"relation": "editor", "n": int64(1)}}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			mustPut(t, s, Record{Name: name, Kind: kind.Resource, Inputs: map[string]any{"v": tc.put}, Outputs: map[string]any{"v": tc.put}})
			r, _, err := s.Get(name)
			if err != nil {
				t.Fatalf("Get(%q) = %v", name, err)
			}
			if got := r.Inputs["v"]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Put %#v, then Get: Inputs[v] = %#v, want %#v", tc.put, got, tc.want)
			}
			if got := r.Outputs["v"]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Put %#v, then Get: Outputs[v] = %#v, want %#v", tc.put, got, tc.want)
			}
		})
	}
}

func TestListSorted(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	if rs, err := s.List(); err != nil || len(rs) != 0 {
		t.Fatalf("List() on a new state = %v, %v, want nothing", names(rs), err)
	}
	for _, n := range []string{"zeta", "alpha", "Mid", "beta", "alpha2"} {
		mustPut(t, s, Record{Name: n, Kind: kind.Resource})
	}
	rs, err := s.List()
	if err != nil {
		t.Fatalf("List() = %v", err)
	}
	want := []string{"Mid", "alpha", "alpha2", "beta", "zeta"}
	if got := names(rs); !reflect.DeepEqual(got, want) {
		t.Errorf("List() names = %q, want %q", got, want)
	}
}

func TestRename(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustPut(t, s, Record{Name: "old", Kind: kind.Resource, ID: "id-1", Dependencies: []string{"base"}})
	mustPut(t, s, Record{Name: "base", Kind: kind.Lookup})
	mustPut(t, s, Record{Name: "user", Kind: kind.Resource, Dependencies: []string{"base", "old"}})
	mustPut(t, s, Record{Name: "both", Kind: kind.Resource, Dependencies: []string{"old", "new"}})
	untouched := mustPut(t, s, Record{Name: "other", Kind: kind.Resource, Dependencies: []string{"base"}})

	if err := s.Rename("old", "new"); err != nil {
		t.Fatalf("Rename(%q, %q) = %v", "old", "new", err)
	}
	if got := mustSerial(t, s); got != 6 {
		t.Errorf("serial after 5 puts and a rename = %d, want 6", got)
	}
	if _, ok, _ := s.Get("old"); ok {
		t.Errorf("Get(%q) after Rename found a record", "old")
	}
	r, ok, err := s.Get("new")
	if err != nil || !ok || r.ID != "id-1" || r.Name != "new" || r.Serial != 6 {
		t.Errorf("Get(%q) after Rename = %+v, %v, %v, want the old record at serial 6", "new", r, ok, err)
	}
	for name, want := range map[string][]string{
		"user":  {"base", "new"},
		"both":  {"new"},
		"other": {"base"},
		"new":   {"base"},
	} {
		r, _, _ := s.Get(name)
		if !reflect.DeepEqual(r.Dependencies, want) {
			t.Errorf("after Rename(old, new): %s.Dependencies = %q, want %q", name, r.Dependencies, want)
		}
	}
	if r, _, _ := s.Get("user"); r.Serial != 6 {
		t.Errorf("after Rename: user.Serial = %d, want 6 (a new version)", r.Serial)
	}
	if r, _, _ := s.Get("other"); r.Serial != untouched.Serial {
		t.Errorf("after Rename: other.Serial = %d, want %d (unchanged)", r.Serial, untouched.Serial)
	}
	if _, ok, _ := s.Version("old", 5); !ok {
		t.Errorf("Version(%q, 5) after Rename at 6 = not found, want the record", "old")
	}
	if _, ok, _ := s.Version("old", 6); ok {
		t.Errorf("Version(%q, 6) after Rename at 6 = found, want not found", "old")
	}
	if r, ok, _ := s.Version("user", 5); !ok || !reflect.DeepEqual(r.Dependencies, []string{"base", "old"}) {
		t.Errorf("Version(%q, 5) = %+v, %v, want the dependencies before the rename", "user", r, ok)
	}

	for name, tc := range map[string]struct {
		old, new string
		want     error
	}{
		"missing old":    {old: "nope", new: "fresh", want: ErrNoRecord},
		"new taken":      {old: "new", new: "user", want: ErrExists},
		"same name":      {old: "new", new: "new", want: ErrExists},
		"bad new name":   {old: "new", new: "", want: nil},
		"zero byte name": {old: "new", new: "a\x00", want: nil},
	} {
		err := s.Rename(tc.old, tc.new)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: Rename(%q, %q) = %v, want an error wrapping %v", name, tc.old, tc.new, err, tc.want)
		}
	}
	if got := mustSerial(t, s); got != 6 {
		t.Errorf("serial after refused renames = %d, want 6", got)
	}
}

func TestSerialAndLineage(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	s, err := Open(path, Options{Create: true})
	if err != nil {
		t.Fatalf("Open(%q) = %v", path, err)
	}
	m, err := s.Meta()
	if err != nil {
		t.Fatalf("Meta() = %v", err)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if !uuid.MatchString(m.Lineage) || m.Serial != 0 || m.FormatVersion != FormatVersion {
		t.Errorf("Meta() of a new state = %+v, want a UUID lineage, serial 0, format %d", m, FormatVersion)
	}

	steps := []struct {
		what       string
		do         func() error
		wantSerial int64
	}{
		{"put a", func() error { _, err := s.Put(Record{Name: "a"}); return err }, 1},
		{"put a again", func() error { _, err := s.Put(Record{Name: "a", ID: "x"}); return err }, 2},
		{"put b", func() error { _, err := s.Put(Record{Name: "b"}); return err }, 3},
		{"add history", func() error { return s.AddHistory(HistoryEntry{Command: "apply"}) }, 3},
		{"put intent", func() error { return s.PutIntent(Intent{Name: "c", Token: "t"}) }, 3},
		{"clear intent", func() error { return s.ClearIntent("c") }, 3},
		{"rename b", func() error { return s.Rename("b", "c") }, 4},
		{"delete a", func() error { return s.Delete("a") }, 5},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		if got := mustSerial(t, s); got != st.wantSerial {
			t.Errorf("serial after %s = %d, want %d", st.what, got, st.wantSerial)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}

	for _, opts := range []Options{{}, {ReadOnly: true}} {
		s := openStore(t, path, opts)
		got, err := s.Meta()
		if err != nil {
			t.Fatalf("Meta() after reopening with %+v = %v", opts, err)
		}
		if got.Lineage != m.Lineage || got.Serial != 5 {
			t.Errorf("Meta() after reopening with %+v = %+v, want lineage %q and serial 5", opts, got, m.Lineage)
		}
		s.Close()
	}

	other := newStore(t)
	if om, _ := other.Meta(); om.Lineage == m.Lineage {
		t.Errorf("two new states share lineage %q", m.Lineage)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustPut(t, s, Record{Name: "other", ID: "o1"})   // 1
	mustPut(t, s, Record{Name: "a", ID: "a2"})       // 2
	mustPut(t, s, Record{Name: "other", ID: "o3"})   // 3
	mustPut(t, s, Record{Name: "a", ID: "a4"})       // 4
	mustPut(t, s, Record{Name: "a\x01", ID: "next"}) // 5: the name right after "a"
	if err := s.Delete("a"); err != nil {            // 6
		t.Fatal(err)
	}
	mustPut(t, s, Record{Name: "a", ID: "a7"}) // 7
	mustPut(t, s, Record{Name: "b", ID: "b8"}) // 8

	for _, tc := range []struct {
		name   string
		serial int64
		wantID string // "" means not found
	}{
		{"a", -1, ""},
		{"a", 0, ""},
		{"a", 1, ""},
		{"a", 2, "a2"},
		{"a", 3, "a2"},
		{"a", 4, "a4"},
		{"a", 5, "a4"},
		{"a", 6, ""}, // deleted at 6
		{"a", 7, "a7"},
		{"a", 1000, "a7"},
		{"a", math.MaxInt64, "a7"},
		{"a\x01", 4, ""},
		{"a\x01", 9, "next"},
		{"b", 7, ""},
		{"b", 8, "b8"},
		{"b", math.MaxInt64, "b8"},
		{"other", 2, "o1"},
		{"other", 3, "o3"},
		{"missing", 8, ""},
		{"", 8, ""},
	} {
		r, ok, err := s.Version(tc.name, tc.serial)
		switch {
		case err != nil:
			t.Errorf("Version(%q, %d) = %v", tc.name, tc.serial, err)
		case tc.wantID == "" && ok:
			t.Errorf("Version(%q, %d) = %+v, want not found", tc.name, tc.serial, r)
		case tc.wantID != "" && (!ok || r.ID != tc.wantID || r.Name != tc.name || r.Serial > tc.serial):
			t.Errorf("Version(%q, %d) = %+v, %v, want ID %q at a serial <= %d", tc.name, tc.serial, r, ok, tc.wantID, tc.serial)
		}
	}
}

func TestHistory(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	if hs, err := s.History(); err != nil || len(hs) != 0 {
		t.Fatalf("History() of a new state = %+v, %v, want none", hs, err)
	}
	mustPut(t, s, Record{Name: "a"})
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	adds := []HistoryEntry{
		{Command: "apply", Counts: Counts{Create: 1}},
		{Command: "apply", Counts: Counts{}}, // no changes: same serial
		{Command: "import", Serial: 7, Time: at},
		{Command: "state rm", Serial: 3},
	}
	for _, e := range adds {
		if err := s.AddHistory(e); err != nil {
			t.Fatalf("AddHistory(%+v) = %v", e, err)
		}
	}
	hs, err := s.History()
	if err != nil {
		t.Fatalf("History() = %v", err)
	}
	var got []string
	for _, h := range hs {
		got = append(got, fmt.Sprintf("%d %s", h.Serial, h.Command))
		if h.Time.IsZero() {
			t.Errorf("History() entry %+v has no time", h)
		}
	}
	want := []string{"1 apply", "1 apply", "3 state rm", "7 import"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("History() = %q, want %q", got, want)
	}
	if !hs[0].Time.Before(time.Now().Add(time.Second)) || hs[0].Counts.Create != 1 {
		t.Errorf("History()[0] = %+v, want the first apply with counts", hs[0])
	}
	if !hs[3].Time.Equal(at) {
		t.Errorf("History()[3].Time = %v, want %v as given", hs[3].Time, at)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	t.Parallel()
	for name, path := range map[string]func(t *testing.T) string{
		"new state": func(t *testing.T) string { return statePath(t) },
		"existing state": func(t *testing.T) string {
			path := statePath(t)
			s := openStore(t, path, Options{Create: true})
			mustPut(t, s, Record{Name: "a"})
			s.Close()
			return path
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := path(t)
			s := openStore(t, p, Options{ReadOnly: true, Create: true})
			for op, err := range map[string]error{
				"Put":         func() error { _, err := s.Put(Record{Name: "a"}); return err }(),
				"Delete":      s.Delete("a"),
				"Rename":      s.Rename("a", "b"),
				"AddHistory":  s.AddHistory(HistoryEntry{Command: "apply"}),
				"PutIntent":   s.PutIntent(Intent{Name: "a"}),
				"ClearIntent": s.ClearIntent("a"),
			} {
				if !errors.Is(err, ErrReadOnly) {
					t.Errorf("%s on a read-only store = %v, want ErrReadOnly", op, err)
				}
			}
			if m, _ := s.Meta(); m.Serial > 1 {
				t.Errorf("serial after refused writes = %d, want at most 1", m.Serial)
			}
		})
	}
}

func TestReadOnlyReads(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	w := openStore(t, path, Options{Create: true})
	want := mustPut(t, w, Record{Name: "a", Inputs: map[string]any{"n": int64(1)}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := openStore(t, path, Options{ReadOnly: true})
	got, ok, err := r.Get("a")
	if err != nil || !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("read-only Get(a) = %+v, %v, %v, want %+v", got, ok, err, want)
	}
	if _, err := os.Stat(holderPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only Open wrote %q (stat: %v)", holderPath(path), err)
	}
}

func TestFileModes(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	s := openStore(t, path, Options{Create: true})
	for file, want := range map[string]os.FileMode{
		path:               0o600,
		holderPath(path):   0o600,
		filepath.Dir(path): 0o700 | os.ModeDir,
	} {
		fi, err := os.Stat(file)
		if err != nil {
			t.Errorf("stat %q: %v", file, err)
			continue
		}
		if fi.Mode() != want {
			t.Errorf("mode of %q = %v, want %v", file, fi.Mode(), want)
		}
	}
	s.Close()
	if _, err := os.Stat(holderPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close, %q still exists (stat: %v)", holderPath(path), err)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	openStore(t, path, Options{}).Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode of %q after a writer opened it at 0644 = %v (%v), want 0600", path, fi.Mode(), err)
	}
}

// jsonString is a test helper that marshals v, failing the test on error.
func jsonString(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
