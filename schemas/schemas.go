package schemas

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

//go:embed *.json
var files embed.FS

// documentFile is the schema of a spec document; every other file is a type.
const documentFile = "document.json"

// baseURL is where the compiler believes the schemas live; nothing is
// fetched from it.
const baseURL = "https://reconcile.invalid/schemas/"

// Kind tells resources from functions (lookups).
type Kind int

// Kinds of type.
const (
	Resource Kind = iota // managed: created, updated, deleted
	Function             // a lookup: read, never changed
)

func (k Kind) String() string {
	switch k {
	case Resource:
		return "resource"
	case Function:
		return "function"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Schema is one parsed schema: of a resource or function type, or of the
// spec document.
type Schema struct {
	Token       string   // canonical token; "" for the document schema
	Aliases     []string // other tokens accepted for the type
	Kind        Kind     // meaningless for the document schema
	Description string
	Root        *Prop // the object schema of the type (or of the document)

	file      string
	raw       []byte           // the file as embedded
	defs      map[string]*Prop // parsed $defs
	vtree     any              // the schema validated against: readOnly properties removed
	vraw      []byte           // vtree as JSON, for the compiler
	otree     any              // the schema as written
	partCache                  // for ValidateParts
	// compileOnce compiles vraw, on the first validation: a command that
	// validates nothing (the apply of a saved plan) does not pay for it.
	compileOnce sync.Once
	compiled    *jsonschema.Schema
}

// registry is every embedded schema, parsed (each is compiled on first
// use, see validator).
type registry struct {
	byToken map[string]*Schema // canonical tokens and aliases
	tokens  []string           // canonical tokens, sorted
	doc     *Schema
}

var load = sync.OnceValues(loadAll)

// reg returns the registry. The schemas are embedded and covered by tests,
// so a schema that does not load is a bug in this package: reg panics.
func reg() *registry {
	r, err := load()
	if err != nil {
		panic(err)
	}
	return r
}

func loadAll() (*registry, error) {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		return nil, err
	}
	r := &registry{byToken: make(map[string]*Schema)}
	for _, name := range names {
		raw, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		s, err := parseSchema(name, raw)
		if err != nil {
			return nil, err
		}
		if name == documentFile {
			r.doc = s
			continue
		}
		if s.Token == "" {
			return nil, fmt.Errorf("schemas: load %q: no x-token", name)
		}
		r.tokens = append(r.tokens, s.Token)
		for _, t := range append([]string{s.Token}, s.Aliases...) {
			if prev, ok := r.byToken[t]; ok {
				return nil, fmt.Errorf("schemas: load %q: token %q is already used by %q", name, t, prev.file)
			}
			r.byToken[t] = s
		}
	}
	if r.doc == nil {
		return nil, fmt.Errorf("schemas: load: no %s", documentFile)
	}
	sort.Strings(r.tokens)
	return r, nil
}

// parseSchema parses, checks and compiles one embedded file.
func parseSchema(name string, raw []byte) (*Schema, error) {
	tree, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("schemas: load %q: %w", name, err)
	}
	top, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schemas: load %q: not a JSON object", name)
	}
	s := &Schema{file: name, raw: raw, otree: tree}
	s.Token, _ = top["x-token"].(string)
	s.Description, _ = top["description"].(string)
	if as, ok := top["x-aliases"].([]any); ok {
		for _, a := range as {
			a, ok := a.(string)
			if !ok {
				return nil, fmt.Errorf("schemas: load %q: x-aliases must hold strings", name)
			}
			s.Aliases = append(s.Aliases, a)
		}
	}
	switch k, _ := top["x-kind"].(string); k {
	case "resource", "":
		s.Kind = Resource
	case "function":
		s.Kind = Function
	default:
		return nil, fmt.Errorf("schemas: load %q: unknown x-kind %q", name, k)
	}

	p := &parser{tree: top, defs: make(map[string]*Prop)}
	if s.Root, err = p.prop(tree); err != nil {
		return nil, fmt.Errorf("schemas: load %q: %w", name, err)
	}
	if defs, ok := top["$defs"].(map[string]any); ok {
		for d := range defs {
			if _, err := p.ref("#/$defs/" + escapeToken(d)); err != nil {
				return nil, fmt.Errorf("schemas: load %q: %w", name, err)
			}
		}
	}
	p.finish()
	s.defs = p.defs

	s.vtree = withoutReadOnly(tree)
	if s.vraw, err = json.Marshal(s.vtree); err != nil {
		return nil, fmt.Errorf("schemas: load %q: %w", name, err)
	}
	return s, nil
}

// validator returns the schema compiled for the validator, compiling it
// on the first call. The schemas are embedded and every one is compiled by
// the tests (TestEmbeddedFilesCompile), so one that does not compile is a bug in this
// package: validator panics, as reg does.
func (s *Schema) validator() *jsonschema.Schema {
	s.compileOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		if err := c.AddResource(baseURL+s.file, bytes.NewReader(s.vraw)); err != nil {
			panic(fmt.Errorf("schemas: compile %q: %w", s.file, err))
		}
		compiled, err := c.Compile(baseURL + s.file)
		if err != nil {
			panic(fmt.Errorf("schemas: compile %q: %w", s.file, err))
		}
		s.compiled, s.compiler = compiled, c
	})
	return s.compiled
}

// decode parses JSON keeping numbers exact (as json.Number).
func decode(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// Lookup returns the schema of a type by its canonical token or any alias.
func Lookup(token string) (*Schema, bool) {
	s, ok := reg().byToken[token]
	return s, ok
}

// Canonical returns the canonical token of a type named by its canonical
// token or any alias, and false for a token that names no type.
func Canonical(token string) (string, bool) {
	s, ok := Lookup(token)
	if !ok {
		return "", false
	}
	return s.Token, true
}

// PulumiToken returns the type token the type's Pulumi provider registers
// it under, pkg:module/kind:Kind (Pulumi writes a type without a module in
// module "index"): what Pulumi puts in a resource's URN. The canonical
// token may be a short form Pulumi resolves to it.
func (s *Schema) PulumiToken() string {
	parts := strings.Split(s.Token, ":")
	switch len(parts) {
	case 2:
		parts = []string{parts[0], "index", parts[1]}
	case 3:
	default:
		return s.Token
	}
	if strings.Contains(parts[1], "/") || parts[2] == "" {
		return s.Token
	}
	kind := strings.ToLower(parts[2][:1]) + parts[2][1:]
	return parts[0] + ":" + parts[1] + "/" + kind + ":" + parts[2]
}

// Tokens returns the canonical tokens of all types, sorted.
func Tokens() []string {
	return slices.Clone(reg().tokens)
}

// Digest is a digest of every embedded schema: specs that are valid under
// schemas of one digest are valid under all schemas of that digest.
func Digest() string { return digest() }

var digest = sync.OnceValue(func() string {
	names, _ := fs.Glob(files, "*.json") // sorted
	h := sha256.New()
	for _, name := range names {
		raw, _ := files.ReadFile(name)
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(raw))
		h.Write(raw)
	}
	return hex.EncodeToString(h.Sum(nil))
})

// Document returns the schema of a spec document.
func Document() *Schema {
	return reg().doc
}

// JSON returns the schema text exactly as embedded.
func (s *Schema) JSON() []byte {
	return slices.Clone(s.raw)
}

// Def returns a parsed entry of the schema's $defs, such as "invoke" or
// "options" of the document schema.
func (s *Schema) Def(name string) (*Prop, bool) {
	p, ok := s.defs["#/$defs/"+escapeToken(name)]
	return p, ok
}

// Inputs returns the sorted names of the top-level properties that are not
// output only.
func (s *Schema) Inputs() []string {
	names := []string{}
	for name, p := range s.Root.Properties {
		if !p.ReadOnly {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Outputs returns the sorted names of all top-level properties: every input
// is an output too.
func (s *Schema) Outputs() []string {
	names := make([]string, 0, len(s.Root.Properties))
	for name := range s.Root.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// ApplyDefaults returns a copy of in in which every top-level input that has
// a default and is absent (or nil) holds that default. The values of in are
// shared with the copy, not copied; defaults are fresh values. in is not
// modified; a nil in gives a map of the defaults alone.
func (s *Schema) ApplyDefaults(in map[string]any) map[string]any {
	out := make(map[string]any, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	s.FillDefaults(out)
	return out
}

// FillDefaults is ApplyDefaults that changes m itself, for a caller that
// owns it: every top-level input that has a default and is absent (or
// nil) in m is set to a fresh copy of that default.
func (s *Schema) FillDefaults(m map[string]any) {
	for name, p := range s.Root.Properties {
		if p.ReadOnly || p.Default == nil {
			continue
		}
		if v, ok := m[name]; !ok || v == nil {
			m[name] = deepCopy(p.Default)
		}
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// withoutReadOnly returns a copy of a schema tree in which every property
// marked readOnly is gone, from properties and from required, so that
// validating inputs rejects outputs as fields it does not know. Only schema
// positions are walked, so a property that happens to be called
// "properties" is not mistaken for the keyword.
func withoutReadOnly(node any) any {
	m, ok := node.(map[string]any)
	if !ok {
		return node
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	if props, ok := m["properties"].(map[string]any); ok {
		kept := make(map[string]any, len(props))
		removed := make(map[string]bool)
		for name, sub := range props {
			if sm, ok := sub.(map[string]any); ok && sm["readOnly"] == true {
				removed[name] = true
				continue
			}
			kept[name] = withoutReadOnly(sub)
		}
		out["properties"] = kept
		if req, ok := m["required"].([]any); ok && len(removed) > 0 {
			keep := []any{}
			for _, r := range req {
				if name, _ := r.(string); !removed[name] {
					keep = append(keep, r)
				}
			}
			out["required"] = keep
		}
	}
	for _, kw := range []string{"$defs", "patternProperties", "dependentSchemas"} {
		if defs, ok := m[kw].(map[string]any); ok {
			copied := make(map[string]any, len(defs))
			for name, sub := range defs {
				copied[name] = withoutReadOnly(sub)
			}
			out[kw] = copied
		}
	}
	for _, kw := range []string{"items", "additionalProperties", "propertyNames", "not", "if", "then", "else", "contains", "unevaluatedProperties", "unevaluatedItems"} {
		if sub, ok := m[kw]; ok {
			out[kw] = withoutReadOnly(sub)
		}
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf", "prefixItems"} {
		if list, ok := m[kw].([]any); ok {
			copied := make([]any, len(list))
			for i, sub := range list {
				copied[i] = withoutReadOnly(sub)
			}
			out[kw] = copied
		}
	}
	return out
}

// escapeToken escapes one JSON Pointer reference token.
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Names returns every type token and every alias, for suggesting one close
// to a misspelt name.
func Names() []string {
	var out []string
	for _, t := range Tokens() {
		s, _ := Lookup(t)
		out = append(out, t)
		out = append(out, s.Aliases...)
	}
	return out
}
