package specs

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/engine/diag"
)

// YAML-level helpers of the loader: syntax errors with positions, the
// budget against hostile input, node kinds.

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
	lines := splitLines(string(src))
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
		line = max(1, min(line, len(lines)))
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	pline, pcol := line, 1 // where the problem is
	detail := ""
	switch {
	case !hasLine:
		// Reader errors (bad encoding, control characters) carry no line:
		// find the first offending character.
		if p, ok := badChar(src); ok {
			pline, pcol = int(p.Line), int(p.Col)
		}
	case strings.Contains(msg, "tab character") || msg == "found character that cannot start any token":
		// yaml.v3 gives the line of the token before a tab that breaks
		// the indentation: find the tab.
		last := len(lines)
		if !strings.Contains(msg, "tab character") {
			last = min(line, last)
		}
		for n := line; n <= last; n++ {
			s := lines[n-1]
			indent := s[:len(s)-len(strings.TrimLeft(s, " \t"))]
			if i := strings.IndexByte(indent, '\t'); i >= 0 {
				pline, pcol = n, i+1
				detail = "YAML does not allow tabs in indentation; indent with spaces"
				break
			}
		}
	case msg == "found unexpected end of stream":
		// Most often a quoted string left open: yaml.v3 gives its line.
		if col := unclosed(lines[line-1], '"'); col > 0 {
			pcol = col
			detail = "a quoted string is not closed"
		}
	case msg == "did not find expected key" || msg == "did not find expected '-' indicator" || msg == "did not find expected node content":
		// yaml.v3 gives the line where the enclosing mapping or list
		// starts; the mistake (often a wrong indentation) is further down.
		if n, ok := problemLine(lines, err.Error(), line); ok {
			s := lines[n-1]
			pline, pcol = n, utf8.RuneCountInString(s[:len(s)-len(strings.TrimLeft(s, " "))])+1
		}
	case yamlParserErrors[msg] && strings.HasPrefix(msg, "did not find expected ',' or "):
		// An unclosed flow collection: point at its opening bracket, on the
		// line given or, when yaml.v3 gave where it noticed, above it.
		for n := line; n >= 1; n-- {
			if col := unclosed(lines[n-1], msg[len(msg)-2]); col > 0 {
				pline, pcol = n, col
				break
			}
		}
	}
	l.errorf(diag.At(l.file, pline, pcol), "invalid YAML: %s", msg).Detail = detail
}

// problemLine returns the first line, from line from on, at which the file
// fails to parse with the error text want: the line of the token yaml.v3
// could not parse. It parses a few prefixes of the file (a binary search).
func problemLine(lines []string, want string, from int) (int, bool) {
	fails := func(n int) bool {
		_, err := parseDocuments([]byte(strings.Join(lines[:n], "\n")))
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
		n := breakLen(s, i)
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

// breakLen returns the length of the YAML line break at s[i], 0 if there is
// none.
func breakLen[T ~string | ~[]byte](s T, i int) int {
	switch s[i] {
	case '\r':
		if i+1 < len(s) && s[i+1] == '\n' {
			return 2
		}
		return 1
	case '\n':
		return 1
	case 0xc2: // U+0085
		if i+1 < len(s) && s[i+1] == 0x85 {
			return 2
		}
	case 0xe2: // U+2028, U+2029
		if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
			return 3
		}
	}
	return 0
}

// lineIndex finds the lines of a file as splitLines splits them, without
// copying the file: positions inside scalars read a line or two of it.
type lineIndex struct {
	src    []byte
	starts []int32 // the byte offset of each line's start
}

func indexLines(src []byte) lineIndex {
	ix := lineIndex{src: src, starts: make([]int32, 1, bytes.Count(src, []byte{'\n'})+1)}
	if bytes.IndexByte(src, '\r') < 0 && bytes.IndexByte(src, 0xc2) < 0 && bytes.IndexByte(src, 0xe2) < 0 {
		// Only \n breaks lines: found by IndexByte, many bytes at a time.
		for i := 0; ; {
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				return ix
			}
			i += j + 1
			ix.starts = append(ix.starts, int32(i))
		}
	}
	for i := 0; i < len(src); {
		n := breakLen(src, i)
		if n == 0 {
			i++
			continue
		}
		i += n
		ix.starts = append(ix.starts, int32(i))
	}
	return ix
}

// count returns the number of lines: an empty file has one, the zero
// lineIndex none.
func (ix lineIndex) count() int { return len(ix.starts) }

// line returns line n (1-based, at most count()) without its break.
func (ix lineIndex) line(n int) string { return string(ix.lineBytes(n)) }

// lineBytes is line, sharing src's bytes.
func (ix lineIndex) lineBytes(n int) []byte {
	start, end := int(ix.starts[n-1]), len(ix.src)
	if n < len(ix.starts) {
		// The line ends where the next starts, less the break between.
		end = int(ix.starts[n])
		for k := 3; k >= 1; k-- {
			if end-k >= start && breakLen(ix.src, end-k) == k {
				end -= k
				break
			}
		}
	}
	return ix.src[start:end]
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
func badChar(src []byte) (diag.Pos, bool) {
	for n, line := range splitLines(string(src)) {
		col := 1
		for i := 0; i < len(line); col++ {
			r, size := utf8.DecodeRuneInString(line[i:])
			if r == utf8.RuneError && size <= 1 || r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0xfffe || r == 0xffff {
				return diag.At("", n+1, col), true
			}
			i += size
		}
	}
	return diag.Pos{}, false
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
	if n.Anchor != "" {
		l.aliased = true
	}
	if n.Kind == yaml.AliasNode {
		l.aliased = true
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
