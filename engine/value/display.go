package value

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Texts that stand in for values a renderer must not or cannot show: the
// one place they are written.
const (
	UnknownText   = "(known after apply)"
	SensitiveText = "(sensitive value)"
)

// OneLine renders a value on one line for messages.
func OneLine(v any) string {
	if _, ok := v.(Unknown); ok {
		return "(known after apply)"
	}
	if ContainsSecret(v) {
		return SensitiveText
	}
	s := CanonicalJSON(v)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Quote returns s in double quotes, escaped as a JSON string is, and with
// every character that is not printable (controls, bidirectional overrides,
// invalid UTF-8) escaped as \uXXXX, so that a value can neither forge lines
// nor send escape sequences to a terminal.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	escapeTo(&b, s, true)
	b.WriteByte('"')
	return b.String()
}

// PlainText returns s with the characters Quote escapes escaped, but
// without quotes: for addresses, types and reasons in headers.
func PlainText(s string) string {
	if asIs(s, false) == len(s) {
		return s
	}
	var b strings.Builder
	escapeTo(&b, s, false)
	return b.String()
}

// asIs returns the length of the start of s that escapeTo writes as it
// is: printable ASCII, but for '"' and '\\' when quoted.
func asIs(s string, quoted bool) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || quoted && (c == '"' || c == '\\') {
			return i
		}
	}
	return len(s)
}

func escapeTo(b *strings.Builder, s string, quoted bool) {
	for i := 0; i < len(s); {
		n := asIs(s[i:], quoted)
		b.WriteString(s[i : i+n])
		if i += n; i == len(s) {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case quoted && (r == '"' || r == '\\'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || unicode.IsPrint(r):
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
}
