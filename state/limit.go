package state

import (
	"encoding/json"
	"fmt"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// RecordLimit is how large a record a backend can write (see
// Backend.RecordLimit).
type RecordLimit struct {
	// Bytes is the largest record, in bytes as stored (EncodeRecord), that
	// one Put or PutAndClearIntent can write.
	Bytes int
	// Why says what sets the limit, for messages, e.g. "one etcd
	// transaction holds a record and its version, and etcd takes requests
	// of up to 1.5 MiB (its --max-request-bytes)".
	Why string
}

// keyReserve is the room RecordLimit leaves in a write of a backend that
// limits its size, for what a record's write holds besides the record and
// its version: their keys (with names of up to 1 KiB), the intent's
// delete, the serial and the record count, and what each operation adds.
const keyReserve = 4096

// RecordLimit returns the largest record the Store can write: the largest
// value its backend takes (bbolt's, about 2 GiB), and where one write of
// the backend is limited in size, as an etcd transaction is, a little
// under half of it, since a record's write holds the record and its
// version. A transaction of a local file may hold any number of values;
// memory runs out long before its limit is reached (writing a record of 1
// GiB, stored twice as record and version, takes tens of seconds and
// several GiB), and reconcile's own bounds on evaluated values and API
// responses keep records far below it.
func (s *Store) RecordLimit() RecordLimit { return recordLimit(s.limits) }

// recordLimit is the RecordLimit of a backend of limits l.
func recordLimit(l kv.Limits) RecordLimit {
	if half := (l.Bytes - keyReserve) / 2; l.Bytes > 0 && (l.Value <= 0 || half < l.Value) {
		return RecordLimit{Bytes: half, Why: "each write stores a record twice, as the record and as its version, in one write, and " + l.Why}
	}
	return RecordLimit{Bytes: l.Value, Why: l.Why}
}

// TooLargeError is the error of CheckRecordSize, and of a write of a
// record too large for its backend. It wraps ErrTooLarge.
type TooLargeError struct {
	// Name is the record's.
	Name string
	// Size is the record's size as stored, in bytes; Limit the backend's.
	Size  int
	Limit RecordLimit
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("record %q would be %s, more than the %s a record can take (%s)", e.Name, FormatSize(e.Size), FormatSize(e.Limit.Bytes), e.Limit.Why)
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// RecordSize returns the size of r as a backend stores it.
func RecordSize(r Record) (int, error) {
	v, err := EncodeRecord(r)
	return len(v), err
}

// CheckRecordSize returns a *TooLargeError if b cannot write r, as Put
// would store it, in one write, and nil if it can. Serial and UpdatedAt
// are counted at their largest. A record whose size is surely within the
// limit is not encoded: a bound of its size is counted instead.
func CheckRecordSize(b Backend, r Record) error {
	limit := b.RecordLimit()
	if sizeBound(r) <= limit.Bytes {
		return nil
	}
	r.Serial = 1<<63 - 1
	n, err := RecordSize(r)
	if err != nil {
		return err
	}
	n += len(`.000000000`) // UpdatedAt with nanoseconds, if r's has none
	if n > limit.Bytes {
		return &TooLargeError{Name: r.Name, Size: n, Limit: limit}
	}
	return nil
}

// sizeBound returns a size that r, encoded, surely does not pass: each
// byte of a string counts as the six of its longest escape.
func sizeBound(r Record) int {
	n := 512 + 6*(len(r.Name)+len(r.Type)+len(r.ID)+len(r.Tainted)) // the fields, time and check
	for _, ss := range [][]string{r.Dependencies, r.Deposed} {
		for _, s := range ss {
			n += 6*len(s) + 3
		}
	}
	return n + jsonBound(r.Inputs) + jsonBound(r.Outputs)
}

// jsonBound returns a size that v, encoded as JSON, surely does not pass.
func jsonBound(v any) int {
	switch v := v.(type) {
	case nil:
		return 4
	case bool:
		return 5
	case string:
		return 6*len(v) + 2
	case int, int64, float64:
		return 32 // the longest float or integer
	case json.Number:
		return len(v)
	case map[string]any:
		n := 2
		for k, e := range v {
			n += 6*len(k) + 4 + jsonBound(e)
		}
		return n
	case []any:
		n := 2
		for _, e := range v {
			n += jsonBound(e) + 1
		}
		return n
	}
	// Another type (as a caller's marks): its encoding, once.
	data, err := json.Marshal(v)
	if err != nil {
		return 0 // the encoding of the record fails, and says why
	}
	return len(data)
}

// FormatSize writes n bytes for a message: "812 bytes", "764 KiB",
// "1.5 MiB".
func FormatSize(n int) string {
	const unit = 1024
	switch {
	case n < unit:
		return fmt.Sprintf("%d bytes", n)
	case n < unit*unit:
		return trimZero(float64(n)/unit) + " KiB"
	case n < unit*unit*unit:
		return trimZero(float64(n)/(unit*unit)) + " MiB"
	}
	return trimZero(float64(n)/(unit*unit*unit)) + " GiB"
}

// trimZero formats f with one decimal, without a trailing ".0".
func trimZero(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
