package state

import (
	"errors"
	"fmt"

	"github.com/reconcile-dev/reconcile/internal/intern"
	"github.com/reconcile-dev/reconcile/internal/jsonfast"
)

// A LazyRecord is a record whose inputs and outputs are decoded only when
// Full is called. A plan reads every record of the state but needs each
// one's values only when it plans that record's node: kept as the text
// state stores, a record takes a fraction of the memory of the maps it
// decodes to, and the plan decodes each in turn rather than all of them
// before it starts.
type LazyRecord struct {
	// Head is the record without its values: Inputs and Outputs are nil,
	// every other field is set.
	Head Record
	// values is the stored JSON of the record's inputs then outputs, split
	// at split, which Full decodes (the text of either is empty when the
	// record has none); nil when Head is the whole record (decoded
	// already), or once dropped.
	values  []byte
	split   int
	dropped bool
}

// errDropped is what Full returns for a record whose values were let go.
var errDropped = errors.New("its inputs and outputs were let go")

// Full returns the whole record: its values are decoded anew at each call,
// and the caller's. in, when not nil, makes its strings; a Table is not
// safe for concurrent use, so each goroutine brings its own. An error
// wraps ErrCorrupt, or says the record was dropped.
func (l *LazyRecord) Full(in *intern.Table) (Record, error) {
	switch {
	case l.dropped:
		return Record{}, fmt.Errorf("record %q: %w", l.Head.Name, errDropped)
	case l.values == nil:
		return l.Head, nil
	}
	r := l.Head
	var err error
	if r.Inputs, err = decodeValues(in, l.values[:l.split]); err != nil {
		return Record{}, corruptData(fmt.Errorf("record %q: inputs: %w", l.Head.Name, err))
	}
	if r.Outputs, err = decodeValues(in, l.values[l.split:]); err != nil {
		return Record{}, corruptData(fmt.Errorf("record %q: outputs: %w", l.Head.Name, err))
	}
	return r, nil
}

// decodeValues decodes the inputs or outputs of a record as
// decodeRecordWith does; nil for none (empty text). The text was read over
// by recordDecoder, in the form it decodes.
func decodeValues(in *intern.Table, text []byte) (map[string]any, error) {
	if len(text) == 0 {
		return nil, nil
	}
	d := jsonfast.Reader{Data: text, Strings: in}
	m, ok := d.Object(0)
	if !ok || d.I != len(text) {
		return nil, errors.New("not an object in the form state writes")
	}
	return checkedValues(m)
}

// Drop lets go of the record's values: Full fails from then on, and Head
// stays.
func (l *LazyRecord) Drop() {
	l.values, l.dropped = nil, true
	l.Head.Inputs, l.Head.Outputs = nil, nil
}

// Dropped reports whether Drop let the record's values go.
func (l *LazyRecord) Dropped() bool { return l.dropped }

// WholeRecords returns rs as lazy records, whole already: for a Backend
// that cannot list them lazily (see ListLazy), or records read one by one.
func WholeRecords(rs []Record) []LazyRecord {
	out := make([]LazyRecord, len(rs))
	for i, r := range rs {
		out[i] = LazyRecord{Head: r}
	}
	return out
}

// ListLazy returns every record of b, sorted by name, as lazy records
// when b can list them so (the local file and etcd can), else as whole
// ones. Errors are those of List.
func ListLazy(b Backend) ([]LazyRecord, error) {
	if l, ok := b.(interface{ ListLazy() ([]LazyRecord, error) }); ok {
		return l.ListLazy()
	}
	rs, err := b.List()
	return WholeRecords(rs), err
}

// decodeLazy decodes the head of the record data, and keeps a copy of the
// text of its inputs and outputs for Full; a record not in the form
// json.Marshal writes is decoded whole at once, as List decodes it. in,
// when not nil, makes the head's strings.
func decodeLazy(in *intern.Table, data []byte) (LazyRecord, error) {
	d := recordDecoder{skipValues: true}
	d.Data, d.Strings = data, in
	if head, ok := d.record(); ok && d.I == len(data) {
		values := make([]byte, 0, len(d.inputs)+len(d.outputs))
		values = append(append(values, d.inputs...), d.outputs...)
		return LazyRecord{Head: head, values: values, split: len(d.inputs)}, nil
	}
	r, err := decodeRecordWith(in, data)
	return LazyRecord{Head: r}, err
}
