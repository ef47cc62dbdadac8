// Package untrusted shows text that reconcile did not write itself (names,
// ids and values from the specs, what the clouds answer, the vendors' error
// messages, file names) so that it cannot pass for reconcile's own output.
//
// The specs may come from anyone who can open a pull request, and a cloud
// echoes them back in its error messages. Printed as they are, a newline in
// them starts a line of the author's own in the log: a CI system's command
// (GitHub Actions' "::error::", "::add-mask::", "::stop-commands::", Azure
// Pipelines' "##vso[") or a fake "No changes." line. The output streams'
// sanitizer escapes what moves the cursor, but it cannot tell reconcile's
// newlines from foreign ones; the renderers and error paths can, so they
// pass every foreign string through this package where it enters output:
//
//   - Text in the middle of a line: ids, messages, reasons, types;
//   - Quote for a string value, in double quotes;
//   - Name for a name that may begin a line (a resource in a progress line,
//     an output, a row of a listing): bare when it is a plain name, quoted
//     otherwise, so that no line can begin with what a spec wrote;
//   - Path for a file name at the start of a line (FILE:LINE:COL).
//
// None of them escapes anything in printable text but what it must, so
// that ordinary names, ids and messages read as they are; and each is
// idempotent: escaping twice is escaping once, so a message escaped where
// it was made can be escaped again where it is printed.
package untrusted

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Text returns s with every character that could end the line, move the
// cursor or reorder what a terminal shows escaped: newline, carriage
// return and tab as \n, \r and \t, other control characters, Unicode format
// characters (bidirectional overrides), line and paragraph separators,
// spaces other than ' ', private-use and surrogate code points as \uXXXX
// (a pair of them beyond the BMP), and bytes that are not UTF-8 as \ufffd.
// Backslashes stay as they are: Text(Text(s)) == Text(s).
func Text(s string) string {
	if plain(s, false) == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	escape(&b, s, false)
	return b.String()
}

// Quote returns s in double quotes, escaped as Text escapes it and with '"'
// and '\' escaped too: a JSON string literal equal to s, but for bytes
// that are not UTF-8.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	escape(&b, s, true)
	b.WriteByte('"')
	return b.String()
}

// Name returns s as it is when it is a plain name, and Quote(s) otherwise.
// A plain name begins with a letter, a digit or '_', and holds only those,
// marks and '-', '.', ':', '/' and '@': the names of resources, outputs and
// attributes that people write. Anything else (a name beginning with "::"
// or "##", holding a space, or empty) is quoted, so that a line that begins
// with a name cannot be taken for a line of something else.
func Name(s string) string {
	if isPlainName(s) {
		return s
	}
	return Quote(s)
}

// Path returns the file name p as Text does, with "./" before a relative
// name that does not begin with a letter, a digit, '_', '.' or '/', so that
// a position (FILE:LINE:COL) at the start of a line begins with reconcile's
// text and still names the file.
func Path(p string) string {
	t := Text(p)
	if t == "" {
		return t
	}
	if r, _ := utf8.DecodeRuneInString(t); r == '.' || r == '/' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
		return t
	}
	return "./" + t
}

func isPlainName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
		case i == 0:
			if r < utf8.RuneSelf || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return false
			}
		case r == '-', r == '.', r == ':', r == '/', r == '@':
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)):
		default:
			return false
		}
	}
	return true
}

// plain returns the length of the start of s that escape writes as it is:
// printable ASCII, but for '"' and '\' when quoted.
func plain(s string, quoted bool) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || quoted && (c == '"' || c == '\\') {
			return i
		}
	}
	return len(s)
}

func escape(b *strings.Builder, s string, quoted bool) {
	for i := 0; i < len(s); {
		n := plain(s[i:], quoted)
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
			writeU(b, r1)
			writeU(b, r2)
		default:
			writeU(b, r)
		}
	}
}

// writeU writes \uXXXX, r in four lower-case hex digits.
func writeU(b *strings.Builder, r rune) {
	const hex = "0123456789abcdef"
	b.WriteString(`\u`)
	b.WriteByte(hex[r>>12&0xf])
	b.WriteByte(hex[r>>8&0xf])
	b.WriteByte(hex[r>>4&0xf])
	b.WriteByte(hex[r&0xf])
}
