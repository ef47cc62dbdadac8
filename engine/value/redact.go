package value

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Redaction replaces the clear text of secrets in free text, such as a
// cloud API's error message that echoes an input it refused. It is the
// last line of defence: values marked secret never reach a renderer. Each
// secret is looked for in every encoding output uses: as is, JSON-escaped,
// Go-quoted, escaped as the renderers quote values, and URL-escaped; and
// so is the start of a long one that a message quotes cut short. A
// match that continues a longer word is left, so that a secret that is an
// ordinary word ("value") does not blank out others ("values"). A nil
// *Redaction redacts nothing.
type Redaction struct {
	byFirst [256][][]byte // the encodings, by first byte, longest first
	n       int
}

// MinSecretLen is the shortest secret text redacted: shorter ones ("1",
// "yes") would blank out unrelated text.
const MinSecretLen = 4

// NewRedaction returns a Redaction of secrets; nil when there are none long
// enough to look for.
func NewRedaction(secrets []string) *Redaction {
	var forms []string
	for _, s := range secrets {
		if len(s) < MinSecretLen {
			continue
		}
		// A message may quote it cut short (QuoteTrunc).
		for _, f := range append(secretForms(s), secretForms(trunc(s))...) {
			if !slices.Contains(forms, f) {
				forms = append(forms, f)
			}
		}
	}
	if len(forms) == 0 {
		return nil
	}
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	r := &Redaction{n: len(forms)}
	for _, f := range forms {
		r.byFirst[f[0]] = append(r.byFirst[f[0]], []byte(f))
	}
	return r
}

// Merge returns a Redaction of the secrets of both.
func (r *Redaction) Merge(o *Redaction) *Redaction {
	switch {
	case r == nil:
		return o
	case o == nil:
		return r
	}
	m := &Redaction{n: r.n + o.n}
	for i := range m.byFirst {
		fs := append(append([][]byte(nil), r.byFirst[i]...), o.byFirst[i]...)
		slices.SortStableFunc(fs, func(a, b []byte) int { return len(b) - len(a) })
		m.byFirst[i] = fs
	}
	return m
}

// secretForms returns the encodings in which s can appear in output.
func secretForms(s string) []string {
	var forms []string
	add := func(f string) {
		if f != "" && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	add(s)
	for _, html := range []bool{false, true} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(html)
		if enc.Encode(s) == nil {
			j := bytes.TrimSpace(buf.Bytes())
			add(string(j[1 : len(j)-1]))
		}
	}
	for _, q := range []string{strconv.Quote(s), strconv.QuoteToASCII(s), Quote(s)} {
		add(q[1 : len(q)-1])
	}
	add(url.PathEscape(s))
	add(url.QueryEscape(s))
	return forms
}

// Bytes returns b with every match replaced by SensitiveText, in one pass
// from left to right, the longest encoding first at each place; what it
// writes is never searched again, nor is a text that stands in for a
// value (SensitiveText, UnknownText) already there. It returns b itself
// when nothing matched.
func (r *Redaction) Bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	var out []byte
	last := 0 // b[last:i] is yet to be copied
	for i := 0; i < len(b); i++ {
		matched := false
		for _, f := range r.byFirst[b[i]] {
			if bytes.HasPrefix(b[i:], f) && !wordJoins(b[:i], f, b[i+len(f):]) {
				if out == nil {
					out = make([]byte, 0, len(b))
				}
				out = append(append(out, b[last:i]...), SensitiveText...)
				i += len(f) - 1
				last = i + 1
				matched = true
				break
			}
		}
		if !matched {
			i += placeholderAt(b[i:]) // searched no further: see placeholderAt
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// placeholderAt returns how many bytes past the first of b end the text
// that stands in for a value at its start (SensitiveText, UnknownText),
// or 0 when none starts there. Bytes searches no secret inside one: a
// secret that is an ordinary word ("value", "apply") would otherwise turn
// every "(sensitive value)" written so far into "(sensitive (sensitive
// value))".
func placeholderAt(b []byte) int {
	for _, p := range [...]string{SensitiveText, UnknownText} {
		if len(b) >= len(p) && string(b[:len(p)]) == p {
			return len(p) - 1
		}
	}
	return 0
}

// String is Bytes for a string.
func (r *Redaction) String(s string) string {
	if r == nil {
		return s
	}
	return string(r.Bytes([]byte(s)))
}

// Error returns err with its text redacted; errors.Is and errors.As still
// see the original. It returns err itself when nothing matched.
func (r *Redaction) Error(err error) error {
	if err == nil || r == nil {
		return err
	}
	msg := err.Error()
	if red := r.String(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// wordJoins reports whether f, found between before and after, continues a
// word on either side: a letter or digit at its edge next to another.
func wordJoins(before, f, after []byte) bool {
	first, _ := utf8.DecodeRune(f)
	last, _ := utf8.DecodeLastRune(f)
	prev, _ := utf8.DecodeLastRune(before)
	next, _ := utf8.DecodeRune(after)
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	return len(before) > 0 && isWord(first) && isWord(prev) || len(after) > 0 && isWord(last) && isWord(next)
}
