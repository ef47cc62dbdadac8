package value

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
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

// TestSamePacked checks SamePacked against DeepEqual: a packed value is
// the value packed, and not one that differs by a leaf, a length or a
// number's type.
func TestSamePacked(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	var p Packer
	differ := 0
	for range 2000 {
		v := randomPlain(rng, 0)
		b, ok := p.PackValue(v)
		if !ok {
			t.Fatalf("did not pack %#v", v)
		}
		if SamePacked(b, v) == neverSame(v) {
			t.Fatalf("SamePacked(%#v packed, itself) = %v", v, SamePacked(b, v))
		}
		w := randomPlain(rng, 0)
		if got, want := SamePacked(b, w), samePlain(v, w) && !neverSame(v); got != want {
			t.Fatalf("SamePacked(%#v packed, %#v) = %v", v, w, got)
		}
		if !samePlain(v, w) {
			differ++
		}
	}
	if differ < 1000 {
		t.Errorf("only %d pairs differ", differ)
	}
	for _, c := range []struct{ packed, v any }{
		{int64(1), 1.0},
		{1.0, int64(1)},
		{[]any{"a"}, []any{"a", "b"}},
		{map[string]any{"a": "x"}, map[string]any{"b": "x"}},
		{map[string]any{"a": nil}, map[string]any{}},
		{"abc", []byte("abc")},
		{Unknown{}, Unknown{}},
	} {
		b, _ := p.PackValue(c.packed)
		if SamePacked(b, c.v) {
			t.Errorf("%#v packed is %#v", c.packed, c.v)
		}
	}
	if b, _ := p.PackValue("abc"); SamePacked(b[:len(b)-1], "ab") || SamePacked(append(b, 0), "abc") {
		t.Error("damaged bytes are the same as a value")
	}
}

// neverSame reports whether v holds an Unknown or a NaN, never the same
// as itself.
func neverSame(v any) bool {
	switch x := v.(type) {
	case Unknown:
		return true
	case float64:
		return math.IsNaN(x)
	case []any:
		return slices.ContainsFunc(x, neverSame)
	case map[string]any:
		for _, e := range x {
			if neverSame(e) {
				return true
			}
		}
	}
	return false
}

// TestPackOver checks that UnpackOver gives back what PackOver packed over
// a base sharing some of its entries, made anew (nothing shared with the
// base), in fewer bytes than Pack when an entry was shared.
func TestPackOver(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	var p Packer
	smaller := 0
	for range 2000 {
		m, _ := randomPlain(rng, 0).(map[string]any)
		base, _ := randomPlain(rng, 0).(map[string]any)
		if m == nil || base == nil {
			continue
		}
		shared := false
		for k, v := range m {
			if rng.IntN(2) == 0 {
				base[k] = v
				shared = shared || !neverSame(v) // else packed in full
			}
		}
		b, ok := p.PackOver(m, base)
		if !ok {
			t.Fatalf("did not pack %#v", m)
		}
		got, err := UnpackOver(b, base)
		if err != nil || !samePlain(got, m) {
			t.Fatalf("UnpackOver = %#v (%v), want %#v", got, err, m)
		}
		whole, _ := p.Pack(m)
		if len(b) > len(whole) {
			t.Fatalf("packed over its base in %d bytes, %d alone", len(b), len(whole))
		}
		if len(b) < len(whole) {
			smaller++
		}
		for k, v := range got {
			if sharesStorage(v, base[k]) {
				t.Fatalf("unpacked %q shares its storage with the base", k)
			}
		}
		if _, err := UnpackOver(b, nil); err == nil && shared {
			t.Fatalf("unpacked %q without its base", b)
		}
	}
	if smaller == 0 {
		t.Error("no map packed smaller over its base")
	}
	long := strings.Repeat("dashboard:t-1-", 10)
	m := map[string]any{"id": long, "bindings": []any{map[string]any{"relation": "viewer"}}, "n": int64(1)}
	over, _ := p.PackOver(m, map[string]any{"id": long, "bindings": []any{map[string]any{"relation": "editor"}}, "n": 1.0})
	if whole, _ := p.Pack(m); len(over) > len(whole)-len(long) {
		t.Errorf("packed over a base holding its id in %d bytes, %d alone", len(over), len(whole))
	}
	if got, err := UnpackOver(over, map[string]any{"id": long}); err != nil || !samePlain(got, m) {
		t.Errorf("UnpackOver = %#v (%v), want %#v", got, err, m)
	}
}

// sharesStorage reports whether a and b are the same list or map, or hold
// one.
func sharesStorage(a, b any) bool {
	switch x := a.(type) {
	case []any:
		if y, ok := b.([]any); ok && len(x) > 0 && len(y) > 0 && &x[0] == &y[0] {
			return true
		}
		for _, e := range x {
			if sharesStorage(e, b) {
				return true
			}
		}
	case map[string]any:
		if y, ok := b.(map[string]any); ok && len(x) > 0 && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() {
			return true
		}
		for _, e := range x {
			if sharesStorage(e, b) {
				return true
			}
		}
	}
	return false
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
		_, _ = UnpackOver(b, map[string]any{"bindings": []any{"x"}}) // never a panic
		m, err := Unpack(b)
		if err != nil {
			return
		}
		again, ok := p.Pack(m)
		if !ok {
			t.Fatalf("unpacked %#v, which does not pack", m)
		}
		if SamePacked(again, m) == neverSame(m) { // b may hold a key twice
			t.Fatalf("unpacked %#v, which SamePacked(packed again, it) says is %v", m, SamePacked(again, m))
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
