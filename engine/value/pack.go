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
func (p *Packer) Pack(m map[string]any) ([]byte, bool) { return p.PackValue(m) }

// PackValue is Pack for any plain value, not only a map.
func (p *Packer) PackValue(v any) ([]byte, bool) {
	b, ok := appendPacked(p.buf[:0], v, 0)
	if !ok {
		return nil, false
	}
	p.buf = b
	return slices.Clone(b), true
}

// Unpack decodes what a Packer made: a new map, whose maps and lists are new
// too.
func Unpack(b []byte) (map[string]any, error) {
	v, err := UnpackValue(b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errBadPack
	}
	return m, nil
}

// UnpackValue is Unpack for any value PackValue packed.
func UnpackValue(b []byte) (any, error) {
	d := unpacker{b: b}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.i != len(b) {
		return nil, errBadPack
	}
	return v, nil
}

// PackOver is Pack for m as it differs from base: each entry of m that
// base holds too, identical (the same plain values, numbers of the same
// Go type), is packed as a mark of a few bytes, and UnpackOver takes it from base
// again. A plan's change so keeps what it plans over what it kept already
// in little more than the memory of what differs.
func (p *Packer) PackOver(m, base map[string]any) ([]byte, bool) {
	b := AppendPackedMap(p.buf[:0], len(m))
	for k, v := range m {
		b = AppendPackedKey(b, k)
		if bv, ok := base[k]; ok && identical(v, bv) {
			b = append(b, tagBase)
			continue
		}
		var ok bool
		if b, ok = appendPacked(b, v, 1); !ok {
			return nil, false
		}
	}
	p.buf = b
	return slices.Clone(b), true
}

// UnpackOver decodes what PackOver packed over base, which must be equal
// to the base it was packed over: a new map, whose maps and lists are new
// too, those taken from base included.
func UnpackOver(b []byte, base map[string]any) (map[string]any, error) {
	d := unpacker{b: b}
	if len(b) == 0 || b[0] != tagMap {
		return nil, errBadPack
	}
	d.i++
	out, err := d.mapBody(0, base)
	if err != nil {
		return nil, err
	}
	if d.i != len(b) {
		return nil, errBadPack
	}
	return out, nil
}

// copyPlain returns v with its lists and maps made anew.
func copyPlain(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyPlain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyPlain(e)
		}
		return out
	}
	return v
}

// AppendPacked appends v, a plain value packed as PackValue packs it, to
// b; it reports false for a value PackValue refuses. With
// AppendPackedList, AppendPackedMap and AppendPackedKey, a caller packs a
// tree of its own in its own order, such as literal expressions: a list's
// length, then its items; a map's length, then each key and its value.
// Unpack refuses what nests deeper than MaxPackDepth.
func AppendPacked(b []byte, v any) ([]byte, bool) { return appendPacked(b, v, 0) }

// AppendPackedList appends the head of a list of n items; see AppendPacked.
func AppendPackedList(b []byte, n int) []byte {
	return binary.AppendUvarint(append(b, tagList), uint64(n))
}

// AppendPackedMap appends the head of a map of n entries; see AppendPacked.
func AppendPackedMap(b []byte, n int) []byte {
	return binary.AppendUvarint(append(b, tagMap), uint64(n))
}

// AppendPackedKey appends a map's key, before its value; see AppendPacked.
func AppendPackedKey(b []byte, k string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(k))), k...)
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
	tagBase // an entry of PackOver's base, in its place
)

// MaxPackDepth bounds the nesting of packed values (the specs' own is far
// less).
const MaxPackDepth = 100

var errBadPack = errors.New("packed values are damaged")

func appendPacked(b []byte, v any, depth int) ([]byte, bool) {
	if depth > MaxPackDepth {
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
		b = AppendPackedList(b, len(v))
		for _, e := range v {
			var ok bool
			if b, ok = appendPacked(b, e, depth+1); !ok {
				return nil, false
			}
		}
		return b, true
	case map[string]any:
		b = AppendPackedMap(b, len(v))
		for k, e := range v {
			b = AppendPackedKey(b, k)
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
	b, err := d.bytes()
	return string(b), err
}

// bytes reads the bytes of a string, which stay the packed ones.
func (d *unpacker) bytes() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	b := d.b[d.i : d.i+n]
	d.i += n
	return b, nil
}

func (d *unpacker) value(depth int) (any, error) {
	if d.i >= len(d.b) || depth > MaxPackDepth {
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
		return d.mapBody(depth, nil)
	}
	return nil, errBadPack
}

// mapBody reads the length and the entries of a map at depth. An entry
// marked as base's (PackOver) is a copy of base's; damage where base does
// not hold it (Unpack has no base).
func (d *unpacker) mapBody(depth int, base map[string]any) (map[string]any, error) {
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
		if d.i < len(d.b) && d.b[d.i] == tagBase {
			d.i++
			bv, ok := base[k]
			if !ok {
				return nil, errBadPack
			}
			out[k] = copyPlain(bv)
			continue
		}
		if out[k], err = d.value(depth + 1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SamePacked reports whether b, packed by PackValue (or by AppendPacked and
// its kin, without a key twice in a map), is v: the same plain values of
// the same Go types (an int64 is never a float64 here), in lists and maps
// alike. It copies no string, list or map, so a reader compares a packed
// value with one it holds without making a copy of it. An Unknown is the
// same as nothing, as for Same.
func SamePacked(b []byte, v any) bool {
	d := unpacker{b: b}
	return d.same(v, 0) && d.i == len(b)
}

// same is SamePacked for the value at d.
func (d *unpacker) same(v any, depth int) bool {
	if d.i >= len(d.b) || depth > MaxPackDepth {
		return false
	}
	switch d.b[d.i] {
	case tagString:
		d.i++
		s, err := d.bytes()
		x, ok := v.(string)
		return err == nil && ok && x == string(s)
	case tagList:
		d.i++
		n, err := d.uvarint()
		l, ok := v.([]any)
		if err != nil || !ok || len(l) != n {
			return false
		}
		for _, e := range l {
			if !d.same(e, depth+1) {
				return false
			}
		}
		return true
	case tagMap:
		d.i++
		n, err := d.uvarint()
		m, ok := v.(map[string]any)
		if err != nil || !ok || len(m) != n {
			return false
		}
		for range n {
			k, err := d.bytes()
			if err != nil {
				return false
			}
			e, has := m[string(k)]
			if !has || !d.same(e, depth+1) {
				return false
			}
		}
		return true
	}
	// A scalar, decoded without a copy of anything but itself; an
	// Unknown is identical to nothing.
	x, err := d.value(depth)
	return err == nil && identical(x, v)
}
