package state

import (
	"strconv"
	"strings"
)

// The keys of a stack (see package kv): the meta values, the outputs, and
// one key per record, version, history entry and intent. Serials and
// sequence numbers are written as 20 decimal digits, so that keys sort as
// the numbers do.
const (
	kvFormat     = "meta/format"
	kvSerial     = "meta/serial"
	kvLineage    = "meta/lineage"
	kvSecret     = "meta/key"
	kvCount      = "meta/count"
	kvIncomplete = "meta/incomplete"
	kvOutputs    = "outputs"

	prefixMeta     = "meta/"
	prefixRecords  = "records/"
	prefixVersions = "versions/"
	prefixHistory  = "history/"
	prefixIntents  = "intents/"
)

// metaKeys are the meta values Open reads, in the order of metaValues.
var metaKeys = []string{kvFormat, kvSerial, kvLineage, kvSecret, kvCount, kvIncomplete}

func recordKey(name string) string { return prefixRecords + name }
func intentKey(name string) string { return prefixIntents + name }

// versionsOf is the prefix of the version keys of name. Names never hold
// a zero byte, so no other name's keys share it.
func versionsOf(name string) string { return prefixVersions + name + "\x00" }

// versionKeyOf is the key of the version of name at serial.
func versionKeyOf(name string, serial int64) string {
	return string(appendNumber([]byte(versionsOf(name)), uint64(serial)))
}

// historyKeyOf is the key of the history entry seq at serial.
func historyKeyOf(serial int64, seq uint64) string {
	b := appendNumber([]byte(prefixHistory), uint64(serial))
	return string(appendNumber(append(b, '/'), seq))
}

// appendNumber appends n as 20 decimal digits.
func appendNumber(b []byte, n uint64) []byte {
	var digits [20]byte
	for i := range digits {
		digits[i] = '0'
	}
	s := strconv.AppendUint(nil, n, 10)
	copy(digits[20-len(s):], s)
	return append(b, digits[:]...)
}

// parseNumber parses the 20 decimal digits of a key.
func parseNumber(s string) (uint64, bool) {
	if len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// parseVersion splits a version key into a name and a serial.
func parseVersion(key string) (name string, serial int64, ok bool) {
	rest, ok := strings.CutPrefix(key, prefixVersions)
	if !ok || len(rest) < 21 || rest[len(rest)-21] != 0 {
		return "", 0, false
	}
	n, ok := parseNumber(rest[len(rest)-20:])
	if !ok || int64(n) < 0 {
		return "", 0, false
	}
	return rest[:len(rest)-21], int64(n), true
}

// parseHistory splits a history key into a serial and a sequence number.
func parseHistory(key string) (serial int64, seq uint64, ok bool) {
	rest, ok := strings.CutPrefix(key, prefixHistory)
	if !ok || len(rest) != 41 || rest[20] != '/' {
		return 0, 0, false
	}
	s, ok1 := parseNumber(rest[:20])
	q, ok2 := parseNumber(rest[21:])
	if !ok1 || !ok2 || int64(s) < 0 {
		return 0, 0, false
	}
	return int64(s), q, true
}
