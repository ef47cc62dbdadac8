package state

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/reconcile-dev/reconcile/internal/intern"
)

// Bucket names of the bbolt file's layout (see package state/bolt). Every
// backend's values carry checks that cover the bucket and key they have in
// it: never rename them.
var (
	bucketMeta     = []byte("meta")
	bucketRecords  = []byte("records")
	bucketVersions = []byte("versions")
	bucketHistory  = []byte("history")
	bucketIntents  = []byte("intents")

	allBuckets = [][]byte{bucketMeta, bucketRecords, bucketVersions, bucketHistory, bucketIntents}
)

// Keys of the meta bucket. The format value and its check are encoded the
// same way in every format, so that any reconcile can tell which format it
// is reading.
var (
	keyFormat      = []byte("format")     // 8-byte big-endian format version, no check appended
	keyFormatCheck = []byte("format.crc") // check of the format value (from format 2)
	keyLineage     = []byte("lineage")    // lineage id, text
	keySerial      = []byte("serial")     // 8-byte big-endian serial, no check appended
	keySerialCheck = []byte("serial.crc") // check of the serial value (from format 2)
	keySecret      = []byte("key")        // the secret key (from format 2)
)

// From format 2, every value stored ends with a check: the CRC-32C
// (Castagnoli) of the bucket name, a zero byte, the key's length as 4
// big-endian bytes, the key, and the payload, as 4 big-endian bytes. It
// covers the key and the bucket, so a value moved to another key fails its
// check too. The meta format and serial values are the exception: they
// stay 8 bytes long, as format 1 has them, because a reconcile that reads
// only format 1 checks both lengths before it compares the version, and
// must see a version it does not know rather than a damaged file. Their
// checks are kept under keyFormatCheck and keySerialCheck.
//
// The check guards against accidental and hand damage, not against an
// attacker, who could recompute it.
const checkSize = 4

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errChecksum is the cause of a check that does not match.
var errChecksum = errors.New("checksum mismatch")

// checksum returns the check of payload stored at key in bucket.
func checksum(bucket, key, payload []byte) []byte {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(key)))
	c := crc32.Update(0, castagnoli, bucket)
	c = crc32.Update(c, castagnoli, []byte{0})
	c = crc32.Update(c, castagnoli, n[:])
	c = crc32.Update(c, castagnoli, key)
	c = crc32.Update(c, castagnoli, payload)
	return binary.BigEndian.AppendUint32(nil, c)
}

// seal returns payload followed by its check, the value to store at key in
// bucket.
func seal(bucket, key, payload []byte) []byte {
	out := make([]byte, 0, len(payload)+checkSize)
	out = append(out, payload...)
	return append(out, checksum(bucket, key, payload)...)
}

// unseal checks value, stored at key in bucket, and returns its payload: a
// subslice of value. The error does not name the value; see describe.
func unseal(bucket, key, value []byte) ([]byte, error) {
	if len(value) < checkSize {
		return nil, fmt.Errorf("%d bytes, too short for a checksum", len(value))
	}
	payload, check := value[:len(value)-checkSize], value[len(value)-checkSize:]
	if !bytes.Equal(check, checksum(bucket, key, payload)) {
		return nil, errChecksum
	}
	return payload, nil
}

// openValue is unseal with an error that names what is damaged, e.g.
// `record "ep01": checksum mismatch`. It does not wrap ErrCorrupt; callers
// do, with corruptData or Store.corrupt.
func openValue(bucket, key, value []byte) ([]byte, error) {
	payload, err := unseal(bucket, key, value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describe(bucket, key), err)
	}
	return payload, nil
}

// readValue checks value, stored at key in bucket, and decodes its payload
// with decode. Its error names what is damaged; it does not wrap
// ErrCorrupt.
func readValue[T any](bucket, key, value []byte, decode func([]byte) (T, error)) (T, error) {
	var v T
	payload, err := openValue(bucket, key, value)
	if err != nil {
		return v, err
	}
	if v, err = decode(payload); err != nil {
		return v, fmt.Errorf("%s: %w", describe(bucket, key), err)
	}
	return v, nil
}

// describe names the value at key in bucket for an error message, e.g.
// `record "ep01"` or `record "ep01" at serial 7`.
func describe(bucket, key []byte) string {
	switch {
	case bytes.Equal(bucket, bucketRecords):
		return fmt.Sprintf("record %q", key)
	case bytes.Equal(bucket, bucketIntents):
		return fmt.Sprintf("intent %q", key)
	case bytes.Equal(bucket, bucketMeta):
		return fmt.Sprintf("meta %q", key)
	case bytes.Equal(bucket, bucketVersions):
		if n := len(key) - 9; n >= 0 && key[n] == 0 {
			return fmt.Sprintf("record %q at serial %d", key[:n], int64(binary.BigEndian.Uint64(key[n+1:])))
		}
	case bytes.Equal(bucket, bucketHistory):
		if len(key) == 16 {
			return fmt.Sprintf("history entry %d at serial %d", binary.BigEndian.Uint64(key[8:]), int64(binary.BigEndian.Uint64(key[:8])))
		}
	}
	return fmt.Sprintf("%s key %q", bucket, key)
}

// u64 encodes n as 8 big-endian bytes, so that keys sort numerically.
func u64(n uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), n)
}

// versionPrefix is the prefix of every versions key of name. Names never
// contain a zero byte (checkName), so no other name's keys share it.
func versionPrefix(name string) []byte {
	return append([]byte(name), 0)
}

// versionKey is the versions key of name at serial.
func versionKey(name string, serial int64) []byte {
	return binary.BigEndian.AppendUint64(versionPrefix(name), uint64(serial))
}

// checkName reports whether name can be used as a record name.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty name")
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("name %q contains a zero byte", name)
	}
	return nil
}

// decodeJSON decodes data, one JSON value, into v with numbers kept exact;
// the caller then turns them into int64 or float64 with normalize. Unknown
// fields are ignored so that an older reconcile can read a record with
// added fields of the same format version. Anything after the value is an
// error: it would be a check left on, or something else that does not
// belong.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the JSON value at offset %d", dec.InputOffset())
	}
	return nil
}

// decodeRecord decodes a stored record. It copies everything it keeps, so
// data may be a bbolt slice that dies with its transaction.
func decodeRecord(data []byte) (Record, error) {
	return decodeRecordWith(nil, data)
}

// decodeRecordWith decodes a record as decodeRecord does; in, when not
// nil, makes the strings of a record in the form json.Marshal writes, so
// that records decoded one after another share their keys and common
// values.
func decodeRecordWith(in *intern.Table, data []byte) (Record, error) {
	r, ok := decodeRecordFast(data, in)
	if !ok {
		r = Record{}
		if err := decodeJSON(data, &r); err != nil {
			return Record{}, err
		}
	}
	var err error
	if r.Inputs, err = checkedValues(r.Inputs); err != nil {
		return Record{}, fmt.Errorf("inputs: %w", err)
	}
	if r.Outputs, err = checkedValues(r.Outputs); err != nil {
		return Record{}, fmt.Errorf("outputs: %w", err)
	}
	return r, nil
}

// checkedValues checks and normalizes the inputs or outputs of a record
// as decoded (see checkNumbers, normalizeMap).
func checkedValues(m map[string]any) (map[string]any, error) {
	if err := checkNumbers(m); err != nil {
		return nil, err
	}
	return normalizeMap(m), nil
}

// checkNumbers refuses a number beyond float64's range anywhere in v: no
// value reconcile writes can hold one (json.Marshal refuses ±Inf), so only a
// damaged or hand-edited file can, and accepting it would make the record
// impossible to write back.
func checkNumbers(v any) error {
	switch v := v.(type) {
	case json.Number:
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return nil
		}
		if f, err := strconv.ParseFloat(string(v), 64); err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("number %s is out of range", quoteTrunc(string(v)))
		}
	case map[string]any:
		for _, e := range v {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// quoteTrunc shortens s for an error message.
func quoteTrunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// decodeHistory decodes a stored history entry.
func decodeHistory(data []byte) (HistoryEntry, error) {
	var h HistoryEntry
	if err := decodeJSON(data, &h); err != nil {
		return HistoryEntry{}, err
	}
	return h, nil
}

// decodeIntent decodes a stored intent, as decodeRecord does a record.
func decodeIntent(data []byte) (Intent, error) {
	var in Intent
	if err := decodeJSON(data, &in); err != nil {
		return Intent{}, err
	}
	if err := checkNumbers(in.Inputs); err != nil {
		return Intent{}, fmt.Errorf("inputs: %w", err)
	}
	in.Inputs = normalizeMap(in.Inputs)
	return in, nil
}

// normalizeMap applies normalize to every value of m, in place.
func normalizeMap(m map[string]any) map[string]any {
	for k, v := range m {
		m[k] = normalize(v)
	}
	return m
}

// normalize replaces the json.Numbers in v, at any depth, with int64 for
// integral numbers that fit and float64 for the others.
func normalize(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return n
		}
		// A number beyond float64's range comes back as ±Inf: json.Marshal
		// never writes one, so only a hand-edited file can hold it.
		f, _ := strconv.ParseFloat(string(v), 64)
		if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
			return int64(f)
		}
		return f
	case map[string]any:
		return normalizeMap(v)
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
		return v
	}
	return v
}

// placeOf returns the bucket and key of the bbolt layout that the check of
// the value stored at key covers.
func placeOf(key string) (bucket, k []byte, err error) {
	switch {
	case key == kvOutputs:
		return bucketMeta, keyOutputs, nil
	case strings.HasPrefix(key, prefixMeta):
		return bucketMeta, []byte(key[len(prefixMeta):]), nil
	case strings.HasPrefix(key, prefixRecords):
		return bucketRecords, []byte(key[len(prefixRecords):]), nil
	case strings.HasPrefix(key, prefixIntents):
		return bucketIntents, []byte(key[len(prefixIntents):]), nil
	case strings.HasPrefix(key, prefixVersions):
		if name, serial, ok := parseVersion(key); ok {
			return bucketVersions, versionKey(name, serial), nil
		}
		return nil, nil, fmt.Errorf("versions key %q: not a versions key", key[len(prefixVersions):])
	case strings.HasPrefix(key, prefixHistory):
		if serial, seq, ok := parseHistory(key); ok {
			return bucketHistory, historyKey(serial, seq), nil
		}
		return nil, nil, fmt.Errorf("history key %q: not a history key", key[len(prefixHistory):])
	}
	return nil, nil, fmt.Errorf("key %q: not a key of a state", key)
}

// checkStored checks value, stored at key. Its error names the value; it
// does not wrap ErrCorrupt.
func checkStored(key string, value []byte) error {
	bucket, k, err := placeOf(key)
	if err == nil {
		_, err = openValue(bucket, k, value)
	}
	return err
}
