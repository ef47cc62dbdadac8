package main

import (
	"fmt"
	"io"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// sanitizer writes to w with every character that could move the cursor,
// rewrite a line or reorder text escaped as \uXXXX: control characters
// but newline and tab (a carriage return could overwrite "Destroying..."
// with a fake "Apply complete!"), escape sequences, and Unicode format
// characters such as the bidirectional overrides. It is the last line of
// defence for terminals and CI logs: names, ids, vendor messages and values
// come from specs and clouds that a pull request's author may control.
// In JSON output the escapes keep strings valid and equal in value.
//
// With sgr set (colour on a terminal), the colour sequences reconcile
// writes itself, ESC [ digits and semicolons m, pass; they can only colour.
type sanitizer struct {
	w   io.Writer
	sgr bool

	mu      sync.Mutex
	pending []byte // an incomplete character or escape sequence from the last write
	out     []byte // the buffer of the last write, for the next
}

// keepOut is the largest buffer a sanitizer keeps for its next write.
const keepOut = 64 << 10

// plain reports whether p is printable ASCII and line breaks only: most
// writes, which pass as they are.
func plain(p []byte) bool {
	for _, c := range p {
		if (c < ' ' || c > '~') && c != '\n' {
			return false
		}
	}
	return true
}

func (s *sanitizer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 && plain(p) {
		if _, err := s.w.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	buf := p
	if len(s.pending) > 0 {
		buf = append(s.pending, p...)
	}
	s.pending = nil
	out := s.out[:0]
	for i := 0; i < len(buf); {
		c := buf[i]
		if c >= ' ' && c <= '~' || c == '\n' {
			// Printable ASCII, most of any output, is copied as it is.
			j := i + 1
			for j < len(buf) && (buf[j] >= ' ' && buf[j] <= '~' || buf[j] == '\n') {
				j++
			}
			out = append(out, buf[i:j]...)
			i = j
			continue
		}
		if c == 0x1b && s.sgr {
			n, complete := sgrLen(buf[i:])
			if n > 0 {
				out = append(out, buf[i:i+n]...)
				i += n
				continue
			}
			if !complete {
				s.pending = append(s.pending, buf[i:]...)
				break
			}
		}
		r, size := utf8.DecodeRune(buf[i:])
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(buf[i:]) {
			s.pending = append(s.pending, buf[i:]...) // the rest comes with the next write
			break
		}
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case r == '\n' || r == '\t' || r == ' ':
			out = append(out, byte(r))
		case unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Cs):
			out = appendEscape(out, r)
		default:
			out = utf8.AppendRune(out, r)
		}
	}
	if cap(out) <= keepOut {
		s.out = out
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// appendEscape appends r as \uXXXX, as a surrogate pair beyond the BMP.
func appendEscape(out []byte, r rune) []byte {
	if r > 0xffff {
		r1, r2 := utf16.EncodeRune(r)
		return fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
	}
	return fmt.Appendf(out, `\u%04x`, r)
}

// sgrLen returns the length of the colour sequence (ESC [ 0-9; ... m) at
// the start of b, or 0 when there is none; complete is false when b ends
// inside what may still become one.
func sgrLen(b []byte) (n int, complete bool) {
	if len(b) < 2 {
		return 0, false
	}
	if b[1] != '[' {
		return 0, true
	}
	for i := 2; i < len(b); i++ {
		switch c := b[i]; {
		case c == 'm':
			return i + 1, true
		case c >= '0' && c <= '9' || c == ';':
		default:
			return 0, true
		}
		if i > 32 {
			return 0, true
		}
	}
	return 0, false
}

// flush writes what an incomplete sequence held back, escaped: a command
// calls it before it returns.
func (s *sanitizer) flush() {
	s.mu.Lock()
	rest := s.pending
	s.pending = nil
	s.mu.Unlock()
	if len(rest) == 0 {
		return
	}
	var out []byte
	for _, c := range rest {
		if c < 0x20 || c >= 0x7f {
			out = fmt.Appendf(out, `\u%04x`, c)
		} else {
			out = append(out, c)
		}
	}
	_, _ = s.w.Write(out)
}
