package state

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/reconcile-dev/reconcile/state/kv"
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

// keyOutputs is the key of the outputs in the bbolt file's meta bucket
// (the key "outputs" of a stack): one value,
// replaced whole by every PutOutputs. A reconcile that does not know it
// checks it like any other value of the bucket and otherwise ignores it.
var keyOutputs = []byte("outputs")

// Outputs returns the outputs last recorded, and whether any were. It
// returns an error wrapping ErrCorrupt if they fail their check or cannot
// be decoded.
func (s *Store) Outputs() (Outputs, bool, error) {
	var v []byte
	err := s.read(func(vw kv.View) error {
		var err error
		v, err = vw.Get(kvOutputs)
		return err
	})
	if err == nil && v != nil {
		var o Outputs
		if o, err = DecodeOutputs(v); err == nil {
			return o, true, nil
		}
	}
	if err != nil {
		return Outputs{}, false, fmt.Errorf("read state outputs: %w", err)
	}
	return Outputs{}, false, nil
}

// PutOutputs records o in place of the outputs recorded before, and
// returns once that is durable. A zero o.Serial is set to the current
// serial and a zero o.Time to now. Outputs do not change the serial. The
// caller must have sealed every secret in o.Values.
func (s *Store) PutOutputs(o Outputs) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("put outputs: %w", err)
	}
	if o.Time.IsZero() {
		o.Time = now()
	}
	err := s.write(func() (*txn, error) {
		w := o
		if w.Serial == 0 {
			w.Serial = s.serial
		}
		v, err := EncodeOutputs(w)
		if err != nil {
			return nil, err
		}
		t := &txn{serial: s.serial}
		t.put(kvOutputs, v)
		t.Marker = kvOutputs
		return t, nil
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
