package state

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
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

// boltRecordLimit is the largest record the bbolt store writes. bbolt
// refuses a value above bolt.MaxValueSize (2 GiB - 2), but a value that
// large makes its page (the value, its key and 32 bytes of headers) pass
// bbolt's largest allocation, 2 GiB - 1, and bbolt panics at commit: the
// limit leaves 64 KiB below MaxValueSize for the key and the headers, and
// the value's check.
const boltRecordLimit = bolt.MaxValueSize - 64<<10 - checkSize

// RecordLimit returns the largest record the Store can write: bbolt's
// limit on one value, about 2 GiB. A transaction may hold any number of
// values; memory runs out long before that limit is reached (writing a
// record of 1 GiB, stored twice as record and version, takes tens of
// seconds and several GiB), and reconcile's own bounds on evaluated values
// and API responses keep records far below it.
func (s *Store) RecordLimit() RecordLimit {
	return RecordLimit{Bytes: boltRecordLimit, Why: "bbolt stores a value of up to 2 GiB"}
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
