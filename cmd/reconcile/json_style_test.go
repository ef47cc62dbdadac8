package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// checkJSONDoc checks that out is one JSON document in the style every
// --output json of reconcile follows: an object whose format_version is
// version, snake_case keys only and no null, where a list is [] when empty.
// data names the top-level keys whose values are the user's or the cloud's
// data (a node's inputs and outputs): their keys are field names as the
// specs spell them, and a secret in them is null. It returns the object.
func checkJSONDoc(t *testing.T, what, out, version string, data ...string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc == nil {
		t.Fatalf("%s: not one JSON object (%v):\n%s", what, err, out)
	}
	if got, _ := doc["format_version"].(string); got != version {
		t.Errorf("%s: format_version = %v, want %q", what, doc["format_version"], version)
	}
	for k, v := range doc {
		checkJSONKey(t, what, "/"+k, k)
		if !slices.Contains(data, k) {
			checkJSONStyle(t, what, "/"+k, v)
		}
	}
	return doc
}

// checkJSONKey fails unless key is snake_case.
func checkJSONKey(t *testing.T, what, ptr, key string) {
	t.Helper()
	if strings.ContainsFunc(key, func(r rune) bool { return !unicode.IsLower(r) && !unicode.IsDigit(r) && r != '_' }) {
		t.Errorf("%s: key %s is not snake_case", what, ptr)
	}
}

// checkJSONStyle walks v, at ptr, failing on a key that is not snake_case
// or on a null.
func checkJSONStyle(t *testing.T, what, ptr string, v any) {
	t.Helper()
	switch x := v.(type) {
	case nil:
		t.Errorf("%s: %s is null; an empty list is [], an unset string \"\"", what, ptr)
	case map[string]any:
		for k, e := range x {
			checkJSONKey(t, what, ptr+"/"+k, k)
			checkJSONStyle(t, what, ptr+"/"+k, e)
		}
	case []any:
		for i, e := range x {
			checkJSONStyle(t, what, ptr+"/"+strconv.Itoa(i), e)
		}
	}
}

// wantEmptyList fails unless doc[key] is [] (not null, not absent).
func wantEmptyList(t *testing.T, what string, doc map[string]any, key string) {
	t.Helper()
	if l, ok := doc[key].([]any); !ok || len(l) != 0 {
		t.Errorf("%s: %s = %#v, want []", what, key, doc[key])
	}
}
