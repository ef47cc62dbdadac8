package value_test

import (
	"slices"
	"strings"
	"testing"

	"reconcile/engine/value"
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
