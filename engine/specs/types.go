package specs

// The types of expressions known before anything is evaluated, checked
// against the schemas at load: "org:${me.orgId}" is a string whatever
// me.orgId turns out to be, so where the schema wants a list it is an
// error at validate, not only at plan.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/schemas"
)

// maxTypeDepth bounds how many references typeOf follows: a chain of
// variables longer than this is taken as of a type not known (a cycle
// among them is reported by the graph).
const maxTypeDepth = 32

// checkTypes reports each expression inside e, the value of the field at
// path of a schema whose property there is p, whose type is known offline
// (see typeOf) and is not one p allows. Literals are the validator's; a
// field p does not know is reported as unknown by it.
func (l *loader) checkTypes(p *schemas.Prop, e Expr, path []string) {
	if p == nil {
		return
	}
	switch x := e.(type) {
	case *Lit, *Const, *badExpr, nil:
		return
	case *Object:
		if !allows(p, "object") {
			return // the validator reports the mapping itself
		}
		for _, en := range x.Entries {
			child, ok := p.Field(en.Key)
			if !ok {
				child = p.AdditionalProperties
			}
			l.checkTypes(child, en.Value, append(path, en.Key))
		}
		return
	case *List:
		if !allows(p, "array") {
			return
		}
		for i, it := range x.Items {
			l.checkTypes(p.Items, it, append(path, fmt.Sprint(i)))
		}
		return
	}
	t := l.typeOf(e, 0)
	if t == "" || allows(p, t) {
		return
	}
	d := l.errorf(e.Pos(), "field %q: expected %s, got %s", displayPath(path), joinTypes(propTypes(p)), t)
	d.Detail = typeDetail(e, t, p)
}

// typeDetail says why e is of type t, and how to give p's type instead.
func typeDetail(e Expr, t string, p *schemas.Prop) string {
	what := ""
	switch x := e.(type) {
	case *Template:
		what = "a string with ${...} in it is a string, whatever the values put in it"
	case *Call:
		what = fmt.Sprintf("fn::%s gives %s", x.Name, article(t))
	case *Ref:
		what = fmt.Sprintf("${%s} is %s", x.Text, article(t))
	case *Invoke:
		what = fmt.Sprintf("fn::invoke of %s gives %s", x.Function, article(t))
	}
	if what == "" {
		return ""
	}
	if t == "string" && slices.Contains(propTypes(p), "array") {
		return what + `; for a list of one string, write it as a list: ["..."]`
	}
	return what
}

func article(t string) string {
	switch t {
	case "integer", "array", "object":
		return "an " + t
	}
	return "a " + t
}

// typeOf returns the JSON type ("string", "integer", "number", "boolean",
// "array" or "object") that e has whatever the values it reads, known from
// the specs and schemas alone: an interpolated string is a string, fn::join
// and fn::toJSON give strings, fn::split a list, fn::length an integer; a
// reference has the declared type of the config it reads, the type of the
// variable's expression, or the schema's type of the field of the resource
// or lookup it reads. It returns "" when the type is not known until the
// value is.
func (l *loader) typeOf(e Expr, depth int) string {
	if depth > maxTypeDepth {
		return ""
	}
	switch x := e.(type) {
	case *Lit:
		return value.TypeName(x.Value)
	case *Template:
		return "string"
	case *List:
		return "array"
	case *Object:
		return "object"
	case *Call:
		switch x.Name {
		case "join", "toJSON", "toBase64", "fromBase64", "readFile", "filebase64", "filebase64sha256", "sha1",
			"pulumiResourceName", "pulumiResourceType":
			return "string"
		case "split":
			return "array"
		case "length":
			return "integer"
		case "secret", "unsecret":
			return l.typeOf(x.Arg, depth+1)
		}
		return ""
	case *Invoke:
		s, ok := schemas.Lookup(x.Function)
		if !ok {
			return ""
		}
		if x.Return == "" {
			return "object"
		}
		f, _ := s.Root.Field(schemas.CamelCase(x.Return))
		return propType(f)
	case *Ref:
		return l.refType(x, depth)
	}
	return ""
}

// refType is typeOf of a reference.
func (l *loader) refType(r *Ref, depth int) string {
	s := l.spec
	if s == nil {
		return ""
	}
	if r.Root == BuiltinRoot {
		return "string" // ${pulumi.stack} and the others
	}
	root := r.Root
	if key, ok := strings.CutPrefix(root, s.Project+":"); ok && s.Config[key] != nil {
		root = key
	}
	if l.broken[root] {
		return ""
	}
	if c, ok := s.Config[root]; ok {
		if len(r.Path) > 0 {
			return ""
		}
		return c.Type
	}
	if v, ok := s.Variables[root]; ok {
		if len(r.Path) == 0 {
			return l.typeOf(v.Expr, depth+1)
		}
		if inv, ok := v.Expr.(*Invoke); ok && inv.Return == "" {
			if fs, ok := schemas.Lookup(inv.Function); ok {
				return propType(fieldAt(fs.Root, r.Path))
			}
		}
		return ""
	}
	if res, ok := s.Resources[root]; ok && res.Schema != nil {
		if len(r.Path) == 0 {
			return "" // the resource itself: an object of its outputs, not a field
		}
		if len(r.Path) == 1 && !r.Path[0].IsIndex && r.Path[0].Key == URNField {
			return "string"
		}
		return propType(fieldAt(res.Schema.Root, r.Path))
	}
	return ""
}

// fieldAt follows path from p: a key to the field of that name (either
// spelling) or to the values of a map, an index to the items of a list.
// It returns nil when p does not say.
func fieldAt(p *schemas.Prop, path []Accessor) *schemas.Prop {
	for _, a := range path {
		if p == nil {
			return nil
		}
		if a.IsIndex {
			p = p.Items
			continue
		}
		if f, ok := p.Field(schemas.CamelCase(a.Key)); ok {
			p = f
		} else {
			p = p.AdditionalProperties
		}
	}
	return p
}

// propType is the one type p allows, "" when it allows several or any.
func propType(p *schemas.Prop) string {
	if p == nil || len(p.OneOf) > 0 {
		return ""
	}
	return p.Type
}

// propTypes lists the types p allows; nil when it allows any.
func propTypes(p *schemas.Prop) []string {
	if len(p.OneOf) == 0 {
		if p.Type == "" {
			return nil
		}
		return []string{p.Type}
	}
	var out []string
	for _, alt := range p.OneOf {
		ts := propTypes(alt)
		if ts == nil {
			return nil
		}
		for _, t := range ts {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// allows reports whether a value of type t may stand where p is: an
// integer is a number, and a number may be a whole one.
func allows(p *schemas.Prop, t string) bool {
	ts := propTypes(p)
	if ts == nil {
		return true
	}
	for _, want := range ts {
		if want == t || (want == "number" && t == "integer") || (want == "integer" && t == "number") {
			return true
		}
	}
	return false
}

// joinTypes joins types as "a", "a or b", "a, b or c".
func joinTypes(ts []string) string {
	if len(ts) <= 1 {
		return strings.Join(ts, "")
	}
	return strings.Join(ts[:len(ts)-1], ", ") + " or " + ts[len(ts)-1]
}
