package state

import (
	"bytes"
	"errors"
	"fmt"

	"reconcile/internal/intern"
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
	// data is the record's stored JSON, which Full decodes; nil when Head
	// is the whole record (decoded already), or once dropped.
	data    []byte
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
	case l.data == nil:
		return l.Head, nil
	}
	r, err := decodeRecordWith(in, l.data)
	if err != nil {
		return Record{}, corruptData(fmt.Errorf("record %q: %w", l.Head.Name, err))
	}
	return r, nil
}

// Drop lets go of the record's values: Full fails from then on, and Head
// stays.
func (l *LazyRecord) Drop() {
	l.data, l.dropped = nil, true
	l.Head.Inputs, l.Head.Outputs = nil, nil
}

// wholeRecords returns rs as lazy records, whole already: for a Backend
// that cannot list them lazily (see ListLazy).
func wholeRecords(rs []Record) []LazyRecord {
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
	return wholeRecords(rs), err
}

// decodeLazy decodes the head of the record data, and keeps a copy of
// data for Full; a record not in the form json.Marshal writes is decoded
// whole at once, as List decodes it. in, when not nil, makes the head's
// strings.
func decodeLazy(in *intern.Table, data []byte) (LazyRecord, error) {
	d := recordDecoder{skipValues: true}
	d.Data, d.Strings = data, in
	if head, ok := d.record(); ok && d.I == len(data) {
		return LazyRecord{Head: head, data: bytes.Clone(data)}, nil
	}
	r, err := decodeRecordWith(in, data)
	return LazyRecord{Head: r}, err
}
