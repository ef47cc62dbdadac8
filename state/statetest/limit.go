package statetest

import (
	"errors"
	"strings"
	"testing"

	"reconcile/kind"
	"reconcile/state"
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
