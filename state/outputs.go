package state

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Outputs are the stack outputs an apply recorded: the values of the
// specs' outputs section once it completed. Like a Record's inputs, Values
// must already be redacted: a secret is stored as its sealed digest, never
// in clear.
type Outputs struct {
	// Serial is the state serial they were recorded at. PutOutputs sets a
	// zero Serial to the current one.
	Serial int64 `json:"serial"`
	// Time is when they were recorded, in UTC. PutOutputs sets a zero
	// Time to now.
	Time time.Time `json:"time"`
	// Command is the command that recorded them, e.g. "apply".
	Command string `json:"command"`
	// Values are the outputs by name, JSON-shaped.
	Values map[string]any `json:"values"`
}

// keyOutputs is the key of the outputs in the meta bucket: one value,
// replaced whole by every PutOutputs. A reconcile that does not know it
// checks it like any other value of the bucket and otherwise ignores it.
var keyOutputs = []byte("outputs")

// Outputs returns the outputs last recorded, and whether any were. It
// returns an error wrapping ErrCorrupt if they fail their check or cannot
// be decoded.
func (s *Store) Outputs() (Outputs, bool, error) {
	var (
		o  Outputs
		ok bool
	)
	err := s.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get(keyOutputs)
		if v == nil {
			return nil
		}
		var err error
		o, err = readValue(bucketMeta, keyOutputs, v, decodeOutputs)
		ok = err == nil
		return corruptData(err)
	})
	if err != nil {
		return Outputs{}, false, fmt.Errorf("read state outputs: %w", err)
	}
	return o, ok, nil
}

// PutOutputs records o in place of the outputs recorded before, and
// returns once that is synced. A zero o.Serial is set to the current
// serial and a zero o.Time to now. Outputs do not change the serial. The
// caller must have sealed every secret in o.Values.
func (s *Store) PutOutputs(o Outputs) error {
	if s.readOnly {
		return fmt.Errorf("put outputs: %w", ErrReadOnly)
	}
	if o.Time.IsZero() {
		o.Time = now()
	}
	err := s.update(func(tx *bolt.Tx) error {
		if o.Serial == 0 {
			m, err := readMeta(tx.Bucket(bucketMeta))
			if err != nil {
				return corruptData(err)
			}
			o.Serial = m.Serial
		}
		data, err := encodeOutputs(o)
		if err != nil {
			return err
		}
		return putValue(tx, bucketMeta, keyOutputs, data)
	})
	if err != nil {
		return fmt.Errorf("put outputs: %w", err)
	}
	return nil
}

// encodeOutputs returns the payload of o.
func encodeOutputs(o Outputs) ([]byte, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encode outputs: %w", err)
	}
	return data, nil
}

// decodeOutputs decodes stored outputs, numbers as decodeRecord does.
func decodeOutputs(data []byte) (Outputs, error) {
	var o Outputs
	if err := decodeJSON(data, &o); err != nil {
		return Outputs{}, err
	}
	if err := checkNumbers(o.Values); err != nil {
		return Outputs{}, fmt.Errorf("values: %w", err)
	}
	o.Values = normalizeMap(o.Values)
	if o.Values == nil {
		o.Values = map[string]any{}
	}
	return o, nil
}

// EncodeOutputs returns the stored form of o, with its check, for the
// other backends (see EncodeRecord).
func EncodeOutputs(o Outputs) ([]byte, error) {
	data, err := encodeOutputs(o)
	if err != nil {
		return nil, err
	}
	return seal(bucketMeta, keyOutputs, data), nil
}

// DecodeOutputs checks and decodes value, the stored outputs.
func DecodeOutputs(value []byte) (Outputs, error) {
	o, err := readValue(bucketMeta, keyOutputs, value, decodeOutputs)
	return o, corruptData(err)
}
