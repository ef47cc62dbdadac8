package schemas

import (
	"bytes"
	"io/fs"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

const (
	endpoint  = "oci:AiLanguage:Endpoint"
	policy    = "datadog:RestrictionPolicy"
	svcIAM    = "gcp:endpoints:getServiceIamPolicy"
	consIAM   = "gcp:endpoints:getServiceConsumersIamPolicy"
	currUser  = "datadog:getCurrentUser"
	principal = "role:00000000-0000-0000-0000-000000000001"
)

// obj and list keep the tables short.
type (
	obj  = map[string]any
	list = []any
)

func mustLookup(t *testing.T, token string) *Schema {
	t.Helper()
	s, ok := Lookup(token)
	if !ok {
		t.Fatalf("Lookup(%q) found nothing", token)
	}
	return s
}

func TestEmbeddedFilesCompile(t *testing.T) {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 15 {
		t.Errorf("embedded files = %q, want 15", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := files.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			// The file as written, not the copy Validate uses, must be a
			// valid draft 2020-12 schema.
			c := jsonschema.NewCompiler()
			c.Draft = jsonschema.Draft2020
			if err := c.AddResource("https://example.invalid/"+name, bytes.NewReader(raw)); err != nil {
				t.Fatalf("AddResource: %v", err)
			}
			if _, err := c.Compile("https://example.invalid/" + name); err != nil {
				t.Fatalf("Compile: %v", err)
			}
			s := schemaOfFile(t, name)
			// And the copy Validate uses, which is compiled on first use.
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("the copy Validate uses does not compile: %v", r)
					}
				}()
				if s.validator() == nil {
					t.Fatal("validator() is nil")
				}
			}()
			if !bytes.Equal(s.JSON(), raw) {
				t.Errorf("JSON() differs from the embedded file")
			}
			if s.Description == "" {
				t.Errorf("schema has no description")
			}
			checkDescriptions(t, s.Root, "")
			for name, d := range s.defs {
				checkDescriptions(t, d, name)
			}
		})
	}
}

func schemaOfFile(t *testing.T, name string) *Schema {
	t.Helper()
	if name == documentFile {
		return Document()
	}
	for _, tok := range Tokens() {
		if s := mustLookup(t, tok); s.file == name {
			return s
		}
	}
	t.Fatalf("no type is loaded from %s", name)
	return nil
}

// checkDescriptions fails for every property without a description.
// Definitions may be recursive, so each Prop is visited once.
func checkDescriptions(t *testing.T, p *Prop, at string) {
	t.Helper()
	seen := make(map[*Prop]bool)
	var walk func(p *Prop, at string)
	walk = func(p *Prop, at string) {
		if p == nil || seen[p] {
			return
		}
		seen[p] = true
		for name, f := range p.Properties {
			if f.Description == "" {
				t.Errorf("property %s/%s has no description", at, name)
			}
			walk(f, at+"/"+name)
		}
		walk(p.Items, at+"/items")
		walk(p.AdditionalProperties, at+"/additionalProperties")
		for i, alt := range p.OneOf {
			walk(alt, at+"/oneOf/"+strconv.Itoa(i))
		}
	}
	walk(p, at)
}

func TestLookup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		token, want string
		kind        Kind
	}{
		{endpoint, endpoint, Resource},
		{"oci:AiLanguage/endpoint:Endpoint", endpoint, Resource},
		{"oci:ai_language:Endpoint", endpoint, Resource},
		{"oci:AiLanguage:Project", "oci:AiLanguage:Project", Resource},
		{"oci:AiLanguage/project:Project", "oci:AiLanguage:Project", Resource},
		{"oci:ai_language:Project", "oci:AiLanguage:Project", Resource},
		{"oci:AiLanguage:Model", "oci:AiLanguage:Model", Resource},
		{"oci:AiLanguage/model:Model", "oci:AiLanguage:Model", Resource},
		{"oci:ai_language:Model", "oci:AiLanguage:Model", Resource},
		{svcIAM, svcIAM, Function},
		{"gcp:endpoints/getServiceIamPolicy:getServiceIamPolicy", svcIAM, Function},
		{consIAM, consIAM, Function},
		{"gcp:endpoints/getServiceConsumersIamPolicy:getServiceConsumersIamPolicy", consIAM, Function},
		{policy, policy, Resource},
		{"datadog:index:RestrictionPolicy", policy, Resource},
		{"datadog:index/restrictionPolicy:RestrictionPolicy", policy, Resource},
		{currUser, currUser, Function},
		{"datadog:index:getCurrentUser", currUser, Function},
		{"datadog:index/getCurrentUser:getCurrentUser", currUser, Function},
	} {
		s, ok := Lookup(tc.token)
		if !ok {
			t.Errorf("Lookup(%q) found nothing, want %s", tc.token, tc.want)
			continue
		}
		if s.Token != tc.want || s.Kind != tc.kind {
			t.Errorf("Lookup(%q) = %s (%v), want %s (%v)", tc.token, s.Token, s.Kind, tc.want, tc.kind)
		}
		if got, ok := Canonical(tc.token); !ok || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v, want %q, true", tc.token, got, ok, tc.want)
		}
	}
	for _, token := range []string{"", "oci:AiLanguage:endpoint", "datadog:restrictionPolicy", "aws:s3:Bucket"} {
		if s, ok := Lookup(token); ok {
			t.Errorf("Lookup(%q) = %s, want nothing", token, s.Token)
		}
		if got, ok := Canonical(token); ok {
			t.Errorf("Canonical(%q) = %q, want nothing", token, got)
		}
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	want := []string{"datadog:RestrictionPolicy", "datadog:getCurrentUser",
		"gcp:endpoints:ConsumersIamBinding", "gcp:endpoints:ConsumersIamMember", "gcp:endpoints:ConsumersIamPolicy",
		"gcp:endpoints:ServiceIamBinding", "gcp:endpoints:ServiceIamMember", "gcp:endpoints:ServiceIamPolicy",
		"gcp:endpoints:getServiceConsumersIamPolicy", "gcp:endpoints:getServiceIamPolicy", "gcp:organizations:getIAMPolicy",
		"oci:AiLanguage:Endpoint", "oci:AiLanguage:Model", "oci:AiLanguage:Project"}
	got := Tokens()
	if !slices.Equal(got, want) {
		t.Errorf("Tokens() = %q, want %q", got, want)
	}
	got[0] = "changed"
	if Tokens()[0] != want[0] {
		t.Errorf("Tokens() shares its slice with callers")
	}
}

func TestKindStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got  interface{ String() string }
		want string
	}{
		{Resource, "resource"},
		{Function, "function"},
		{Kind(7), "Kind(7)"},
		{TypeMismatch, "type mismatch"},
		{Missing, "missing"},
		{Unknown, "unknown"},
		{OutputOnly, "output only"},
		{Invalid, "invalid"},
	} {
		if got := tc.got.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestInputsOutputs(t *testing.T) {
	t.Parallel()
	for token, tc := range map[string]struct {
		inputs, outputs []string
	}{
		endpoint: {
			inputs:  []string{"compartmentId", "definedTags", "description", "displayName", "freeformTags", "inferenceUnits", "modelId"},
			outputs: []string{"compartmentId", "definedTags", "description", "displayName", "freeformTags", "id", "inferenceUnits", "lifecycleDetails", "modelId", "projectId", "state", "systemTags", "timeCreated", "timeUpdated"},
		},
		policy: {
			inputs:  []string{"bindings", "resourceId"},
			outputs: []string{"bindings", "id", "resourceId"},
		},
		svcIAM: {
			inputs:  []string{"serviceName"},
			outputs: []string{"etag", "id", "policyData", "serviceName"},
		},
		consIAM: {
			inputs:  []string{"consumerProject", "serviceName"},
			outputs: []string{"consumerProject", "etag", "id", "policyData", "serviceName"},
		},
		currUser: {
			inputs:  []string{},
			outputs: []string{"email", "handle", "id", "name", "orgId"},
		},
	} {
		s := mustLookup(t, token)
		if got := s.Inputs(); !slices.Equal(got, tc.inputs) {
			t.Errorf("Lookup(%q).Inputs() = %q, want %q", token, got, tc.inputs)
		}
		if got := s.Outputs(); !slices.Equal(got, tc.outputs) {
			t.Errorf("Lookup(%q).Outputs() = %q, want %q", token, got, tc.outputs)
		}
	}
}

// TestFlags pins the facts plan and apply read from the schemas.
func TestFlags(t *testing.T) {
	t.Parallel()
	for token, tc := range map[string]struct {
		required, replace, sets []string // sets: paths of x-set lists
	}{
		endpoint: {required: []string{"compartmentId", "modelId"}},
		policy:   {required: []string{"bindings", "resourceId"}, replace: []string{"resourceId"}, sets: []string{"bindings", "bindings[].principals"}},
		svcIAM:   {required: []string{"serviceName"}},
		consIAM:  {required: []string{"consumerProject", "serviceName"}},
		currUser: {},
	} {
		s := mustLookup(t, token)
		if got := slices.Sorted(slices.Values(s.Root.Required)); !slices.Equal(got, tc.required) && len(got)+len(tc.required) > 0 {
			t.Errorf("%s: Required = %q, want %q", token, got, tc.required)
		}
		var replace, sets []string
		var walk func(p *Prop, at string)
		walk = func(p *Prop, at string) {
			if p.Set {
				sets = append(sets, at)
			}
			if p.Items != nil {
				walk(p.Items, at+"[]")
			}
			for name, f := range p.Properties {
				path := name
				if at != "" {
					path = at + "." + name
				}
				if f.ReplaceOnChange {
					replace = append(replace, path)
				}
				walk(f, path)
			}
		}
		walk(s.Root, "")
		slices.Sort(replace)
		slices.Sort(sets)
		if !slices.Equal(replace, tc.replace) {
			t.Errorf("%s: x-replace-on-change on %q, want %q", token, replace, tc.replace)
		}
		if !slices.Equal(sets, tc.sets) {
			t.Errorf("%s: x-set on %q, want %q", token, sets, tc.sets)
		}
		// An id is an output of every type, and never an input.
		if id, ok := s.Root.Field("id"); !ok || !id.ReadOnly || id.Type != "string" {
			t.Errorf("%s: id = %+v, want a read-only string", token, id)
		}
	}

	ep := mustLookup(t, endpoint).Root
	for _, tc := range []struct {
		field string
		got   any
		want  any
	}{
		{"inferenceUnits.Type", ep.Properties["inferenceUnits"].Type, "integer"},
		{"inferenceUnits.Default", ep.Properties["inferenceUnits"].Default, int64(1)},
		{"state.ReadOnly", ep.Properties["state"].ReadOnly, true},
		{"state.Enum", ep.Properties["state"].Enum, list{"CREATING", "ACTIVE", "UPDATING", "DELETING", "DELETED", "FAILED"}},
		{"definedTags.Type", ep.Properties["definedTags"].Type, "object"},
		{"definedTags values", ep.Properties["definedTags"].AdditionalProperties.Type, "string"},
		{"freeformTags values", ep.Properties["freeformTags"].AdditionalProperties.Type, "string"},
		{"systemTags.ReadOnly", ep.Properties["systemTags"].ReadOnly, true},
		{"systemTags values", ep.Properties["systemTags"].AdditionalProperties.Type, "string"},
		{"compartmentId.ReadOnly", ep.Properties["compartmentId"].ReadOnly, false},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("Endpoint %s = %#v, want %#v", tc.field, tc.got, tc.want)
		}
	}
	b := mustLookup(t, policy).Root.Properties["bindings"].Items
	if !slices.Equal(b.Required, []string{"relation", "principals"}) || b.AdditionalProperties != nil {
		t.Errorf("binding Required = %q, AdditionalProperties = %v; want relation and principals, none", b.Required, b.AdditionalProperties)
	}
}

func TestApplyDefaults(t *testing.T) {
	t.Parallel()
	s := mustLookup(t, endpoint)
	for name, tc := range map[string]struct {
		in, want obj
	}{
		"absent": {
			in:   obj{"compartmentId": "c", "modelId": "m"},
			want: obj{"compartmentId": "c", "modelId": "m", "inferenceUnits": int64(1)},
		},
		"given": {
			in:   obj{"compartmentId": "c", "inferenceUnits": int64(3)},
			want: obj{"compartmentId": "c", "inferenceUnits": int64(3)},
		},
		"null": {
			in:   obj{"inferenceUnits": nil},
			want: obj{"inferenceUnits": int64(1)},
		},
		"nil map": {
			in:   nil,
			want: obj{"inferenceUnits": int64(1)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := len(tc.in)
			got := s.ApplyDefaults(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ApplyDefaults(%v) = %v, want %v", tc.in, got, tc.want)
			}
			if len(tc.in) != before {
				t.Errorf("ApplyDefaults modified its argument: %v", tc.in)
			}
		})
	}
	// Read-only fields never get defaults, and types without defaults are
	// left alone.
	if got := mustLookup(t, policy).ApplyDefaults(obj{"resourceId": "slo:1"}); !reflect.DeepEqual(got, obj{"resourceId": "slo:1"}) {
		t.Errorf("RestrictionPolicy ApplyDefaults = %v, want the input", got)
	}
}

func TestDocumentParsed(t *testing.T) {
	t.Parallel()
	d := Document()
	if d.Token != "" {
		t.Errorf("Document().Token = %q, want none", d.Token)
	}
	wantTop := []string{"config", "description", "name", "outputs", "pulumi", "resources", "runtime", "variables"}
	if got := d.Outputs(); !slices.Equal(got, wantTop) {
		t.Errorf("document keys = %q, want %q", got, wantTop)
	}
	res := d.Root.Properties["resources"].AdditionalProperties
	if res == nil || res.Type != "object" || !slices.Equal(res.Required, []string{"type"}) {
		t.Fatalf("resources values = %+v, want the resource definition", res)
	}
	opts := res.Properties["options"]
	if opts == nil || opts.Description != "Resource options that change how the resource is managed." {
		t.Fatalf("resource options = %+v, want $defs/options with the description written beside the $ref", opts)
	}
	if def, ok := d.Def("options"); !ok || def.Properties["protect"] != opts.Properties["protect"] {
		t.Errorf("Def(\"options\") and the resource's options are not the same definition")
	}

	flags := func(p *Prop) string {
		if p == nil {
			return "missing"
		}
		var f []string
		if p.Expression {
			f = append(f, "expression")
		}
		if p.Ignored {
			f = append(f, "ignored")
		}
		return p.Type + " " + strings.Join(f, ",")
	}
	for path, want := range map[string]string{
		"protect":                 "boolean expression",
		"deleteBeforeReplace":     "boolean expression",
		"retainOnDelete":          "boolean expression",
		"dependsOn":               "array expression",
		"ignoreChanges":           "array ",
		"replaceOnChanges":        "array ",
		"import":                  "string ",
		"customTimeouts":          "object ",
		"parent":                  "string expression",
		"provider":                "string expression,ignored",
		"providers":               " expression,ignored",
		"version":                 "string ignored",
		"pluginDownloadURL":       "string ignored",
		"aliases":                 "array expression,ignored",
		"additionalSecretOutputs": "array ",
		"deletedWith":             "string expression,ignored",
		"replaceWith":             "array expression,ignored",
		"replacementTrigger":      " expression,ignored",
		"hideDiffs":               "array ignored",
		"envVarMappings":          "object expression,ignored",
	} {
		if got := flags(opts.Properties[path]); got != want {
			t.Errorf("options.%s = %q, want %q", path, got, want)
		}
	}
	if len(opts.Properties) != 20 {
		t.Errorf("options has %d keys, want 20", len(opts.Properties))
	}
	if got := flags(opts.Properties["dependsOn"].Items); got != "string expression" {
		t.Errorf("options.dependsOn items = %q, want %q", got, "string expression")
	}
	for _, op := range []string{"create", "update", "delete", "read"} {
		if got := flags(opts.Properties["customTimeouts"].Properties[op]); got != "string expression" {
			t.Errorf("customTimeouts.%s = %q, want %q", op, got, "string expression")
		}
	}
	get := res.Properties["get"]
	if got := flags(get.Properties["id"]); got != "string expression" || !slices.Equal(get.Required, []string{"id"}) {
		t.Errorf("get.id = %q, required %q; want a required string expression", got, get.Required)
	}
	if !d.Root.Properties["resources"].AdditionalProperties.Properties["options"].Properties["protect"].Expression {
		t.Errorf("protect is not marked x-expression")
	}

	decl := d.Root.Properties["config"].AdditionalProperties
	if len(decl.OneOf) != 2 || decl.OneOf[0].Type != "" || decl.OneOf[1].Type != "object" {
		t.Fatalf("configDecl = %+v, want a choice of a scalar and an object", decl)
	}
	typ := decl.OneOf[1].Properties["type"]
	if typ.Type != "string" || len(typ.Enum) != 0 {
		t.Errorf("configDecl type = %+v, want a string (List<T> included, so no enum)", typ)
	}
	if items := decl.OneOf[1].Properties["items"]; items.Properties["items"].Properties["type"] == nil {
		t.Errorf("configDecl items does not recurse: %+v", items)
	}

	inv, ok := d.Def("invoke")
	if !ok || !slices.Equal(inv.Required, []string{"function"}) {
		t.Fatalf("Def(\"invoke\") = %+v, want function required", inv)
	}
	for _, k := range []string{"function", "arguments", "options", "return"} {
		if _, ok := inv.Field(k); !ok {
			t.Errorf("invoke has no %q", k)
		}
	}
}

func TestCamelCase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"model_id":          "modelId",
		"modelId":           "modelId",
		"defined_tags":      "definedTags",
		"lifecycle_details": "lifecycleDetails",
		"id":                "id",
		"org_id":            "orgId",
		"_private":          "_private",
		"trailing_":         "trailing_",
		"displayName_":      "displayName_",
		"display__name":     "display__name",
		"display_Name":      "display_Name",
		"model_2":           "model2",
	} {
		if got := CamelCase(in); got != want {
			t.Errorf("CamelCase(%q) = %q, want %q", in, got, want)
		}
	}
	// Every field of every type has a snake_case spelling that maps back.
	for _, tok := range Tokens() {
		for _, name := range mustLookup(t, tok).Outputs() {
			if got := CamelCase(snake(name)); got != name {
				t.Errorf("%s: CamelCase(%q) = %q, want %q", tok, snake(name), got, name)
			}
		}
	}
}

func snake(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func TestField(t *testing.T) {
	t.Parallel()
	root := mustLookup(t, endpoint).Root
	if f, ok := root.Field("modelId"); !ok || f.Type != "string" {
		t.Errorf(`Field("modelId") = %+v, %v`, f, ok)
	}
	if _, ok := root.Field("model_id"); ok {
		t.Errorf(`Field("model_id") found a field; spellings are the caller's to normalize`)
	}
	var nilProp *Prop
	if _, ok := nilProp.Field("x"); ok {
		t.Errorf("Field on a nil Prop found a field")
	}
}

// Each type's Pulumi token is the one its Pulumi provider registers it
// under, one of the tokens reconcile accepts for it.
func TestPulumiToken(t *testing.T) {
	for token, want := range map[string]string{
		"oci:AiLanguage:Endpoint":          "oci:AiLanguage/endpoint:Endpoint",
		"datadog:RestrictionPolicy":        "datadog:index/restrictionPolicy:RestrictionPolicy",
		"gcp:endpoints:ServiceIamPolicy":   "gcp:endpoints/serviceIamPolicy:ServiceIamPolicy",
		"gcp:endpoints:ConsumersIamMember": "gcp:endpoints/consumersIamMember:ConsumersIamMember",
		"datadog:getCurrentUser":           "datadog:index/getCurrentUser:getCurrentUser",
	} {
		s, ok := Lookup(token)
		if !ok {
			t.Fatalf("Lookup(%q) found nothing", token)
		}
		if got := s.PulumiToken(); got != want {
			t.Errorf("PulumiToken of %s = %q, want %q", token, got, want)
		}
	}
	for _, token := range Tokens() {
		s, _ := Lookup(token)
		if pt := s.PulumiToken(); pt != s.Token && !slices.Contains(s.Aliases, pt) {
			t.Errorf("PulumiToken of %s = %q, which is not a token it accepts (%v)", token, pt, s.Aliases)
		}
	}
}
