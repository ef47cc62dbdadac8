package plan

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/internal/jsonfast"
	"github.com/reconcile-dev/reconcile/kind"
)

// readFast reads a plan file as WriteFile writes it, several times faster
// than encoding/json: the envelope with white space between its keys, the
// plan compact, no string with an escape, every key one WriteFile writes.
// The values of changes are left raw, for ReadFile to decode as it does
// those encoding/json reads. It reports false for anything else, and the
// caller reads that with encoding/json, which reports its errors. With
// toApply, the values of no-op changes not among the runs read before them
// are skipped.
func readFast(data []byte, toApply bool) (env planEnvelope, in planFileIn, ok bool) {
	d := fastReader{Reader: jsonfast.Reader{Data: data}, toApply: toApply}
	if !d.space() || !d.Byte('{') {
		return env, in, false
	}
	seen := map[string]bool{}
	for first := true; ; first = false {
		if d.space(); d.Byte('}') {
			break
		}
		if !first && (!d.Byte(',') || !d.space()) {
			return env, in, false
		}
		key, ok := d.RawString()
		if !ok || seen[string(key)] || !d.space() || !d.Byte(':') || !d.space() {
			return env, in, false
		}
		seen[string(key)] = true
		switch string(key) {
		case "format":
			env.Format, ok = d.Str()
		case "version":
			env.Version, ok = d.int()
		case "mac":
			env.MAC, ok = d.Str()
		case "plan":
			start := d.I
			ok = d.planBody(&in)
			env.Plan = data[start:d.I]
		default:
			ok = false
		}
		if !ok {
			return env, in, false
		}
	}
	d.space()
	return env, in, env.Plan != nil && d.I == len(data)
}

// fastReader reads the parts of a plan file; every method reports false,
// having read an unknown amount, when the data is not in the form it takes.
type fastReader struct {
	jsonfast.Reader
	toApply bool
	// runs are the plan's runs once read, with toApply.
	runs map[string]bool
}

// space skips JSON white space; it always reports true.
func (d *fastReader) space() bool {
	for d.I < len(d.Data) {
		switch d.Data[d.I] {
		case ' ', '\t', '\n', '\r':
			d.I++
		default:
			return true
		}
	}
	return true
}

// object reads a compact object, calling field for each key at its value.
// A key given twice is declined: WriteFile never writes one, and
// encoding/json merges the two values in ways not worth following.
func (d *fastReader) object(field func(key string) bool) bool {
	var seenBuf [32][]byte
	seen := seenBuf[:0]
	return d.Fields(func(key []byte) bool {
		if slices.ContainsFunc(seen, func(k []byte) bool { return bytes.Equal(k, key) }) {
			return false
		}
		seen = append(seen, key)
		return field(string(key))
	})
}

func (d *fastReader) int() (int, bool) {
	n, ok := d.int64()
	return int(n), ok && int64(int(n)) == n
}

func (d *fastReader) int32() (int32, bool) {
	n, ok := d.int64()
	return int32(n), ok && int64(int32(n)) == n
}

func (d *fastReader) int64() (int64, bool) {
	text, ok := d.Number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	return n, err == nil
}

// raw reads a value and returns its bytes; null is declined, as
// WriteFile leaves out what is empty.
func (d *fastReader) raw() (json.RawMessage, bool) {
	if d.I < len(d.Data) && d.Data[d.I] == 'n' {
		return nil, false
	}
	b, ok := d.Skip(0)
	return b, ok
}

// decode reads a value with encoding/json, for the fields that are rare
// and small.
func (d *fastReader) decode(v any) bool {
	b, ok := d.raw()
	return ok && json.Unmarshal(b, v) == nil
}

func (d *fastReader) planBody(in *planFileIn) bool {
	return d.object(func(key string) bool {
		var ok bool
		switch key {
		case "version":
			in.Version, ok = d.int()
		case "reconcile":
			in.Reconcile, ok = d.Str()
		case "specPath":
			in.SpecPath, ok = d.Str()
		case "backend":
			in.Backend, ok = d.Str()
		case "stack":
			in.Stack, ok = d.Str()
		case "cloud":
			ok = d.decode(&in.Cloud)
		case "config":
			ok = d.decode(&in.Config)
		case "lineage":
			in.Lineage, ok = d.Str()
		case "serial":
			in.Serial, ok = d.int64()
		case "specHash":
			in.SpecHash, ok = d.Str()
		case "schemas":
			in.Schemas, ok = d.Str()
		case "destroy":
			in.Destroy, ok = d.Bool()
		case "refreshOnly":
			in.RefreshOnly, ok = d.Bool()
		case "targets":
			in.Targets, ok = d.StringList()
		case "allowSelfLockout":
			in.AllowSelfLockout, ok = d.Bool()
		case "runs":
			in.Runs, ok = d.StringList()
			if ok && d.toApply && len(in.Runs) > 0 {
				d.runs = make(map[string]bool, len(in.Runs))
				for _, n := range in.Runs {
					d.runs[n] = true
				}
			}
		case "cuts":
			ok = d.decode(&in.Cuts)
		case "changes":
			in.Changes, ok = d.changes()
		case "outputs":
			in.Outputs, ok = d.raw()
		}
		return ok
	})
}

func (d *fastReader) changes() ([]changeIn, bool) {
	// Room for every change at once: a change is large, and a plan can
	// hold tens of thousands.
	out := make([]changeIn, 0, bytes.Count(d.Data[d.I:], []byte(`{"addr":`)))
	ok := d.List(func() bool {
		out = append(out, changeIn{})
		return d.change(&out[len(out)-1])
	})
	if !ok {
		return nil, false
	}
	return out, true
}

func (d *fastReader) change(c *changeIn) bool {
	return d.object(func(key string) bool {
		var ok bool
		switch key {
		case "addr":
			c.Addr, ok = d.Str()
		case "type":
			c.Type, ok = d.Str()
		case "kind":
			var s string
			s, ok = d.Str()
			c.Kind = kind.Kind(s)
		case "action":
			c.Action, ok = d.Str()
		case "reason":
			c.Reason, ok = d.Str()
		case "reasonDetail":
			c.ReasonDetail, ok = d.Str()
		case "reasonFields":
			c.ReasonFields, ok = d.StringList()
		case "id":
			c.ID, ok = d.Str()
		case "importId":
			c.ImportID, ok = d.Str()
		case "before":
			c.Before, ok = d.value(c)
		case "after":
			c.After, ok = d.value(c)
		case "afterIsBefore":
			c.AfterIsBefore, ok = d.Bool()
		case "replacePaths":
			c.ReplacePaths, ok = d.StringList()
		case "deleteBeforeReplace":
			c.DeleteBeforeReplace, ok = d.Bool()
		case "deferred":
			c.Deferred, ok = d.Bool()
		case "deposed":
			c.Deposed, ok = d.StringList()
		case "options":
			ok = d.decode(&c.Options)
		case "idle":
			c.Idle, ok = d.Bool()
		case "pos":
			ok = d.pos(&c.Pos)
		case "drift":
			ok = d.decode(&c.Drift)
		case "driftDetails":
			c.DriftDetails, ok = d.StringList()
		case "deletedOutside":
			c.DeletedOutside, ok = d.Bool()
		case "deletedId":
			c.DeletedID, ok = d.Str()
		case "driftAccess":
			ok = d.decode(&c.DriftAccess)
		case "access":
			ok = d.decode(&c.Access)
		case "lockouts":
			ok = d.decode(&c.Lockouts)
		}
		return ok
	})
}

// value reads the before or after of c, or skips it for apply when c
// is a no-op of a node that apply does not run (its address and action
// come first in what WriteFile writes).
func (d *fastReader) value(c *changeIn) (json.RawMessage, bool) {
	if d.runs != nil && c.Action == actionNames[NoOp] && c.Addr != "" && !d.runs[c.Addr] {
		_, ok := d.Skip(0)
		return nil, ok
	}
	return d.raw()
}

func (d *fastReader) pos(p *diag.Pos) bool {
	return d.object(func(key string) bool {
		var ok bool
		switch key {
		case "File":
			p.File, ok = d.Str()
		case "Line":
			p.Line, ok = d.int32()
		case "Col":
			p.Col, ok = d.int32()
		}
		return ok
	})
}
