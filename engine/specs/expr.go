package specs

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/schemas"
)

// Expr is an expression of the spec language: a literal, a reference, an
// interpolated string, a list, an object, or a built-in function call.
type Expr interface {
	Pos() diag.Pos
}

// Lit is a literal scalar: nil, bool, int64, float64 or string.
type Lit struct {
	P     diag.Pos
	Value any
}

// Ref is a property access such as ${res.field[0]["key"]}. Standing alone as
// a whole string it is a substitution and keeps the referenced value's type.
type Ref struct {
	P    diag.Pos
	Root string
	Path []Accessor
	Text string // the source text between ${ and }
}

// Accessor is one step of a property access: a field name or a list index.
type Accessor struct {
	Key     string
	Index   int
	IsIndex bool
}

// Template is a string with interpolations; it always yields a string.
type Template struct {
	P     diag.Pos
	Parts []TemplatePart
}

// TemplatePart is either literal text or a reference.
type TemplatePart struct {
	Text string
	Ref  *Ref
}

// List is a sequence of expressions.
type List struct {
	P     diag.Pos
	Items []Expr
}

// Object is a mapping from keys to expressions, in source order.
type Object struct {
	P       diag.Pos
	Entries []Entry
	// validated is the schema Load found every literal of the object to
	// fit, for ValueViolations; nil when it did not validate it.
	validated *schemas.Schema
}

// Entry is one key of an Object. Key is the canonical (lowerCamelCase) name
// where the schema names fields; Raw is the key as written.
type Entry struct {
	Key    string
	Raw    string
	KeyPos diag.Pos
	Value  Expr
}

// Call is a built-in function call such as fn::join.
type Call struct {
	P    diag.Pos
	Name string // without the fn:: prefix, lower case: "join", "split", ...
	Arg  Expr
}

// Invoke is an fn::invoke lookup.
type Invoke struct {
	P        diag.Pos
	Function string // canonical token
	FuncPos  diag.Pos
	Args     *Object
	Return   string
}

// badExpr stands where an expression could not be parsed. An error has been
// reported; the checks that follow take its value as unknown, so that they
// do not report the same mistake again. It never reaches a loaded Spec.
type badExpr struct {
	P diag.Pos
}

func (e *badExpr) Pos() diag.Pos  { return e.P }
func (e *Lit) Pos() diag.Pos      { return e.P }
func (e *Ref) Pos() diag.Pos      { return e.P }
func (e *Template) Pos() diag.Pos { return e.P }
func (e *List) Pos() diag.Pos     { return e.P }
func (e *Object) Pos() diag.Pos   { return e.P }
func (e *Call) Pos() diag.Pos     { return e.P }
func (e *Invoke) Pos() diag.Pos   { return e.P }

// Get returns the entry with the canonical key, or nil.
func (o *Object) Get(key string) *Entry {
	if o == nil {
		return nil
	}
	for i := range o.Entries {
		if o.Entries[i].Key == key {
			return &o.Entries[i]
		}
	}
	return nil
}

// parseTemplate scans a string for ${...} accesses and $$ escapes. It
// returns a *Lit when the string has no access, a *Ref when it is exactly one
// access, and a *Template otherwise. offset maps a byte offset within s to a
// position in the file.
func parseTemplate(s string, pos diag.Pos, offset func(int) diag.Pos) (Expr, []diag.Diagnostic) {
	if !strings.Contains(s, "$") {
		return &Lit{P: pos, Value: s}, nil
	}
	var parts []TemplatePart
	var text strings.Builder
	var diags []diag.Diagnostic
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			text.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			text.WriteByte('$')
			i += 2
			continue
		case '{':
		default:
			text.WriteByte(c)
			i++
			continue
		}
		ref, n, err := parseAccess(s[i+2:])
		if err != "" {
			diags = append(diags, diag.Diagnostic{Pos: offset(i), Summary: "invalid interpolation " + value.QuoteTrunc(s[i:]) + ": " + err,
				Detail: `write ${name}, ${name.field}, ${name.list[0]} or ${name["key"]}; write $${ for a literal "${"`})
			return &badExpr{P: pos}, diags
		}
		ref.P = offset(i)
		if text.Len() > 0 {
			parts = append(parts, TemplatePart{Text: text.String()})
			text.Reset()
		}
		parts = append(parts, TemplatePart{Ref: ref})
		i += 2 + n
	}
	if text.Len() > 0 {
		parts = append(parts, TemplatePart{Text: text.String()})
	}
	switch {
	case len(parts) == 0:
		return &Lit{P: pos, Value: ""}, nil
	case len(parts) == 1 && parts[0].Ref != nil:
		return parts[0].Ref, nil
	case len(parts) == 1:
		return &Lit{P: pos, Value: parts[0].Text}, nil
	}
	return &Template{P: pos, Parts: parts}, nil
}

// parseAccess parses the inside of ${...} up to and including the closing
// brace. It returns the reference, the number of bytes consumed and an error
// text.
func parseAccess(s string) (*Ref, int, string) {
	end := -1
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch {
		case inQuote && s[i] == '\\' && i+1 < len(s):
			i++
		case s[i] == '"':
			inQuote = !inQuote
		case !inQuote && s[i] == '}':
			end = i
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		if inQuote {
			return nil, 0, "missing closing quote"
		}
		return nil, 0, `missing closing "}"`
	}
	body := s[:end]
	ref := &Ref{Text: body}
	i := 0
	// root
	if strings.HasPrefix(body, "[") {
		key, n, err := parseBracket(body)
		if err != "" {
			return nil, 0, err
		}
		if key.IsIndex {
			return nil, 0, "the root of an access cannot be a list index"
		}
		ref.Root = key.Key
		i = n
	} else {
		j := strings.IndexAny(body, ".[")
		if j < 0 {
			j = len(body)
		}
		ref.Root = body[:j]
		i = j
	}
	if strings.TrimSpace(ref.Root) == "" {
		return nil, 0, "empty name"
	}
	for i < len(body) {
		switch body[i] {
		case '.':
			j := strings.IndexAny(body[i+1:], ".[")
			if j < 0 {
				j = len(body) - i - 1
			}
			name := body[i+1 : i+1+j]
			if name == "" {
				return nil, 0, "empty field name after \".\""
			}
			ref.Path = append(ref.Path, Accessor{Key: name})
			i += 1 + j
		case '[':
			acc, n, err := parseBracket(body[i:])
			if err != "" {
				return nil, 0, err
			}
			ref.Path = append(ref.Path, acc)
			i += n
		default:
			return nil, 0, fmt.Sprintf("unexpected %q", body[i])
		}
	}
	return ref, end + 1, ""
}

// parseBracket parses [123] or ["key"] at the start of s.
func parseBracket(s string) (Accessor, int, string) {
	if len(s) < 2 {
		return Accessor{}, 0, `missing closing "]"`
	}
	if s[1] == '"' {
		var b strings.Builder
		for i := 2; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if i+1 < len(s) {
					b.WriteByte(s[i+1])
					i++
				}
			case '"':
				if i+1 >= len(s) || s[i+1] != ']' {
					return Accessor{}, 0, `missing closing "]"`
				}
				return Accessor{Key: b.String()}, i + 2, ""
			default:
				b.WriteByte(s[i])
			}
		}
		return Accessor{}, 0, "missing closing quote"
	}
	j := strings.IndexByte(s, ']')
	if j < 0 {
		return Accessor{}, 0, `missing closing "]"`
	}
	n, err := strconv.Atoi(s[1:j])
	if err != nil || n < 0 {
		return Accessor{}, 0, fmt.Sprintf("list index %q is not a non-negative integer", s[1:j])
	}
	return Accessor{Index: n, IsIndex: true}, j + 1, ""
}

// String renders the access as written, for messages. Characters that would
// break a one-line message, such as a line break, are escaped.
func (r *Ref) String() string {
	for _, c := range r.Text {
		if !unicode.IsPrint(c) {
			q := strconv.Quote(r.Text)
			return "${" + q[1:len(q)-1] + "}"
		}
	}
	return "${" + r.Text + "}"
}

// refs calls fn for every reference in e, depth first.
func refs(e Expr, fn func(*Ref)) {
	visit(e, func(e Expr) {
		if r, ok := e.(*Ref); ok {
			fn(r)
		}
	})
}

// visit calls fn for e and for every expression inside it, depth first:
// the references of a template, the items of a list, the values of an
// object, the argument of a call and the arguments of an invoke.
func visit(e Expr, fn func(Expr)) {
	fn(e)
	switch x := e.(type) {
	case *Template:
		for _, p := range x.Parts {
			if p.Ref != nil {
				fn(p.Ref)
			}
		}
	case *List:
		for _, it := range x.Items {
			visit(it, fn)
		}
	case *Object:
		if x == nil {
			return
		}
		for _, en := range x.Entries {
			visit(en.Value, fn)
		}
	case *Call:
		visit(x.Arg, fn)
	case *Invoke:
		if x.Args != nil {
			visit(x.Args, fn)
		}
	}
}

// snakeToCamel is schemas.CamelCase: the one conversion from snake_case
// to the lowerCamelCase names of the schemas.
func snakeToCamel(s string) string { return schemas.CamelCase(s) }
