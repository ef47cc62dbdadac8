package state

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bucket names. They are part of the file format: never rename them.
var (
	bucketMeta     = []byte("meta")
	bucketRecords  = []byte("records")
	bucketVersions = []byte("versions")
	bucketHistory  = []byte("history")
	bucketIntents  = []byte("intents")

	allBuckets = [][]byte{bucketMeta, bucketRecords, bucketVersions, bucketHistory, bucketIntents}
)

// Keys of the meta bucket.
var (
	keyFormat  = []byte("format")  // 8-byte big-endian format version
	keyLineage = []byte("lineage") // lineage id, text
	keySerial  = []byte("serial")  // 8-byte big-endian serial
)

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

// decodeJSON decodes data into v with numbers kept exact; the caller then
// turns them into int64 or float64 with normalize. Unknown fields are
// ignored so that an older reconcile can read a record with added fields of
// the same format version.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// decodeRecord decodes a stored record. It copies everything it keeps, so
// data may be a bbolt slice that dies with its transaction.
func decodeRecord(data []byte) (Record, error) {
	var r Record
	if err := decodeJSON(data, &r); err != nil {
		return Record{}, err
	}
	if err := checkNumbers(r.Inputs); err != nil {
		return Record{}, fmt.Errorf("inputs: %w", err)
	}
	if err := checkNumbers(r.Outputs); err != nil {
		return Record{}, fmt.Errorf("outputs: %w", err)
	}
	r.Inputs = normalizeMap(r.Inputs)
	r.Outputs = normalizeMap(r.Outputs)
	return r, nil
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
