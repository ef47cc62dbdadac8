package schemas

import (
	"flag"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// partsSchema has what ValidateParts must see through ($ref, nested
// objects, maps, lists of objects) and what it must refuse to (choices,
// uniqueItems, propertyNames, enum and const on objects, $ref with
// siblings, a field named like a keyword of choice).
const partsSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "x-token": "test:index:Parts",
  "type": "object",
  "$defs": {
    "grant": {
      "type": "object",
      "properties": {
        "relation": {"type": "string", "enum": ["viewer", "editor"]},
        "principals": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": "^(user|team):.+"}}
      },
      "required": ["relation", "principals"],
      "additionalProperties": false
    },
    "size": {"type": "integer", "minimum": 1, "maximum": 9},
    "alias": {"$ref": "#/$defs/size"}
  },
  "properties": {
    "name": {"type": "string", "maxLength": 8},
    "size": {"$ref": "#/$defs/alias"},
    "out": {"type": "string", "readOnly": true},
    "grants": {"type": "array", "items": {"$ref": "#/$defs/grant"}},
    "unique": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
    "tags": {"type": "object", "additionalProperties": {"type": "string", "minLength": 2}},
    "keyed": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "additionalProperties": {"type": "string"}},
    "nested": {
      "type": "object",
      "properties": {
        "inner": {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}, "required": ["n"], "additionalProperties": false},
        "either": {"oneOf": [{"type": "string"}, {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false}]},
        "oneOf": {"type": "integer"}
      },
      "additionalProperties": false
    },
    "choice": {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}, {"type": "object", "properties": {"b": {"type": "integer"}}, "additionalProperties": false}]},
    "fixed": {"type": "object", "enum": [{"k": "v"}], "properties": {"k": {"type": "string"}}},
    "sibling": {"$ref": "#/$defs/grant", "properties": {"relation": {"type": "string", "maxLength": 3}}}
  },
  "required": ["name"],
  "additionalProperties": false
}`

// TestValidatePartsAgreesWithValidate checks ValidateParts against
// Validate on random instances of a schema of the test's own and of every
// embedded type: whenever the instance without its parts is valid but at
// the parts' paths, and ValidateParts can validate them apart, it reports
// exactly what Validate reports for the whole instance.
func TestValidatePartsAgreesWithValidate(t *testing.T) {
	t.Parallel()
	own, err := parseSchema("parts.json", []byte(partsSchema))
	if err != nil {
		t.Fatal(err)
	}
	all := []*Schema{own}
	for _, tok := range Tokens() {
		all = append(all, mustLookup(t, tok))
	}
	for _, s := range all {
		t.Run(s.Token, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(1, uint64(len(s.Token))))
			checked, apart, found := 0, 0, 0
			for range *partsRounds {
				whole, _ := randomValue(rng, s.Root, 0).(map[string]any)
				if whole == nil {
					whole = map[string]any{}
				}
				parts := randomParts(rng, whole, nil)
				if len(parts) == 0 {
					continue
				}
				without := leaveOut(whole, parts)
				precondition := true
				for _, v := range s.Validate(without) {
					if !slices.ContainsFunc(parts, func(p Part) bool { return slices.Equal(p.Path, v.Path) }) {
						precondition = false
					}
				}
				if !precondition {
					continue
				}
				checked++
				got, ok := s.ValidateParts(parts)
				if !ok {
					if got != nil {
						t.Errorf("ValidateParts refused and reported %v", got)
					}
					continue
				}
				apart++
				if len(got) > 0 {
					found++
				}
				if want := s.Validate(whole); !reflect.DeepEqual(got, want) {
					t.Fatalf("instance %v, parts %v:\nValidateParts:\n%s\nValidate:\n%s", whole, paths(parts), show(got), show(want))
				}
			}
			t.Logf("%d cases met the precondition, %d validated apart, %d of them with violations", checked, apart, found)
			// A schema with deeply nested required objects (a model's
			// datasets) makes few random instances meet the precondition:
			// of those that do, half must be validated apart.
			if apart < min(*partsRounds/200, checked/2) && len(s.Inputs()) > 0 {
				t.Errorf("only %d cases validated apart", apart)
			}
		})
	}
}

// TestValidatePartsRefuses lists paths whose values cannot be validated
// apart, and some that can.
func TestValidatePartsRefuses(t *testing.T) {
	t.Parallel()
	s, err := parseSchema("parts.json", []byte(partsSchema))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		"name": true, "size": true, "grants/0": true, "grants/3/principals/1": true, "grants/0/relation": true,
		"tags/x": true, "tags/": false, "nested/inner": true, "nested/inner/n": true, "nested/either": true,
		"out": false, "nope": false, "unique/0": false, "keyed/a": false, "nested/either/n": false,
		"nested/oneOf": false, "choice/a": false, "fixed/k": false, "sibling/relation": false, "grants/x": false, "name/0": false,
	} {
		_, ok := s.ValidateParts([]Part{{Path: strings.Split(path, "/"), Value: nil}})
		if ok != want {
			t.Errorf("ValidateParts at %s: ok %v, want %v", path, ok, want)
		}
	}
}

// partsRounds is how many random instances each schema is tried with.
var partsRounds = flag.Int("parts.rounds", 4000, "random instances tried per schema by TestValidatePartsAgreesWithValidate")

// TestSimpleParts checks which schemas of parts ValidateParts accepts
// values of without the validator, and that it does only for values that
// fit.
func TestSimpleParts(t *testing.T) {
	t.Parallel()
	s, err := parseSchema("parts.json", []byte(partsSchema))
	if err != nil {
		t.Fatal(err)
	}
	for path, simple := range map[string]bool{
		"name": true, "grants/0/relation": true, "tags/x": true, "nested/inner/n": true,
		"grants/0/principals/0": true, "grants/0/principals": true,
		"size": false, "grants/0": false, "nested/either": false, "unique": false,
	} {
		ps := s.partSchema(strings.Split(path, "/"))
		if ps == nil || (ps.simple != nil) != simple {
			t.Errorf("%s: simple %v, want %v", path, ps != nil && ps.simple != nil, simple)
		}
	}
	for _, tc := range []struct {
		path string
		v    any
		want bool
	}{
		{"name", "12345678", true}, {"name", "123456789", false}, {"name", "ééééééé", true}, {"name", int64(1), false},
		{"grants/0/relation", "viewer", true}, {"grants/0/relation", "owner", false},
		{"tags/x", "ab", true}, {"tags/x", "a", false}, {"tags/x", nil, false},
		{"nested/inner/n", int64(-5), true}, {"nested/inner/n", 1.0, false}, {"nested/inner/n", "1", false},
		{"grants/0/principals/0", "user:ada", true}, {"grants/0/principals/0", "role:x", false}, {"grants/0/principals/0", "a user:ada", false},
		{"grants/0/principals", []any{"team:x", "user:ada"}, true}, {"grants/0/principals", []any{}, false}, {"grants/0/principals", []any{"team:x", nil}, false},
	} {
		ps := s.partSchema(strings.Split(tc.path, "/"))
		if got := ps.simple.accepts(tc.v); got != tc.want {
			t.Errorf("%s accepts %#v: %v, want %v", tc.path, tc.v, got, tc.want)
		}
	}
	ep := mustLookup(t, endpoint)
	for path, simple := range map[string]bool{"compartmentId": true, "description": true, "inferenceUnits": true, "freeformTags/a": true, "definedTags": false} {
		if ps := ep.partSchema(strings.Split(path, "/")); ps == nil || (ps.simple != nil) != simple {
			t.Errorf("endpoint %s: simple %v, want %v", path, ps != nil && ps.simple != nil, simple)
		}
	}
}

func paths(parts []Part) []string {
	var out []string
	for _, p := range parts {
		out = append(out, strings.Join(p.Path, "/"))
	}
	return out
}

var randomStrings = []string{"", "x", "viewer", "editor", "user:ada", "team:x", "nobody", "abc", "A-b", "ns.key", "dashboard:a", "123456789", "role:x"}

// randomValue returns a value for the schema p, mostly of the right shape
// and sometimes not.
func randomValue(rng *rand.Rand, p *Prop, depth int) any {
	if p != nil && len(p.OneOf) > 0 && rng.IntN(2) == 0 {
		return randomValue(rng, p.OneOf[rng.IntN(len(p.OneOf))], depth)
	}
	typ := ""
	if p != nil {
		typ = p.Type
	}
	if rng.IntN(8) == 0 || typ == "" {
		typ = []string{"string", "integer", "number", "boolean", "array", "object", "null", "unknown"}[rng.IntN(8)]
	}
	if depth > 4 && (typ == "array" || typ == "object") {
		typ = "string"
	}
	switch typ {
	case "string":
		if p != nil && len(p.Enum) > 0 && rng.IntN(2) == 0 {
			return p.Enum[rng.IntN(len(p.Enum))]
		}
		return randomStrings[rng.IntN(len(randomStrings))]
	case "integer":
		return int64(rng.IntN(12) - 1)
	case "number":
		return float64(rng.IntN(5)) / 2
	case "boolean":
		return rng.IntN(2) == 0
	case "null":
		return nil
	case "unknown":
		return unknownValue{}
	case "array":
		out := make([]any, rng.IntN(4))
		for i := range out {
			out[i] = randomValue(rng, items(p), depth+1)
		}
		return out
	}
	out := map[string]any{}
	if p != nil {
		for _, name := range slices.Sorted(maps.Keys(p.Properties)) {
			f := p.Properties[name]
			if rng.IntN(3) > 0 && (!f.ReadOnly || rng.IntN(8) == 0) {
				out[name] = randomValue(rng, f, depth+1)
			}
		}
	}
	for range rng.IntN(3) {
		if rng.IntN(2) == 0 || p == nil || p.AdditionalProperties != nil {
			out[randomStrings[rng.IntN(len(randomStrings))]] = randomValue(rng, child(p, "?"), depth+1)
		}
	}
	return out
}

// randomParts picks values of v, none inside another, as parts.
func randomParts(rng *rand.Rand, v any, path []string) []Part {
	var out []Part
	visit := func(k string, e any) {
		p := append(slices.Clone(path), k)
		if rng.IntN(3) == 0 {
			out = append(out, Part{Path: p, Value: e})
			return
		}
		out = append(out, randomParts(rng, e, p)...)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			visit(k, x[k])
		}
	case []any:
		for i, e := range x {
			visit(strconv.Itoa(i), e)
		}
	}
	return out
}

// leaveOut returns a copy of v without the parts: entries of objects left
// out, items of lists null.
func leaveOut(v any, parts []Part) map[string]any {
	var cp func(v any, path []string) (any, bool)
	cp = func(v any, path []string) (any, bool) {
		for _, p := range parts {
			if slices.Equal(p.Path, path) {
				return nil, false
			}
		}
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				if c, keep := cp(e, append(slices.Clone(path), k)); keep {
					out[k] = c
				}
			}
			return out, true
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i], _ = cp(e, append(slices.Clone(path), strconv.Itoa(i)))
			}
			return out, true
		}
		return v, true
	}
	out, _ := cp(v, nil)
	return out.(map[string]any)
}

// TestAccepts checks that Accepts accepts only what Validate finds
// nothing wrong with but the missing fields it was told are absent, on
// random instances of every embedded type and the test's own, and that it
// accepts a common endpoint.
func TestAccepts(t *testing.T) {
	t.Parallel()
	own, err := parseSchema("parts.json", []byte(partsSchema))
	if err != nil {
		t.Fatal(err)
	}
	all := []*Schema{own}
	for _, tok := range Tokens() {
		all = append(all, mustLookup(t, tok))
	}
	accepted := 0
	for _, s := range all {
		rng := rand.New(rand.NewPCG(5, uint64(len(s.Token))))
		for range *partsRounds {
			in, _ := randomValue(rng, s.Root, 0).(map[string]any)
			absent := map[string]bool{}
			for _, name := range slices.Sorted(maps.Keys(s.Root.Properties)) {
				if _, ok := in[name]; !ok && rng.IntN(2) == 0 {
					absent[name] = true
				}
			}
			if !s.Accepts(in, absent) {
				continue
			}
			accepted++
			for _, v := range s.Validate(in) {
				if v.Kind != Missing || len(v.Path) != 1 || !absent[v.Path[0]] {
					t.Fatalf("%s: accepted %v (absent %v), but Validate reports %v", s.Token, in, absent, v)
				}
			}
		}
	}
	t.Logf("%d instances accepted", accepted)
	ep := mustLookup(t, endpoint)
	if !ep.Accepts(map[string]any{"modelId": "m", "displayName": "d", "inferenceUnits": int64(2)}, map[string]bool{"compartmentId": true}) {
		t.Error("a flat endpoint is not accepted")
	}
	if ep.Accepts(map[string]any{"modelId": "m"}, nil) {
		t.Error("an endpoint without compartmentId is accepted")
	}
	rp := mustLookup(t, "datadog:RestrictionPolicy")
	binding := map[string]any{"relation": "viewer", "principals": []any{"role:x", "user:ada"}}
	if !rp.Accepts(map[string]any{"bindings": []any{binding, binding}}, map[string]bool{"resourceId": true}) {
		t.Error("a restriction policy is not accepted")
	}
	for name, in := range map[string]map[string]any{
		"no bindings":           {"resourceId": "dashboard:a", "bindings": []any{}},
		"a principal unmatched": {"resourceId": "dashboard:a", "bindings": []any{map[string]any{"relation": "viewer", "principals": []any{"nobody"}}}},
		"resourceId unmatched":  {"resourceId": "Dashboard", "bindings": []any{binding}},
		"relation missing":      {"resourceId": "dashboard:a", "bindings": []any{map[string]any{"principals": []any{"role:x"}}}},
		"a field unknown":       {"resourceId": "dashboard:a", "bindings": []any{map[string]any{"relation": "viewer", "principals": []any{}, "x": "y"}}},
	} {
		if rp.Accepts(in, nil) {
			t.Errorf("%s: accepted", name)
		}
	}
	if accepted < *partsRounds/20 {
		t.Errorf("only %d instances accepted", accepted)
	}
}
