package state

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// secretKeySize is the length of the secret key, in bytes.
const secretKeySize = 32

// readFormat returns the format version of the state whose meta bucket is
// b, checking it. A version above FormatVersion yields an error wrapping
// ErrNewerFormat.
func readFormat(b *bolt.Bucket) (int, error) {
	raw, check := b.Get(keyFormat), b.Get(keyFormatCheck)
	if len(raw) != 8 {
		return 0, fmt.Errorf("meta %q: bad format version %x", keyFormat, raw)
	}
	v := binary.BigEndian.Uint64(raw)
	switch {
	case v == 1 && check == nil:
		return 1, nil // format 1 has no checks
	case v > FormatVersion && check == nil:
		// A later format may check its values some other way: what
		// matters is to ask for a newer reconcile.
		return 0, newerFormat(v)
	case !bytes.Equal(check, checksum(bucketMeta, keyFormat, raw)):
		return 0, fmt.Errorf("meta %q: %w", keyFormat, errChecksum)
	case v > FormatVersion:
		return 0, newerFormat(v)
	case v < 2:
		return 0, fmt.Errorf("meta %q: bad format version %d", keyFormat, v)
	}
	return int(v), nil
}

// newerFormat is the error for a state of format v, above FormatVersion.
func newerFormat(v uint64) error {
	return fmt.Errorf("%w (file format %d, this one reads up to %d); upgrade reconcile to use it", ErrNewerFormat, v, FormatVersion)
}

// readMeta reads and checks the meta values of a state of the current
// format in b.
func readMeta(b *bolt.Bucket) (Meta, error) {
	format, err := readFormat(b)
	if err != nil {
		return Meta{}, err
	}
	if format != FormatVersion {
		return Meta{}, fmt.Errorf("meta %q: format %d where %d was expected", keyFormat, format, FormatVersion)
	}
	serial, err := getCheckedInt(b, keySerial, keySerialCheck)
	if err != nil {
		return Meta{}, err
	}
	lineage, err := getMeta(b, keyLineage)
	if err != nil {
		return Meta{}, err
	}
	switch {
	case int64(serial) < 0:
		return Meta{}, fmt.Errorf("meta %q: bad serial %d", keySerial, int64(serial))
	case len(lineage) == 0:
		return Meta{}, fmt.Errorf("meta %q: empty", keyLineage)
	}
	return Meta{Lineage: string(lineage), Serial: int64(serial), FormatVersion: format}, nil
}

// readMetaV1 reads and checks the meta values of a format 1 state in b.
func readMetaV1(b *bolt.Bucket) (Meta, error) {
	format, lineage, serial := b.Get(keyFormat), b.Get(keyLineage), b.Get(keySerial)
	switch {
	case len(format) != 8 || binary.BigEndian.Uint64(format) != 1:
		return Meta{}, fmt.Errorf("bad format version %x", format)
	case len(serial) != 8:
		return Meta{}, fmt.Errorf("bad serial %x", serial)
	case len(lineage) == 0:
		return Meta{}, fmt.Errorf("no lineage")
	}
	m := Meta{
		FormatVersion: 1,
		Lineage:       string(lineage),
		Serial:        int64(binary.BigEndian.Uint64(serial)),
	}
	if m.Serial < 0 {
		return Meta{}, fmt.Errorf("bad serial %d", m.Serial)
	}
	for _, k := range [][]byte{keyFormatCheck, keySerialCheck, keySecret} {
		if b.Get(k) != nil {
			// Only format 2 writes these: the format value was damaged.
			return Meta{}, fmt.Errorf("meta %q: format 1, but there is a %q value", keyFormat, k)
		}
	}
	return m, nil
}

// readSecretKey returns a copy of the secret key in the meta bucket b.
// Its errors never show the key.
func readSecretKey(b *bolt.Bucket) ([]byte, error) {
	key, err := getMeta(b, keySecret)
	if err != nil {
		return nil, err
	}
	if len(key) != secretKeySize {
		return nil, fmt.Errorf("meta %q: %d bytes, want %d", keySecret, len(key), secretKeySize)
	}
	return bytes.Clone(key), nil
}

// getMeta returns the checked payload of the meta value key, which must
// exist.
func getMeta(b *bolt.Bucket, key []byte) ([]byte, error) {
	v := b.Get(key)
	if v == nil {
		return nil, fmt.Errorf("meta %q: missing", key)
	}
	return openValue(bucketMeta, key, v)
}

// getCheckedInt returns the 8-byte meta value key, checked against the
// check stored under checkKey.
func getCheckedInt(b *bolt.Bucket, key, checkKey []byte) (uint64, error) {
	raw := b.Get(key)
	switch {
	case raw == nil:
		return 0, fmt.Errorf("meta %q: missing", key)
	case !bytes.Equal(b.Get(checkKey), checksum(bucketMeta, key, raw)):
		return 0, fmt.Errorf("meta %q: %w", key, errChecksum)
	case len(raw) != 8:
		return 0, fmt.Errorf("meta %q: %d bytes, want 8", key, len(raw))
	}
	return binary.BigEndian.Uint64(raw), nil
}

// putCheckedInt stores n as the 8-byte meta value key and its check under
// checkKey.
func putCheckedInt(b *bolt.Bucket, key, checkKey []byte, n uint64) error {
	raw := u64(n)
	if err := b.Put(key, raw); err != nil {
		return err
	}
	return b.Put(checkKey, checksum(bucketMeta, key, raw))
}

// putMeta writes every meta value of a state of the current format in tx:
// the format version, m's lineage and serial, key, and the count of
// records, which are in tx already.
func putMeta(tx *bolt.Tx, m Meta, key []byte) error {
	b := tx.Bucket(bucketMeta)
	return errors.Join(
		putCheckedInt(b, keyFormat, keyFormatCheck, FormatVersion),
		putCheckedInt(b, keySerial, keySerialCheck, uint64(m.Serial)),
		putValue(tx, bucketMeta, keyLineage, []byte(m.Lineage)),
		putValue(tx, bucketMeta, keySecret, key),
		b.Put(keyCount, EncodeCount(countRecords(tx), m.Serial)),
	)
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
