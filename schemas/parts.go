package schemas

import (
	"encoding/json"
	"errors"
	"net/url"
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

// simpleSchema is a schema of a string, an integer or a boolean that
// asserts nothing but its type, bounds on the length of a string or the
// value of an integer, and a choice of strings. Its accepts is a quick
// yes for the values that fit: the validator, for any other.
type simpleSchema struct {
	typ            string
	minLen, maxLen int64 // -1 when not given
	min, max       *int64
	enum           []string // nil when not given
}

// simpleOf returns the simpleSchema of node, or nil when node says more.
func simpleOf(node any) *simpleSchema {
	m, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	ss := &simpleSchema{minLen: -1, maxLen: -1}
	ss.typ, _ = m["type"].(string)
	if ss.typ != "string" && ss.typ != "integer" && ss.typ != "boolean" {
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
		case k == "type" || annotation(k):
			ok = true
		case (k == "minLength" || k == "maxLength") && ss.typ == "string":
			var n int64
			if n, ok = integer(v); ok && k == "minLength" {
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
		}
		if !ok {
			return nil
		}
	}
	return ss
}

// accepts reports whether v surely fits the schema; false says nothing.
func (ss *simpleSchema) accepts(v any) bool {
	switch ss.typ {
	case "string":
		str, ok := v.(string)
		if !ok || ss.enum != nil && !slices.Contains(ss.enum, str) {
			return false
		}
		if ss.minLen >= 0 || ss.maxLen >= 0 {
			n := int64(utf8.RuneCountInString(str)) // as the validator counts
			return (ss.minLen < 0 || n >= ss.minLen) && (ss.maxLen < 0 || n <= ss.maxLen)
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
// and what AcceptsFlat asks.
type partCache struct {
	partsMu  sync.RWMutex // held to write also while compiling: the compiler is not safe for concurrent use
	compiler *jsonschema.Compiler
	parts    map[string]*partSchema // by path (segments joined by NUL); nil when none

	flatOnce   sync.Once
	flatSchema *flatSchema // nil when the schema is not flat
}

// AcceptsFlat reports whether Validate(in) surely finds nothing but fields
// missing that absent names: in is a flat object of strings, integers and
// booleans, each the value of a field whose schema is simple (see
// simpleSchema), every other field the schema requires is named by absent
// (the engine leaves out the values it does not know yet and checks them
// later), and the schema of the whole asks nothing else. false says
// nothing: validate with Validate. It saves the validator the work for the
// most common inputs.
func (s *Schema) AcceptsFlat(in map[string]any, absent map[string]bool) bool {
	f := s.flat()
	if f == nil {
		return false
	}
	for _, name := range f.required {
		if _, ok := in[name]; !ok && !absent[name] {
			return false
		}
	}
	for k, v := range in {
		ss, named := f.fields[k]
		if !named {
			ss = f.other
		}
		if ss == nil || !ss.accepts(v) {
			return false
		}
	}
	return true
}

// flatSchema is what AcceptsFlat asks of an object: the simple schemas of
// its fields (nil for one that is not simple), of the other fields (nil
// when there is none, or it is not simple), and the required fields.
type flatSchema struct {
	fields   map[string]*simpleSchema
	other    *simpleSchema
	required []string
}

// flat returns the flatSchema of s, made once, or nil when the schema of
// the whole asks more than a flatSchema can tell.
func (s *Schema) flat() *flatSchema {
	s.flatOnce.Do(func() {
		m, ok := s.vtree.(map[string]any)
		if !ok || m["type"] != "object" {
			return
		}
		f := &flatSchema{fields: map[string]*simpleSchema{}}
		for k, v := range m {
			switch k {
			case "type":
			case "properties":
				props, ok := v.(map[string]any)
				if !ok {
					return
				}
				for name, sub := range props {
					if p := s.Root.Properties[name]; p == nil || !p.Expression {
						f.fields[name] = simpleOf(sub)
					} else {
						f.fields[name] = nil
					}
				}
			case "required":
				list, ok := v.([]any)
				if !ok {
					return
				}
				for _, r := range list {
					name, ok := r.(string)
					if !ok || strings.Contains(name, "/") {
						return
					}
					f.required = append(f.required, name)
				}
			case "additionalProperties":
				switch ap := v.(type) {
				case bool:
					if ap {
						return // any value is allowed: nothing to check, but rare
					}
				case map[string]any:
					f.other = simpleOf(ap)
					if f.other == nil {
						return
					}
				default:
					return
				}
			default:
				if !annotation(k) {
					return
				}
			}
		}
		s.flatSchema = f
	})
	return s.flatSchema
}
