package state

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/internal/intern"
	"github.com/reconcile-dev/reconcile/kind"
)

// FuzzStateDecode feeds arbitrary bytes to the readers of what the state
// file stores, as a damaged or hand-edited file would: to the check of a
// stored value, under every bucket, and to the decoders of records, intents
// and history entries. They must never panic. A value that passes its check
// must be exactly what seal makes of its payload; the quick decoder of
// records must decline what encoding/json does not decode to the same
// record; what the decoders accept must encode again, and decode from that encoding, stored and read back as
// Put would write it, to the same thing.
//
//	go test ./state -run '^$' -fuzz FuzzStateDecode -fuzztime 10m
func FuzzStateDecode(f *testing.F) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, v := range []any{
		Record{Name: "ep", Type: "oci:AiLanguage:Endpoint", Kind: kind.Resource, ID: "ocid1.ailanguageendpoint.oc1..x",
			Inputs:       map[string]any{"displayName": "ep", "inferenceUnits": int64(2), "freeformTags": map[string]any{"team": "ml"}, "secret": map[string]any{"$secret": "sha256:00"}},
			Outputs:      map[string]any{"state": "ACTIVE", "ratio": 0.5, "list": []any{int64(1), "two", nil, true}},
			Dependencies: []string{"a", "b"}, Protect: true, Deposed: []string{"old"}, Tainted: "FAILED", Serial: 7, UpdatedAt: at},
		Record{Name: "me", Type: "datadog:getCurrentUser", Kind: kind.Lookup, Serial: 1},
		Intent{Name: "ep", Type: "oci:AiLanguage:Endpoint", Token: "0123456789abcdef", Inputs: map[string]any{"n": int64(1)}, Time: at, Dependencies: []string{"a"}},
		HistoryEntry{Serial: 3, Time: at, Command: "apply", Counts: Counts{Create: 2}},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(seal(bucketRecords, fuzzKey, b))
	}
	f.Add(seal(bucketVersions, fuzzKey, nil)) // a tombstone
	for _, s := range []string{"", "{}", "null", "[]", `{"inputs":{"n":1e400}}`, `{"inputs":{"n":-0}}`, `{"serial":-1}`,
		`{"updatedAt":"not a time"}`, `{"inputs":{"a":[[[[[[[[[[{}]]]]]]]]]]}}`, `{"inputs":{"n":12345678901234567890}}`,
		`{"name":"a"}{}`, `{} `, `{}]`, "{}\x00\x00\x00\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, b := range allBuckets {
			payload, err := unseal(b, fuzzKey, data)
			if err == nil && !bytes.Equal(seal(b, fuzzKey, payload), data) {
				t.Fatalf("%s value %q passes its check but is not what seal makes of its payload %q", b, data, payload)
			}
		}
		checkFastAgrees(t, intern.New(), data)
		if r, err := decodeRecord(data); err == nil {
			roundTrip(t, "record", r, func(b []byte) (any, error) { return decodeRecord(b) })
		}
		if in, err := decodeIntent(data); err == nil {
			roundTrip(t, "intent", in, func(b []byte) (any, error) { return decodeIntent(b) })
		}
		if h, err := decodeHistory(data); err == nil {
			roundTrip(t, "history entry", h, func(b []byte) (any, error) { return decodeHistory(b) })
		}
	})
}

// fuzzKey is the key FuzzStateDecode stores values at.
var fuzzKey = []byte("ep")

// roundTrip checks that v, decoded from the state file, encodes as Put
// would write it, and that the encoding, stored with its check and read
// back, decodes to the same value.
func roundTrip(t *testing.T, what string, v any, decode func([]byte) (any, error)) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("a decoded %s does not encode again: %v\n%#v", what, err, v)
	}
	payload, err := unseal(bucketRecords, fuzzKey, seal(bucketRecords, fuzzKey, b))
	if err != nil || !bytes.Equal(payload, b) {
		t.Fatalf("the encoding of a decoded %s, stored, reads back as %q, %v\n%s", what, payload, err, b)
	}
	v2, err := decode(payload)
	if err != nil {
		t.Fatalf("the encoding of a decoded %s does not decode: %v\n%s", what, err, b)
	}
	b2, err := json.Marshal(v2)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("a %s changes on a round trip:\n%s\n%s", what, b, b2)
	}
}
