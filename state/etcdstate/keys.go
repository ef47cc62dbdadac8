package etcdstate

import (
	"fmt"
	"strconv"
	"strings"
)

// keys builds the etcd keys of one stack, all under base,
// "<prefix>/<stack>/". Serials and sequence numbers are written as 20
// decimal digits so that keys sort in numeric order.
type keys struct{ base string }

func (k keys) format() string  { return k.base + "meta/format" }
func (k keys) serial() string  { return k.base + "meta/serial" }
func (k keys) lineage() string { return k.base + "meta/lineage" }
func (k keys) secret() string  { return k.base + "meta/key" }
func (k keys) count() string   { return k.base + "meta/count" }
func (k keys) incomplete() string {
	return k.base + "meta/incomplete"
}
func (k keys) lock() string    { return k.base + "lock" }
func (k keys) outputs() string { return k.base + "outputs" }

func (k keys) records() string           { return k.base + "records/" }
func (k keys) record(name string) string { return k.records() + name }
func (k keys) intents() string           { return k.base + "intents/" }
func (k keys) intent(name string) string { return k.intents() + name }
func (k keys) history() string           { return k.base + "history/" }

// historyEntry is the key of the history entry with sequence seq at
// serial.
func (k keys) historyEntry(serial int64, seq uint64) string {
	return fmt.Sprintf("%s%020d/%020d", k.history(), serial, seq)
}

// versions is the prefix of every version key.
func (k keys) versions() string { return k.base + "versions/" }

// versionsOf is the prefix of the version keys of name. Names never hold a
// zero byte, so no other name's keys share it.
func (k keys) versionsOf(name string) string { return k.versions() + name + "\x00" }

// version is the key of the version of name at serial.
func (k keys) version(name string, serial int64) string {
	return fmt.Sprintf("%s%020d", k.versionsOf(name), serial)
}

// parseNumber parses the 20-digit decimal of a key.
func parseNumber(s string) (uint64, bool) {
	if len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// parseVersion splits key, under the versions prefix, into a name and a
// serial.
func (k keys) parseVersion(key string) (name string, serial int64, ok bool) {
	rest, ok := strings.CutPrefix(key, k.versions())
	if !ok || len(rest) < 21 || rest[len(rest)-21] != 0 {
		return "", 0, false
	}
	n, ok := parseNumber(rest[len(rest)-20:])
	if !ok || int64(n) < 0 {
		return "", 0, false
	}
	return rest[:len(rest)-21], int64(n), true
}

// parseHistory splits key, under the history prefix, into a serial and a
// sequence number.
func (k keys) parseHistory(key string) (serial int64, seq uint64, ok bool) {
	rest, ok := strings.CutPrefix(key, k.history())
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

// prefixEnd returns the key just past every key that starts with prefix,
// the end of a range over prefix.
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00" // every key
}
