package value

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// A Packer encodes maps of plain values (nil, bool, int64, float64,
// string, Unknown, and lists and maps of them) into compact byte strings,
// a fraction of the memory of the maps they hold: Unpack makes an equal
// map of one again. Its zero value is ready; it reuses its buffer from one
// map to the next, so it is not safe for concurrent use.
type Packer struct{ buf []byte }

// Pack encodes m. It reports false for a map holding anything but plain
// values, such as a Secret.
func (p *Packer) Pack(m map[string]any) ([]byte, bool) {
	b, ok := appendPacked(p.buf[:0], m, 0)
	if !ok {
		return nil, false
	}
	p.buf = b
	return slices.Clone(b), true
}

// Unpack decodes what a Packer made: a new map, whose maps and lists are new
// too.
func Unpack(b []byte) (map[string]any, error) {
	d := unpacker{b: b}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok || d.i != len(b) {
		return nil, errBadPack
	}
	return m, nil
}

// The tags of packed values.
const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagList
	tagMap
	tagUnknown
)

// maxPackDepth bounds the nesting Pack takes (the specs' own is far less).
const maxPackDepth = 100

var errBadPack = errors.New("packed values are damaged")

func appendPacked(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxPackDepth {
		return nil, false
	}
	switch v := v.(type) {
	case nil:
		return append(b, tagNil), true
	case bool:
		if v {
			return append(b, tagTrue), true
		}
		return append(b, tagFalse), true
	case int64:
		return binary.AppendVarint(append(b, tagInt), v), true
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat), math.Float64bits(v)), true
	case string:
		return append(binary.AppendUvarint(append(b, tagString), uint64(len(v))), v...), true
	case Unknown:
		return append(b, tagUnknown), true
	case []any:
		b = binary.AppendUvarint(append(b, tagList), uint64(len(v)))
		for _, e := range v {
			var ok bool
			if b, ok = appendPacked(b, e, depth+1); !ok {
				return nil, false
			}
		}
		return b, true
	case map[string]any:
		b = binary.AppendUvarint(append(b, tagMap), uint64(len(v)))
		for k, e := range v {
			b = append(binary.AppendUvarint(b, uint64(len(k))), k...)
			var ok bool
			if b, ok = appendPacked(b, e, depth+1); !ok {
				return nil, false
			}
		}
		return b, true
	}
	return nil, false
}

type unpacker struct {
	b []byte
	i int
}

func (d *unpacker) uvarint() (int, error) {
	n, size := binary.Uvarint(d.b[d.i:])
	// No count or length can exceed what is left to read.
	if size <= 0 || n > uint64(len(d.b)-d.i-size) {
		return 0, errBadPack
	}
	d.i += size
	return int(n), nil
}

func (d *unpacker) str() (string, error) {
	n, err := d.uvarint()
	if err != nil {
		return "", err
	}
	s := string(d.b[d.i : d.i+n])
	d.i += n
	return s, nil
}

func (d *unpacker) value(depth int) (any, error) {
	if d.i >= len(d.b) || depth > maxPackDepth {
		return nil, errBadPack
	}
	tag := d.b[d.i]
	d.i++
	switch tag {
	case tagNil:
		return nil, nil
	case tagFalse:
		return false, nil
	case tagTrue:
		return true, nil
	case tagUnknown:
		return Unknown{}, nil
	case tagInt:
		n, size := binary.Varint(d.b[d.i:])
		if size <= 0 {
			return nil, errBadPack
		}
		d.i += size
		return n, nil
	case tagFloat:
		if len(d.b)-d.i < 8 {
			return nil, errBadPack
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.i:]))
		d.i += 8
		return f, nil
	case tagString:
		return d.str()
	case tagList:
		n, err := d.uvarint()
		if err != nil {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case tagMap:
		n, err := d.uvarint()
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, n)
		for range n {
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			if out[k], err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, errBadPack
}
