package state

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/kind"
)

// TestEncodeMatchesFile checks that the exported encoders produce the very
// bytes the bbolt file stores, so that a value has one form in every
// backend.
func TestEncodeMatchesFile(t *testing.T) {
	t.Parallel()
	s := openStore(t, sampleState(t), Options{ReadOnly: true})
	stored := storedValues(t, s)
	ep01, _, _ := s.Get("ep01")
	v1, _, _ := s.Version("ep01", 1)
	hs, _ := s.History()
	ins, _ := s.Intents()
	m, _ := s.Meta()
	key, _ := s.SecretKey()
	must := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, tc := range map[string]struct {
		stored string
		got    []byte
	}{
		"record":    {"records/ep01", must(EncodeRecord(ep01))},
		"version":   {"versions/" + string(versionKey("ep01", 1)), must(EncodeVersion(v1))},
		"tombstone": {"versions/" + string(versionKey("gone", 5)), EncodeTombstone("gone", 5)},
		"history":   {"history/" + string(historyKey(5, 1)), must(EncodeHistory(hs[0], 1))},
		"intent":    {"intents/ep01", must(EncodeIntent(ins[0]))},
		"lineage":   {"meta/lineage", EncodeLineage(m.Lineage)},
		"key":       {"meta/key", EncodeSecretKey(key)},
		"format":    {"meta/format", append(bytes.Clone(stored["meta/format"]), stored["meta/format.crc"]...)},
		"serial":    {"meta/serial", append(bytes.Clone(stored["meta/serial"]), stored["meta/serial.crc"]...)},
	} {
		want := stored[tc.stored]
		if name == "format" {
			want, tc.got = tc.got, EncodeFormat()
		}
		if name == "serial" {
			want, tc.got = tc.got, EncodeSerial(m.Serial)
		}
		if !bytes.Equal(tc.got, want) {
			t.Errorf("%s: encoded %q, the file stores %q", name, tc.got, want)
		}
	}
}

func TestDecodeValues(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	r := Record{Name: "ep01", Kind: kind.Resource, Serial: 3, UpdatedAt: at, Inputs: map[string]any{"n": int64(2)}}
	rec, _ := EncodeRecord(r)
	ver, _ := EncodeVersion(r)
	h := HistoryEntry{Serial: 3, Time: at, Command: "apply", Counts: Counts{Create: 1}}
	hist, _ := EncodeHistory(h, 7)
	in := Intent{Name: "ep01", Token: "t", Time: at}
	intent, _ := EncodeIntent(in)

	if got, err := DecodeRecord("ep01", rec); err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("DecodeRecord(EncodeRecord(r)) = %+v, %v, want %+v", got, err, r)
	}
	if got, ok, err := DecodeVersion("ep01", 3, ver); err != nil || !ok || !reflect.DeepEqual(got, r) {
		t.Errorf("DecodeVersion(EncodeVersion(r)) = %+v, %v, %v, want %+v", got, ok, err, r)
	}
	if _, ok, err := DecodeVersion("gone", 4, EncodeTombstone("gone", 4)); ok || err != nil {
		t.Errorf("DecodeVersion of a tombstone = %v, %v, want false, nil", ok, err)
	}
	if got, err := DecodeHistory(3, 7, hist); err != nil || !reflect.DeepEqual(got, h) {
		t.Errorf("DecodeHistory(EncodeHistory(h)) = %+v, %v, want %+v", got, err, h)
	}
	if got, err := DecodeIntent("ep01", intent); err != nil || !reflect.DeepEqual(got, in) {
		t.Errorf("DecodeIntent(EncodeIntent(in)) = %+v, %v, want %+v", got, err, in)
	}
	if got, err := DecodeSerial(EncodeSerial(9)); err != nil || got != 9 {
		t.Errorf("DecodeSerial(EncodeSerial(9)) = %d, %v", got, err)
	}
	if got, err := DecodeFormat(EncodeFormat()); err != nil || got != FormatVersion {
		t.Errorf("DecodeFormat(EncodeFormat()) = %d, %v", got, err)
	}
	if _, err := DecodeFormat(seal(bucketMeta, keyFormat, u64(FormatVersion+1))); !errors.Is(err, ErrNewerFormat) {
		t.Errorf("DecodeFormat of format %d = %v, want ErrNewerFormat", FormatVersion+1, err)
	}

	// A value moved to another key, or damaged, fails its check.
	for name, tc := range map[string]struct {
		decode func() error
		named  string
	}{
		"record under another name": {func() error { _, err := DecodeRecord("ep02", rec); return err }, `record "ep02"`},
		"record as a version":       {func() error { _, _, err := DecodeVersion("ep01", 3, rec); return err }, `record "ep01" at serial 3`},
		"version at another serial": {func() error { _, _, err := DecodeVersion("ep01", 4, ver); return err }, `record "ep01" at serial 4`},
		"history of another seq":    {func() error { _, err := DecodeHistory(3, 8, hist); return err }, `history entry 8 at serial 3`},
		"intent as a record":        {func() error { _, err := DecodeRecord("ep01", intent); return err }, `record "ep01"`},
		"damaged serial":            {func() error { _, err := DecodeSerial(flip(EncodeSerial(9))); return err }, `meta "serial"`},
		"damaged lineage":           {func() error { _, err := DecodeLineage(flip(EncodeLineage("l"))); return err }, `meta "lineage"`},
		"damaged key":               {func() error { _, err := DecodeSecretKey(flip(EncodeSecretKey(make([]byte, 32)))); return err }, `meta "key"`},
		"damaged format":            {func() error { _, err := DecodeFormat(flip(EncodeFormat())); return err }, `meta "format"`},
	} {
		err := tc.decode()
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.named+": checksum mismatch") {
			t.Errorf("%s: decode = %v, want ErrCorrupt naming %s", name, err, tc.named)
		}
	}
}

// flip returns v with its last byte inverted.
func flip(v []byte) []byte {
	v = bytes.Clone(v)
	v[len(v)-1] ^= 0xff
	return v
}
