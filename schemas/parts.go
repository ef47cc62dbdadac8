package schemas

import (
	"encoding/json"
	"errors"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Part is a value that stands at Path in an instance of a schema.
type Part struct {
	Path  []string
	Value any
}

// ValidateParts validates values that stand at paths of an instance whose
// other parts were already validated: the engine checks the literals of a
// spec when it loads it, and only the values it computes later when it
// plans. Each part is validated against the schema that applies at its
// path; the violations have paths from the top of the instance, and are
// sorted and kept one per path as Validate's are.
//
// Let the instance without its parts be the instance with each part's
// entry left out of its object, or each part's item of a list replaced by
// null. If Validate reported nothing for the instance without its parts
// but at the parts' paths, then Validate of the whole instance reports
// exactly what ValidateParts does, provided it reports ok. It reports !ok,
// and nothing, when some part cannot be validated apart from the rest:
// when the schema along its path has keywords that look at a value as a
// whole (oneOf, enum, uniqueItems, propertyNames and the like), or does
// not name the field that leads to it; then validate the whole instance.
//
// Parts must not be nested in one another. Values are JSON-shaped as for
// Validate, and a value of another type is taken as not yet known.
func (s *Schema) ValidateParts(parts []Part) (vs []Violation, ok bool) {
	for _, p := range parts {
		ps := s.partSchema(p.Path)
		if ps == nil {
			return nil, false
		}
		if ps.simple != nil && ps.simple.accepts(p.Value) {
			continue
		}
		pr := &preparer{}
		inst := pr.value(p.Value, ps.prop, nil)
		for _, v := range pr.found {
			vs = append(vs, Violation{Path: prefixed(p.Path, v.Path), Kind: v.Kind, Message: v.Message})
		}
		if len(pr.opaque) > 0 && len(pr.opaque[0]) == 0 {
			continue // not known: whatever the validator finds is hidden
		}
		err := ps.compiled.Validate(inst)
		if err == nil {
			continue
		}
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			vs = append(vs, Violation{Kind: Invalid, Message: err.Error()}) // as Validate does
			continue
		}
		c := &converter{s: s, inst: inst, base: ps.pointer, depth: len(p.Path)}
		for _, o := range pr.opaque {
			c.opaque = append(c.opaque, prefixed(p.Path, o))
		}
		// The error at the top stands for the part's schema as a whole:
		// its causes are what Validate finds below the keyword that leads
		// to the part.
		for _, cause := range ve.Causes {
			vs = append(vs, c.collect(cause)...)
		}
	}
	return tidy(vs), true
}

// prefixed returns path after prefix, sharing nothing with either.
func prefixed(prefix, path []string) []string {
	return append(append(make([]string, 0, len(prefix)+len(path)), prefix...), path...)
}

// partSchema is the schema that applies at a path of an instance, when a
// value there can be validated apart from the rest of the instance.
type partSchema struct {
	prop     *Prop
	compiled *jsonschema.Schema
	pointer  string // of the path, escaped as the validator escapes it
	simple   *simpleSchema
}

// partSchema returns the schema at path, compiled, or nil when a value at
// path cannot be validated apart. It is compiled once per path.
func (s *Schema) partSchema(path []string) *partSchema {
	key := strings.Join(path, "\x00")
	s.partsMu.RLock()
	ps, ok := s.parts[key]
	s.partsMu.RUnlock()
	if ok {
		return ps
	}
	s.partsMu.Lock()
	defer s.partsMu.Unlock()
	if ps, ok := s.parts[key]; ok {
		return ps
	}
	if node, loc, prop, ok := s.locate(path); ok {
		s.validator() // makes s.compiler
		if compiled, err := s.compiler.Compile(baseURL + s.file + "#" + loc); err == nil {
			ps = &partSchema{prop: prop, compiled: compiled, pointer: validatorPointer(path)}
			if prop == nil || !prop.Expression {
				ps.simple = simpleOf(node)
			}
		}
	}
	if s.parts == nil {
		s.parts = map[string]*partSchema{}
	}
	s.parts[key] = ps
	return ps
}

// simpleSchema is a schema that asserts nothing but what its accepts
// checks: the type (string, integer, boolean, array or object), a string's
// length, pattern and choices, an integer's bounds, a list's length and
// the schema of its items, an object's fields, required fields and the
// schema of its other fields. Its accepts is a quick yes for the values
// that fit: the validator, for any other.
type simpleSchema struct {
	typ            string
	minLen, maxLen int64 // of a string (in characters) or a list; -1 when not given
	min, max       *int64
	enum           []string // nil when not given
	pattern        *regexp.Regexp
	items          *simpleSchema // of a list; nil when any item fits
	// fields are an object's named fields (a nil schema: one accepts
	// cannot tell), other the schema of any other field (nil: accepts
	// takes none), required the fields it must have.
	fields   map[string]*simpleSchema
	other    *simpleSchema
	required []string
}

// simpleOf returns the simpleSchema of node, or nil when node says more.
func simpleOf(node any) *simpleSchema {
	m, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	ss := &simpleSchema{minLen: -1, maxLen: -1}
	ss.typ, _ = m["type"].(string)
	switch ss.typ {
	case "string", "integer", "boolean", "array", "object":
	default:
		return nil
	}
	integer := func(v any) (int64, bool) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, false
		}
		i, err := n.Int64()
		return i, err == nil
	}
	for k, v := range m {
		var ok bool
		switch {
		case k == "x-expression":
			ok = v == false // a ${...} may stand there: not a value to check
		case k == "type" || annotation(k):
			ok = true
		case (k == "minLength" || k == "maxLength") && ss.typ == "string", (k == "minItems" || k == "maxItems") && ss.typ == "array":
			var n int64
			if n, ok = integer(v); ok && strings.HasPrefix(k, "min") {
				ss.minLen = n
			} else if ok {
				ss.maxLen = n
			}
		case (k == "minimum" || k == "maximum") && ss.typ == "integer":
			var n int64
			if n, ok = integer(v); ok && k == "minimum" {
				ss.min = &n
			} else if ok {
				ss.max = &n
			}
		case k == "enum" && ss.typ == "string":
			list, _ := v.([]any)
			ss.enum, ok = make([]string, 0, len(list)), list != nil
			for _, e := range list {
				str, isStr := e.(string)
				ss.enum, ok = append(ss.enum, str), ok && isStr
			}
		case k == "pattern" && ss.typ == "string":
			// As the validator compiles it, and matches anywhere.
			if expr, isStr := v.(string); isStr {
				var err error
				ss.pattern, err = regexp.Compile(expr)
				ok = err == nil
			}
		case k == "items" && ss.typ == "array":
			ss.items = simpleOf(v)
			ok = ss.items != nil
		case k == "properties" && ss.typ == "object":
			var props map[string]any
			if props, ok = v.(map[string]any); ok {
				ss.fields = make(map[string]*simpleSchema, len(props))
				for name, sub := range props {
					ss.fields[name] = simpleOf(sub)
				}
			}
		case k == "required" && ss.typ == "object":
			list, _ := v.([]any)
			ok = list != nil
			for _, r := range list {
				name, isStr := r.(string)
				ok = ok && isStr && !strings.Contains(name, "/")
				ss.required = append(ss.required, name)
			}
		case k == "additionalProperties" && ss.typ == "object":
			switch ap := v.(type) {
			case bool:
				ok = !ap // true would let any field through unchecked: rare
			case map[string]any:
				ss.other = simpleOf(ap)
				ok = ss.other != nil
			}
		}
		if !ok {
			return nil
		}
	}
	return ss
}

// accepts reports whether v surely fits the schema; false says nothing.
func (ss *simpleSchema) accepts(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return ss.acceptsTree(valueTreeOf(v, nil))
	}
	return ss.acceptsScalar(v)
}

// acceptsScalar is accepts of anything but a list or an object.
func (ss *simpleSchema) acceptsScalar(v any) bool {
	switch ss.typ {
	case "string":
		str, ok := v.(string)
		if !ok || ss.enum != nil && !slices.Contains(ss.enum, str) || ss.pattern != nil && !ss.pattern.MatchString(str) {
			return false
		}
		if ss.minLen >= 0 || ss.maxLen >= 0 {
			return ss.lengthFits(int64(utf8.RuneCountInString(str))) // as the validator counts
		}
		return true
	case "integer":
		n, ok := v.(int64)
		return ok && (ss.min == nil || n >= *ss.min) && (ss.max == nil || n <= *ss.max)
	case "boolean":
		_, ok := v.(bool)
		return ok
	}
	return false
}

// lengthFits reports whether a string or a list of length n fits.
func (ss *simpleSchema) lengthFits(n int64) bool {
	return (ss.minLen < 0 || n >= ss.minLen) && (ss.maxLen < 0 || n <= ss.maxLen)
}

// validatorPointer writes path as the validator writes instance
// locations.
func validatorPointer(path []string) string {
	var b strings.Builder
	for _, seg := range path {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(escapeToken(seg)))
	}
	return b.String()
}

// transparent are the keywords of a schema whose outcome for an object or
// a list does not depend on the values of its fields or items, only on
// their names and number: a value below a schema that has no others can
// be validated apart from its siblings. Keywords of strings and numbers
// are among them, as they do not apply to an object or a list; so are
// annotations.
var transparent = map[string]bool{
	"type": true, "properties": true, "additionalProperties": true, "items": true,
	"required": true, "minItems": true, "maxItems": true,
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
}

// annotation reports whether a keyword asserts nothing.
func annotation(k string) bool {
	switch k {
	case "$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly":
		return true
	}
	return strings.HasPrefix(k, "x-")
}

// locate returns the location (a JSON Pointer into the schema validated
// against) and the Prop of the schema that applies at path, when every
// schema on the way to it is transparent and names the way: a field of
// properties, any field through an additionalProperties schema, or an
// item through an items schema.
func (s *Schema) locate(path []string) (node any, loc string, prop *Prop, ok bool) {
	if slices.Contains(path, "") {
		// The validator reports what it finds below a field named ""
		// at the object that holds it: validate the whole.
		return nil, "", nil, false
	}
	node, loc, prop = s.vtree, "", s.Root
	for _, seg := range path {
		var m map[string]any
		for range 16 { // bounded: $refs may chain but must not loop
			var ok bool
			if m, ok = node.(map[string]any); !ok {
				return nil, "", nil, false
			}
			ref, isRef := m["$ref"].(string)
			if !isRef {
				break
			}
			for k := range m {
				if k != "$ref" && !annotation(k) {
					return nil, "", nil, false // keywords beside the $ref apply too
				}
			}
			frag, ok := strings.CutPrefix(ref, "#")
			if !ok {
				return nil, "", nil, false
			}
			node, loc = resolve(s.vtree, instancePath(frag)), frag
		}
		for k := range m {
			if !transparent[k] && !annotation(k) {
				return nil, "", nil, false
			}
		}
		if _, ref := m["$ref"]; ref {
			return nil, "", nil, false // a chain of $refs too long
		}
		props, _ := m["properties"].(map[string]any)
		sub, named := props[seg].(map[string]any)
		ap, isMap := m["additionalProperties"].(map[string]any)
		elem, hasItems := m["items"].(map[string]any)
		_, notIndex := strconv.Atoi(seg)
		switch {
		case m["type"] == "object" && named && seg != "oneOf" && seg != "anyOf":
			// (A field named like a keyword of choice would be taken for
			// one when Validate reports below it: validate the whole.)
			node, loc, prop = sub, loc+"/properties/"+escapeToken(seg), child(prop, seg)
		case m["type"] == "object" && props[seg] == nil && isMap:
			node, loc, prop = ap, loc+"/additionalProperties", child(prop, seg)
		case m["type"] == "array" && hasItems && notIndex == nil:
			node, loc, prop = elem, loc+"/items", items(prop)
		default:
			return nil, "", nil, false
		}
	}
	return node, loc, prop, true
}

// partCache holds what ValidateParts compiled, a Schema's parts by path,
// and what Accepts asks.
type partCache struct {
	partsMu  sync.RWMutex // held to write also while compiling: the compiler is not safe for concurrent use
	compiler *jsonschema.Compiler
	parts    map[string]*partSchema // by path (segments joined by NUL); nil when none

	topOnce   sync.Once
	topSchema *simpleSchema // nil when the schema is not simple
}

// Accepts reports whether Validate(in) surely finds nothing but fields
// missing that absent names: every value of in fits a schema simple enough
// (see simpleSchema) to tell at once, such as strings, numbers, lists of
// them and objects of those, every other field the schema requires is
// named by absent (the engine leaves out the values it does not know yet
// and checks them later), and the schema of the whole asks nothing else.
// false says nothing: validate with Validate. It saves the validator the
// work, and its garbage, for the most common inputs.
func (s *Schema) Accepts(in map[string]any, absent map[string]bool) bool {
	return s.AcceptsTree(valueTreeOf(in, absent))
}

// AcceptsTree is Accepts of a value read where it lies (a spec's
// expression, say) rather than built: the fields of the whole that are not
// known yet (nil Trees) are the ones absent, and are not checked. Below the
// whole, a value not known yet is not accepted as an item of a list, nor as
// a field an object requires; as any other field, it is not checked.
func (s *Schema) AcceptsTree(t Tree) bool {
	top := s.top()
	if top == nil {
		return false
	}
	kind, _, _ := t.Shape()
	return kind == TreeObject && top.acceptsFields(t, true)
}

// A Tree is a value that AcceptsTree reads through, without its being
// built. A nil Tree is a value not known yet.
type Tree interface {
	// Shape says what the value is: a scalar and its value (nil, bool,
	// int64, float64 or string), or a list or an object and how many
	// items or fields it has.
	Shape() (kind TreeKind, scalar any, n int)
	// Child returns the item or field i of a list (key "") or an object,
	// whose keys are unique.
	Child(i int) (key string, t Tree)
}

// TreeKind is the kind of a Tree's value.
type TreeKind int

const (
	TreeScalar TreeKind = iota
	TreeList
	TreeObject
)

// acceptsTree is accepts of a Tree; a value not known yet is not accepted.
func (ss *simpleSchema) acceptsTree(t Tree) bool {
	if t == nil {
		return false
	}
	kind, scalar, n := t.Shape()
	switch {
	case kind == TreeScalar:
		return ss.acceptsScalar(scalar)
	case kind == TreeList && ss.typ == "array":
		if !ss.lengthFits(int64(n)) {
			return false
		}
		for i := range n {
			if _, item := t.Child(i); ss.items != nil && !ss.items.acceptsTree(item) {
				return false
			}
		}
		return true
	case kind == TreeObject && ss.typ == "object":
		return ss.acceptsFields(t, false)
	}
	return false
}

// acceptsFields is acceptsTree of an object: it has every field required
// and each of its fields fits. unknownPresent says whether a field not
// known yet counts as there for the required fields.
func (ss *simpleSchema) acceptsFields(t Tree, unknownPresent bool) bool {
	_, _, n := t.Shape()
	required := 0 // the required fields there (keys are unique)
	for i := range n {
		k, v := t.Child(i)
		if (v != nil || unknownPresent) && slices.Contains(ss.required, k) {
			required++
		}
		if v == nil {
			continue // checked when known
		}
		sub, named := ss.fields[k]
		if !named {
			sub = ss.other
		}
		if sub == nil || !sub.acceptsTree(v) {
			return false
		}
	}
	return required == len(ss.required)
}

// valueTree is a value as a Tree: a scalar, a []any or a map[string]any.
type valueTree struct {
	v    any
	keys []string // of a map: its keys and the names absent
}

// valueTreeOf returns v as a Tree whose fields not known yet, if v is a
// map, are the names that absent holds and v does not.
func valueTreeOf(v any, absent map[string]bool) *valueTree {
	t := &valueTree{v: v}
	if m, ok := v.(map[string]any); ok {
		t.keys = slices.Collect(maps.Keys(m))
		for k := range absent {
			if _, ok := m[k]; !ok {
				t.keys = append(t.keys, k)
			}
		}
	}
	return t
}

func (t *valueTree) Shape() (TreeKind, any, int) {
	switch x := t.v.(type) {
	case []any:
		return TreeList, nil, len(x)
	case map[string]any:
		return TreeObject, nil, len(t.keys)
	}
	return TreeScalar, t.v, 0
}

func (t *valueTree) Child(i int) (string, Tree) {
	switch x := t.v.(type) {
	case []any:
		return "", valueTreeOf(x[i], nil)
	case map[string]any:
		k := t.keys[i]
		if v, ok := x[k]; ok {
			return k, valueTreeOf(v, nil)
		}
		return k, nil
	}
	return "", nil
}

// top returns the simpleSchema of the whole, made once, or nil when it
// says more than a simpleSchema of an object. A field where a ${...}
// expression may stand is left to the validator.
func (s *Schema) top() *simpleSchema {
	s.topOnce.Do(func() {
		ss := simpleOf(s.vtree)
		if ss == nil || ss.typ != "object" {
			return
		}
		for name := range ss.fields {
			if p := s.Root.Properties[name]; p != nil && p.Expression {
				ss.fields[name] = nil
			}
		}
		s.topSchema = ss
	})
	return s.topSchema
}
