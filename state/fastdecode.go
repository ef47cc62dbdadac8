package state

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"reconcile/kind"
)

// A record is decoded many times over: every plan, apply and drift lists
// them all. encoding/json, with its stream decoder (needed for exact
// numbers), spends most of a plan's time on that. recordDecoder decodes
// the text that json.Marshal writes for a Record directly, to exactly
// what encoding/json would make of it; anything else it declines, and
// encoding/json decodes it (and reports its errors) as before.

// decodeRecordFast decodes data into a Record as decodeJSON would, when
// data is in the form json.Marshal writes: no white space, every key
// spelt as the Record's JSON tags spell it and given once, strings
// without escapes and in valid UTF-8. It reports false for anything else.
func decodeRecordFast(data []byte) (Record, bool) {
	d := recordDecoder{data: data}
	r, ok := d.record()
	return r, ok && d.i == len(data)
}

// recordDecoder reads data from i on; every method reports false, having
// read an unknown amount, when data is not in the form it takes.
type recordDecoder struct {
	data []byte
	i    int
}

// maxFastDepth bounds the nesting of values decoded here; deeper ones are
// left to encoding/json.
const maxFastDepth = 32

// Record fields, for telling a key given twice.
const (
	fName = 1 << iota
	fType
	fKind
	fID
	fInputs
	fOutputs
	fDependencies
	fProtect
	fRetainOnDelete
	fDeleteBeforeReplace
	fTainted
	fDeposed
	fSerial
	fUpdatedAt
)

func (d *recordDecoder) record() (Record, bool) {
	var r Record
	if !d.byte('{') {
		return r, false
	}
	if d.byte('}') {
		return r, true
	}
	seen := 0
	for {
		key, ok := d.rawString()
		if !ok || !d.byte(':') {
			return r, false
		}
		var field int
		switch string(key) {
		case "name":
			field = fName
			r.Name, ok = d.string()
		case "type":
			field = fType
			r.Type, ok = d.string()
		case "kind":
			field = fKind
			var s string
			s, ok = d.string()
			r.Kind = kind.Kind(s)
		case "id":
			field = fID
			r.ID, ok = d.string()
		case "inputs":
			field = fInputs
			r.Inputs, ok = d.object(0)
		case "outputs":
			field = fOutputs
			r.Outputs, ok = d.object(0)
		case "dependencies":
			field = fDependencies
			r.Dependencies, ok = d.strings()
		case "protect":
			field = fProtect
			r.Protect, ok = d.bool()
		case "retainOnDelete":
			field = fRetainOnDelete
			r.RetainOnDelete, ok = d.bool()
		case "deleteBeforeReplace":
			field = fDeleteBeforeReplace
			r.DeleteBeforeReplace, ok = d.bool()
		case "tainted":
			field = fTainted
			r.Tainted, ok = d.string()
		case "deposed":
			field = fDeposed
			r.Deposed, ok = d.strings()
		case "serial":
			field = fSerial
			var n []byte
			if n, ok = d.number(); ok {
				var err error
				r.Serial, err = strconv.ParseInt(string(n), 10, 64)
				ok = err == nil
			}
		case "updatedAt":
			field = fUpdatedAt
			start := d.i
			if _, ok = d.rawString(); ok {
				ok = r.UpdatedAt.UnmarshalJSON(d.data[start:d.i]) == nil
			}
		}
		if !ok || field == 0 || seen&field != 0 {
			return r, false
		}
		seen |= field
		if d.byte('}') {
			return r, true
		}
		if !d.byte(',') {
			return r, false
		}
	}
}

// byte reads c if it is next.
func (d *recordDecoder) byte(c byte) bool {
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

// rawString reads a string and returns its bytes between the quotes,
// which are its value: it has no escape and no control character, and is
// valid UTF-8.
func (d *recordDecoder) rawString() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	start, ascii := d.i, true
	for ; d.i < len(d.data); d.i++ {
		switch c := d.data[d.i]; {
		case c == '"':
			s := d.data[start:d.i]
			d.i++
			return s, ascii || utf8.Valid(s)
		case c == '\\' || c < ' ':
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

func (d *recordDecoder) string() (string, bool) {
	s, ok := d.rawString()
	return string(s), ok
}

// strings reads a list of strings: never nil, as encoding/json makes it.
func (d *recordDecoder) strings() ([]string, bool) {
	if !d.byte('[') {
		return nil, false
	}
	out := []string{}
	if d.byte(']') {
		return out, true
	}
	for {
		s, ok := d.string()
		if !ok {
			return nil, false
		}
		out = append(out, s)
		if d.byte(']') {
			return out, true
		}
		if !d.byte(',') {
			return nil, false
		}
	}
}

func (d *recordDecoder) bool() (bool, bool) {
	switch {
	case d.literal("true"):
		return true, true
	case d.literal("false"):
		return false, true
	}
	return false, false
}

// literal reads lit if it is next.
func (d *recordDecoder) literal(lit string) bool {
	if len(d.data)-d.i >= len(lit) && string(d.data[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	return false
}

// number reads a number as JSON writes it and returns its text.
func (d *recordDecoder) number() ([]byte, bool) {
	start := d.i
	d.byte('-')
	switch {
	case d.byte('0'):
	case d.digits() == 0:
		return nil, false
	}
	if d.byte('.') && d.digits() == 0 {
		return nil, false
	}
	if d.byte('e') || d.byte('E') {
		if !d.byte('+') {
			d.byte('-')
		}
		if d.digits() == 0 {
			return nil, false
		}
	}
	return d.data[start:d.i], true
}

// digits reads digits and returns how many; the first of a number's
// integer part is not '0' (number reads that one apart).
func (d *recordDecoder) digits() int {
	start := d.i
	for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
		d.i++
	}
	return d.i - start
}

// value reads any JSON value, as encoding/json decodes it into an `any`
// with UseNumber: numbers as json.Number, objects never nil, lists never
// nil.
func (d *recordDecoder) value(depth int) (any, bool) {
	if d.i >= len(d.data) || depth > maxFastDepth {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '{':
		m, ok := d.object(depth + 1)
		return m, ok
	case c == '[':
		d.i++
		out := []any{}
		if d.byte(']') {
			return out, true
		}
		for {
			v, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			out = append(out, v)
			if d.byte(']') {
				return out, true
			}
			if !d.byte(',') {
				return nil, false
			}
		}
	case c == '"':
		return d.string()
	case c == '-' || c >= '0' && c <= '9':
		n, ok := d.number()
		return json.Number(n), ok
	case d.literal("true"):
		return true, true
	case d.literal("false"):
		return false, true
	case d.literal("null"):
		return nil, true
	}
	return nil, false
}

// object reads an object into a new map; a key given twice keeps its last
// value, as encoding/json does.
func (d *recordDecoder) object(depth int) (map[string]any, bool) {
	if !d.byte('{') {
		return nil, false
	}
	out := map[string]any{}
	if d.byte('}') {
		return out, true
	}
	for {
		k, ok := d.string()
		if !ok || !d.byte(':') {
			return nil, false
		}
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		out[k] = v
		if d.byte('}') {
			return out, true
		}
		if !d.byte(',') {
			return nil, false
		}
	}
}
