package state

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/internal/intern"
	"github.com/reconcile-dev/reconcile/kind"
)

// benchRecord is a record as a plan of the engine's benchmarks reads it.
var benchRecord = Record{Name: "ep00042", Type: "oci:AiLanguage:Endpoint", Kind: kind.Resource, ID: "ocid1.ailanguageendpoint.oc1..bench42",
	Inputs: map[string]any{"compartmentId": "ocid1.compartment.oc1..bench", "modelId": "ocid1.ailanguagemodel.oc1..bench",
		"displayName": "endpoint-42", "inferenceUnits": int64(1), "description": "ocid1.ailanguageendpoint.oc1..bench41"},
	Outputs:      map[string]any{"id": "ocid1.ailanguageendpoint.oc1..bench42", "state": "ACTIVE", "projectId": "ocid1.project"},
	Dependencies: []string{"ep00041"}, Serial: 12, UpdatedAt: time.Date(2026, 11, 21, 12, 0, 0, 123456789, time.UTC)}

func BenchmarkDecodeRecord(b *testing.B) {
	data, err := json.Marshal(benchRecord)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeRecord(data); err != nil {
			b.Fatal(err)
		}
	}
}

var decodeRounds = flag.Int("decode.rounds", 3000, "random records TestDecodeRecordFast tries")

// TestDecodeRecordFast checks decodeRecordFast against encoding/json: on
// what json.Marshal writes for random records it decodes, to the same
// record; on those texts damaged at random, it decodes the same record as
// encoding/json or declines. All rounds share one interner, as a worker of
// List does, so a string it hands back for the wrong bytes would show.
func TestDecodeRecordFast(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	in := intern.New()
	declined := 0
	for i := range *decodeRounds {
		r := randomRecord(rng)
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := decodeRecordFast(data, in)
		var want Record
		if err := decodeJSON(data, &want); err != nil {
			t.Fatalf("encoding/json: %v\n%s", err, data)
		}
		if !ok {
			if fastEncodable(r) {
				t.Fatalf("declined what json.Marshal writes:\n%s", data)
			}
			declined++
		} else if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded\n%#v\nwant\n%#v\nfrom %s", got, want, data)
		}
		for range 4 {
			checkFastAgrees(t, in, mutate(rng, data))
		}
		if i < 3 {
			t.Logf("%s", data)
		}
	}
	t.Logf("%d records with escapes declined, %d decoded", declined, *decodeRounds-declined)
	if declined > *decodeRounds/2 {
		t.Errorf("%d of %d declined", declined, *decodeRounds)
	}
}

// checkFastAgrees checks that decodeRecordFast declines data or decodes it
// as encoding/json does, and that a lazy record of data is the record that
// decodeRecordWith makes of it, or fails as it does.
func checkFastAgrees(t *testing.T, in *intern.Table, data []byte) {
	t.Helper()
	checkLazyAgrees(t, in, data)
	got, ok := decodeRecordFast(data, in)
	if !ok {
		return
	}
	var want Record
	if err := decodeJSON(data, &want); err != nil {
		t.Fatalf("decoded what encoding/json refuses (%v):\n%q", err, data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n%#v\nwant\n%#v\nfrom %q", got, want, data)
	}
}

// fastEncodable reports whether json.Marshal writes r in the form
// decodeRecordFast takes: no string needs an escape.
func fastEncodable(r Record) bool {
	data, _ := json.Marshal(r)
	return !bytes.Contains(data, []byte(`\`))
}

var (
	plainTexts   = []string{"", "a", "ep01", "ACTIVE", "ocid1.x..y", "é", "日本", "\x7f", "\u00a0", "$secret", "sha256:00", "1"}
	escapedTexts = []string{"\u2028", "<tag>", "a\"b", "line\nbreak", "\xff", "a&b", "back\\slash"}
)

// randomText returns a text, now and then one that JSON writes with an
// escape.
func randomText(rng *rand.Rand) string {
	if rng.IntN(200) == 0 {
		return escapedTexts[rng.IntN(len(escapedTexts))]
	}
	return plainTexts[rng.IntN(len(plainTexts))]
}

func randomRecord(rng *rand.Rand) Record {
	r := Record{Name: randomText(rng), Type: randomText(rng), Kind: kind.Kind(randomText(rng)), ID: randomText(rng),
		Protect: rng.IntN(2) == 0, RetainOnDelete: rng.IntN(2) == 0, DeleteBeforeReplace: rng.IntN(2) == 0,
		Tainted: randomText(rng), Serial: rng.Int64N(1<<40) - 5}
	if rng.IntN(4) > 0 {
		r.Inputs = randomMap(rng, 0)
	}
	if rng.IntN(4) > 0 {
		r.Outputs = randomMap(rng, 0)
	}
	for range rng.IntN(3) {
		r.Dependencies = append(r.Dependencies, randomText(rng))
	}
	if rng.IntN(3) == 0 {
		r.Deposed = []string{}
	}
	if rng.IntN(2) == 0 {
		r.UpdatedAt = time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).UTC()
	}
	return r
}

func randomMap(rng *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for range rng.IntN(4) {
		m[randomText(rng)] = randomAny(rng, depth+1)
	}
	return m
}

func randomAny(rng *rand.Rand, depth int) any {
	switch n := rng.IntN(12); {
	case n < 3:
		return randomText(rng)
	case n == 3:
		return rng.Int64N(1<<62) - 1<<61
	case n == 4:
		return []float64{0.5, -1e-7, 1e300, 123456789.125, 0}[rng.IntN(5)]
	case n == 5:
		return json.Number([]string{"1", "-0", "12345678901234567890", "1e5", "1.5E-3", "0.0"}[rng.IntN(6)])
	case n == 6:
		return rng.IntN(2) == 0
	case n == 7:
		return nil
	case n < 10 && depth < 4:
		return randomMap(rng, depth)
	case depth < 4:
		l := []any{}
		for range rng.IntN(3) {
			l = append(l, randomAny(rng, depth+1))
		}
		return l
	}
	return "leaf"
}

// mutate returns a copy of data with a few bytes changed, inserted or
// removed.
func mutate(rng *rand.Rand, data []byte) []byte {
	out := bytes.Clone(data)
	for range 1 + rng.IntN(3) {
		if len(out) == 0 {
			break
		}
		i := rng.IntN(len(out))
		const alphabet = "{}[],:\"0123456789-+.eEtrufalsn \\x\xc3\xa9\x01"
		c := alphabet[rng.IntN(len(alphabet))]
		switch rng.IntN(3) {
		case 0:
			out[i] = c
		case 1:
			out = append(out[:i], append([]byte{c}, out[i:]...)...)
		default:
			out = append(out[:i], out[i+1:]...)
		}
	}
	return out
}

// checkLazyAgrees checks that decodeLazy, then Full, gives what
// decodeRecordWith gives, or an error where it does.
func checkLazyAgrees(t *testing.T, in *intern.Table, data []byte) {
	t.Helper()
	want, wantErr := decodeRecordWith(in, data)
	l, err := decodeLazy(in, data)
	var got Record
	if err == nil {
		if l.values != nil && (l.Head.Inputs != nil || l.Head.Outputs != nil) {
			t.Fatalf("lazy head of %q holds values", data)
		}
		got, err = l.Full(in)
	}
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("lazy: %v; decodeRecordWith: %v; of %q", err, wantErr, data)
	case err == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("lazy\n%#v\nwant\n%#v\nfrom %q", got, want, data)
	}
}
