package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"go.etcd.io/bbolt"
)

// The buckets of format 2 (and 1). Their names are part of the file
// format: never rename them.
var (
	bucketMeta     = []byte("meta")
	bucketRecords  = []byte("records")
	bucketVersions = []byte("versions")
	bucketHistory  = []byte("history")
	bucketIntents  = []byte("intents")

	layoutBuckets = [][]byte{bucketMeta, bucketRecords, bucketVersions, bucketHistory, bucketIntents}

	// bucketOther holds keys that have no place in the layout, as they
	// are. The model writes none; the bucket is made only when such a key
	// is put, and a reconcile that knows only the layout ignores it.
	bucketOther = []byte("kv")
)

// The meta values that keep 8 raw bytes and their check apart (see the
// package doc).
const (
	metaFormat = "format"
	metaSerial = "serial"
	crcSuffix  = ".crc"
	outputsKey = "outputs"
)

// A space is the part of the key space one bucket of the layout holds:
// every key that begins with prefix (or, for the outputs, is it).
type space struct {
	prefix string
	bucket []byte
	form   form
}

// form is how a space's keys are kept.
type form int

const (
	asIs     form = iota // the rest of the key after the prefix
	meta                 // as is, but for the keys kept apart
	outputs              // the one key "outputs", in the meta bucket
	versions             // NAME\x00 and the serial as 8 bytes big-endian
	history              // the serial and the sequence as 8 bytes big-endian each
)

// spaces are the spaces of the layout, in key order.
var spaces = []space{
	{prefix: "history/", bucket: bucketHistory, form: history},
	{prefix: "intents/", bucket: bucketIntents, form: asIs},
	{prefix: "meta/", bucket: bucketMeta, form: meta},
	{prefix: outputsKey, bucket: bucketMeta, form: outputs},
	{prefix: "records/", bucket: bucketRecords, form: asIs},
	{prefix: "versions/", bucket: bucketVersions, form: versions},
}

// place is where a key is kept in the file.
type place struct {
	bucket []byte
	key    []byte
	// split is set for meta/format and meta/serial: the value's first 8
	// bytes at key, the rest at key+".crc".
	split bool
}

// locate returns where key is kept.
func locate(key string) place {
	switch {
	case key == outputsKey:
		return place{bucket: bucketMeta, key: []byte(outputsKey)}
	case strings.HasPrefix(key, "meta/"):
		name := key[len("meta/"):]
		switch {
		case name == metaFormat || name == metaSerial:
			return place{bucket: bucketMeta, key: []byte(name), split: true}
		case name != outputsKey && name != metaFormat+crcSuffix && name != metaSerial+crcSuffix:
			return place{bucket: bucketMeta, key: []byte(name)}
		}
	case strings.HasPrefix(key, "records/"):
		return place{bucket: bucketRecords, key: []byte(key[len("records/"):])}
	case strings.HasPrefix(key, "intents/"):
		return place{bucket: bucketIntents, key: []byte(key[len("intents/"):])}
	case strings.HasPrefix(key, "versions/"):
		if k, ok := versionKey(key[len("versions/"):]); ok {
			return place{bucket: bucketVersions, key: k}
		}
	case strings.HasPrefix(key, "history/"):
		if k, ok := historyKey(key[len("history/"):]); ok {
			return place{bucket: bucketHistory, key: k}
		}
	}
	return place{bucket: bucketOther, key: []byte(key)}
}

// versionKey maps NAME\x00SERIAL (20 digits) to the file's NAME\x00 and 8
// bytes big-endian.
func versionKey(rest string) ([]byte, bool) {
	n := len(rest) - 21
	if n < 0 || rest[n] != 0 || strings.IndexByte(rest[:n], 0) >= 0 {
		return nil, false
	}
	serial, ok := parseNumber(rest[n+1:])
	if !ok {
		return nil, false
	}
	return binary.BigEndian.AppendUint64([]byte(rest[:n+1]), serial), true
}

// historyKey maps SERIAL/SEQ (20 digits each) to the file's 8 + 8 bytes
// big-endian.
func historyKey(rest string) ([]byte, bool) {
	if len(rest) != 41 || rest[20] != '/' {
		return nil, false
	}
	serial, ok1 := parseNumber(rest[:20])
	seq, ok2 := parseNumber(rest[21:])
	if !ok1 || !ok2 {
		return nil, false
	}
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), serial), seq), true
}

// appendNumber appends n as 20 decimal digits.
func appendNumber(b []byte, n uint64) []byte {
	var d [20]byte
	for i := len(d) - 1; i >= 0; i-- {
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, d[:]...)
}

// parseNumber parses 20 decimal digits.
func parseNumber(s string) (uint64, bool) {
	if len(s) != 20 {
		return 0, false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// logical returns the key of the file's key k of sp, and false for a key
// of the bucket that belongs to no key of sp (the checks kept apart, the
// outputs in the meta bucket). A key of the versions or history bucket
// not in the layout's form is named by its bytes, for the model to call it
// damaged.
func (sp *space) logical(k []byte) (string, bool) {
	switch sp.form {
	case outputs:
		return sp.prefix, string(k) == outputsKey
	case meta:
		switch string(k) {
		case outputsKey, metaFormat + crcSuffix, metaSerial + crcSuffix:
			return "", false
		}
	case versions:
		if n := len(k) - 9; n >= 0 && k[n] == 0 && bytes.IndexByte(k[:n], 0) < 0 {
			b := make([]byte, 0, len(sp.prefix)+n+21)
			b = append(append(b, sp.prefix...), k[:n+1]...)
			return string(appendNumber(b, binary.BigEndian.Uint64(k[n+1:]))), true
		}
	case history:
		if len(k) == 16 {
			b := appendNumber(append(make([]byte, 0, len(sp.prefix)+41), sp.prefix...), binary.BigEndian.Uint64(k))
			return string(appendNumber(append(b, '/'), binary.BigEndian.Uint64(k[8:]))), true
		}
	}
	return sp.prefix + string(k), true
}

// seekKey returns the longest prefix of rest, the part of a key after
// sp.prefix, that the file keeps as it is: where a scan from rest starts.
func (sp *space) seekKey(rest string) []byte {
	switch sp.form {
	case outputs:
		return []byte(outputsKey)
	case versions:
		if i := strings.IndexByte(rest, 0); i >= 0 {
			return []byte(rest[:i+1])
		}
	case history:
		return nil
	}
	return []byte(rest)
}

// get returns the value kept at p in tx, nil if none; a value of the file
// but for the split ones, which it joins.
func get(tx *bbolt.Tx, p place) []byte {
	b := tx.Bucket(p.bucket)
	if b == nil {
		return nil
	}
	v := b.Get(p.key)
	if v == nil || !p.split {
		return v
	}
	crc := b.Get(append(bytes.Clone(p.key), crcSuffix...))
	if crc == nil {
		return v
	}
	return append(bytes.Clone(v), crc...)
}

// put keeps value at p in tx.
func put(tx *bbolt.Tx, p place, value []byte) error {
	b := tx.Bucket(p.bucket)
	if b == nil {
		if !bytes.Equal(p.bucket, bucketOther) {
			return fmt.Errorf("no %q bucket", p.bucket)
		}
		var err error
		if b, err = tx.CreateBucket(p.bucket); err != nil {
			return err
		}
	}
	if value == nil {
		value = []byte{} // bbolt keeps a nil value as an empty one
	}
	if !p.split {
		if bytes.Equal(p.bucket, bucketHistory) {
			// A reconcile of the bucket's own numbering takes the next
			// sequence number for its entry: never one in use.
			if seq := binary.BigEndian.Uint64(p.key[8:]); seq > b.Sequence() {
				if err := b.SetSequence(seq); err != nil {
					return err
				}
			}
		}
		return b.Put(p.key, value)
	}
	crcKey := append(bytes.Clone(p.key), crcSuffix...)
	if len(value) <= 8 {
		if err := b.Delete(crcKey); err != nil {
			return err
		}
		return b.Put(p.key, value)
	}
	if err := b.Put(p.key, value[:8]); err != nil {
		return err
	}
	return b.Put(crcKey, value[8:])
}

// del deletes what is kept at p in tx.
func del(tx *bbolt.Tx, p place) error {
	b := tx.Bucket(p.bucket)
	if b == nil {
		return nil
	}
	if p.split {
		if err := b.Delete(append(bytes.Clone(p.key), crcSuffix...)); err != nil {
			return err
		}
	}
	return b.Delete(p.key)
}
