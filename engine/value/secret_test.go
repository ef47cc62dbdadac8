package value_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/value"
)

func TestContainsAndLeafTexts(t *testing.T) {
	t.Parallel()
	sealed := value.Sealer{Key: []byte("k"), Name: "n"}.Sealed("pw", nil)
	v := map[string]any{
		"plain":  []any{"a", int64(1), true, nil},
		"nested": map[string]any{"s": value.Secret{Value: []any{"hunter2-pw-xyz", int64(7)}}},
		"later":  value.Unknown{},
	}
	if !value.ContainsSecret(v) || !value.ContainsUnknown(v) || value.ContainsSealed(v) {
		t.Errorf("Contains: secret %v unknown %v sealed %v, want true true false", value.ContainsSecret(v), value.ContainsUnknown(v), value.ContainsSealed(v))
	}
	deep := map[string]any{"a": []any{map[string]any{"b": sealed}}}
	if !value.ContainsSealed(deep) || !value.ContainsSecret(deep) || value.ContainsUnknown(deep) {
		t.Errorf("a sealed value deep in a map: sealed %v secret %v unknown %v, want true true false", value.ContainsSealed(deep), value.ContainsSecret(deep), value.ContainsUnknown(deep))
	}
	got := value.LeafTexts(v)
	slices.Sort(got)
	if want := []string{"1", "7", "a", "hunter2-pw-xyz"}; !slices.Equal(got, want) {
		t.Errorf("LeafTexts = %q, want %q", got, want)
	}
	if r := value.RedactionOf(v); r == nil || strings.Contains(r.String("the hunter2-pw-xyz here"), "hunter2") {
		t.Errorf("RedactionOf does not hide the secret's texts")
	}
}

func TestSealedAsSecret(t *testing.T) {
	t.Parallel()
	sl := value.Sealer{Key: []byte("k")}
	v := map[string]any{"a": value.Secret{Value: "x"}, "b": value.Secret{Value: "x"}, "c": value.Secret{Value: "y"}, "d": "plain", "e": value.Secret{}}
	got := value.SealedAsSecret(value.Seal(v, sl)).(map[string]any)
	for _, k := range []string{"a", "b", "c", "e"} {
		if !value.IsSecret(got[k]) {
			t.Errorf("%s = %#v, want a Secret", k, got[k])
		}
	}
	if got["d"] != "plain" {
		t.Errorf("d = %#v, want plain", got["d"])
	}
	if !value.Same(got["a"], got["b"]) || value.Same(got["a"], got["c"]) || value.Same(got["a"], got["e"]) {
		t.Errorf("secrets compare otherwise than their values: %#v", got)
	}
	if strings.Contains(value.OneLine(got), "hmac") {
		t.Errorf("OneLine shows a digest: %s", value.OneLine(got))
	}
}

// TestRewriteShares checks that Rewrite copies only the lists and maps
// that hold a replaced value, shares the rest, and leaves its input as it
// was.
func TestRewriteShares(t *testing.T) {
	t.Parallel()
	plain := map[string]any{"x": "1", "l": []any{"a", map[string]any{"y": "2"}}}
	secret := map[string]any{"s": value.Secret{Value: "v"}, "n": []any{"b"}}
	in := map[string]any{"plain": plain, "secret": secret, "top": "t"}
	sl := value.Sealer{Key: []byte("k")}

	got := value.Seal(in, sl).(map[string]any)
	if !value.IsSealed(got["secret"].(map[string]any)["s"]) {
		t.Fatalf("the secret was not sealed: %#v", got)
	}
	if _, ok := secret["s"].(value.Secret); !ok {
		t.Fatalf("Seal changed its input: %#v", secret)
	}
	same := func(a, b any) bool { return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() }
	switch {
	case same(got, in):
		t.Error("the top map, which holds a replaced value, was not copied")
	case same(got["secret"], secret):
		t.Error("the map holding the secret was not copied")
	case !same(got["plain"], plain):
		t.Error("a map without secrets was copied")
	case !same(got["secret"].(map[string]any)["n"], secret["n"]):
		t.Error("a list without secrets was copied")
	}

	none := map[string]any{"plain": plain}
	if out := value.Seal(none, sl); !same(out, none) {
		t.Error("a value without secrets was copied")
	}
	if out := value.Seal(map[string]any(nil), sl).(map[string]any); out == nil {
		t.Error("a nil map came back nil, not empty as state records write it")
	}
}
