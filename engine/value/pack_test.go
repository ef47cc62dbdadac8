package value

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// randomPlain returns a random map of the values a Packer takes.
func randomPlain(rng *rand.Rand, depth int) any {
	n := 9
	if depth > 3 {
		n = 7 // no more lists or maps
	}
	switch rng.IntN(n) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return []int64{0, -1, 1, math.MaxInt64, math.MinInt64, rng.Int64()}[rng.IntN(6)]
	case 3:
		return []float64{0.5, -2, 1e300, math.Inf(1), math.Copysign(0, -1), rng.Float64()}[rng.IntN(6)]
	case 4:
		return []string{"", "viewer", "dashboard:a-é", "\\xff\\x00", strings.Repeat("x", 300)}[rng.IntN(5)]
	case 5:
		return Unknown{}
	case 6:
		return "ocid1.x"
	case 7:
		out := make([]any, rng.IntN(4))
		for i := range out {
			out[i] = randomPlain(rng, depth+1)
		}
		return out
	}
	out := map[string]any{}
	for range rng.IntN(5) {
		out[[]string{"id", "bindings", "résumé", ""}[rng.IntN(4)]+string(rune('a'+rng.IntN(3)))] = randomPlain(rng, depth+1)
	}
	return out
}

// TestPackRoundTrip checks that Unpack gives back what was packed, made
// anew, for random maps of plain values.
func TestPackRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	var p Packer
	for range 2000 {
		m, ok := randomPlain(rng, 0).(map[string]any)
		if !ok {
			continue
		}
		b, ok := p.Pack(m)
		if !ok {
			t.Fatalf("did not pack %#v", m)
		}
		got, err := Unpack(b)
		if err != nil {
			t.Fatalf("Unpack: %v (of %#v)", err, m)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("unpacked %#v, want %#v", got, m)
		}
		if len(m) > 0 && reflect.ValueOf(got).UnsafePointer() == reflect.ValueOf(m).UnsafePointer() {
			t.Fatal("Unpack returned the packed map itself")
		}
	}
}

// TestPackRefuses checks that maps holding other values are not packed.
func TestPackRefuses(t *testing.T) {
	t.Parallel()
	var p Packer
	for _, m := range []map[string]any{
		{"secret": Secret{Value: "x"}},
		{"nested": []any{map[string]any{"s": Secret{Value: 1}}}},
		{"int": 3}, // an int, not the int64 of decoded values
		{"strings": []string{"a"}},
	} {
		if b, ok := p.Pack(m); ok {
			t.Errorf("packed %#v into %q", m, b)
		}
	}
}

// FuzzUnpack checks that damaged bytes make an error, never a panic, and
// that what does unpack packs back to the same map.
func FuzzUnpack(f *testing.F) {
	var p Packer
	seed, _ := p.Pack(map[string]any{"id": Unknown{}, "bindings": []any{map[string]any{"relation": "viewer"}}, "n": int64(-3), "f": 1.5})
	f.Add(seed)
	f.Add([]byte{tagMap, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Unpack(b)
		if err != nil {
			return
		}
		again, ok := p.Pack(m)
		if !ok {
			t.Fatalf("unpacked %#v, which does not pack", m)
		}
		if m2, err := Unpack(again); err != nil || !samePlain(m, m2) {
			t.Fatalf("repacked %#v as %#v (%v)", m, m2, err)
		}
	})
}

// samePlain is reflect.DeepEqual for plain values, but for floats, which
// compare by their bits (a NaN is the same NaN).
func samePlain(a, b any) bool {
	switch a := a.(type) {
	case float64:
		b, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(b)
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !samePlain(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !samePlain(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
