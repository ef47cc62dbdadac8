package statetest

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state"
)

// Run runs the contract tests against the backend that open opens, each in
// a subtest of its own, in parallel.
func Run(t *testing.T, open Opener) {
	for name, test := range map[string]func(t *testing.T, open Opener){
		"PutGet":                testPutGet,
		"ValueRoundTrip":        testValueRoundTrip,
		"PutRefusesBadInput":    testPutRefusesBadInput,
		"ListSorted":            testListSorted,
		"ListLazy":              testListLazy,
		"Delete":                testDelete,
		"Rename":                testRename,
		"SerialAndLineage":      testSerialAndLineage,
		"Version":               testVersion,
		"History":               testHistory,
		"Intents":               testIntents,
		"Outputs":               testOutputs,
		"PutAndClearIntent":     testPutAndClearIntent,
		"RewriteVersions":       testRewriteVersions,
		"SecretKey":             testSecretKey,
		"Damage":                testDamage,
		"CreateAndNoState":      testCreateAndNoState,
		"ConcurrentCreate":      testConcurrentCreate,
		"IncompleteCopy":        testIncompleteCopy,
		"RecordLimit":           testRecordLimit,
		"DeletedOutside":        testDeletedOutside,
		"NoRecordCount":         testNoRecordCount,
		"ReadOnlyRefusesWrites": testReadOnlyRefusesWrites,
		"Closed":                testClosed,
		"Coalesced":             testCoalesced,
		"ConcurrentPut":         testConcurrentPut,
		"DumpLoad":              testDumpLoad,
		"WaitNotice":            testWaitNotice,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, open)
		})
	}
}

// mustOpen opens the state of t and fails the test on error.
func mustOpen(t *testing.T, open Opener, opts state.Options) Store {
	t.Helper()
	s, err := open(t, opts)
	if err != nil {
		t.Fatalf("open %+v = %v", opts, err)
	}
	return s
}

// newStore opens a new writable state for t.
func newStore(t *testing.T, open Opener) Store {
	t.Helper()
	return mustOpen(t, open, state.Options{Create: true, Command: "reconcile test"})
}

// mustPut puts r and fails the test on error.
func mustPut(t *testing.T, s Store, r state.Record) state.Record {
	t.Helper()
	got, err := s.Put(r)
	if err != nil {
		t.Fatalf("Put(%q) = %v", r.Name, err)
	}
	return got
}

// mustSerial returns the current serial.
func mustSerial(t *testing.T, s Store) int64 {
	t.Helper()
	m, err := s.Meta()
	if err != nil {
		t.Fatalf("Meta() = %v", err)
	}
	return m.Serial
}

// names returns the names of rs.
func names(rs []state.Record) []string {
	var ns []string
	for _, r := range rs {
		ns = append(ns, r.Name)
	}
	return ns
}

func testPutGet(t *testing.T, open Opener) {
	s := newStore(t, open)
	in := state.Record{
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
	put := mustPut(t, s, in)
	if put.Serial != 1 {
		t.Errorf("Put(%q).Serial = %d, want 1", in.Name, put.Serial)
	}
	if put.UpdatedAt.IsZero() || put.UpdatedAt.Location() != time.UTC {
		t.Errorf("Put(%q).UpdatedAt = %v, want a time in UTC", in.Name, put.UpdatedAt)
	}
	want := in
	want.Serial, want.UpdatedAt = put.Serial, put.UpdatedAt
	if !reflect.DeepEqual(put, want) {
		t.Errorf("Put(%q) = %+v, want %+v", in.Name, put, want)
	}
	got, ok, err := s.Get(in.Name)
	if err != nil || !ok || !reflect.DeepEqual(got, put) {
		t.Errorf("Get(%q) = %+v, %v, %v, want %+v", in.Name, got, ok, err, put)
	}
	if got, ok, err := s.Get("nothing"); ok || err != nil {
		t.Errorf("Get(%q) = %+v, %v, %v, want no record and no error", "nothing", got, ok, err)
	}
	if s.Location() == "" {
		t.Errorf("Location() is empty")
	}
	select {
	case <-s.Lost():
		t.Errorf("Lost() of a healthy store is closed")
	default:
	}
	if err := s.Held(); err != nil {
		t.Errorf("Held() of a healthy store = %v, want nil", err)
	}
}

func testValueRoundTrip(t *testing.T, open Opener) {
	s := newStore(t, open)
	for name, tc := range map[string]struct {
		put, want any
	}{
		"int":             {put: 2, want: int64(2)},
		"int64":           {put: int64(math.MaxInt64), want: int64(math.MaxInt64)},
		"fraction":        {put: 2.5, want: 2.5},
		"integral float":  {put: 3.0, want: int64(3)},
		"uint64 overflow": {put: uint64(math.MaxUint64), want: float64(math.MaxUint64)},
		"html characters": {put: "<a&b>", want: "<a&b>"},
		"null":            {put: nil, want: nil},
		"nested": {
			put:  map[string]any{"bindings": []any{map[string]any{"relation": "editor", "n": 1}}},
			want: map[string]any{"bindings": []any{map[string]any{"relation": "editor", "n": int64(1)}}},
		},
	} {
		mustPut(t, s, state.Record{Name: name, Inputs: map[string]any{"v": tc.put}, Outputs: map[string]any{"v": tc.put}})
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
	}
}

func testPutRefusesBadInput(t *testing.T, open Opener) {
	s := newStore(t, open)
	for name, r := range map[string]state.Record{
		"empty name":       {Name: ""},
		"zero byte":        {Name: "a\x00b"},
		"unencodable":      {Name: "ch", Inputs: map[string]any{"c": make(chan int)}},
		"not a JSON value": {Name: "nan", Outputs: map[string]any{"f": math.NaN()}},
	} {
		if got, err := s.Put(r); err == nil {
			t.Errorf("%s: Put(%q) = %+v, nil, want an error", name, r.Name, got)
		}
		if got, err := s.PutAndClearIntent(r); err == nil {
			t.Errorf("%s: PutAndClearIntent(%q) = %+v, nil, want an error", name, r.Name, got)
		}
	}
	if got := mustSerial(t, s); got != 0 {
		t.Errorf("serial after refused puts = %d, want 0", got)
	}
}

func testListSorted(t *testing.T, open Opener) {
	s := newStore(t, open)
	if rs, err := s.List(); err != nil || len(rs) != 0 {
		t.Fatalf("List() on a new state = %q, %v, want nothing", names(rs), err)
	}
	for _, n := range []string{"zeta", "alpha", "Mid", "beta", "alpha2", "a/b", "a\x01"} {
		mustPut(t, s, state.Record{Name: n, Kind: kind.Resource})
	}
	rs, err := s.List()
	if err != nil {
		t.Fatalf("List() = %v", err)
	}
	want := []string{"Mid", "a\x01", "a/b", "alpha", "alpha2", "beta", "zeta"}
	if got := names(rs); !reflect.DeepEqual(got, want) {
		t.Errorf("List() names = %q, want %q", got, want)
	}
}

// testListLazy checks that the lazy records of a state (state.ListLazy)
// are its records: each one's head without its values, and whole once
// asked for, whatever its values hold (strings that JSON escapes, numbers,
// nesting); and that a record dropped refuses to give its values.
func testListLazy(t *testing.T, open Opener) {
	s := newStore(t, open)
	for i, v := range []any{"<a&b>", "plain", int64(7), 2.5, nil, true,
		map[string]any{"bindings": []any{map[string]any{"relation": "editor", "principals": []any{"role:x"}}}}} {
		mustPut(t, s, state.Record{Name: fmt.Sprintf("r%d", i), Type: "datadog:RestrictionPolicy", Kind: kind.Resource, ID: fmt.Sprintf("id-%d", i),
			Inputs: map[string]any{"v": v}, Outputs: map[string]any{"v": v, "n": int64(i)}, Dependencies: []string{"r0"},
			Protect: i%2 == 0, Tainted: map[bool]string{true: "failed create"}[i == 3], Deposed: map[bool][]string{true: {"old-1"}}[i == 4]})
	}
	mustPut(t, s, state.Record{Name: "bare", Kind: kind.Lookup})
	want, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := state.ListLazy(s)
	if err != nil || len(lazy) != len(want) {
		t.Fatalf("ListLazy() = %d records, %v; want %d", len(lazy), err, len(want))
	}
	for i := range lazy {
		l := &lazy[i]
		head := want[i]
		head.Inputs, head.Outputs = nil, nil
		if !reflect.DeepEqual(l.Head, head) && !reflect.DeepEqual(l.Head, want[i]) {
			t.Errorf("record %d: head %+v, want %+v", i, l.Head, head)
		}
		got, err := l.Full(nil)
		if err != nil || !reflect.DeepEqual(got, want[i]) {
			t.Errorf("record %d: Full() = %+v, %v; want %+v", i, got, err, want[i])
		}
		l.Drop()
		if _, err := l.Full(nil); err == nil || !strings.Contains(err.Error(), want[i].Name) {
			t.Errorf("record %d: Full() after Drop = %v, want an error naming it", i, err)
		}
	}
}

func testDelete(t *testing.T, open Opener) {
	s := newStore(t, open)
	mustPut(t, s, state.Record{Name: "a", Kind: kind.Resource})
	mustPut(t, s, state.Record{Name: "b", Kind: kind.Lookup})
	if err := s.Delete("a"); err != nil {
		t.Fatalf("Delete(%q) = %v", "a", err)
	}
	if _, ok, _ := s.Get("a"); ok {
		t.Errorf("Get(%q) after Delete found a record", "a")
	}
	if got := mustSerial(t, s); got != 3 {
		t.Errorf("serial after 2 puts and a delete = %d, want 3", got)
	}
	err := s.Delete("a")
	if !errors.Is(err, state.ErrNoRecord) || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("second Delete(%q) = %v, want ErrNoRecord naming it", "a", err)
	}
	if got := mustSerial(t, s); got != 3 {
		t.Errorf("serial after a refused delete = %d, want 3", got)
	}
	if rs, _ := s.List(); !reflect.DeepEqual(names(rs), []string{"b"}) {
		t.Errorf("List() after Delete = %q, want [b]", names(rs))
	}
}

func testRename(t *testing.T, open Opener) {
	s := newStore(t, open)
	mustPut(t, s, state.Record{Name: "old", Kind: kind.Resource, ID: "id-1", Dependencies: []string{"base"}})
	mustPut(t, s, state.Record{Name: "base", Kind: kind.Lookup})
	mustPut(t, s, state.Record{Name: "user", Kind: kind.Resource, Dependencies: []string{"base", "old"}})
	mustPut(t, s, state.Record{Name: "both", Kind: kind.Resource, Dependencies: []string{"old", "new"}})
	untouched := mustPut(t, s, state.Record{Name: "other", Kind: kind.Resource, Dependencies: []string{"base"}})

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
	for name, tc := range map[string]struct {
		old, new string
		want     error
	}{
		"missing old":  {old: "nope", new: "fresh", want: state.ErrNoRecord},
		"new taken":    {old: "new", new: "user", want: state.ErrExists},
		"same name":    {old: "new", new: "new", want: state.ErrExists},
		"bad new name": {old: "new", new: "", want: nil},
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

func testSerialAndLineage(t *testing.T, open Opener) {
	s := newStore(t, open)
	m, err := s.Meta()
	if err != nil || m.Lineage == "" || m.Serial != 0 || m.FormatVersion != state.FormatVersion {
		t.Fatalf("Meta() of a new state = %+v, %v, want a lineage, serial 0, format %d", m, err, state.FormatVersion)
	}
	steps := []struct {
		what       string
		do         func() error
		wantSerial int64
	}{
		{"put a", func() error { _, err := s.Put(state.Record{Name: "a"}); return err }, 1},
		{"put a again", func() error { _, err := s.Put(state.Record{Name: "a", ID: "x"}); return err }, 2},
		{"put b", func() error { _, err := s.Put(state.Record{Name: "b"}); return err }, 3},
		{"add history", func() error { return s.AddHistory(state.HistoryEntry{Command: "apply"}) }, 3},
		{"put intent", func() error { return s.PutIntent(state.Intent{Name: "c", Token: "t"}) }, 3},
		{"put c, clear its intent", func() error { _, err := s.PutAndClearIntent(state.Record{Name: "c"}); return err }, 4},
		{"clear intent", func() error { return s.ClearIntent("c") }, 4},
		{"rename b", func() error { return s.Rename("b", "d") }, 5},
		{"delete a", func() error { return s.Delete("a") }, 6},
		{"rewrite versions", func() error {
			return s.RewriteVersions("d", func(r state.Record) (state.Record, bool) { r.ID = "redacted"; return r, true })
		}, 6},
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
	for _, opts := range []state.Options{{}, {ReadOnly: true}, {Create: true}} {
		s := mustOpen(t, open, opts)
		got, err := s.Meta()
		if err != nil || got.Lineage != m.Lineage || got.Serial != 6 {
			t.Errorf("Meta() after reopening with %+v = %+v, %v, want lineage %q and serial 6", opts, got, err, m.Lineage)
		}
		s.Close()
	}
	var other state.Meta
	t.Run("another state", func(t *testing.T) {
		other, _ = newStore(t, open).Meta()
	})
	if other.Lineage == m.Lineage {
		t.Errorf("two new states share lineage %q", m.Lineage)
	}
}

func testVersion(t *testing.T, open Opener) {
	s := newStore(t, open)
	mustPut(t, s, state.Record{Name: "other", ID: "o1"})   // 1
	mustPut(t, s, state.Record{Name: "a", ID: "a2"})       // 2
	mustPut(t, s, state.Record{Name: "other", ID: "o3"})   // 3
	mustPut(t, s, state.Record{Name: "a", ID: "a4"})       // 4
	mustPut(t, s, state.Record{Name: "a\x01", ID: "next"}) // 5: the name right after "a"
	if err := s.Delete("a"); err != nil {                  // 6
		t.Fatal(err)
	}
	mustPut(t, s, state.Record{Name: "a", ID: "a7"}) // 7
	mustPut(t, s, state.Record{Name: "b", ID: "b8"}) // 8
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

func testHistory(t *testing.T, open Opener) {
	s := newStore(t, open)
	if hs, err := s.History(); err != nil || len(hs) != 0 {
		t.Fatalf("History() of a new state = %+v, %v, want none", hs, err)
	}
	mustPut(t, s, state.Record{Name: "a"})
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, e := range []state.HistoryEntry{
		{Command: "apply", Counts: state.Counts{Create: 1}},
		{Command: "apply", Counts: state.Counts{}}, // no changes: same serial
		{Command: "import", Serial: 7, Time: at},
		{Command: "state rm", Serial: 3},
	} {
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
	if want := []string{"1 apply", "1 apply", "3 state rm", "7 import"}; !reflect.DeepEqual(got, want) {
		t.Errorf("History() = %q, want %q", got, want)
	}
	if len(hs) == 4 && (hs[0].Counts.Create != 1 || !hs[3].Time.Equal(at)) {
		t.Errorf("History() = %+v, want the counts and times given", hs)
	}
}

func testIntents(t *testing.T, open Opener) {
	s := newStore(t, open)
	for _, in := range []state.Intent{
		{Name: "b", Type: "oci:AiLanguage:Endpoint", Token: "t1", Inputs: map[string]any{"inferenceUnits": 2}},
		{Name: "a", Type: "datadog:RestrictionPolicy", Token: "t2"},
		{Name: "b", Type: "oci:AiLanguage:Endpoint", Token: "t3", Inputs: map[string]any{"inferenceUnits": 3}},
	} {
		if err := s.PutIntent(in); err != nil {
			t.Fatalf("PutIntent(%+v) = %v", in, err)
		}
	}
	ins, err := s.Intents()
	if err != nil || len(ins) != 2 || ins[0].Name != "a" || ins[1].Name != "b" || ins[1].Token != "t3" {
		t.Fatalf("Intents() = %+v, %v, want a, then b with the second token", ins, err)
	}
	if got := ins[1].Inputs["inferenceUnits"]; got != int64(3) {
		t.Errorf("Intents()[1].Inputs[inferenceUnits] = %#v, want int64(3)", got)
	}
	if ins[0].Time.IsZero() {
		t.Errorf("Intents()[0].Time is zero, want the time of PutIntent")
	}
	for _, name := range []string{"b", "b", "never"} {
		if err := s.ClearIntent(name); err != nil {
			t.Errorf("ClearIntent(%q) = %v, want nil", name, err)
		}
	}
	if ins, _ := s.Intents(); len(ins) != 1 || ins[0].Name != "a" {
		t.Errorf("Intents() after clearing b = %+v, want only a", ins)
	}
	if err := s.PutIntent(state.Intent{Name: ""}); err == nil {
		t.Errorf("PutIntent with an empty name = nil, want an error")
	}
	if got := mustSerial(t, s); got != 0 {
		t.Errorf("serial after intents only = %d, want 0", got)
	}
}

func testPutAndClearIntent(t *testing.T, open Opener) {
	s := newStore(t, open)
	var commits atomic.Int64
	co, counted := s.(CommitObserver)
	if counted {
		co.ObserveCommits(func(int) {}, func(int) { commits.Add(1) })
	}
	for _, name := range []string{"ep01", "ep02"} {
		if err := s.PutIntent(state.Intent{Name: name, Type: "oci:AiLanguage:Endpoint", Token: "t-" + name}); err != nil {
			t.Fatal(err)
		}
	}
	before := commits.Load()
	r, err := s.PutAndClearIntent(state.Record{Name: "ep01", Kind: kind.Resource, ID: "id-1"})
	if err != nil || r.Serial != 1 || r.ID != "id-1" {
		t.Fatalf("PutAndClearIntent(ep01) = %+v, %v, want the record at serial 1", r, err)
	}
	if n := commits.Load() - before; counted && n != 1 {
		t.Errorf("PutAndClearIntent(ep01) ran %d transactions, want 1", n)
	}
	if got, ok, err := s.Get("ep01"); err != nil || !ok || !reflect.DeepEqual(got, r) {
		t.Errorf("Get(ep01) after PutAndClearIntent = %+v, %v, %v, want %+v", got, ok, err, r)
	}
	if v, ok, err := s.Version("ep01", 1); err != nil || !ok || !reflect.DeepEqual(v, r) {
		t.Errorf("Version(ep01, 1) after PutAndClearIntent = %+v, %v, %v, want %+v", v, ok, err, r)
	}
	if ins, err := s.Intents(); err != nil || len(ins) != 1 || ins[0].Name != "ep02" {
		t.Errorf("Intents() after PutAndClearIntent(ep01) = %+v, %v, want only ep02", ins, err)
	}
	// Without an intent, it is a Put.
	if r, err := s.PutAndClearIntent(state.Record{Name: "ep03"}); err != nil || r.Serial != 2 {
		t.Errorf("PutAndClearIntent(ep03) without an intent = %+v, %v, want the record at serial 2", r, err)
	}
	if got := mustSerial(t, s); got != 2 {
		t.Errorf("serial after two PutAndClearIntent = %d, want 2", got)
	}
}

func testRewriteVersions(t *testing.T, open Opener) {
	s := newStore(t, open)
	put := func(password string) {
		mustPut(t, s, state.Record{Name: "db", Kind: kind.Resource, ID: "id-" + password, Inputs: map[string]any{"password": password}})
	}
	put("clear-1")
	mustPut(t, s, state.Record{Name: "other", Inputs: map[string]any{"password": "clear-other"}})
	put("clear-3")
	if err := s.Delete("db"); err != nil {
		t.Fatal(err)
	}
	put("clear-5")
	sealed := map[string]any{"$secret": "hmac-sha256:00"}
	var serials []int64
	err := s.RewriteVersions("db", func(r state.Record) (state.Record, bool) {
		serials = append(serials, r.Serial)
		r.Inputs["password"] = sealed
		r.Name, r.Serial = "renamed", 99 // ignored
		return r, true
	})
	if err != nil {
		t.Fatalf("RewriteVersions(db) = %v", err)
	}
	if want := []int64{5, 1, 3, 5}; !reflect.DeepEqual(serials, want) {
		t.Errorf("RewriteVersions(db) called fn with serials %v, want %v", serials, want)
	}
	if got := mustSerial(t, s); got != 5 {
		t.Errorf("serial after RewriteVersions = %d, want 5", got)
	}
	for _, serial := range []int64{1, 2, 3, 5} {
		r, ok, err := s.Version("db", serial)
		if err != nil || !ok || r.Name != "db" || !reflect.DeepEqual(r.Inputs["password"], sealed) {
			t.Errorf("Version(db, %d) after RewriteVersions = %+v, %v, %v, want the password sealed", serial, r, ok, err)
		}
	}
	if _, ok, _ := s.Version("db", 4); ok {
		t.Errorf("Version(db, 4) after RewriteVersions = found, want the tombstone kept")
	}
	if r, _, _ := s.Get("db"); r.Serial != 5 || !reflect.DeepEqual(r.Inputs["password"], sealed) {
		t.Errorf("Get(db) after RewriteVersions = %+v, want serial 5 and the password sealed", r)
	}
	if r, _, _ := s.Get("other"); r.Inputs["password"] != "clear-other" {
		t.Errorf("RewriteVersions(db) changed another record: %+v", r)
	}
	if err := s.RewriteVersions("never", func(r state.Record) (state.Record, bool) { return r, true }); !errors.Is(err, state.ErrNoRecord) {
		t.Errorf("RewriteVersions(never) = %v, want ErrNoRecord", err)
	}
}

func testSecretKey(t *testing.T, open Opener) {
	s := newStore(t, open)
	key, err := s.SecretKey()
	if err != nil || len(key) != 32 || string(key) == string(make([]byte, 32)) {
		t.Fatalf("SecretKey() of a new state = %d bytes, %v, want 32 random bytes", len(key), err)
	}
	clear(key)
	again, err := s.SecretKey()
	if err != nil || string(again) == string(key) {
		t.Errorf("SecretKey() after clearing the slice an earlier call returned = %x, %v, want the key unchanged", again, err)
	}
	s.Close()
	s = mustOpen(t, open, state.Options{ReadOnly: true})
	if got, err := s.SecretKey(); err != nil || string(got) != string(again) {
		t.Errorf("SecretKey() after reopening = %x, %v, want %x", got, err, again)
	}
}

func testDamage(t *testing.T, open Opener) {
	s := newStore(t, open)
	d, ok := s.(Damager)
	if !ok {
		t.Skip("the Store cannot damage its values")
	}
	mustPut(t, s, state.Record{Name: "ep01", ID: "id-1"})
	mustPut(t, s, state.Record{Name: "ep02", ID: "id-2", Dependencies: []string{"ep01"}})
	d.DamageRecord(t, "ep01")
	for name, read := range map[string]func() error{
		"Get":    func() error { _, _, err := s.Get("ep01"); return err },
		"List":   func() error { _, err := s.List(); return err },
		"Delete": func() error { return s.Delete("ep01") },
		"Rename": func() error { return s.Rename("ep01", "ep09") },
		"Dump":   func() error { _, err := s.Dump(); return err },
		"Rename, a dependent": func() error {
			return s.Rename("ep02", "ep09")
		},
	} {
		err := read()
		if !errors.Is(err, state.ErrCorrupt) || !strings.Contains(err.Error(), `record "ep01": checksum mismatch`) {
			t.Errorf("%s after damaging record ep01 = %v, want ErrCorrupt naming it", name, err)
		}
	}
	if got := mustSerial(t, s); got != 2 {
		t.Errorf("serial after writes to a damaged state = %d, want 2: nothing written", got)
	}
	if r, ok, err := s.Get("ep02"); err != nil || !ok || r.Serial != 2 {
		t.Errorf("Get(ep02) beside a damaged record = %+v, %v, %v, want it unchanged", r, ok, err)
	}
}

func testCreateAndNoState(t *testing.T, open Opener) {
	for _, opts := range []state.Options{{}, {ReadOnly: true}} {
		s, err := open(t, opts)
		if err == nil {
			s.Close()
			t.Fatalf("open %+v of a missing state = a store, want ErrNoState", opts)
		}
		if !errors.Is(err, state.ErrNoState) || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("open %+v of a missing state = %v, want ErrNoState saying it does not exist", opts, err)
		}
	}
	r := mustOpen(t, open, state.Options{ReadOnly: true, Create: true})
	m, err := r.Meta()
	if err != nil || m.Lineage == "" || m.Serial != 0 {
		t.Errorf("Meta() of a state a reader created = %+v, %v, want a lineage at serial 0", m, err)
	}
	if !r.ReadOnly() {
		t.Errorf("ReadOnly() of a store opened read-only = false")
	}
	r.Close()
	w := mustOpen(t, open, state.Options{Create: true})
	if got, err := w.Meta(); err != nil || got != m {
		t.Errorf("Meta() after Create of an existing state = %+v, %v, want %+v: Create never touches a state that exists", got, err, m)
	}
	if w.ReadOnly() {
		t.Errorf("ReadOnly() of a writer = true")
	}
}

func testReadOnlyRefusesWrites(t *testing.T, open Opener) {
	w := newStore(t, open)
	mustPut(t, w, state.Record{Name: "a"})
	if err := w.PutIntent(state.Intent{Name: "a", Token: "t"}); err != nil {
		t.Fatal(err)
	}
	snap, err := w.Dump()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	s := mustOpen(t, open, state.Options{ReadOnly: true})
	for op, err := range map[string]error{
		"Put":               func() error { _, err := s.Put(state.Record{Name: "a"}); return err }(),
		"PutAndClearIntent": func() error { _, err := s.PutAndClearIntent(state.Record{Name: "a"}); return err }(),
		"Delete":            s.Delete("a"),
		"Rename":            s.Rename("a", "b"),
		"AddHistory":        s.AddHistory(state.HistoryEntry{Command: "apply"}),
		"PutIntent":         s.PutIntent(state.Intent{Name: "a"}),
		"ClearIntent":       s.ClearIntent("a"),
		"RewriteVersions":   s.RewriteVersions("a", func(r state.Record) (state.Record, bool) { return r, true }),
		"Load":              s.Load(snap),
	} {
		if !errors.Is(err, state.ErrReadOnly) {
			t.Errorf("%s on a read-only store = %v, want ErrReadOnly", op, err)
		}
	}
	if got, err := s.Dump(); err != nil || !got.Equal(snap) {
		t.Errorf("Dump() after refused writes = %v, %v, want %v", got, err, snap)
	}
}

func testClosed(t *testing.T, open Opener) {
	s := newStore(t, open)
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close() = %v, want nil", err)
	}
	if _, err := s.Put(state.Record{Name: "a"}); err == nil {
		t.Errorf("Put after Close = nil, want an error")
	}
	if _, err := s.List(); err == nil {
		t.Errorf("List after Close = nil, want an error")
	}
	if _, err := s.Meta(); err == nil {
		t.Errorf("Meta after Close = nil, want an error")
	}
}

// testWaitNotice: a writer that finds the lock held says so once, naming
// the holder, before it waits; it gets the lock when the holder lets go.
func testWaitNotice(t *testing.T, open Opener) {
	first := mustOpen(t, open, state.Options{Create: true, Command: "reconcile apply"})
	var holders []state.Holder
	second := mustOpen(t, open, state.Options{LockTimeout: time.Minute, Command: "reconcile destroy", OnWait: func(h state.Holder) {
		holders = append(holders, h)
		first.Close() // the holder ends; the waiter goes on
	}})
	if len(holders) != 1 || holders[0].PID != os.Getpid() || holders[0].Command != "reconcile apply" {
		t.Errorf("OnWait calls = %+v, want one naming this process running reconcile apply", holders)
	}
	if _, err := second.Put(state.Record{Name: "a", Kind: kind.Resource}); err != nil {
		t.Errorf("Put by the writer that waited = %v", err)
	}
	// Nothing held: no notice.
	second.Close()
	third := mustOpen(t, open, state.Options{LockTimeout: time.Minute, OnWait: func(h state.Holder) {
		t.Errorf("OnWait(%+v) called with the lock free", h)
	}})
	third.Close()
}

func testOutputs(t *testing.T, open Opener) {
	s := newStore(t, open)
	if o, ok, err := s.Outputs(); err != nil || ok || o.Values != nil {
		t.Fatalf("Outputs() of a new state = %+v, %v, %v; want none", o, ok, err)
	}
	mustPut(t, s, state.Record{Name: "a", Kind: kind.Resource, ID: "id-a"})
	serial := mustSerial(t, s)
	values := map[string]any{"id": "id-a", "n": 3, "ratio": 0.25, "list": []any{"x", true, nil}, "token": map[string]any{"$secret": "hmac-sha256:ab"}}
	if err := s.PutOutputs(state.Outputs{Command: "apply", Values: values}); err != nil {
		t.Fatalf("PutOutputs: %v", err)
	}
	if got := mustSerial(t, s); got != serial {
		t.Errorf("PutOutputs changed the serial: %d, was %d", got, serial)
	}
	o, ok, err := s.Outputs()
	if err != nil || !ok {
		t.Fatalf("Outputs() = %v, %v", ok, err)
	}
	want := map[string]any{"id": "id-a", "n": int64(3), "ratio": 0.25, "list": []any{"x", true, nil}, "token": map[string]any{"$secret": "hmac-sha256:ab"}}
	if o.Serial != serial || o.Command != "apply" || o.Time.IsZero() || !reflect.DeepEqual(o.Values, want) {
		t.Errorf("Outputs() = %+v, want serial %d, command apply, a time, values %v", o, serial, want)
	}
	// Replaced whole, even by none.
	if err := s.PutOutputs(state.Outputs{Command: "destroy", Values: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if o, ok, err := s.Outputs(); err != nil || !ok || len(o.Values) != 0 || o.Command != "destroy" {
		t.Errorf("Outputs() after recording none = %+v, %v, %v", o, ok, err)
	}
	if err := s.PutOutputs(state.Outputs{Values: map[string]any{"bad": math.NaN()}}); err == nil {
		t.Errorf("PutOutputs of a NaN succeeded")
	}
	s.Close()
	ro := mustOpen(t, open, state.Options{ReadOnly: true})
	if o, ok, err := ro.Outputs(); err != nil || !ok || o.Command != "destroy" {
		t.Errorf("Outputs() read-only after reopening = %+v, %v, %v", o, ok, err)
	}
	if err := ro.PutOutputs(state.Outputs{}); !errors.Is(err, state.ErrReadOnly) {
		t.Errorf("PutOutputs on a read-only store = %v, want ErrReadOnly", err)
	}
}
