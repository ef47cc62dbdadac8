package specs

// Parsing YAML values into expressions: interpolations with exact
// positions, built-in function calls and fn::invoke.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/schemas"
)

// expr parses a YAML value into an expression. prop, when not nil, is the
// schema of the value: where it names fields, keys are canonicalised from
// snake_case to lowerCamelCase and both spellings of one field are refused.
func (l *loader) expr(n *yaml.Node, prop *schemas.Prop) Expr {
	n = deref(n)
	pos := l.pos(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() != "!!str" {
			return &Lit{P: pos, Value: scalarValue(n)}
		}
		if !strings.Contains(n.Value, "$") {
			return &Lit{P: pos, Value: l.strs.Boxed(n.Value)}
		}
		e, ds := parseTemplate(n.Value, pos, l.offsetFunc(n))
		l.diags = append(l.diags, ds...)
		return e
	case yaml.SequenceNode:
		list := &List{P: pos, Items: make([]Expr, 0, len(n.Content))}
		var items *schemas.Prop
		if prop != nil {
			items = prop.Items
		}
		for _, c := range n.Content {
			list.Items = append(list.Items, l.expr(c, items))
		}
		return list
	case yaml.MappingNode:
		if len(n.Content) == 2 && strings.HasPrefix(strings.ToLower(n.Content[0].Value), "fn::") {
			return l.call(n.Content[0], deref(n.Content[1]))
		}
		bad := false
		for i := 0; i < len(n.Content); i += 2 {
			if k := n.Content[i]; strings.HasPrefix(strings.ToLower(k.Value), "fn::") {
				l.errorf(l.pos(k), "%q must be the only key of its mapping to be a function call", k.Value)
				bad = true
			}
		}
		if bad {
			// Neither a call nor a plain mapping: checking its entries
			// would only repeat the error.
			return &badExpr{P: pos}
		}
		obj := &Object{P: pos, Entries: make([]Entry, 0, len(n.Content)/2)}
		named := prop != nil && len(prop.Properties) > 0
		// Keys given before, by canonical key: found among the entries
		// while there are few of them.
		var firstAt map[string]int
		if len(n.Content) > 2*smallObject {
			firstAt = make(map[string]int, len(n.Content)/2)
		}
		l.eachKey(n, func(k, v *yaml.Node) {
			raw := l.strs.String(k.Value)
			key := raw
			var sub *schemas.Prop
			if named {
				key = l.strs.String(snakeToCamel(raw))
				sub = prop.Properties[key]
			} else if prop != nil {
				sub = prop.AdditionalProperties
			}
			e := Entry{Key: key, Raw: raw, KeyPos: l.pos(k)}
			if prev := obj.entryIndex(firstAt, key); prev >= 0 {
				first := obj.Entries[prev]
				l.errorf(e.KeyPos, "field %q is given twice, as %q and %q", key, first.Raw, raw).Detail = fmt.Sprintf("snake_case and lowerCamelCase name the same field; keep one (the other is at %s)", first.KeyPos)
				return
			}
			e.Value = l.expr(v, sub)
			if firstAt != nil {
				firstAt[key] = len(obj.Entries)
			}
			obj.Entries = append(obj.Entries, e)
		})
		return obj
	}
	return &Lit{P: pos}
}

// smallObject is the number of keys up to which the loader finds a key
// given twice by a look at the keys before it, not with a map.
const smallObject = 8

// entryIndex returns the index of the entry with the canonical key among
// o's, by index (when not nil) or by a look at each; -1 when there is none.
func (o *Object) entryIndex(index map[string]int, key string) int {
	if index != nil {
		if i, ok := index[key]; ok {
			return i
		}
		return -1
	}
	for i := range o.Entries {
		if o.Entries[i].Key == key {
			return i
		}
	}
	return -1
}

// offsetFunc maps a byte offset inside a scalar's value to its position in
// the file. It reads the scalar's source text, so the position is exact for
// plain and quoted scalars written on one line and for literal blocks (|);
// inside other scalars (folded, or quoted over several lines) it is the
// scalar's start.
func (l *loader) offsetFunc(n *yaml.Node) func(int) diag.Pos {
	base := l.pos(n)
	return func(i int) diag.Pos {
		if line, col, ok := l.scalarOffset(n, i); ok {
			return diag.At(l.file, line, col)
		}
		return base
	}
}

// sourceLine returns a line (1-based) of the file being loaded, without its
// line break.
func (l *loader) sourceLine(line int) (string, bool) {
	if line < 1 || line > l.lines.count() {
		return "", false
	}
	s := l.lines.line(line)
	if line == 1 {
		s = strings.TrimPrefix(s, "\ufeff") // yaml.v3 does not count a BOM
	}
	return s, true
}

// scalarOffset returns the line and column of byte i of n.Value in the
// source, if it can be found exactly.
func (l *loader) scalarOffset(n *yaml.Node, i int) (line, col int, ok bool) {
	v := n.Value
	if i < 0 || i > len(v) {
		return 0, 0, false
	}
	switch {
	case n.Style&yaml.LiteralStyle != 0:
		return l.literalOffset(n, i)
	case n.Style&yaml.FoldedStyle != 0:
		return 0, 0, false
	}
	src, ok := l.sourceLine(n.Line)
	if !ok {
		return 0, 0, false
	}
	start := 0 // byte index of column n.Column
	for c := 1; c < n.Column && start < len(src); c++ {
		_, size := utf8.DecodeRuneInString(src[start:])
		start += size
	}
	var ri int
	switch {
	case n.Style&yaml.SingleQuotedStyle != 0:
		ri, ok = quotedOffset(src, start, v, i, '\'')
	case n.Style&yaml.DoubleQuotedStyle != 0:
		ri, ok = quotedOffset(src, start, v, i, '"')
	default:
		// A plain scalar is its source text, when it is on one line.
		j := strings.Index(src[start:], v)
		ri, ok = start+j+i, j >= 0 && !strings.Contains(v, "\n")
	}
	if !ok {
		return 0, 0, false
	}
	return n.Line, utf8.RuneCountInString(src[:ri]) + 1, true
}

// literalOffset is scalarOffset for a literal block scalar: each line of
// the value is a source line after the indentation.
func (l *loader) literalOffset(n *yaml.Node, i int) (line, col int, ok bool) {
	v := n.Value
	k := strings.Count(v[:i], "\n")
	start := strings.LastIndexByte(v[:i], '\n') + 1
	end := strings.IndexByte(v[start:], '\n')
	if end < 0 {
		end = len(v)
	} else {
		end += start
	}
	text := v[start:end]
	src, ok := l.sourceLine(n.Line + 1 + k)
	if !ok || !strings.HasSuffix(src, text) || strings.Trim(src[:len(src)-len(text)], " ") != "" {
		return 0, 0, false
	}
	runes := utf8.RuneCountInString
	return n.Line + 1 + k, runes(src[:len(src)-len(text)]) + 1 + runes(v[start:i]), true
}

// quotedOffset returns the byte index in src of byte i of the value v of
// the scalar quoted with quote that starts at or after src[start], walking
// the source and the value together; false when the scalar goes on to the
// next line or the two do not match.
func quotedOffset(src string, start int, v string, i int, quote byte) (int, bool) {
	j := strings.IndexByte(src[start:], quote)
	if j < 0 {
		return 0, false
	}
	single := quote == '\''
	ri, vi := start+j+1, 0
	for vi < i {
		if ri >= len(src) {
			return 0, false // the scalar goes on to the next line
		}
		prev, c := ri, src[ri]
		var vsize, rsize int
		switch {
		case single && c == '\'':
			if ri+1 >= len(src) || src[ri+1] != '\'' {
				return 0, false
			}
			vsize, rsize = 1, 2
		case !single && c == '"':
			return 0, false
		case !single && c == '\\':
			var ok bool
			if vsize, rsize, ok = escapeSize(src[ri:]); !ok {
				return 0, false
			}
		default:
			_, size := utf8.DecodeRuneInString(src[ri:])
			if !strings.HasPrefix(v[vi:], src[ri:ri+size]) {
				return 0, false
			}
			vsize, rsize = size, size
		}
		vi, ri = vi+vsize, ri+rsize
		if vi > i {
			return prev, true // i falls inside an escape
		}
	}
	return ri, true
}

// escapeSize returns, for the double-quoted escape at the start of esc, how
// many bytes it stands for in the value and how many it takes in the
// source.
func escapeSize(esc string) (value, source int, ok bool) {
	if len(esc) < 2 {
		return 0, 0, false
	}
	switch e := esc[1]; e {
	case 'x', 'u', 'U':
		digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
		if 2+digits > len(esc) {
			return 0, 0, false
		}
		r, err := strconv.ParseUint(esc[2:2+digits], 16, 32)
		if err != nil || utf8.RuneLen(rune(r)) < 0 {
			return 0, 0, false
		}
		return utf8.RuneLen(rune(r)), 2 + digits, true
	case 'N', '_':
		return 2, 2, true
	case 'L', 'P':
		return 3, 2, true
	}
	return 1, 2, true
}

var builtinFuncs = []string{"invoke", "join", "split", "select", "toJSON", "toBase64", "fromBase64", "secret", "unsecret", "readFile",
	"filebase64", "filebase64sha256", "sha1", "length", "singleOrNone", "pulumiResourceName", "pulumiResourceType"}

// assetFuncs are Pulumi's asset and archive functions. No type reconcile
// manages takes an asset or an archive, so each is refused with what to
// use instead.
var assetFuncs = []string{"stringAsset", "fileAsset", "remoteAsset", "fileArchive", "remoteArchive", "assetArchive"}

func (l *loader) call(k, v *yaml.Node) Expr {
	pos := l.pos(k)
	name := k.Value[len("fn::"):]
	if strings.Contains(name, ":") {
		// fn::pkg:name shorthand for an invoke without options or return.
		inv := &Invoke{P: pos, FuncPos: pos}
		l.resolveFunction(inv, name, pos)
		switch e := l.expr(v, l.funcRoot(inv)).(type) {
		case *Object:
			inv.Args = e
		case *badExpr:
		default:
			if !(v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
				l.errorf(l.pos(v), "arguments of %s must be a mapping, got %s", k.Value, notMapping(v))
			}
		}
		if inv.Args == nil {
			inv.Args = &Object{P: pos}
		}
		return inv
	}
	canon := ""
	for _, f := range builtinFuncs {
		if strings.EqualFold(f, name) {
			canon = f
		}
	}
	if canon == "" {
		for _, f := range assetFuncs {
			if strings.EqualFold(f, name) {
				l.errorf(pos, "fn::%s makes an asset or an archive, which no type reconcile manages takes", f).Detail =
					"remove it; to pass a file's content as an input, use fn::readFile (text) or fn::filebase64 (base64)"
				return &badExpr{P: pos}
			}
		}
		if strings.EqualFold(name, "stackReference") {
			l.errorf(pos, "fn::stackReference reads another Pulumi stack's outputs, which reconcile cannot").Detail =
				"pass the value as config instead (--config, or the stack's settings in Pulumi.<stack>.yaml)"
			return &badExpr{P: pos}
		}
		l.errorf(pos, "unknown function %q%s", k.Value, diag.DidYouMean(k.Value, prefixed(builtinFuncs))).Detail = diag.ValidList("functions", prefixed(builtinFuncs))
		return &badExpr{P: pos}
	}
	if canon != name {
		l.warnf(pos, "function %q should be written %q", k.Value, "fn::"+canon)
	}
	if canon == "invoke" {
		return l.invoke(pos, v)
	}
	c := &Call{P: pos, Name: canon, Arg: l.expr(v, nil)}
	l.checkCallShape(c)
	return c
}

func prefixed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "fn::" + n
	}
	return out
}

// checkCallShape checks argument shapes that are visible before evaluation:
// a literal of the wrong kind, a list of the wrong length. The same checks
// are made again on the evaluated argument (package eval).
func (l *loader) checkCallShape(c *Call) {
	lit, isLit := c.Arg.(*Lit)
	list, isList := c.Arg.(*List)
	_, isObject := c.Arg.(*Object)
	isString := false
	if isLit {
		_, isString = lit.Value.(string)
	}
	switch c.Name {
	case "join", "split", "select":
		if isList && len(list.Items) != 2 {
			l.errorf(c.Arg.Pos(), "fn::%s takes a list of two items, got %d", c.Name, len(list.Items))
		} else if isLit {
			l.errorf(c.Arg.Pos(), "fn::%s takes a list of two items", c.Name)
		}
	case "length":
		if isLit && !isString {
			l.errorf(c.Arg.Pos(), "fn::length takes a list, a mapping or a string, got %s", value.Describe(lit.Value))
		}
	case "singleOrNone":
		switch {
		case isList && len(list.Items) > 1:
			l.errorf(c.Arg.Pos(), "fn::singleOrNone takes a list of 0 or 1 items, got %d", len(list.Items))
		case isLit:
			l.errorf(c.Arg.Pos(), "fn::singleOrNone takes a list, got %s", value.Describe(lit.Value))
		case isObject:
			l.errorf(c.Arg.Pos(), "fn::singleOrNone takes a list, got a mapping")
		}
	case "pulumiResourceName", "pulumiResourceType":
		if ref, ok := c.Arg.(*Ref); !ok || len(ref.Path) > 0 {
			if _, bad := c.Arg.(*badExpr); !bad {
				l.errorf(c.Arg.Pos(), "fn::%s takes a resource, such as ${name}", c.Name)
			}
		}
	case "sha1", "readFile", "filebase64", "filebase64sha256":
		what := "a path"
		if c.Name == "sha1" {
			what = "a string"
		}
		if isLit && !isString {
			l.errorf(c.Arg.Pos(), "fn::%s takes %s, got %s", c.Name, what, value.Describe(lit.Value))
		} else if isList || isObject {
			l.errorf(c.Arg.Pos(), "fn::%s takes %s, got %s", c.Name, what, map[bool]string{true: "a list", false: "a mapping"}[isList])
		}
	}
}

func (l *loader) invoke(pos diag.Pos, v *yaml.Node) Expr {
	inv := &Invoke{P: pos}
	if v.Kind != yaml.MappingNode {
		l.errorf(l.pos(v), "fn::invoke takes a mapping with function and arguments, got %s", kindName(v))
		return inv
	}
	var argsKey, argsNode, retNode *yaml.Node
	unknownKey := false
	l.eachKey(v, func(k, x *yaml.Node) {
		switch k.Value {
		case "function":
			if x.Kind != yaml.ScalarNode || x.ShortTag() != "!!str" {
				l.errorf(l.pos(x), "fn::invoke function must be a literal string, got %s", kindName(x))
				return
			}
			inv.FuncPos = l.pos(x)
			l.resolveFunction(inv, x.Value, l.pos(x))
		case "arguments":
			argsKey, argsNode = k, x
		case "return":
			if x.Kind != yaml.ScalarNode || x.ShortTag() != "!!str" {
				l.errorf(l.pos(x), "fn::invoke return must be a literal field name, got %s", kindName(x))
				return
			}
			inv.Return, retNode = snakeToCamel(x.Value), x
		case "options":
			l.warnf(l.pos(k), "invoke options have no effect in reconcile")
		default:
			l.errorf(l.pos(k), "unknown key %q in fn::invoke%s", k.Value, diag.DidYouMean(k.Value, []string{"function", "arguments", "return", "options"})).Detail = `valid keys: "function", "arguments", "return", "options"`
			unknownKey = true
		}
	})
	if unknownKey && (argsNode == nil || inv.FuncPos == (diag.Pos{})) {
		// The unknown key may be the misspelt function or arguments: what
		// they would have given is not reported missing.
		return &badExpr{P: pos}
	}
	if inv.Function == "" && inv.FuncPos == (diag.Pos{}) {
		l.errorf(pos, "fn::invoke has no function").Detail = "add function: with one of " + strings.Join(functionTokens(), ", ")
	}
	if argsNode != nil {
		switch e := l.expr(argsNode, l.funcRoot(inv)).(type) {
		case *Object:
			e.P = l.pos(argsKey) // a missing argument is reported here
			inv.Args = e
		case *badExpr:
			return e
		default:
			l.errorf(l.pos(argsNode), "fn::invoke arguments must be a mapping, got %s", notMapping(argsNode))
			return &badExpr{P: pos}
		}
	}
	if inv.Args == nil {
		inv.Args = &Object{P: pos}
	}
	if s, ok := schemas.Lookup(inv.Function); ok && inv.Return != "" {
		if _, has := s.Root.Properties[inv.Return]; !has && inv.Return != "id" {
			l.errorf(l.pos(retNode), "fn::invoke return: %s has no result %q%s", s.Token, retNode.Value, diag.DidYouMean(inv.Return, s.Outputs())).Detail = diag.ValidList("results", s.Outputs())
		}
	}
	return inv
}

func (l *loader) funcRoot(inv *Invoke) *schemas.Prop {
	if s, ok := schemas.Lookup(inv.Function); ok {
		return s.Root
	}
	return nil
}

func (l *loader) resolveFunction(inv *Invoke, token string, pos diag.Pos) {
	s, ok := schemas.Lookup(token)
	if !ok {
		l.errorf(pos, "unknown function %q%s", token, diag.DidYouMean(token, schemas.Names())).Detail = "known functions: " + strings.Join(functionTokens(), ", ")
		return
	}
	if s.Kind != schemas.Function {
		l.errorf(pos, "%q is a resource type, not a function", token).Detail = "declare it under resources: with type: " + s.Token
		return
	}
	inv.Function = s.Token
}

func functionTokens() []string {
	var out []string
	for _, t := range schemas.Tokens() {
		if s, _ := schemas.Lookup(t); s.Kind == schemas.Function {
			out = append(out, t)
		}
	}
	return out
}

func keysOf(m map[string]*schemas.Prop) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func keysOfConfig(m map[string]*ConfigDecl) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
