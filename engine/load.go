package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"reconcile/schemas"
)

// Limits that keep hostile input within bounded time and memory.
const (
	maxSourceBytes = 8 << 20   // per file
	maxNodes       = 1_000_000 // YAML nodes visited per file, aliases expanded
	maxDepth       = 64        // nesting of YAML collections
)

// projectKeys are top-level keys of a Pulumi project file that reconcile
// accepts and ignores.
var projectKeys = map[string]bool{"name": true, "runtime": true, "description": true, "pulumi": true}

// builtinRoot is the reserved name of Pulumi's built-in variables.
const builtinRoot = "pulumi"

type loader struct {
	diags Diagnostics
	file  string
	lines []string // of the file being loaded, for positions inside scalars
	nodes int
	spec  *Spec
	where map[string]Pos // every declared name, for duplicate checks
	// broken names were declared but could not be loaded (an error has been
	// reported): references to them are not checked further.
	broken map[string]bool
	// partial is set when part of the input could not be read at all, so
	// that names it may have declared are unknown: unknown references are
	// then not reported, since they would only repeat that error.
	partial bool
}

func (l *loader) errorf(pos Pos, format string, args ...any) *Diagnostic {
	l.diags = append(l.diags, errorf(pos, format, args...))
	return &l.diags[len(l.diags)-1]
}

func (l *loader) warnf(pos Pos, format string, args ...any) {
	d := errorf(pos, format, args...)
	d.Severity = Warning
	l.diags = append(l.diags, d)
}

func (l *loader) pos(n *yaml.Node) Pos {
	p := Pos{File: l.file, Line: n.Line, Col: n.Column}
	if last := len(l.lines); p.Line > last && last > 0 {
		// An empty node at the end of the stream is placed on the line
		// after the last: report the end of the last line instead.
		p.Line, p.Col = last, utf8.RuneCountInString(l.lines[last-1])+1
	}
	return p
}

// Load parses, merges and checks spec sources. dir is the project directory.
// overrides are --config values as given on the command line. It reports
// every problem found; the Spec is nil when any is an error.
func Load(dir string, srcs []Source, overrides map[string]string) (*Spec, Diagnostics) {
	l := &loader{
		spec: &Spec{
			Dir:       dir,
			Config:    map[string]*ConfigDecl{},
			Variables: map[string]*Variable{},
			Resources: map[string]*Resource{},
			Outputs:   map[string]*Output{},
		},
		where:  map[string]Pos{},
		broken: map[string]bool{},
	}
	h := sha256.New()
	sorted := append([]Source(nil), srcs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, src := range sorted {
		// The base name, not the path: a plan made from "-f specs" must
		// match the same files read later through an absolute path.
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(src.Name), len(src.Data))
		h.Write(src.Data)
		l.loadFile(src)
	}
	if len(srcs) == 0 {
		l.errorf(Pos{}, "no spec files found").Detail = "pass -f FILE or -f DIR, or run in a directory holding *.yaml specs"
	}
	l.resolveConfig(overrides)
	l.check()
	keys := make([]string, 0, len(l.spec.Values))
	for k := range l.spec.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "config\x00%s\x00%s\x00", k, canonicalJSON(l.spec.Values[k]))
	}
	l.spec.Hash = hex.EncodeToString(h.Sum(nil))
	ds := l.diags.Sort()
	if ds.HasErrors() {
		return nil, ds
	}
	return l.spec, ds
}

func (l *loader) loadFile(src Source) {
	l.file = src.Name
	l.nodes = 0
	l.lines = nil
	if len(src.Data) > maxSourceBytes {
		l.errorf(Pos{File: src.Name, Line: 1, Col: 1}, "file is %d bytes, over the limit of %d", len(src.Data), maxSourceBytes).Detail = "split the spec over several files of a directory"
		l.partial = true
		return
	}
	l.lines = splitLines(string(src.Data))
	var doc yaml.Node
	if err := yaml.Unmarshal(src.Data, &doc); err != nil {
		l.yamlError(err, src.Data)
		l.partial = true
		return
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return // an empty file declares nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		l.errorf(l.pos(root), "a spec file must be a mapping with keys such as resources, variables, outputs; got %s", kindName(root))
		l.partial = true
		return
	}
	if !l.budget(root, 0) {
		l.partial = true
		return
	}
	top := schemas.Document().Root
	l.eachKey(root, func(k, v *yaml.Node) {
		switch k.Value {
		case "config", "configuration":
			if k.Value == "configuration" {
				l.warnf(l.pos(k), `"configuration" is deprecated; use "config"`)
			}
			l.loadConfig(v)
		case "variables":
			l.section(v)
			l.forMap(v, "variables", func(nk, nv *yaml.Node) {
				if !l.declare(nk) {
					return
				}
				l.spec.Variables[nk.Value] = &Variable{Name: nk.Value, Pos: l.pos(nk), Expr: l.expr(nv, nil)}
			})
		case "resources":
			l.section(v)
			l.forMap(v, "resources", func(nk, nv *yaml.Node) {
				if !l.declare(nk) {
					return
				}
				if r := l.loadResource(nk, nv); r != nil {
					l.spec.Resources[r.Name] = r
				} else {
					l.broken[nk.Value] = true
				}
			})
		case "outputs":
			l.forMap(v, "outputs", func(nk, nv *yaml.Node) {
				if o, dup := l.spec.Outputs[nk.Value]; dup {
					l.errorf(l.pos(nk), "output %q is declared twice", nk.Value).Detail = "also declared at " + o.Pos.String()
					return
				}
				l.spec.Outputs[nk.Value] = &Output{Name: nk.Value, Pos: l.pos(nk), Expr: l.expr(nv, nil)}
			})
		default:
			if projectKeys[k.Value] {
				return
			}
			names := make([]string, 0, len(top.Properties))
			for n := range top.Properties {
				names = append(names, n)
			}
			l.errorf(l.pos(k), "unknown top-level key %q%s", k.Value, didYouMean(k.Value, names)).Detail = validList("keys", names)
			// A misspelt section such as "resource:" declares nothing, but
			// references to its entries are not worth a report each.
			if v.Kind == yaml.MappingNode {
				for i := 0; i < len(v.Content); i += 2 {
					l.broken[v.Content[i].Value] = true
				}
			}
		}
	})
}

// section notes a config, variables or resources section that is not a
// mapping: the names it was meant to declare are unknown.
func (l *loader) section(n *yaml.Node) {
	if n = deref(n); n.Kind != yaml.MappingNode && !(n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		l.partial = true
	}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlParserErrors are the problems yaml.v3 reports from its parser, not its
// scanner: for them it gives the 0-based line of the construct being parsed
// (such as the "[" of an unclosed flow sequence) instead of a 1-based one.
var yamlParserErrors = map[string]bool{
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"found undefined tag handle":             true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found incompatible YAML document":       true,
}

func (l *loader) yamlError(err error, src []byte) {
	msg := err.Error()
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		msg = "yaml: " + te.Errors[0]
	}
	line, hasLine := 1, false
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg, hasLine = m[2], true
		if yamlParserErrors[msg] {
			line++
		}
		// A problem at the end of the stream is on the line after the last.
		line = max(1, min(line, len(l.lines)))
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	pos := Pos{File: l.file, Line: line, Col: 1}
	detail := ""
	switch {
	case !hasLine:
		// Reader errors (bad encoding, control characters) carry no line:
		// find the first offending character.
		if p, ok := badChar(src); ok {
			pos.Line, pos.Col = p.Line, p.Col
		}
	case strings.Contains(msg, "tab character") || msg == "found character that cannot start any token":
		// yaml.v3 gives the line of the token before a tab that breaks
		// the indentation: find the tab.
		last := len(l.lines)
		if !strings.Contains(msg, "tab character") {
			last = min(line, last)
		}
		for n := line; n <= last; n++ {
			s := l.lines[n-1]
			indent := s[:len(s)-len(strings.TrimLeft(s, " \t"))]
			if i := strings.IndexByte(indent, '\t'); i >= 0 {
				pos.Line, pos.Col = n, i+1
				detail = "YAML does not allow tabs in indentation; indent with spaces"
				break
			}
		}
	case msg == "found unexpected end of stream":
		// Most often a quoted string left open: yaml.v3 gives its line.
		if col := unclosed(l.lines[line-1], '"'); col > 0 {
			pos.Col = col
			detail = "a quoted string is not closed"
		}
	case msg == "did not find expected key" || msg == "did not find expected '-' indicator" || msg == "did not find expected node content":
		// yaml.v3 gives the line where the enclosing mapping or list
		// starts; the mistake (often a wrong indentation) is further down.
		if n, ok := problemLine(l.lines, err.Error(), line); ok {
			s := l.lines[n-1]
			pos.Line, pos.Col = n, utf8.RuneCountInString(s[:len(s)-len(strings.TrimLeft(s, " "))])+1
		}
	case yamlParserErrors[msg] && strings.HasPrefix(msg, "did not find expected ',' or "):
		// An unclosed flow collection: point at its opening bracket, on the
		// line given or, when yaml.v3 gave where it noticed, above it.
		for n := line; n >= 1; n-- {
			if col := unclosed(l.lines[n-1], msg[len(msg)-2]); col > 0 {
				pos.Line, pos.Col = n, col
				break
			}
		}
	}
	l.errorf(pos, "invalid YAML: %s", msg).Detail = detail
}

// problemLine returns the first line, from line from on, at which the file
// fails to parse with the error text want: the line of the token yaml.v3
// could not parse. It parses a few prefixes of the file (a binary search).
func problemLine(lines []string, want string, from int) (int, bool) {
	fails := func(n int) bool {
		var doc yaml.Node
		err := yaml.Unmarshal([]byte(strings.Join(lines[:n], "\n")), &doc)
		return err != nil && err.Error() == want
	}
	lo, hi := max(from, 1), len(lines)
	if lo > hi || !fails(hi) {
		return 0, false
	}
	for lo < hi {
		if mid := (lo + hi) / 2; fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi, true
}

// splitLines splits s at the line breaks of YAML, by which yaml.v3 counts
// lines: "\r\n", "\r", "\n", and U+0085, U+2028 and U+2029.
func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		n := 0 // length of the break at i
		switch {
		case strings.HasPrefix(s[i:], "\r\n"):
			n = 2
		case s[i] == '\r' || s[i] == '\n':
			n = 1
		case strings.HasPrefix(s[i:], "\u0085"):
			n = 2
		case strings.HasPrefix(s[i:], "\u2028") || strings.HasPrefix(s[i:], "\u2029"):
			n = 3
		}
		if n == 0 {
			i++
			continue
		}
		out = append(out, s[start:i])
		i += n
		start = i
	}
	return append(out, s[start:])
}

// unclosed returns the column of what is opened on line and not closed
// there: with end '"', a quoted string; with end ']' or '}', the last flow
// collection of that kind. It returns 0 when nothing is left open.
func unclosed(line string, end byte) int {
	open := byte('[')
	if end == '}' {
		open = '{'
	}
	var stack []int // byte offsets of open brackets
	var quote byte
	quoteAt := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'' && c == '\'' && i+1 < len(line) && line[i+1] == '\'':
			i++ // '' is an escaped quote
		case quote == '"' && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case (c == '"' || c == '\'') && (i == 0 || strings.IndexByte(" \t[{,:-", line[i-1]) >= 0):
			quote, quoteAt = c, i
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			i = len(line)
		case c == open:
			stack = append(stack, i)
		case c == end && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
	}
	switch {
	case end == '"':
		if quote == 0 {
			return 0
		}
		return utf8.RuneCountInString(line[:quoteAt]) + 1
	case len(stack) == 0:
		return 0
	}
	return utf8.RuneCountInString(line[:stack[len(stack)-1]]) + 1
}

// badChar returns the position of the first byte of src that YAML refuses:
// invalid UTF-8 or a control character other than tab and the line breaks.
func badChar(src []byte) (Pos, bool) {
	for n, line := range splitLines(string(src)) {
		col := 1
		for i := 0; i < len(line); col++ {
			r, size := utf8.DecodeRuneInString(line[i:])
			if r == utf8.RuneError && size <= 1 || r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0xfffe || r == 0xffff {
				return Pos{Line: n + 1, Col: col}, true
			}
			i += size
		}
	}
	return Pos{}, false
}

// budget walks n once to refuse alias bombs and deep nesting before any
// other work.
func (l *loader) budget(n *yaml.Node, depth int) bool {
	l.nodes++
	if l.nodes > maxNodes {
		l.errorf(l.pos(n), "spec is too large: more than %d YAML nodes (aliases expanded)", maxNodes).Detail = "YAML aliases that expand exponentially are refused"
		return false
	}
	if depth > maxDepth {
		l.errorf(l.pos(n), "spec is nested more than %d levels deep", maxDepth)
		return false
	}
	if n.Kind == yaml.AliasNode {
		return l.budget(n.Alias, depth+1)
	}
	for _, c := range n.Content {
		if !l.budget(c, depth+1) {
			return false
		}
	}
	return true
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return "a scalar " + strconv.Quote(n.Value)
	}
	return "nothing"
}

// notMapping describes n where a plain mapping is wanted: a mapping there
// is a function call.
func notMapping(n *yaml.Node) string {
	if n = deref(n); n.Kind == yaml.MappingNode {
		return "a function call"
	}
	return kindName(n)
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// eachKey calls fn for each key of a mapping, reporting duplicate keys.
func (l *loader) eachKey(m *yaml.Node, fn func(k, v *yaml.Node)) {
	m = deref(m)
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], deref(m.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			l.errorf(l.pos(k), "mapping keys must be strings")
			continue
		}
		if k.Value == "<<" {
			l.errorf(l.pos(k), "YAML merge keys (<<) are not supported")
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			l.errorf(l.pos(k), "key %q appears twice in one mapping", k.Value).Detail = fmt.Sprintf("first at %s", l.pos(prev))
			continue
		}
		seen[k.Value] = k
		fn(k, v)
	}
}

// forMap checks that n is a mapping (an empty value is allowed) and calls fn
// for each entry.
func (l *loader) forMap(n *yaml.Node, what string, fn func(k, v *yaml.Node)) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.errorf(l.pos(n), "%s must be a mapping, got %s", what, kindName(n))
		return
	}
	l.eachKey(n, fn)
}

// declare records a name of the shared namespace (config, variables,
// resources) and reports a duplicate.
func (l *loader) declare(k *yaml.Node) bool {
	name := k.Value
	if name == builtinRoot {
		l.errorf(l.pos(k), "%q is a reserved name", name)
		return false
	}
	if prev, dup := l.where[name]; dup {
		l.errorf(l.pos(k), "%q is declared twice", name).Detail = fmt.Sprintf("also declared at %s; config, variables and resources share one namespace", prev)
		return false
	}
	l.where[name] = l.pos(k)
	return true
}

func (l *loader) loadConfig(n *yaml.Node) {
	decl := schemas.Document().Root.Properties["config"]
	var declProps map[string]*schemas.Prop
	if decl != nil && decl.AdditionalProperties != nil {
		for _, alt := range append([]*schemas.Prop{decl.AdditionalProperties}, decl.AdditionalProperties.OneOf...) {
			if alt.Type == "object" && alt.Properties != nil {
				declProps = alt.Properties
			}
		}
	}
	l.forMap(n, "config", func(k, v *yaml.Node) {
		name := k.Value
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name = name[i+1:] // proj:key: the project prefix is stripped
		}
		if !l.declare(&yaml.Node{Value: name, Line: k.Line, Column: k.Column}) {
			return
		}
		c := &ConfigDecl{Name: name, Pos: l.pos(k)}
		l.spec.Config[name] = c
		defaultPos := c.Pos
		if v.Kind != yaml.MappingNode {
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				return // declared, required
			}
			c.Default, c.HasDefault = l.literal(v), true
			c.Type = typeOf(c.Default)
			return
		}
		l.eachKey(v, func(dk, dv *yaml.Node) {
			switch dk.Value {
			case "type":
				t, ok := configType(dv.Value)
				if !ok || dv.Kind != yaml.ScalarNode {
					l.errorf(l.pos(dv), "unknown config type %q%s", dv.Value, didYouMean(dv.Value, configTypes)).Detail = validList("types", configTypes)
				}
				c.Type = t
			case "default", "value":
				c.Default, c.HasDefault = l.literal(dv), true
				defaultPos = l.pos(dv)
			case "secret":
				b, ok := l.boolLit(dv)
				if !ok {
					l.errorf(l.pos(dv), "secret must be true or false, got %s", kindName(dv))
				}
				c.Secret = b
			default:
				if _, known := declProps[dk.Value]; known {
					return
				}
				names := keysOf(declProps)
				l.errorf(l.pos(dk), "unknown key %q in config %q%s", dk.Value, name, didYouMean(dk.Value, names)).Detail = validList("keys", names)
				l.broken[name] = true // it may be a misspelt default: no "has no value" too
			}
		})
		if c.HasDefault && c.Type != "" {
			if msg := checkType(c.Type, c.Default); msg != "" {
				l.errorf(defaultPos, "default of config %q: %s", name, msg)
			}
		}
	})
}

var configTypes = []string{"string", "integer", "number", "boolean", "array", "object"}

func configType(s string) (string, bool) {
	ls := strings.ToLower(s)
	switch {
	case ls == "int":
		return "integer", true
	case ls == "bool":
		return "boolean", true
	case strings.HasPrefix(ls, "list<"):
		return "array", true
	}
	for _, t := range configTypes {
		if t == ls {
			return t, true
		}
	}
	return "", false
}

func typeOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// checkType returns "" when v fits the config type t.
func checkType(t string, v any) string {
	got := typeOf(v)
	if got == t || t == "" || (t == "number" && got == "integer") {
		return ""
	}
	return fmt.Sprintf("expected %s, got %s", t, describe(v))
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + quoteTrunc(x)
	}
	if t := typeOf(v); t != "" {
		return t
	}
	return fmt.Sprintf("%T", v)
}

// resolveConfig fills Spec.Values from overrides and defaults.
func (l *loader) resolveConfig(overrides map[string]string) {
	l.spec.Values = map[string]any{}
	names := keysOfConfig(l.spec.Config)
	for _, k := range sortedKeys(overrides) {
		name := k
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		c, ok := l.spec.Config[name]
		if !ok {
			l.errorf(Pos{}, "--config %s: no config named %q is declared%s", k, name, didYouMean(name, names)).Detail = "declare it under config: in a spec file"
			continue
		}
		v, err := parseConfigValue(c.Type, overrides[k])
		if err != nil {
			l.errorf(c.Pos, "--config %s: %v", k, err)
			continue
		}
		l.spec.Values[name] = v
	}
	for _, name := range names {
		c := l.spec.Config[name]
		if _, set := l.spec.Values[name]; set || l.broken[name] {
			continue
		}
		if !c.HasDefault {
			l.errorf(c.Pos, "config %q has no value", name).Detail = fmt.Sprintf("pass --config %s=VALUE or give it a default", name)
			continue
		}
		l.spec.Values[name] = c.Default
	}
	for _, name := range names {
		if v, ok := l.spec.Values[name]; ok && l.spec.Config[name].Secret {
			l.spec.Values[name] = Secret{Value: v}
		}
	}
}

func parseConfigValue(t, s string) (any, error) {
	switch t {
	case "", "string":
		return s, nil
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return canonNumber(f), nil
	case "boolean":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil || len(n.Content) == 0 {
		return nil, fmt.Errorf("%q is not a valid %s (write it as JSON)", s, t)
	}
	v := (&loader{}).literal(n.Content[0])
	if msg := checkType(t, v); msg != "" {
		return nil, fmt.Errorf("%s", msg)
	}
	return v, nil
}

func canonNumber(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return f
}

// literal converts a YAML node to a plain value without interpreting
// expressions.
func (l *loader) literal(n *yaml.Node) any {
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		return scalarValue(n)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = l.literal(c)
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			out[n.Content[i].Value] = l.literal(n.Content[i+1])
		}
		return out
	}
	return nil
}

func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			return canonNumber(f)
		}
	}
	return n.Value
}

func (l *loader) boolLit(n *yaml.Node) (bool, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		b, _ := scalarValue(n).(bool)
		return b, true
	}
	return false, false
}

func (l *loader) loadResource(k, v *yaml.Node) *Resource {
	r := &Resource{Name: k.Value, Pos: l.pos(k)}
	if v.Kind != yaml.MappingNode {
		l.errorf(l.pos(v), "resource %q must be a mapping with a type, got %s", r.Name, kindName(v))
		return nil
	}
	rdoc := schemas.Document().Root.Properties["resources"].AdditionalProperties
	var propsKey, propsNode, optsNode, getKey, getNode *yaml.Node
	// incomplete: an error already reported may explain what is missing
	badType, incomplete := false, false
	l.eachKey(v, func(fk, fv *yaml.Node) {
		switch fk.Value {
		case "type":
			if fv.Kind != yaml.ScalarNode || fv.ShortTag() != "!!str" {
				l.errorf(l.pos(fv), "type of resource %q must be a string, got %s", r.Name, kindName(fv))
				badType = true
				return
			}
			r.Type, r.TypePos = fv.Value, l.pos(fv)
		case "properties":
			propsKey, propsNode = fk, fv
		case "options":
			optsNode = fv
		case "get":
			getKey, getNode = fk, fv
		case "name", "description":
		case "defaultProvider":
			l.errorf(l.pos(fk), "defaultProvider is only for provider resources, which reconcile does not need").Detail = "credentials come from each vendor's usual places; remove this key"
		default:
			names := keysOf(rdoc.Properties)
			l.errorf(l.pos(fk), "unknown key %q in resource %q%s", fk.Value, r.Name, didYouMean(fk.Value, names)).Detail = validList("keys", names)
			incomplete = true
		}
	})
	if r.Type == "" {
		if badType || incomplete {
			return nil // the type was given wrongly or under a misspelt key
		}
		l.errorf(r.Pos, "resource %q has no type", r.Name).Detail = "add type: with one of " + strings.Join(schemas.Tokens(), ", ")
		return nil
	}
	s, ok := schemas.Lookup(r.Type)
	if !ok {
		if strings.HasPrefix(r.Type, "pulumi:providers:") {
			l.errorf(r.TypePos, "provider resources are not needed: %q", r.Type).Detail = "credentials come from each vendor's usual places; remove this resource"
			return nil
		}
		l.errorf(r.TypePos, "unknown resource type %q%s", r.Type, didYouMean(r.Type, allTokens())).Detail = "known types: " + strings.Join(schemas.Tokens(), ", ")
		return nil
	}
	if s.Kind == schemas.Function {
		l.errorf(r.TypePos, "%q is a lookup function, not a resource type", r.Type).Detail = "call it from variables with fn::invoke: {function: " + s.Token + ", arguments: {...}}"
		return nil
	}
	r.Type, r.Schema = s.Token, s
	if propsNode != nil && getNode != nil {
		l.errorf(l.pos(getKey), "resource %q has both properties and get", r.Name).Detail = "get reads an existing resource and never manages it; remove one of them"
	}
	if propsNode != nil {
		switch e := l.expr(propsNode, s.Root).(type) {
		case *Object:
			e.P = l.pos(propsKey) // a missing field is reported here
			r.Properties = e
		case *badExpr:
			incomplete = true // reported; not known to be missing either
		default:
			if !(propsNode.Kind == yaml.ScalarNode && propsNode.Tag == "!!null") {
				l.errorf(l.pos(propsNode), "properties of %q must be a mapping, got %s", r.Name, notMapping(propsNode))
				incomplete = true
			}
		}
	}
	if r.Properties == nil && getNode == nil && !incomplete {
		// With a misspelt key (such as "propertes") the properties are
		// not known to be missing: they are left unchecked.
		r.Properties = &Object{P: r.Pos}
	}
	if getNode != nil {
		r.Get = l.loadGet(r, getKey, getNode)
	}
	if optsNode != nil {
		l.loadOptions(r, optsNode)
	}
	return r
}

func (l *loader) loadGet(r *Resource, key, n *yaml.Node) *GetSpec {
	g := &GetSpec{P: l.pos(key)}
	unknownKey := false
	if n.Kind != yaml.MappingNode {
		l.errorf(l.pos(n), "get of %q must be a mapping with id and optional state, got %s", r.Name, kindName(n))
		return g
	}
	l.eachKey(n, func(k, v *yaml.Node) {
		switch k.Value {
		case "id":
			g.ID = l.expr(v, nil)
		case "state":
			switch e := l.expr(v, r.Schema.Root).(type) {
			case *Object:
				e.P = l.pos(k)
				g.State = e
			case *badExpr:
			default:
				l.errorf(l.pos(v), "get.state of %q must be a mapping, got %s", r.Name, notMapping(v))
			}
		default:
			l.errorf(l.pos(k), "unknown key %q in get of %q%s", k.Value, r.Name, didYouMean(k.Value, []string{"id", "state"})).Detail = `valid keys: "id", "state"`
			unknownKey = true
		}
	})
	if g.ID == nil && !unknownKey {
		l.errorf(g.P, "get of %q has no id", r.Name).Detail = "add id: with the id of the existing resource"
	}
	return g
}

func (l *loader) loadOptions(r *Resource, n *yaml.Node) {
	o := &r.Options
	o.P = l.pos(n)
	if n.Kind != yaml.MappingNode {
		l.errorf(l.pos(n), "options of %q must be a mapping, got %s", r.Name, kindName(n))
		return
	}
	odoc := schemas.Document().Root.Properties["resources"].AdditionalProperties.Properties["options"]
	boolOpt := func(k, v *yaml.Node) Expr {
		e := l.expr(v, nil)
		switch x := e.(type) {
		case *Lit:
			if _, ok := x.Value.(bool); !ok {
				l.errorf(l.pos(v), "%s must be true or false, got %s", k.Value, kindName(v))
			}
		case *Ref, *badExpr:
		default:
			l.errorf(l.pos(v), "%s must be true, false or a ${...} reference, got %s", k.Value, kindName(v))
		}
		return e
	}
	l.eachKey(n, func(k, v *yaml.Node) {
		switch k.Value {
		case "dependsOn":
			l.listOf(k, v, func(item *yaml.Node) {
				e := l.expr(item, nil)
				if ref, ok := e.(*Ref); ok && len(ref.Path) == 0 {
					o.DependsOn = append(o.DependsOn, ref)
					return
				}
				if _, bad := e.(*badExpr); bad {
					return
				}
				l.errorf(l.pos(item), "dependsOn entries must be references to resources such as ${name}, got %s", kindName(item))
			})
		case "protect":
			o.Protect = boolOpt(k, v)
		case "deleteBeforeReplace":
			o.DeleteBeforeReplace = boolOpt(k, v)
		case "retainOnDelete":
			o.RetainOnDelete = boolOpt(k, v)
		case "ignoreChanges":
			o.IgnoreChanges = l.pathList(r, k, v)
		case "replaceOnChanges":
			o.ReplaceOnChanges = l.pathList(r, k, v)
		case "import":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || v.Value == "" {
				l.errorf(l.pos(v), "import must be the id of the existing object as a literal string, got %s", kindName(v))
				return
			}
			if r.Get != nil {
				l.errorf(l.pos(k), "resource %q has both get and options.import", r.Name).Detail = "get reads without managing; import adopts into state; keep one"
			}
			o.Import, o.ImportPos = v.Value, l.pos(v)
		case "customTimeouts":
			o.CustomTimeouts = map[string]time.Duration{}
			l.forMap(v, "customTimeouts", func(tk, tv *yaml.Node) {
				switch tk.Value {
				case "create", "update", "delete", "read":
				default:
					l.errorf(l.pos(tk), "unknown key %q in customTimeouts%s", tk.Value, didYouMean(tk.Value, []string{"create", "update", "delete", "read"})).Detail = `valid keys: "create", "update", "delete", "read"`
					return
				}
				d, err := time.ParseDuration(tv.Value)
				if tv.Kind != yaml.ScalarNode || err != nil || d <= 0 {
					l.errorf(l.pos(tv), "customTimeouts.%s must be a positive duration such as \"20m\" or \"1h30m\", got %s", tk.Value, kindName(tv))
					return
				}
				o.CustomTimeouts[tk.Value] = d
			})
		default:
			if p, known := odoc.Properties[k.Value]; known && p.Ignored {
				l.warnf(l.pos(k), "option %q has no effect in reconcile", k.Value)
				return
			}
			names := keysOf(odoc.Properties)
			l.errorf(l.pos(k), "unknown option %q in resource %q%s", k.Value, r.Name, didYouMean(k.Value, names)).Detail = validList("options", names)
		}
	})
}

func (l *loader) listOf(k, v *yaml.Node, fn func(*yaml.Node)) {
	if v.Kind != yaml.SequenceNode {
		l.errorf(l.pos(v), "%s must be a list, got %s", k.Value, kindName(v))
		return
	}
	for _, it := range v.Content {
		fn(deref(it))
	}
}

// pathList reads ignoreChanges or replaceOnChanges: literal property paths
// whose first segment must name an input of the type.
func (l *loader) pathList(r *Resource, k, v *yaml.Node) []PathOpt {
	var out []PathOpt
	l.listOf(k, v, func(it *yaml.Node) {
		if it.Kind != yaml.ScalarNode || it.ShortTag() != "!!str" || it.Value == "" {
			l.errorf(l.pos(it), "%s entries must be literal property paths such as displayName or freeformTags[\"env\"], got %s", k.Value, kindName(it))
			return
		}
		top := it.Value
		if i := strings.IndexAny(top, ".["); i >= 0 {
			top = top[:i]
		}
		canon := snakeToCamel(top)
		p, ok := r.Schema.Root.Properties[canon]
		if !ok || p.ReadOnly {
			l.errorf(l.pos(it), "%s: %s has no input %q%s", k.Value, r.Type, top, didYouMean(canon, r.Schema.Inputs())).Detail = validList("inputs", r.Schema.Inputs())
			return
		}
		out = append(out, PathOpt{Path: canon + it.Value[len(top):], Top: canon, P: l.pos(it)})
	})
	return out
}

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
		e, ds := parseTemplate(n.Value, pos, l.offsetFunc(n))
		l.diags = append(l.diags, ds...)
		return e
	case yaml.SequenceNode:
		list := &List{P: pos}
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
		obj := &Object{P: pos}
		named := prop != nil && len(prop.Properties) > 0
		firstAt := map[string]Entry{}
		l.eachKey(n, func(k, v *yaml.Node) {
			key := k.Value
			var sub *schemas.Prop
			if named {
				key = snakeToCamel(k.Value)
				sub = prop.Properties[key]
			} else if prop != nil {
				sub = prop.AdditionalProperties
			}
			e := Entry{Key: key, Raw: k.Value, KeyPos: l.pos(k)}
			if prev, dup := firstAt[key]; dup {
				l.errorf(e.KeyPos, "field %q is given twice, as %q and %q", key, prev.Raw, k.Value).Detail = fmt.Sprintf("snake_case and lowerCamelCase name the same field; keep one (the other is at %s)", prev.KeyPos)
				return
			}
			e.Value = l.expr(v, sub)
			firstAt[key] = e
			obj.Entries = append(obj.Entries, e)
		})
		return obj
	}
	return &Lit{P: pos}
}

// offsetFunc maps a byte offset inside a scalar's value to its position in
// the file. It reads the scalar's source text, so the position is exact for
// plain and quoted scalars written on one line and for literal blocks (|);
// inside other scalars (folded, or quoted over several lines) it is the
// scalar's start.
func (l *loader) offsetFunc(n *yaml.Node) func(int) Pos {
	base := l.pos(n)
	return func(i int) Pos {
		if line, col, ok := l.scalarOffset(n, i); ok {
			return Pos{File: l.file, Line: line, Col: col}
		}
		return base
	}
}

// sourceLine returns a line (1-based) of the file being loaded, without its
// line break.
func (l *loader) sourceLine(line int) (string, bool) {
	if line < 1 || line > len(l.lines) {
		return "", false
	}
	s := l.lines[line-1]
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
	runes := utf8.RuneCountInString
	switch {
	case n.Style&yaml.LiteralStyle != 0:
		// Each line of the value is a source line after the indentation.
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
		return n.Line + 1 + k, runes(src[:len(src)-len(text)]) + 1 + runes(v[start:i]), true
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
	at := func(ri int) (int, int, bool) { return n.Line, runes(src[:ri]) + 1, true }
	single := n.Style&yaml.SingleQuotedStyle != 0
	if !single && n.Style&yaml.DoubleQuotedStyle == 0 {
		// A plain scalar is its source text, when it is on one line.
		j := strings.Index(src[start:], v)
		if j < 0 || strings.Contains(v, "\n") {
			return 0, 0, false
		}
		return at(start + j + len(v[:i]))
	}
	quote := byte('"')
	if single {
		quote = '\''
	}
	j := strings.IndexByte(src[start:], quote)
	if j < 0 {
		return 0, 0, false
	}
	// Walk the source and the value together up to byte i of the value.
	ri, vi := start+j+1, 0
	for vi < i {
		if ri >= len(src) {
			return 0, 0, false // the scalar goes on to the next line
		}
		prev, c := ri, src[ri]
		switch {
		case single && c == '\'':
			if ri+1 >= len(src) || src[ri+1] != '\'' {
				return 0, 0, false
			}
			vi, ri = vi+1, ri+2
		case !single && c == '"':
			return 0, 0, false
		case !single && c == '\\':
			if ri+1 >= len(src) {
				return 0, 0, false
			}
			size := 1
			switch e := src[ri+1]; e {
			case 'x', 'u', 'U':
				digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if ri+2+digits > len(src) {
					return 0, 0, false
				}
				r, err := strconv.ParseUint(src[ri+2:ri+2+digits], 16, 32)
				if err != nil || utf8.RuneLen(rune(r)) < 0 {
					return 0, 0, false
				}
				size = utf8.RuneLen(rune(r))
				ri += digits
			case 'N', '_':
				size = 2
			case 'L', 'P':
				size = 3
			}
			vi, ri = vi+size, ri+2
		default:
			_, size := utf8.DecodeRuneInString(src[ri:])
			if !strings.HasPrefix(v[vi:], src[ri:ri+size]) {
				return 0, 0, false
			}
			vi, ri = vi+size, ri+size
		}
		if vi > i {
			return at(prev) // i falls inside an escape
		}
	}
	return at(ri)
}

var builtinFuncs = []string{"invoke", "join", "split", "select", "toJSON", "toBase64", "fromBase64", "secret", "unsecret", "readFile"}

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
		l.errorf(pos, "unknown function %q%s", k.Value, didYouMean(k.Value, prefixed(builtinFuncs))).Detail = validList("functions", prefixed(builtinFuncs))
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

// checkCallShape checks argument shapes that are visible before evaluation.
func (l *loader) checkCallShape(c *Call) {
	switch c.Name {
	case "join", "split", "select":
		if lst, ok := c.Arg.(*List); ok && len(lst.Items) != 2 {
			l.errorf(c.Arg.Pos(), "fn::%s takes a list of two items, got %d", c.Name, len(lst.Items))
		} else if _, isLit := c.Arg.(*Lit); isLit {
			l.errorf(c.Arg.Pos(), "fn::%s takes a list of two items", c.Name)
		}
	}
}

func (l *loader) invoke(pos Pos, v *yaml.Node) Expr {
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
			l.errorf(l.pos(k), "unknown key %q in fn::invoke%s", k.Value, didYouMean(k.Value, []string{"function", "arguments", "return", "options"})).Detail = `valid keys: "function", "arguments", "return", "options"`
			unknownKey = true
		}
	})
	if unknownKey && (argsNode == nil || inv.FuncPos == (Pos{})) {
		// The unknown key may be the misspelt function or arguments: what
		// they would have given is not reported missing.
		return &badExpr{P: pos}
	}
	if inv.Function == "" && inv.FuncPos == (Pos{}) {
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
			l.errorf(l.pos(retNode), "fn::invoke return: %s has no result %q%s", s.Token, retNode.Value, didYouMean(inv.Return, s.Outputs())).Detail = validList("results", s.Outputs())
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

func (l *loader) resolveFunction(inv *Invoke, token string, pos Pos) {
	s, ok := schemas.Lookup(token)
	if !ok {
		l.errorf(pos, "unknown function %q%s", token, didYouMean(token, allTokens())).Detail = "known functions: " + strings.Join(functionTokens(), ", ")
		return
	}
	if s.Kind != schemas.Function {
		l.errorf(pos, "%q is a resource type, not a function", token).Detail = "declare it under resources: with type: " + s.Token
		return
	}
	inv.Function = s.Token
}

func allTokens() []string {
	var out []string
	for _, t := range schemas.Tokens() {
		s, _ := schemas.Lookup(t)
		out = append(out, t)
		out = append(out, s.Aliases...)
	}
	return out
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
