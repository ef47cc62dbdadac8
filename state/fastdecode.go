package state

import (
	"strconv"

	"github.com/reconcile-dev/reconcile/internal/intern"
	"github.com/reconcile-dev/reconcile/internal/jsonfast"
	"github.com/reconcile-dev/reconcile/kind"
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
// in, when not nil, makes the record's strings.
func decodeRecordFast(data []byte, in *intern.Table) (Record, bool) {
	d := recordDecoder{Reader: jsonfast.Reader{Data: data, Strings: in}}
	r, ok := d.record()
	return r, ok && d.I == len(data)
}

// recordDecoder reads a Record; every method reports false, having read
// an unknown amount, when the data is not in the form it takes. With
// skipValues, it reads the inputs and outputs over without decoding them
// (see LazyRecord).
type recordDecoder struct {
	jsonfast.Reader
	skipValues bool
	// inputs and outputs are the text of the values read over with
	// skipValues, into Data; nil when the record has none.
	inputs, outputs []byte
}

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
	if !d.Byte('{') {
		return r, false
	}
	if d.Byte('}') {
		return r, true
	}
	seen := 0
	for {
		key, ok := d.RawString()
		if !ok || !d.Byte(':') {
			return r, false
		}
		var field int
		switch string(key) {
		case "name":
			field = fName
			r.Name, ok = d.Str()
		case "type":
			field = fType
			r.Type, ok = d.Str()
		case "kind":
			field = fKind
			var s string
			s, ok = d.Str()
			r.Kind = kind.Kind(s)
		case "id":
			field = fID
			r.ID, ok = d.Str()
		case "inputs":
			field = fInputs
			r.Inputs, ok = d.values(&d.inputs)
		case "outputs":
			field = fOutputs
			r.Outputs, ok = d.values(&d.outputs)
		case "dependencies":
			field = fDependencies
			r.Dependencies, ok = d.StringList()
		case "protect":
			field = fProtect
			r.Protect, ok = d.Bool()
		case "retainOnDelete":
			field = fRetainOnDelete
			r.RetainOnDelete, ok = d.Bool()
		case "deleteBeforeReplace":
			field = fDeleteBeforeReplace
			r.DeleteBeforeReplace, ok = d.Bool()
		case "tainted":
			field = fTainted
			r.Tainted, ok = d.Str()
		case "deposed":
			field = fDeposed
			r.Deposed, ok = d.StringList()
		case "serial":
			field = fSerial
			var n []byte
			if n, ok = d.Number(); ok {
				var err error
				r.Serial, err = strconv.ParseInt(string(n), 10, 64)
				ok = err == nil
			}
		case "updatedAt":
			field = fUpdatedAt
			start := d.I
			if _, ok = d.RawString(); ok {
				ok = r.UpdatedAt.UnmarshalJSON(d.Data[start:d.I]) == nil
			}
		}
		if !ok || field == 0 || seen&field != 0 {
			return r, false
		}
		seen |= field
		if d.Byte('}') {
			return r, true
		}
		if !d.Byte(',') {
			return r, false
		}
	}
}

// values reads the inputs or outputs of a record, an object; with
// skipValues, it reads the object over into text, leaving them nil.
func (d *recordDecoder) values(text *[]byte) (map[string]any, bool) {
	if !d.skipValues {
		return d.Object(0)
	}
	if d.I >= len(d.Data) || d.Data[d.I] != '{' {
		return nil, false
	}
	var ok bool
	*text, ok = d.Skip(0)
	return nil, ok
}
