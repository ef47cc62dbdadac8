// Package jsonfast decodes JSON in the form json.Marshal writes it, no
// white space and no escapes in strings, several times faster than
// encoding/json, to exactly what encoding/json with UseNumber makes of it.
// Anything else it declines, and the caller decodes that with
// encoding/json, which reports its errors.
package jsonfast

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/reconcile-dev/reconcile/internal/intern"
)

// MaxDepth bounds the nesting of values decoded here; deeper ones are
// declined.
const MaxDepth = 32

// Decode decodes data, one JSON value in the form json.Marshal writes it,
// as encoding/json decodes it into an `any` with UseNumber: numbers as
// json.Number, objects and lists never nil. It reports false for anything
// else.
func Decode(data []byte) (any, bool) {
	r := Reader{Data: data}
	v, ok := r.Value(0)
	return v, ok && r.I == len(data)
}

// Reader reads Data from I on; every method reports false, having read an
// unknown amount, when Data is not in the form it takes.
type Reader struct {
	Data []byte
	I    int
	// Strings, when not nil, makes the strings the Reader returns, keys
	// and values, so that equal ones share their memory.
	Strings *intern.Table
}

// Byte reads c if it is next.
func (d *Reader) Byte(c byte) bool {
	if d.I < len(d.Data) && d.Data[d.I] == c {
		d.I++
		return true
	}
	return false
}

// RawString reads a string and returns its bytes between the quotes,
// which are its value: it has no escape and no control character, and is
// valid UTF-8.
func (d *Reader) RawString() ([]byte, bool) {
	if !d.Byte('"') {
		return nil, false
	}
	start, ascii := d.I, true
	for ; d.I < len(d.Data); d.I++ {
		switch c := d.Data[d.I]; {
		case c == '"':
			s := d.Data[start:d.I]
			d.I++
			return s, ascii || utf8.Valid(s)
		case c == '\\' || c < ' ':
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// Str reads a string as RawString does and returns it.
func (d *Reader) Str() (string, bool) {
	s, ok := d.RawString()
	return d.Strings.Bytes(s), ok
}

// StringList reads a list of strings: never nil, as encoding/json makes
// it.
func (d *Reader) StringList() ([]string, bool) {
	out := []string{}
	ok := d.List(func() bool {
		s, ok := d.Str()
		out = append(out, s)
		return ok
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// List reads a list, calling item to read each element; it reports
// whether the list and every element were read.
func (d *Reader) List(item func() bool) bool {
	if !d.Byte('[') {
		return false
	}
	if d.Byte(']') {
		return true
	}
	for {
		if !item() {
			return false
		}
		if d.Byte(']') {
			return true
		}
		if !d.Byte(',') {
			return false
		}
	}
}

// Fields reads an object, calling field with each key (as RawString reads
// it) to read its value; it reports whether the object and every value
// were read.
func (d *Reader) Fields(field func(key []byte) bool) bool {
	if !d.Byte('{') {
		return false
	}
	if d.Byte('}') {
		return true
	}
	for {
		key, ok := d.RawString()
		if !ok || !d.Byte(':') || !field(key) {
			return false
		}
		if d.Byte('}') {
			return true
		}
		if !d.Byte(',') {
			return false
		}
	}
}

func (d *Reader) Bool() (bool, bool) {
	switch {
	case d.Literal("true"):
		return true, true
	case d.Literal("false"):
		return false, true
	}
	return false, false
}

// Literal reads lit if it is next.
func (d *Reader) Literal(lit string) bool {
	if len(d.Data)-d.I >= len(lit) && string(d.Data[d.I:d.I+len(lit)]) == lit {
		d.I += len(lit)
		return true
	}
	return false
}

// Number reads a number as JSON writes it and returns its text.
func (d *Reader) Number() ([]byte, bool) {
	start := d.I
	d.Byte('-')
	switch {
	case d.Byte('0'):
	case d.digits() == 0:
		return nil, false
	}
	if d.Byte('.') && d.digits() == 0 {
		return nil, false
	}
	if d.Byte('e') || d.Byte('E') {
		if !d.Byte('+') {
			d.Byte('-')
		}
		if d.digits() == 0 {
			return nil, false
		}
	}
	return d.Data[start:d.I], true
}

// digits reads digits and returns how many; the first of a number's
// integer part is not '0' (Number reads that one apart).
func (d *Reader) digits() int {
	start := d.I
	for d.I < len(d.Data) && d.Data[d.I] >= '0' && d.Data[d.I] <= '9' {
		d.I++
	}
	return d.I - start
}

// Value reads any JSON value, as encoding/json decodes it into an `any`
// with UseNumber: numbers as json.Number, objects never nil, lists never
// nil.
func (d *Reader) Value(depth int) (any, bool) {
	if d.I >= len(d.Data) || depth > MaxDepth {
		return nil, false
	}
	switch c := d.Data[d.I]; {
	case c == '{':
		m, ok := d.Object(depth + 1)
		return m, ok
	case c == '[':
		out := []any{}
		ok := d.List(func() bool {
			v, ok := d.Value(depth + 1)
			out = append(out, v)
			return ok
		})
		if !ok {
			return nil, false
		}
		return out, true
	case c == '"':
		return d.Str()
	case c == '-' || c >= '0' && c <= '9':
		n, ok := d.Number()
		return json.Number(n), ok
	case d.Literal("true"):
		return true, true
	case d.Literal("false"):
		return false, true
	case d.Literal("null"):
		return nil, true
	}
	return nil, false
}

// Object reads an object into a new map; a key given twice keeps its last
// value, as encoding/json does.
func (d *Reader) Object(depth int) (map[string]any, bool) {
	out := map[string]any{}
	ok := d.Fields(func(key []byte) bool {
		v, ok := d.Value(depth)
		out[d.Strings.Bytes(key)] = v
		return ok
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// Skip reads any value as Value does, without decoding it, and returns
// its bytes.
func (d *Reader) Skip(depth int) ([]byte, bool) {
	start := d.I
	if d.I >= len(d.Data) || depth > MaxDepth {
		return nil, false
	}
	ok := false
	switch c := d.Data[d.I]; {
	case c == '{':
		ok = d.Fields(func([]byte) bool {
			_, ok := d.Skip(depth + 1)
			return ok
		})
	case c == '[':
		ok = d.List(func() bool {
			_, ok := d.Skip(depth + 1)
			return ok
		})
	case c == '"':
		_, ok = d.RawString()
	case c == '-' || c >= '0' && c <= '9':
		_, ok = d.Number()
	default:
		ok = d.Literal("true") || d.Literal("false") || d.Literal("null")
	}
	return d.Data[start:d.I], ok
}
