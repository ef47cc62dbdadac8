package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// ViolationKind classifies a Violation.
type ViolationKind int

// Kinds of violation.
const (
	TypeMismatch ViolationKind = iota + 1 // the value has the wrong JSON type
	Missing                               // a required field is absent
	Unknown                               // a field the schema does not name
	OutputOnly                            // an output only field was given as an input
	Invalid                               // the type is right, the value is not: enum, pattern, bounds
)

func (k ViolationKind) String() string {
	switch k {
	case TypeMismatch:
		return "type mismatch"
	case Missing:
		return "missing"
	case Unknown:
		return "unknown"
	case OutputOnly:
		return "output only"
	case Invalid:
		return "invalid"
	}
	return fmt.Sprintf("ViolationKind(%d)", int(k))
}

// Violation is one problem found by Validate.
type Violation struct {
	// Path leads from the top of the validated value to the offending one:
	// field names and list indexes (as decimal strings). For a missing
	// field it is the path the field would have; for an unknown field,
	// the path of that field. Empty means the value as a whole.
	Path []string
	Kind ViolationKind
	// Message is lower case with no final period, e.g.
	// `expected integer, got string` or `missing required field "modelId"`.
	Message string
}

// Pointer returns Path as a JSON Pointer, such as "/bindings/0/relation";
// "" is the value as a whole.
func (v Violation) Pointer() string {
	var b strings.Builder
	for _, p := range v.Path {
		b.WriteByte('/')
		b.WriteString(escapeToken(p))
	}
	return b.String()
}

// Error formats the violation as "POINTER: MESSAGE".
func (v Violation) Error() string {
	if len(v.Path) == 0 {
		return v.Message
	}
	return v.Pointer() + ": " + v.Message
}

// Validate checks an inputs map (for the document schema: a whole spec
// document) against the schema and returns every violation found, sorted
// by path, at most one per path, nil when there is none.
//
// Values are JSON-shaped: nil, bool, string, int64, float64, []any and
// map[string]any. Other integer and float types, json.Number, and slices
// and string-keyed maps of any element type are converted. A value of any
// other type (such as the engine's placeholder for a value not known until
// apply) is taken as not yet known: it is accepted wherever a value may
// stand. Secret wrappers should be unwrapped before validating. In the
// document schema, a string holding a ${...} expression is likewise
// accepted wherever the schema says x-expression.
//
// Output only fields are not required, and giving one is an OutputOnly
// violation. Keys are matched exactly: turn snake_case keys into
// lowerCamelCase first (see CamelCase).
func (s *Schema) Validate(in map[string]any) []Violation {
	if in == nil {
		in = map[string]any{}
	}
	pr := &preparer{}
	inst := pr.value(in, s.Root, nil)
	vs := pr.found
	if err := s.validator().Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			c := &converter{s: s, inst: inst, opaque: pr.opaque}
			vs = append(vs, c.collect(ve)...)
		} else {
			vs = append(vs, Violation{Kind: Invalid, Message: err.Error()})
		}
	}
	return tidy(vs)
}

// preparer converts a value to the types the validator knows, replacing
// values that cannot be checked (not yet known, or expressions) with nil
// and remembering where, so that what is reported there can be dropped.
type preparer struct {
	opaque [][]string
	found  []Violation
}

func (pr *preparer) hide(path []string) any {
	pr.opaque = append(pr.opaque, slices.Clone(path))
	return nil
}

func (pr *preparer) value(v any, p *Prop, path []string) any {
	switch x := v.(type) {
	case nil, bool, int64:
		return x
	case string:
		if p != nil && p.Expression && hasExpression(x) {
			return pr.hide(path)
		}
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			pr.found = append(pr.found, Violation{Path: slices.Clone(path), Kind: Invalid, Message: "must be a finite number"})
			return pr.hide(path)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, err := x.Float64()
		if err != nil {
			return pr.hide(path)
		}
		return pr.value(f, p, path)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = pr.value(e, child(p, k), append(path, k))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = pr.value(e, items(p), append(path, strconv.Itoa(i)))
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool()
	case reflect.String:
		return pr.value(rv.String(), p, path)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return int64(u)
		}
		return float64(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return pr.value(rv.Float(), p, path)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return []any{}
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = pr.value(rv.Index(i).Interface(), items(p), append(path, strconv.Itoa(i)))
		}
		return out
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		out := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			out[k] = pr.value(it.Value().Interface(), child(p, k), append(path, k))
		}
		return out
	}
	return pr.hide(path)
}

// child returns the schema of field k of an object described by p, or nil
// when it is not known (no schema, or a choice between schemas).
func child(p *Prop, k string) *Prop {
	if p == nil {
		return nil
	}
	if f, ok := p.Properties[k]; ok {
		return f
	}
	return p.AdditionalProperties
}

func items(p *Prop) *Prop {
	if p == nil {
		return nil
	}
	return p.Items
}

// hasExpression reports whether s holds a ${...} expression, "$$" being
// an escaped "$".
func hasExpression(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		switch s[i+1] {
		case '$':
			i++
		case '{':
			return true
		}
	}
	return false
}

// converter turns the validator's error tree into Violations.
type converter struct {
	s      *Schema
	inst   any
	opaque [][]string
	// For a part (see ValidateParts), inst is the part's value and base
	// the JSON Pointer of its path, as the validator would write it, of
	// depth segments: the validator's instance locations are relative to
	// the part, and the converter writes them as if it had validated the
	// whole instance.
	base  string
	depth int
}

// path returns the path of an instance location of the validator.
func (c *converter) path(loc string) []string { return instancePath(c.base + loc) }

// value returns the value of inst at path.
func (c *converter) value(path []string) any {
	if len(path) < c.depth {
		return nil
	}
	return resolve(c.inst, path[c.depth:])
}

// collect returns the violations of the leaves under e. Of a failed choice
// (oneOf, anyOf) only the alternative that fits best is reported.
func (c *converter) collect(e *jsonschema.ValidationError) []Violation {
	kloc := fragment(e.AbsoluteKeywordLocation)
	if len(e.Causes) == 0 {
		return c.visible(c.leaf(e, kloc))
	}
	if kw := last(kloc); kw == "oneOf" || kw == "anyOf" {
		return c.choose(e, kloc)
	}
	var out []Violation
	for _, cause := range e.Causes {
		out = append(out, c.collect(cause)...)
	}
	return out
}

// choose reports a failed choice. The validator lists one cause per
// alternative, in order. An alternative that fails only where values are
// not known passes. Alternatives of another type than the value are
// discarded; of the others, the one with the fewest violations is
// reported. When every alternative wants another type, the report is one
// type mismatch naming them all.
func (c *converter) choose(e *jsonschema.ValidationError, kloc []string) []Violation {
	path := c.path(e.InstanceLocation)
	alts, _ := resolve(c.s.vtree, kloc).([]any)
	var best []Violation
	found := false
	var want []string
	for i, cause := range e.Causes {
		vs := c.collect(cause)
		if len(vs) == 0 {
			return nil
		}
		if wrongType(vs, path) {
			if i < len(alts) {
				want = appendNew(want, c.types(alts[i])...)
			}
			continue
		}
		if !found || len(vs) < len(best) {
			best, found = vs, true
		}
	}
	if found {
		return best
	}
	return c.visible([]Violation{{
		Path:    path,
		Kind:    TypeMismatch,
		Message: fmt.Sprintf("expected %s, got %s", joinOr(want), jsonType(c.value(path))),
	}})
}

func wrongType(vs []Violation, path []string) bool {
	for _, v := range vs {
		if v.Kind == TypeMismatch && slices.Equal(v.Path, path) {
			return true
		}
	}
	return false
}

// leaf converts one failed keyword: the type, required and
// additionalProperties keywords into violations of their own kinds, the
// others into an Invalid violation of the value.
func (c *converter) leaf(e *jsonschema.ValidationError, kloc []string) []Violation {
	path := c.path(e.InstanceLocation)
	if len(kloc) == 0 {
		return []Violation{{Path: path, Kind: Invalid, Message: lower(e.Message)}}
	}
	kw := last(kloc)
	schemaLoc := kloc[:len(kloc)-1]
	node, _ := resolve(c.s.vtree, schemaLoc).(map[string]any)
	value := c.value(path)
	switch kw {
	case "type":
		return []Violation{{
			Path:    path,
			Kind:    TypeMismatch,
			Message: fmt.Sprintf("expected %s, got %s", joinOr(c.types(node)), jsonType(value)),
		}}
	case "required":
		return missingFields(path, node[kw], value)
	case "additionalProperties":
		return c.extraFields(path, schemaLoc, node, value)
	}
	msg, ok := keywordMessage(kw, node)
	if !ok {
		msg = c.otherMessage(e, kloc)
	}
	if len(schemaLoc) > 0 && last(schemaLoc) == "propertyNames" && len(path) > 0 {
		msg = fmt.Sprintf("key %q %s", last(path), msg)
	}
	return []Violation{{Path: path, Kind: Invalid, Message: msg}}
}

// missingFields returns a Missing violation, under path, for each field
// the list required names that the object value lacks.
func missingFields(path []string, required, value any) []Violation {
	obj, _ := value.(map[string]any)
	var out []Violation
	for _, r := range asList(required) {
		name, _ := r.(string)
		if _, ok := obj[name]; !ok {
			out = append(out, Violation{Path: with(path, name), Kind: Missing, Message: fmt.Sprintf("missing required field %q", name)})
		}
	}
	return out
}

// extraFields returns a violation for each field of the object value,
// in name order, that the schema node at schemaLoc does not list: an
// OutputOnly one for a field the schema as written marks readOnly (the
// validator's copy leaves those out), else an Unknown one.
func (c *converter) extraFields(path, schemaLoc []string, node map[string]any, value any) []Violation {
	obj, _ := value.(map[string]any)
	known, _ := node["properties"].(map[string]any)
	onode, _ := resolve(c.s.otree, schemaLoc).(map[string]any)
	written, _ := onode["properties"].(map[string]any)
	var out []Violation
	for _, name := range sortedKeys(obj) {
		if _, ok := known[name]; ok {
			continue
		}
		if p, ok := written[name].(map[string]any); ok && p["readOnly"] == true {
			out = append(out, Violation{Path: with(path, name), Kind: OutputOnly, Message: fmt.Sprintf("field %q is output only", name)})
			continue
		}
		out = append(out, Violation{Path: with(path, name), Kind: Unknown, Message: fmt.Sprintf("unknown field %q", name)})
	}
	return out
}

// keywordMessage returns what a failed keyword kw of the schema node says
// of the value, false for a keyword it does not name.
func keywordMessage(kw string, node map[string]any) (string, bool) {
	val := node[kw]
	switch kw {
	case "enum":
		var opts []string
		for _, o := range asList(val) {
			opts = append(opts, literal(o))
		}
		return fmt.Sprintf("must be one of %s", strings.Join(opts, ", ")), true
	case "const":
		return fmt.Sprintf("must be %s", literal(val)), true
	case "pattern":
		if m, ok := node["x-message"].(string); ok {
			return m, true
		}
		return fmt.Sprintf("must match pattern %q", val), true
	case "format":
		return fmt.Sprintf("must be a valid %s", val), true
	case "uniqueItems":
		return "must not contain duplicates", true
	case "oneOf":
		return "matches more than one alternative", true
	case "not":
		return "is not allowed", true
	}
	if msg, ok := boundMessage(kw, val); ok {
		return msg, true
	}
	return sizeMessage(kw, node)
}

// boundMessage returns what a failed numeric bound kw, of value val, says
// of the value, false for another keyword.
func boundMessage(kw string, val any) (string, bool) {
	switch kw {
	case "minimum":
		return fmt.Sprintf("must be at least %v", val), true
	case "maximum":
		return fmt.Sprintf("must be at most %v", val), true
	case "exclusiveMinimum":
		return fmt.Sprintf("must be greater than %v", val), true
	case "exclusiveMaximum":
		return fmt.Sprintf("must be less than %v", val), true
	case "multipleOf":
		return fmt.Sprintf("must be a multiple of %v", val), true
	}
	return "", false
}

// sizeMessage returns what a failed bound kw of the schema node on the
// length of a string, list or object says of the value, false for another
// keyword.
func sizeMessage(kw string, node map[string]any) (string, bool) {
	val := node[kw]
	switch kw {
	case "minLength":
		return fmt.Sprintf("must be at least %s long", count(val, "character")), true
	case "maxLength":
		return fmt.Sprintf("must be at most %s long", count(val, "character")), true
	case "minItems":
		if m, ok := node["x-message"].(string); ok {
			return m, true
		}
		return fmt.Sprintf("must have at least %s", count(val, "item")), true
	case "maxItems":
		return fmt.Sprintf("must have at most %s", count(val, "item")), true
	case "minProperties":
		return fmt.Sprintf("must have at least %s", count(val, "field")), true
	case "maxProperties":
		return fmt.Sprintf("must have at most %s", count(val, "field")), true
	}
	return "", false
}

// otherMessage is the message of a failed keyword leaf does not name: that
// of a false schema, or the validator's own.
func (c *converter) otherMessage(e *jsonschema.ValidationError, kloc []string) string {
	if b, ok := resolve(c.s.vtree, kloc).(bool); ok && !b {
		return "is not allowed"
	}
	return lower(e.Message)
}

// visible drops the violations at or below values that could not be
// checked.
func (c *converter) visible(vs []Violation) []Violation {
	out := vs[:0]
	for _, v := range vs {
		hidden := false
		for _, o := range c.opaque {
			if len(v.Path) >= len(o) && slices.Equal(v.Path[:len(o)], o) {
				hidden = true
				break
			}
		}
		if !hidden {
			out = append(out, v)
		}
	}
	return out
}

// types returns the JSON types a schema node allows, following a local
// $ref.
func (c *converter) types(node any) []string {
	for range 16 { // bounded: $refs may chain but must not loop
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		switch t := m["type"].(type) {
		case string:
			return []string{t}
		case []any:
			var out []string
			for _, e := range t {
				if s, ok := e.(string); ok {
					out = append(out, s)
				}
			}
			return out
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return nil
		}
		node = resolve(c.s.vtree, fragment(ref))
	}
	return nil
}

// tidy sorts violations by path, then kind, then message, and keeps the
// first of each path.
func tidy(vs []Violation) []Violation {
	if len(vs) == 0 {
		return nil
	}
	sort.SliceStable(vs, func(i, j int) bool {
		if c := comparePaths(vs[i].Path, vs[j].Path); c != 0 {
			return c < 0
		}
		if vs[i].Kind != vs[j].Kind {
			return vs[i].Kind < vs[j].Kind
		}
		return vs[i].Message < vs[j].Message
	})
	out := vs[:1]
	for _, v := range vs[1:] {
		if !slices.Equal(v.Path, out[len(out)-1].Path) {
			out = append(out, v)
		}
	}
	for i := range out {
		if out[i].Path == nil {
			out[i].Path = []string{}
		}
	}
	return out
}

// comparePaths orders paths element by element, list indexes by number.
func comparePaths(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if isIndex(x) && isIndex(y) && len(x) != len(y) {
			return len(x) - len(y)
		}
		return strings.Compare(x, y)
	}
	return len(a) - len(b)
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// fragment returns the reference tokens of the JSON Pointer fragment of a
// location such as "https://host/x.json#/properties/a~1b", unescaped.
func fragment(loc string) []string {
	_, frag, ok := strings.Cut(loc, "#")
	if !ok {
		return nil
	}
	return instancePath(frag)
}

// instancePath splits a JSON Pointer (URL-escaped, as the validator
// writes it) into unescaped reference tokens.
func instancePath(ptr string) []string {
	ptr = strings.TrimPrefix(ptr, "/")
	if ptr == "" {
		return []string{}
	}
	toks := strings.Split(ptr, "/")
	for i, t := range toks {
		if u, err := url.PathUnescape(t); err == nil {
			t = u
		}
		toks[i] = unescapeToken(t)
	}
	return toks
}

// resolve follows reference tokens through a JSON-shaped value; nil when
// there is nothing there.
func resolve(v any, toks []string) any {
	for _, t := range toks {
		switch x := v.(type) {
		case map[string]any:
			v = x[t]
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// jsonType names the JSON type of a value for messages; integers are
// named apart from other numbers.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "number"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// joinOr joins names as "a", "a or b", "a, b or c".
func joinOr(names []string) string {
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

// literal formats a schema value for a message: strings quoted, numbers
// as written.
func literal(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case nil:
		return "null"
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
	return fmt.Sprint(v)
}

// count formats "1 item", "3 items".
func count(n any, noun string) string {
	if fmt.Sprint(n) == "1" {
		return "1 " + noun
	}
	return fmt.Sprintf("%v %ss", n, noun)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func last(toks []string) string {
	if len(toks) == 0 {
		return ""
	}
	return toks[len(toks)-1]
}

// with returns path extended by name, sharing nothing with path.
func with(path []string, name string) []string {
	return append(slices.Clone(path), name)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lower makes a library message fit ours: lower case first letter, no
// final period.
func lower(s string) string {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
