package schemas

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// unknownValue stands for the engine's placeholder of a value not known
// until apply: a type this package has never heard of.
type unknownValue struct{}

func TestValidate(t *testing.T) {
	t.Parallel()
	goodEndpoint := func(extra obj) obj {
		m := obj{
			"compartmentId":  "ocid1.compartment.oc1..example",
			"modelId":        "ocid1.ailanguagemodel.oc1.iad.example",
			"displayName":    "sentiment-prod",
			"description":    "serves the sentiment model",
			"inferenceUnits": int64(2),
			"definedTags":    obj{"Operations.CostCenter": "42"},
			"freeformTags":   obj{"team": "nlp"},
		}
		for k, v := range extra {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	goodPolicy := func(bindings any) obj {
		return obj{"resourceId": "dashboard:abc-def-ghi", "bindings": bindings}
	}
	for name, tc := range map[string]struct {
		token string
		in    obj
		want  []Violation
	}{
		"endpoint valid": {token: endpoint, in: goodEndpoint(nil)},
		"endpoint minimal": {
			token: endpoint,
			in:    obj{"compartmentId": "c", "modelId": "m"},
		},
		"endpoint not yet known values": {
			token: endpoint,
			in:    goodEndpoint(obj{"compartmentId": unknownValue{}, "inferenceUnits": unknownValue{}, "freeformTags": obj{"a": unknownValue{}}}),
		},
		"endpoint missing required": {
			token: endpoint,
			in:    obj{"displayName": "x"},
			want: []Violation{
				{Path: []string{"compartmentId"}, Kind: Missing, Message: `missing required field "compartmentId"`},
				{Path: []string{"modelId"}, Kind: Missing, Message: `missing required field "modelId"`},
			},
		},
		"endpoint wrong types": {
			token: endpoint,
			in:    goodEndpoint(obj{"inferenceUnits": "2", "displayName": int64(5), "freeformTags": list{"a"}}),
			want: []Violation{
				{Path: []string{"displayName"}, Kind: TypeMismatch, Message: "expected string, got integer"},
				{Path: []string{"freeformTags"}, Kind: TypeMismatch, Message: "expected object, got array"},
				{Path: []string{"inferenceUnits"}, Kind: TypeMismatch, Message: "expected integer, got string"},
			},
		},
		"endpoint tag value not a string": {
			token: endpoint,
			in:    goodEndpoint(obj{"freeformTags": obj{"team": true}}),
			want:  []Violation{{Path: []string{"freeformTags", "team"}, Kind: TypeMismatch, Message: "expected string, got boolean"}},
		},
		"endpoint unknown field": {
			token: endpoint,
			in:    goodEndpoint(obj{"inferenceUnit": int64(2), "model_id": "m"}),
			want: []Violation{
				{Path: []string{"inferenceUnit"}, Kind: Unknown, Message: `unknown field "inferenceUnit"`},
				{Path: []string{"model_id"}, Kind: Unknown, Message: `unknown field "model_id"`},
			},
		},
		"endpoint output only": {
			token: endpoint,
			in:    goodEndpoint(obj{"state": "ACTIVE", "id": "ocid1.x"}),
			want: []Violation{
				{Path: []string{"id"}, Kind: OutputOnly, Message: `field "id" is output only`},
				{Path: []string{"state"}, Kind: OutputOnly, Message: `field "state" is output only`},
			},
		},
		"endpoint bounds": {
			token: endpoint,
			in:    goodEndpoint(obj{"inferenceUnits": int64(0), "description": strings.Repeat("d", 401), "displayName": strings.Repeat("é", 256)}),
			want: []Violation{
				{Path: []string{"description"}, Kind: Invalid, Message: "must be at most 400 characters long"},
				{Path: []string{"displayName"}, Kind: Invalid, Message: "must be at most 255 characters long"},
				{Path: []string{"inferenceUnits"}, Kind: Invalid, Message: "must be at least 1"},
			},
		},
		"endpoint bounds met": {
			token: endpoint,
			in:    goodEndpoint(obj{"description": strings.Repeat("d", 400), "displayName": strings.Repeat("é", 255), "inferenceUnits": int64(1)}),
		},
		"endpoint defined tag key": {
			token: endpoint,
			in:    goodEndpoint(obj{"definedTags": obj{"CostCenter": "42"}}),
			want:  []Violation{{Path: []string{"definedTags", "CostCenter"}, Kind: Invalid, Message: `key "CostCenter" must have the form "namespace.key"`}},
		},
		"policy valid": {
			token: policy,
			in:    goodPolicy(list{obj{"relation": "editor", "principals": list{principal, "org:4dee724d-00cc-11ea-a77b-570c9d03c6c5"}}}),
		},
		"policy without bindings": {
			token: policy,
			in:    obj{"resourceId": "slo:1"},
			want:  []Violation{{Path: []string{"bindings"}, Kind: Missing, Message: `missing required field "bindings"`}},
		},
		"policy with empty bindings": {
			token: policy,
			in:    goodPolicy(list{}),
			want: []Violation{{Path: []string{"bindings"}, Kind: Invalid,
				Message: "a restriction policy needs at least one binding: Datadog cannot tell a policy without bindings from no policy; to lift the restriction, remove the resource"}},
		},
		"policy bad resource id": {
			token: policy,
			in:    obj{"resourceId": "malformed", "bindings": list{obj{"relation": "editor", "principals": list{principal}}}},
			want:  []Violation{{Path: []string{"resourceId"}, Kind: Invalid, Message: `must have the form "type:id", such as "dashboard:abc-def-ghi"`}},
		},
		"policy bad principal": {
			token: policy,
			in:    goodPolicy(list{obj{"relation": "viewer", "principals": list{principal}}, obj{"relation": "editor", "principals": list{principal, "admins"}}}),
			want:  []Violation{{Path: []string{"bindings", "1", "principals", "1"}, Kind: Invalid, Message: `must match pattern "^(role|team|user|org):.+"`}},
		},
		"policy binding problems": {
			token: policy,
			in:    goodPolicy(list{obj{"principals": list{int64(3)}, "relations": "editor"}}),
			want: []Violation{
				{Path: []string{"bindings", "0", "principals", "0"}, Kind: TypeMismatch, Message: "expected string, got integer"},
				{Path: []string{"bindings", "0", "relation"}, Kind: Missing, Message: `missing required field "relation"`},
				{Path: []string{"bindings", "0", "relations"}, Kind: Unknown, Message: `unknown field "relations"`},
			},
		},
		"policy bindings not a list": {
			token: policy,
			in:    goodPolicy(obj{"relation": "editor"}),
			want:  []Violation{{Path: []string{"bindings"}, Kind: TypeMismatch, Message: "expected array, got object"}},
		},
		"policy many bindings sort by index": {
			token: policy,
			in: goodPolicy(list{
				obj{"relation": "a", "principals": list{}}, obj{"relation": "a", "principals": list{}},
				obj{"principals": list{}}, obj{"relation": "a", "principals": list{}},
				obj{"relation": "a", "principals": list{}}, obj{"relation": "a", "principals": list{}},
				obj{"relation": "a", "principals": list{}}, obj{"relation": "a", "principals": list{}},
				obj{"relation": "a", "principals": list{}}, obj{"relation": "a", "principals": list{}},
				obj{"principals": list{}},
			}),
			want: []Violation{
				{Path: []string{"bindings", "2", "relation"}, Kind: Missing, Message: `missing required field "relation"`},
				{Path: []string{"bindings", "10", "relation"}, Kind: Missing, Message: `missing required field "relation"`},
			},
		},
		"service lookup valid":     {token: svcIAM, in: obj{"serviceName": "orders.endpoints.acme.cloud.goog"}},
		"service lookup etag":      {token: svcIAM, in: obj{"serviceName": "s", "etag": "BwW"}, want: []Violation{{Path: []string{"etag"}, Kind: OutputOnly, Message: `field "etag" is output only`}}},
		"consumers lookup missing": {token: consIAM, in: obj{"serviceName": "s"}, want: []Violation{{Path: []string{"consumerProject"}, Kind: Missing, Message: `missing required field "consumerProject"`}}},
		"current user no inputs":   {token: currUser, in: nil},
		"current user output":      {token: currUser, in: obj{"orgId": "x"}, want: []Violation{{Path: []string{"orgId"}, Kind: OutputOnly, Message: `field "orgId" is output only`}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := mustLookup(t, tc.token).Validate(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Lookup(%q).Validate(%v) =\n%s\nwant\n%s", tc.token, tc.in, show(got), show(tc.want))
			}
		})
	}
}

func show(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString("\t" + v.Kind.String() + " " + v.Error() + "\n")
	}
	if b.Len() == 0 {
		return "\t(none)"
	}
	return b.String()
}

func TestValidateNumbers(t *testing.T) {
	t.Parallel()
	s := mustLookup(t, endpoint)
	for name, tc := range map[string]struct {
		units any
		want  string // message at inferenceUnits, "" for none
	}{
		"int64":              {units: int64(2)},
		"int":                {units: 2},
		"int32":              {units: int32(2)},
		"uint8":              {units: uint8(2)},
		"integral float64":   {units: float64(2)},
		"json.Number":        {units: json.Number("2")},
		"large int64":        {units: int64(math.MaxInt64)},
		"fractional float64": {units: 2.5, want: "expected integer, got number"},
		"fractional number":  {units: json.Number("2.5"), want: "expected integer, got number"},
		"int64 below min":    {units: int64(-3), want: "must be at least 1"},
		"float below min":    {units: float64(0), want: "must be at least 1"},
		"NaN":                {units: math.NaN(), want: "must be a finite number"},
		"string":             {units: "2", want: "expected integer, got string"},
		"bool":               {units: true, want: "expected integer, got boolean"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := obj{"compartmentId": "c", "modelId": "m", "inferenceUnits": tc.units}
			got := s.Validate(in)
			var want []Violation
			if tc.want != "" {
				kind := Invalid
				if strings.HasPrefix(tc.want, "expected") {
					kind = TypeMismatch
				}
				want = []Violation{{Path: []string{"inferenceUnits"}, Kind: kind, Message: tc.want}}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Validate(inferenceUnits: %#v) =\n%s\nwant\n%s", tc.units, show(got), show(want))
			}
		})
	}
}

func TestValidateGoShapes(t *testing.T) {
	t.Parallel()
	// Typed slices and maps, as a caller might build them, are as good as
	// []any and map[string]any.
	s := mustLookup(t, policy)
	in := obj{
		"resourceId": "dashboard:abc",
		"bindings":   []map[string]any{{"relation": "editor", "principals": []string{principal, "nobody"}}},
	}
	want := []Violation{{Path: []string{"bindings", "0", "principals", "1"}, Kind: Invalid, Message: `must match pattern "^(role|team|user|org):.+"`}}
	if got := s.Validate(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Validate(%v) =\n%s\nwant\n%s", in, show(got), show(want))
	}
	ep := mustLookup(t, endpoint)
	in = obj{"compartmentId": "c", "modelId": "m", "freeformTags": map[string]string{"a": "b"}}
	if got := ep.Validate(in); got != nil {
		t.Errorf("Validate(%v) =\n%s\nwant none", in, show(got))
	}
}

func TestViolationPointer(t *testing.T) {
	t.Parallel()
	v := Violation{Path: []string{"definedTags", "a/b~c"}, Kind: Invalid, Message: "m"}
	if got, want := v.Pointer(), "/definedTags/a~1b~0c"; got != want {
		t.Errorf("Pointer() = %q, want %q", got, want)
	}
	if got, want := v.Error(), "/definedTags/a~1b~0c: m"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	// Keys that need escaping come back unescaped in Path.
	got := mustLookup(t, endpoint).Validate(obj{"compartmentId": "c", "modelId": "m", "freeformTags": obj{"a/b~c d%": int64(1)}})
	want := []Violation{{Path: []string{"freeformTags", "a/b~c d%"}, Kind: TypeMismatch, Message: "expected string, got integer"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Validate with an escaped key =\n%s\nwant\n%s", show(got), show(want))
	}
}

// specExample is the example of SPEC.md, in JSON, which Pulumi YAML accepts.
const specExample = `{
  "config": {"compartment": {"type": "string", "default": "ocid1.compartment.oc1..example"}},
  "variables": {
    "svcPolicy": {"fn::invoke": {"function": "gcp:endpoints:getServiceIamPolicy", "arguments": {"serviceName": "orders.endpoints.acme.cloud.goog"}}}
  },
  "resources": {
    "sentiment": {
      "type": "oci:AiLanguage:Endpoint",
      "properties": {"compartmentId": "${compartment}", "model_id": "ocid1.ailanguagemodel.oc1.iad.example", "displayName": "sentiment-prod", "inferenceUnits": 2},
      "options": {"protect": true}
    },
    "dashboardPolicy": {
      "type": "datadog:RestrictionPolicy",
      "properties": {"resourceId": "dashboard:abc-def-ghi", "bindings": [{"relation": "editor", "principals": ["role:00000000-0000-0000-0000-000000000001"]}]}
    },
    "legacy": {"type": "oci:AiLanguage:Endpoint", "get": {"id": "ocid1.ailanguageendpoint.oc1.iad.legacy"}}
  },
  "outputs": {"endpointId": "${sentiment.id}", "policyEtag": "${svcPolicy.etag}"}
}`

func TestValidateDocument(t *testing.T) {
	t.Parallel()
	var example obj
	if err := json.Unmarshal([]byte(specExample), &example); err != nil {
		t.Fatal(err)
	}
	resource := func(options obj) obj {
		return obj{"resources": obj{"web": obj{"type": "acme:compute:Service", "options": options}}}
	}
	for name, tc := range map[string]struct {
		in   obj
		want []Violation
	}{
		"spec example": {in: example},
		"project file keys": {in: obj{
			"name": "demo", "runtime": "yaml", "description": "d",
			"pulumi": obj{"requiredVersion": ">=3.0.0"},
			"config": obj{"env": "dev", "replicas": obj{"type": "integer", "default": int64(2)}, "tags": list{"a"}, "pw": obj{"type": "string", "secret": true}},
		}},
		"options with expressions": {in: resource(obj{
			"protect":             "${env.protect}",
			"deleteBeforeReplace": "${flag}",
			"retainOnDelete":      false,
			"dependsOn":           list{"${net}"},
			"customTimeouts":      obj{"create": "20m", "update": "1h30m", "delete": "${slow}", "read": "90s"},
			"ignoreChanges":       list{"tags[\"env\"]"},
			"replaceOnChanges":    list{"networkId"},
			"import":              "ocid1.x",
			"parent":              "${p}",
			"version":             "1.2.3",
		})},
		"escaped dollar is a literal": {
			in:   resource(obj{"protect": "$${x}"}),
			want: []Violation{{Path: []string{"resources", "web", "options", "protect"}, Kind: TypeMismatch, Message: "expected boolean, got string"}},
		},
		"unknown keys everywhere": {
			in: obj{
				"resource": obj{},
				"resources": obj{"web": obj{
					"type":      "t",
					"propertes": obj{},
					"options":   obj{"protected": true, "customTimeouts": obj{"creat": "1m"}},
					"get":       obj{"id": "x", "stat": obj{}},
				}},
				"variables": obj{"v": obj{"fn::invoke": obj{"function": "f", "argument": obj{}}}},
			},
			want: []Violation{
				{Path: []string{"resource"}, Kind: Unknown, Message: `unknown field "resource"`},
				{Path: []string{"resources", "web", "get", "stat"}, Kind: Unknown, Message: `unknown field "stat"`},
				{Path: []string{"resources", "web", "options", "customTimeouts", "creat"}, Kind: Unknown, Message: `unknown field "creat"`},
				{Path: []string{"resources", "web", "options", "protected"}, Kind: Unknown, Message: `unknown field "protected"`},
				{Path: []string{"resources", "web", "propertes"}, Kind: Unknown, Message: `unknown field "propertes"`},
				{Path: []string{"variables", "v", "fn::invoke", "argument"}, Kind: Unknown, Message: `unknown field "argument"`},
			},
		},
		"resource shape": {
			in: obj{"resources": obj{
				"a": obj{"properties": obj{}},
				"b": obj{"type": int64(1), "get": obj{"state": obj{}}},
				"c": "acme:x:Y",
			}},
			want: []Violation{
				{Path: []string{"resources", "a", "type"}, Kind: Missing, Message: `missing required field "type"`},
				{Path: []string{"resources", "b", "get", "id"}, Kind: Missing, Message: `missing required field "id"`},
				{Path: []string{"resources", "b", "type"}, Kind: TypeMismatch, Message: "expected string, got integer"},
				{Path: []string{"resources", "c"}, Kind: TypeMismatch, Message: "expected object, got string"},
			},
		},
		"bad option values": {
			in: resource(obj{"protect": "yes please", "customTimeouts": obj{"create": "20 minutes"}, "ignoreChanges": "tags", "dependsOn": list{int64(1)}}),
			want: []Violation{
				{Path: []string{"resources", "web", "options", "customTimeouts", "create"}, Kind: Invalid, Message: `must be a duration such as "20m" or "1h30m"`},
				{Path: []string{"resources", "web", "options", "dependsOn", "0"}, Kind: TypeMismatch, Message: "expected string, got integer"},
				{Path: []string{"resources", "web", "options", "ignoreChanges"}, Kind: TypeMismatch, Message: "expected array, got string"},
				{Path: []string{"resources", "web", "options", "protect"}, Kind: TypeMismatch, Message: "expected boolean, got string"},
			},
		},
		"config declarations": {
			in: obj{"config": obj{
				"a": obj{"type": "strin"},
				"b": nil,
				"c": obj{"type": "array", "items": obj{"typ": "string"}},
				"d": obj{"type": "string", "secret": "yes"},
			}},
			want: []Violation{
				{Path: []string{"config", "a", "type"}, Kind: Invalid, Message: `must be string, integer, number, boolean, array, object or List<T>`},
				{Path: []string{"config", "b"}, Kind: TypeMismatch, Message: "expected string, number, boolean, array or object, got null"},
				{Path: []string{"config", "c", "items", "typ"}, Kind: Unknown, Message: `unknown field "typ"`},
				{Path: []string{"config", "c", "items", "type"}, Kind: Missing, Message: `missing required field "type"`},
				{Path: []string{"config", "d", "secret"}, Kind: TypeMismatch, Message: "expected boolean, got string"},
			},
		},
		"invoke shape": {
			in: obj{"variables": obj{
				"plain":  "text ${x}",
				"list":   list{obj{"fn::invoke": "ignored: not a variable's own lookup"}},
				"noFunc": obj{"fn::invoke": obj{"arguments": obj{"a": int64(1)}, "return": int64(3)}},
				"opts":   obj{"fn::invoke": obj{"function": "f", "options": obj{"provider": "${p}", "retainOnDelete": true}}},
			}},
			want: []Violation{
				{Path: []string{"variables", "noFunc", "fn::invoke", "function"}, Kind: Missing, Message: `missing required field "function"`},
				{Path: []string{"variables", "noFunc", "fn::invoke", "return"}, Kind: TypeMismatch, Message: "expected string, got integer"},
				{Path: []string{"variables", "opts", "fn::invoke", "options", "retainOnDelete"}, Kind: Unknown, Message: `unknown field "retainOnDelete"`},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := Document().Validate(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Document().Validate(%v) =\n%s\nwant\n%s", tc.in, show(got), show(tc.want))
			}
		})
	}
}

// TestDurationPattern checks the customTimeouts pattern against Go's own
// parser.
func TestDurationPattern(t *testing.T) {
	t.Parallel()
	def, ok := Document().Def("duration")
	if !ok {
		t.Fatal(`Def("duration") found nothing`)
	}
	if !def.Expression {
		t.Errorf("durations are not marked x-expression")
	}
	var tree obj
	if err := json.Unmarshal(Document().JSON(), &tree); err != nil {
		t.Fatal(err)
	}
	pattern := tree["$defs"].(obj)["duration"].(obj)["pattern"].(string)
	re := regexp.MustCompile(pattern)
	for _, s := range []string{"20m", "1h30m", "90s", "0", "1.5h", ".5h", "2h45m30.5s", "300ms", "10us", "10µs", "10μs", "5ns", "1h0m0s",
		"", "20", "20 m", "m", "1d", "-5m", "+5m", "1h 30m", "1.h", "20M", "PT20M"} {
		_, err := time.ParseDuration(s)
		// Signs are valid Go but meaningless for a time limit.
		want := err == nil && !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+")
		if got := re.MatchString(s); got != want {
			t.Errorf("duration pattern matches %q = %v, want %v (ParseDuration error: %v)", s, got, want, err)
		}
	}
}

// TestMessages covers keywords the embedded schemas do not use yet, on a
// schema of the test's own.
func TestMessages(t *testing.T) {
	t.Parallel()
	s, err := parseSchema("test.json", []byte(`{
	  "$schema": "https://json-schema.org/draft/2020-12/schema",
	  "x-token": "test:index:Thing",
	  "type": "object",
	  "properties": {
	    "tags":   {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true, "items": {"type": "string"}},
	    "ratio":  {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
	    "step":   {"type": "integer", "multipleOf": 5, "maximum": 100},
	    "mode":   {"const": "fast"},
	    "name":   {"type": "string", "minLength": 1},
	    "labels": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "string"}},
	    "either": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 10}]},
	    "spec":   {"type": "object", "default": {"size": 3, "zones": ["a"]}, "properties": {"size": {"type": "integer"}, "zones": {"type": "array"}}},
	    "nothing": false
	  },
	  "additionalProperties": false
	}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		in   obj
		want []Violation
	}{
		"too few items":     {in: obj{"tags": list{}}, want: []Violation{{Path: []string{"tags"}, Kind: Invalid, Message: "must have at least 1 item"}}},
		"too many items":    {in: obj{"tags": list{"a", "b", "c"}}, want: []Violation{{Path: []string{"tags"}, Kind: Invalid, Message: "must have at most 2 items"}}},
		"duplicates":        {in: obj{"tags": list{"a", "a"}}, want: []Violation{{Path: []string{"tags"}, Kind: Invalid, Message: "must not contain duplicates"}}},
		"exclusive minimum": {in: obj{"ratio": int64(0)}, want: []Violation{{Path: []string{"ratio"}, Kind: Invalid, Message: "must be greater than 0"}}},
		"exclusive maximum": {in: obj{"ratio": 1.0}, want: []Violation{{Path: []string{"ratio"}, Kind: Invalid, Message: "must be less than 1"}}},
		"multiple of":       {in: obj{"step": int64(7)}, want: []Violation{{Path: []string{"step"}, Kind: Invalid, Message: "must be a multiple of 5"}}},
		"maximum":           {in: obj{"step": int64(105)}, want: []Violation{{Path: []string{"step"}, Kind: Invalid, Message: "must be at most 100"}}},
		"const":             {in: obj{"mode": "slow"}, want: []Violation{{Path: []string{"mode"}, Kind: Invalid, Message: `must be "fast"`}}},
		"min length":        {in: obj{"name": ""}, want: []Violation{{Path: []string{"name"}, Kind: Invalid, Message: "must be at least 1 character long"}}},
		"min properties":    {in: obj{"labels": obj{}}, want: []Violation{{Path: []string{"labels"}, Kind: Invalid, Message: "must have at least 1 field"}}},
		"anyOf right type":  {in: obj{"either": int64(3)}, want: []Violation{{Path: []string{"either"}, Kind: Invalid, Message: "must be at least 10"}}},
		"anyOf no type":     {in: obj{"either": true}, want: []Violation{{Path: []string{"either"}, Kind: TypeMismatch, Message: "expected string or integer, got boolean"}}},
		"anyOf passes":      {in: obj{"either": "x"}},
		"anyOf not known":   {in: obj{"either": unknownValue{}}},
		"false schema":      {in: obj{"nothing": int64(1)}, want: []Violation{{Path: []string{"nothing"}, Kind: Invalid, Message: "is not allowed"}}},
		"object expected":   {in: obj{"spec": list{}}, want: []Violation{{Path: []string{"spec"}, Kind: TypeMismatch, Message: "expected object, got array"}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := s.Validate(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Validate(%v) =\n%s\nwant\n%s", tc.in, show(got), show(tc.want))
			}
		})
	}

	// Defaults come out canonical, and each call gets a fresh copy.
	want := obj{"spec": obj{"size": int64(3), "zones": list{"a"}}}
	first := s.ApplyDefaults(nil)
	if !reflect.DeepEqual(first, want) {
		t.Errorf("ApplyDefaults(nil) = %#v, want %#v", first, want)
	}
	first["spec"].(obj)["size"] = int64(9)
	if got := s.ApplyDefaults(nil); !reflect.DeepEqual(got, want) {
		t.Errorf("ApplyDefaults(nil) after changing an earlier result = %#v, want %#v", got, want)
	}
}

// TestKeywordMessages covers the rest of the keywords leaf names, and what
// it says of a keyword it does not know, on a schema of the test's own.
func TestKeywordMessages(t *testing.T) {
	t.Parallel()
	s, err := parseSchema("test.json", []byte(`{
	  "$schema": "https://json-schema.org/draft/2020-12/schema",
	  "x-token": "test:index:Other",
	  "type": "object",
	  "properties": {
	    "code":   {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$", "x-message": "must be lower case letters"},
	    "plain":  {"type": "string", "pattern": "^[a-z]+$"},
	    "email":  {"type": "string", "format": "email"},
	    "kind":   {"enum": ["a", 1, null]},
	    "small":  {"type": "integer", "minimum": 1},
	    "lo":     {"type": "number", "exclusiveMaximum": 5},
	    "labels": {"type": "object", "maxProperties": 1, "propertyNames": {"pattern": "^[a-z]+$"}},
	    "keys":   {"type": "object", "propertyNames": {"maxLength": 2}},
	    "zones":  {"type": "array", "minItems": 2, "x-message": "needs two zones", "maxItems": 1},
	    "one":    {"oneOf": [{"type": "integer"}, {"type": "number"}]},
	    "never":  {"not": {"type": "string"}},
	    "pair":   {"type": "object", "dependentRequired": {"a": ["b"]}},
	    "child":  {"type": "object", "required": ["x", "y"], "properties": {"x": {"type": "string"}, "y": {"type": "string"}}, "additionalProperties": false}
	  }
	}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		in   obj
		want []Violation
	}{
		"max length":           {in: obj{"code": "abcd"}, want: []Violation{{Path: []string{"code"}, Kind: Invalid, Message: "must be at most 3 characters long"}}},
		"pattern with message": {in: obj{"code": "AB"}, want: []Violation{{Path: []string{"code"}, Kind: Invalid, Message: "must be lower case letters"}}},
		"pattern":              {in: obj{"plain": "AB"}, want: []Violation{{Path: []string{"plain"}, Kind: Invalid, Message: `must match pattern "^[a-z]+$"`}}},
		"format not asserted":  {in: obj{"email": "nope"}},
		"enum":                 {in: obj{"kind": "b"}, want: []Violation{{Path: []string{"kind"}, Kind: Invalid, Message: `must be one of "a", 1, null`}}},
		"minimum":              {in: obj{"small": int64(0)}, want: []Violation{{Path: []string{"small"}, Kind: Invalid, Message: "must be at least 1"}}},
		"exclusive maximum":    {in: obj{"lo": int64(5)}, want: []Violation{{Path: []string{"lo"}, Kind: Invalid, Message: "must be less than 5"}}},
		"max properties":       {in: obj{"labels": obj{"a": "1", "b": "2"}}, want: []Violation{{Path: []string{"labels"}, Kind: Invalid, Message: "must have at most 1 field"}}},
		"property name pattern": {
			in:   obj{"labels": obj{"A": "1"}},
			want: []Violation{{Path: []string{"labels", "A"}, Kind: Invalid, Message: `key "A" must match pattern "^[a-z]+$"`}},
		},
		"property name length": {
			in:   obj{"keys": obj{"abc": "1"}},
			want: []Violation{{Path: []string{"keys", "abc"}, Kind: Invalid, Message: `key "abc" must be at most 2 characters long`}},
		},
		"min items with message": {in: obj{"zones": list{}}, want: []Violation{{Path: []string{"zones"}, Kind: Invalid, Message: "needs two zones"}}},
		"max items":              {in: obj{"zones": list{"a", "b"}}, want: []Violation{{Path: []string{"zones"}, Kind: Invalid, Message: "must have at most 1 item"}}},
		"one of two":             {in: obj{"one": int64(3)}, want: []Violation{{Path: []string{"one"}, Kind: Invalid, Message: "matches more than one alternative"}}},
		"not":                    {in: obj{"never": "x"}, want: []Violation{{Path: []string{"never"}, Kind: Invalid, Message: "is not allowed"}}},
		"unnamed keyword":        {in: obj{"pair": obj{"a": int64(1)}}, want: []Violation{{Path: []string{"pair"}, Kind: Invalid, Message: "property 'b' is required, if 'a' property exists"}}},
		"type":                   {in: obj{"child": "x"}, want: []Violation{{Path: []string{"child"}, Kind: TypeMismatch, Message: "expected object, got string"}}},
		"required and unknown": {
			in: obj{"child": obj{"x": "1", "z": "2", "w": "3"}},
			want: []Violation{
				{Path: []string{"child", "w"}, Kind: Unknown, Message: `unknown field "w"`},
				{Path: []string{"child", "y"}, Kind: Missing, Message: `missing required field "y"`},
				{Path: []string{"child", "z"}, Kind: Unknown, Message: `unknown field "z"`},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := s.Validate(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Validate(%v) =\n%s\nwant\n%s", tc.in, show(got), show(tc.want))
			}
		})
	}
}
