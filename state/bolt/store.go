package bolt

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.etcd.io/bbolt"

	"github.com/reconcile-dev/reconcile/state/kv"
)

var (
	_ kv.Store    = (*Store)(nil)
	_ kv.Releaser = (*Store)(nil)
)

// maxValue is the largest value a Write puts. bbolt refuses a value above
// bbolt.MaxValueSize (2 GiB - 2), but a value that large makes its page
// (the value, its key and 32 bytes of headers) pass bbolt's largest
// allocation, 2 GiB - 1, and bbolt panics at commit: the limit leaves
// 64 KiB for the key and the headers, and 4 bytes more, where reconcile's
// largest record was always counted without its check.
const maxValue = bbolt.MaxValueSize - 64<<10 - 4

// Store is one stack's file, open for reading under a shared lock or for
// writing under an exclusive one.
type Store struct {
	path   string
	db     *bbolt.DB
	unlock *os.File // for a reader, see dropLock
	write  bool
	holder string // the holder file this Store wrote, if any
	closed atomic.Bool
}

// DB returns the bbolt database under the Store, for tests and tools that
// read or edit the file below reconcile's model: what they write bypasses
// its every check.
func (s *Store) DB() *bbolt.DB { return s.db }

// Describe names the file.
func (s *Store) Describe() string { return s.path }

// Limits are bbolt's: one value of up to about 2 GiB, any number of them.
func (s *Store) Limits() kv.Limits {
	return kv.Limits{Value: maxValue, Why: "bbolt stores a value of up to 2 GiB"}
}

// Held returns nil: the kernel holds a file's lock until the process
// ends.
func (s *Store) Held() error { return nil }

// never is a channel that is never closed.
var never = make(chan struct{})

// Lost returns a channel that never closes: the kernel holds the lock for
// as long as the process lives.
func (s *Store) Lost() <-chan struct{} { return never }

// Close removes the holder file, releases the lock and closes the file.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	// Remove the holder file while still holding the lock: once the lock
	// is gone, the file may already be the next holder's.
	if s.holder != "" {
		_ = os.Remove(s.holder)
	}
	err := s.db.Close()
	if s.unlock != nil {
		dropLock(s.unlock)
	}
	if err != nil {
		return fmt.Errorf("close state %q: %w", s.path, err)
	}
	return nil
}

// errClosed is the error of a Store used after Close.
func (s *Store) errClosed() error { return fmt.Errorf("state %q is closed", s.path) }

// Release hands the pages of the file's mapping that reads brought in back
// to the kernel (see release).
func (s *Store) Release() {
	if s.closed.Load() {
		return
	}
	_ = s.db.View(func(tx *bbolt.Tx) error {
		release(tx)
		return nil
	})
}

// Read runs fn in a read transaction. The values Scan gives fn are the
// file's mapping: valid until fn returns.
func (s *Store) Read(ctx context.Context, fn func(kv.View) error) error {
	if s.closed.Load() {
		return s.errClosed()
	}
	return s.db.View(func(tx *bbolt.Tx) error { return fn(view{tx}) })
}

// Write applies b in one read-write transaction, synced before it
// returns.
func (s *Store) Write(ctx context.Context, b *kv.Batch) error {
	switch {
	case s.closed.Load():
		return s.errClosed()
	case !s.write:
		return fmt.Errorf("write state %q: %w", s.path, kv.ErrReadOnly)
	}
	for _, op := range b.Ops {
		if !op.Delete && len(op.Value) > maxValue {
			return fmt.Errorf("write state %q: %w: %q holds %d bytes, bbolt takes up to %d", s.path, kv.ErrTooLarge, op.Key, len(op.Value), maxValue)
		}
	}
	err := s.db.Update(func(tx *bbolt.Tx) error {
		for _, c := range b.Conds {
			v := get(tx, locate(c.Key))
			if (v == nil) != (c.Value == nil) || !bytes.Equal(v, c.Value) {
				return fmt.Errorf("%w: %q", kv.ErrConflict, c.Key)
			}
		}
		for _, op := range b.Ops {
			var err error
			if op.Delete {
				err = del(tx, locate(op.Key))
			} else {
				err = put(tx, locate(op.Key), op.Value)
			}
			if err != nil {
				return fmt.Errorf("%q: %w", op.Key, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write state %q: %w", s.path, err)
	}
	return nil
}

// view is a kv.View of a transaction.
type view struct{ tx *bbolt.Tx }

func (v view) Get(key string) ([]byte, error) {
	return bytes.Clone(get(v.tx, locate(key))), nil
}

func (v view) GetMany(keys []string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	for i, key := range keys {
		out[i] = bytes.Clone(get(v.tx, locate(key)))
	}
	return out, nil
}

// Scan lists the keys of the layout's spaces that prefix and after leave,
// space by space in key order, with the keys outside the layout merged in
// where they sort.
func (v view) Scan(prefix, after string, keysOnly bool, fn func(key string, value []byte) error) error {
	layout := &layoutScan{tx: v.tx, prefix: prefix, after: after, keysOnly: keysOnly}
	other := newCursor(v.tx, bucketOther, prefix, after, keysOnly)
	if other == nil {
		for {
			k, val, ok := layout.next()
			if !ok {
				return nil
			}
			if err := fn(k, val); err != nil {
				return err
			}
		}
	}
	lk, lv, lok := layout.next()
	ok, ov, ook := other.next()
	for lok || ook {
		var err error
		if lok && (!ook || lk < ok) {
			err = fn(lk, lv)
			lk, lv, lok = layout.next()
		} else {
			err = fn(ok, ov)
			ok, ov, ook = other.next()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// layoutScan reads the keys of the layout that begin with prefix and
// sort after after, in key order.
type layoutScan struct {
	tx            *bbolt.Tx
	prefix, after string
	keysOnly      bool
	i             int // the space being read
	c             *cursor
}

func (l *layoutScan) next() (string, []byte, bool) {
	for {
		if l.c == nil {
			if l.i == len(spaces) {
				return "", nil, false
			}
			sp := &spaces[l.i]
			l.i++
			l.c = spaceCursor(l.tx, sp, l.prefix, l.after, l.keysOnly)
			continue
		}
		if k, v, ok := l.c.next(); ok {
			return k, v, true
		}
		l.c = nil
	}
}

// cursor reads one bucket from a key on, while its keys begin with stop.
type cursor struct {
	c             *bbolt.Cursor
	sp            *space // nil for bucketOther
	stop          []byte
	prefix, after string
	keysOnly      bool
	started       bool
	seek          []byte
	tx            *bbolt.Tx
}

// spaceCursor returns a cursor of the keys of sp that begin with prefix
// and sort after after, or nil if there are none.
func spaceCursor(tx *bbolt.Tx, sp *space, prefix, after string, keysOnly bool) *cursor {
	var stop []byte
	switch {
	case sp.form == outputs:
		if !strings.HasPrefix(sp.prefix, prefix) || after >= sp.prefix {
			return nil
		}
		stop = []byte(outputsKey)
	case strings.HasPrefix(sp.prefix, prefix):
		// Every key of sp begins with prefix.
	case strings.HasPrefix(prefix, sp.prefix):
		stop = sp.seekKey(prefix[len(sp.prefix):])
	default:
		return nil
	}
	seek := stop
	switch {
	case sp.form == outputs:
	case strings.HasPrefix(after, sp.prefix):
		if k := sp.seekKey(after[len(sp.prefix):]); bytes.Compare(k, seek) > 0 {
			seek = k
		}
	case after > sp.prefix:
		// after is past every key of sp (or is the outputs key itself).
		return nil
	}
	b := tx.Bucket(sp.bucket)
	if b == nil {
		return nil
	}
	return &cursor{c: b.Cursor(), sp: sp, stop: stop, seek: seek, prefix: prefix, after: after, keysOnly: keysOnly, tx: tx}
}

// newCursor returns a cursor of the keys of bucketOther that begin with
// prefix and sort after after, or nil if there is no such bucket.
func newCursor(tx *bbolt.Tx, bucket []byte, prefix, after string, keysOnly bool) *cursor {
	b := tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	seek := []byte(max(prefix, after))
	return &cursor{c: b.Cursor(), stop: []byte(prefix), seek: seek, prefix: prefix, after: after, keysOnly: keysOnly, tx: tx}
}

func (c *cursor) next() (string, []byte, bool) {
	for {
		var k, v []byte
		if !c.started {
			c.started = true
			k, v = c.c.Seek(c.seek)
		} else {
			k, v = c.c.Next()
		}
		if k == nil || !bytes.HasPrefix(k, c.stop) {
			return "", nil, false
		}
		key := string(k)
		if c.sp != nil {
			var ok bool
			if key, ok = c.sp.logical(k); !ok {
				continue
			}
			if c.sp.form == meta && (key == "meta/"+metaFormat || key == "meta/"+metaSerial) && !c.keysOnly {
				v = get(c.tx, locate(key))
			}
		}
		if !strings.HasPrefix(key, c.prefix) || key <= c.after {
			continue
		}
		if c.keysOnly {
			v = nil
		}
		return key, v, true
	}
}
