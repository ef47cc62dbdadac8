package resources_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/reconcile-dev/reconcile/resources"
)

func TestCanonShared(t *testing.T) {
	t.Parallel()
	canonical := map[string]any{
		"s": "x", "n": int64(3), "f": 1.5, "big": float64(1 << 60), "b": true, "nil": nil,
		"list": []any{"a", map[string]any{"k": int64(1)}},
	}
	got := resources.CanonShared(canonical)
	if reflect.ValueOf(got).Pointer() != reflect.ValueOf(canonical).Pointer() {
		t.Errorf("a canonical map was copied")
	}
	list := canonical["list"].([]any)
	if l := resources.CanonShared(list).([]any); &l[0] != &list[0] {
		t.Errorf("a canonical list was copied")
	}
	// Anything Canon changes, however deep, makes a copy equal to Canon's,
	// and the input is left as it was.
	for name, v := range map[string]any{
		"int":          map[string]any{"a": "x", "n": 3},
		"integral":     []any{"a", 2.0},
		"deep":         map[string]any{"l": []any{map[string]any{"k": int32(1)}}},
		"json number":  []any{json.Number("7")},
		"strings":      map[string]any{"l": []string{"a"}},
		"string map":   []any{map[string]string{"a": "b"}},
		"attrs":        []any{resources.Attrs{"a": uint64(1)}},
		"float32":      float32(2),
		"scalar float": 4.0,
	} {
		before := fmt.Sprintf("%#v", v) // maps print sorted
		got := resources.CanonShared(v)
		if want := resources.Canon(v); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: CanonShared = %#v, want %#v", name, got, want)
		}
		if after := fmt.Sprintf("%#v", v); after != before {
			t.Errorf("%s: input changed from %s to %s", name, before, after)
		}
	}
}

// TestKey checks Key against json.Marshal of the canonical value, which it
// must equal byte for byte, on random values of every kind.
func TestKey(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	strs := []string{"", "role:x", "user:64d2a3b6", `a"b`, `back\slash`, "<tag>", "a&b", "tab\t", "é", "\u2028", "\xff", "~ !"}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := rng.IntN(9); {
		case k == 0:
			return nil
		case k == 1:
			return rng.IntN(2) == 0
		case k == 2:
			return int64(rng.IntN(2000) - 1000)
		case k == 3:
			return []float64{0.5, 1e21, -3.25, 2}[rng.IntN(4)]
		case k == 4 && depth < 3:
			out := make([]any, rng.IntN(4))
			for i := range out {
				out[i] = gen(depth + 1)
			}
			return out
		case k == 5 && depth < 3:
			out := map[string]any{}
			for range rng.IntN(4) {
				out[strs[rng.IntN(len(strs))]] = gen(depth + 1)
			}
			return out
		case k == 6:
			return []string{strs[rng.IntN(len(strs))]}
		}
		return strs[rng.IntN(len(strs))]
	}
	for range 20000 {
		v := gen(0)
		want, err := json.Marshal(resources.Canon(v))
		if err != nil {
			t.Fatal(err)
		}
		if got := resources.Key(v); got != string(want) {
			t.Fatalf("Key(%#v) = %s, want %s", v, got, want)
		}
	}
}
