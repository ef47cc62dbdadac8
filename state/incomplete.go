package state

import (
	"encoding/json"
	"fmt"
)

// keyIncomplete is the meta value that marks a state a copy is being
// written into (see Options.Copy): a CopyMark, as JSON, then its check.
var keyIncomplete = []byte("incomplete")

// CopyMark marks a state that a copy is being written into, from its
// creation until the copy's last write: until then the state is not one,
// and Open refuses it (see Options.Copy).
type CopyMark struct {
	// From describes the state copied, without credentials, e.g.
	// `etcd://10.0.0.5:2379/reconcile (stack prod)`.
	From string `json:"from"`
	// Command is the command that makes the copy, which, run again,
	// completes an interrupted one, e.g. `reconcile state migrate --state
	// URL --stack prod --to URL`.
	Command string `json:"command"`
}

// IncompleteError is the error of Open for a state that a copy has begun
// to write and not finished, unless Options.Copy is set. It wraps
// ErrIncomplete.
type IncompleteError struct {
	// Location names the state, as in other errors of its backend.
	Location string
	// Mark is what the copy wrote of itself.
	Mark CopyMark
}

func (e *IncompleteError) Error() string {
	what := "a copy into it"
	if e.Mark.From != "" {
		what = "a copy of " + e.Mark.From + " into it"
	}
	msg := fmt.Sprintf("state %s is incomplete: %s has not finished (it is running now, or it was interrupted), and until it has, the state holds only part of what it will", e.Location, what)
	if e.Mark.Command != "" {
		return msg + fmt.Sprintf("; run %q to complete it", e.Mark.Command)
	}
	return msg + "; run the copy (reconcile state migrate) again to complete it"
}

func (e *IncompleteError) Unwrap() error { return ErrIncomplete }

// EncodeCopyMark returns the stored form of m: its JSON, then its check.
func EncodeCopyMark(m CopyMark) []byte {
	data, _ := json.Marshal(m) // a CopyMark always encodes
	return seal(bucketMeta, keyIncomplete, data)
}

// DecodeCopyMark checks and decodes value, a stored CopyMark.
func DecodeCopyMark(value []byte) (CopyMark, error) {
	m, err := readValue(bucketMeta, keyIncomplete, value, func(data []byte) (CopyMark, error) {
		var m CopyMark
		err := decodeJSON(data, &m)
		return m, err
	})
	return m, corruptData(err)
}
