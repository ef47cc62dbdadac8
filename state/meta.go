package state

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// secretKeySize is the length of the secret key, in bytes.
const secretKeySize = 32

// metaValues are the meta values of a stack as stored, nil where there is
// none.
type metaValues struct {
	format, serial, lineage, key, count, incomplete []byte
}

// readMetaValues reads the meta values in vw.
func readMetaValues(vw kv.View) (metaValues, error) {
	vs, err := vw.GetMany(metaKeys)
	if err != nil {
		return metaValues{}, err
	}
	return metaValues{format: vs[0], serial: vs[1], lineage: vs[2], key: vs[3], count: vs[4], incomplete: vs[5]}, nil
}

// formatOf returns the format of the stored format value v. A format 1
// value is its 8 bytes alone. A version above FormatVersion yields an
// error wrapping ErrNewerFormat when the value has no check, or passes
// it, or, when anyCheck is set (the layout of etcd stacks, where a later
// format may check it some other way), whatever its check. Other errors
// name the value and do not wrap ErrCorrupt.
func formatOf(v []byte, anyCheck bool) (int, error) {
	if len(v) < 8 {
		return 0, fmt.Errorf("meta %q: bad format version %x", keyFormat, v)
	}
	n := binary.BigEndian.Uint64(v)
	switch {
	case len(v) == 8 && n == 1:
		return 1, nil // format 1 has no checks
	case n > FormatVersion && (len(v) == 8 || anyCheck):
		return 0, newerFormat(n)
	}
	raw, err := openValue(bucketMeta, keyFormat, v)
	switch {
	case err != nil:
		return 0, err
	case len(raw) != 8:
		return 0, fmt.Errorf("meta %q: bad format version %x", keyFormat, raw)
	case n > FormatVersion:
		return 0, newerFormat(n)
	case n != FormatVersion:
		return 0, fmt.Errorf("meta %q: bad format version %d", keyFormat, n)
	}
	return FormatVersion, nil
}

// newerFormat is the error for a state of format v, above FormatVersion.
func newerFormat(v uint64) error {
	return fmt.Errorf("%w (file format %d, this one reads up to %d); upgrade reconcile to use it", ErrNewerFormat, v, FormatVersion)
}

// need returns v, the stored meta value name, or an error if there is
// none.
func need(v []byte, name string) ([]byte, error) {
	if v == nil {
		return nil, fmt.Errorf("meta %q: missing", name)
	}
	return v, nil
}

// serialOf checks v, the stored serial, and returns it.
func serialOf(v []byte) (int64, error) {
	v, err := need(v, "serial")
	if err != nil {
		return 0, err
	}
	raw, err := openValue(bucketMeta, keySerial, v)
	switch {
	case err != nil:
		return 0, err
	case len(raw) != 8:
		return 0, fmt.Errorf("meta %q: %d bytes, want 8", keySerial, len(raw))
	}
	serial := int64(binary.BigEndian.Uint64(raw))
	if serial < 0 {
		return 0, fmt.Errorf("meta %q: bad serial %d", keySerial, serial)
	}
	return serial, nil
}

// lineageOf checks v, the stored lineage, and returns it.
func lineageOf(v []byte) (string, error) {
	v, err := need(v, "lineage")
	if err != nil {
		return "", err
	}
	raw, err := openValue(bucketMeta, keyLineage, v)
	switch {
	case err != nil:
		return "", err
	case len(raw) == 0:
		return "", fmt.Errorf("meta %q: empty", keyLineage)
	}
	return string(raw), nil
}

// secretKeyOf checks v, the stored secret key, and returns a copy of the
// key. Its errors never show the key.
func secretKeyOf(v []byte) ([]byte, error) {
	v, err := need(v, "key")
	if err != nil {
		return nil, err
	}
	raw, err := openValue(bucketMeta, keySecret, v)
	switch {
	case err != nil:
		return nil, err
	case len(raw) != secretKeySize:
		return nil, fmt.Errorf("meta %q: %d bytes, want %d", keySecret, len(raw), secretKeySize)
	}
	return append([]byte(nil), raw...), nil
}

// meta checks and returns the format, serial and lineage of mv, a state of
// the current format.
func (mv metaValues) meta() (Meta, error) {
	serial, err := serialOf(mv.serial)
	if err != nil {
		return Meta{}, err
	}
	lineage, err := lineageOf(mv.lineage)
	if err != nil {
		return Meta{}, err
	}
	return Meta{Lineage: lineage, Serial: serial, FormatVersion: FormatVersion}, nil
}

// metaV1 checks and returns the meta values of mv, a state of format 1.
func (mv metaValues) metaV1() (Meta, error) {
	switch {
	case len(mv.serial) != 8:
		return Meta{}, fmt.Errorf("bad serial %x", mv.serial)
	case len(mv.lineage) == 0:
		return Meta{}, fmt.Errorf("no lineage")
	case mv.key != nil:
		// Only format 2 writes it: the format value was damaged.
		return Meta{}, fmt.Errorf("meta %q: format 1, but there is a %q value", keyFormat, keySecret)
	}
	m := Meta{FormatVersion: 1, Lineage: string(mv.lineage), Serial: int64(binary.BigEndian.Uint64(mv.serial))}
	if m.Serial < 0 {
		return Meta{}, fmt.Errorf("bad serial %d", m.Serial)
	}
	return m, nil
}

// countAt returns the record count of mv and whether it was counted at
// serial (a count left at another serial was left by a reconcile that did
// not keep it).
func (mv metaValues) countAt(serial int64) (count int64, ok bool, err error) {
	if mv.count == nil {
		return 0, false, nil
	}
	count, at, err := countOf(mv.count)
	return count, err == nil && at == serial, err
}

// newLineage returns a random version 4 UUID.
func newLineage() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// newSecretKey returns a new random secret key.
func newSecretKey() ([]byte, error) {
	key := make([]byte, secretKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return key, nil
}

// initOps are the puts that make a new state: every meta value, and, for
// the target of a copy, its mark.
func initOps(mark *CopyMark) ([]kv.Op, error) {
	lineage, err := newLineage()
	if err != nil {
		return nil, err
	}
	key, err := newSecretKey()
	if err != nil {
		return nil, err
	}
	ops := []kv.Op{
		{Key: kvFormat, Value: EncodeFormat()},
		{Key: kvSerial, Value: EncodeSerial(0)},
		{Key: kvCount, Value: EncodeCount(0, 0)},
		{Key: kvLineage, Value: EncodeLineage(lineage)},
		{Key: kvSecret, Value: EncodeSecretKey(key)},
	}
	if mark != nil {
		ops = append(ops, kv.Op{Key: kvIncomplete, Value: EncodeCopyMark(*mark)})
	}
	return ops, nil
}
