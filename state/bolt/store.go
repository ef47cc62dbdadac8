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
	type pair struct {
		key   string
		value []byte
	}
	var other []pair // the keys outside the layout, which the model never writes
	if b := v.tx.Bucket(bucketOther); b != nil {
		c := b.Cursor()
		for k, val := c.Seek([]byte(max(prefix, after))); k != nil && strings.HasPrefix(string(k), prefix); k, val = c.Next() {
			if string(k) > after {
				other = append(other, pair{string(k), val})
			}
		}
	}
	emit := func(key string, value []byte) error {
		for len(other) > 0 && (key == "" || other[0].key < key) {
			if err := emit1(fn, other[0].key, other[0].value, keysOnly); err != nil {
				return err
			}
			other = other[1:]
		}
		if key == "" {
			return nil
		}
		return emit1(fn, key, value, keysOnly)
	}
	for i := range spaces {
		if err := scanSpace(v.tx, &spaces[i], prefix, after, emit); err != nil {
			return err
		}
	}
	return emit("", nil)
}

// emit1 calls fn with key and value, or no value with keysOnly.
func emit1(fn func(string, []byte) error, key string, value []byte, keysOnly bool) error {
	if keysOnly {
		value = nil
	}
	return fn(key, value)
}

// scanSpace calls fn with the keys of sp that begin with prefix and sort
// after after, in order, and their values.
func scanSpace(tx *bbolt.Tx, sp *space, prefix, after string, fn func(string, []byte) error) error {
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
		return nil // after is past every key of sp
	}
	b := tx.Bucket(sp.bucket)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(seek); k != nil && bytes.HasPrefix(k, stop); k, v = c.Next() {
		key, ok := sp.logical(k)
		if !ok || !strings.HasPrefix(key, prefix) || key <= after {
			continue
		}
		if sp.form == meta && (key == "meta/"+metaFormat || key == "meta/"+metaSerial) {
			v = get(tx, locate(key))
		}
		if err := fn(key, v); err != nil {
			return err
		}
	}
	return nil
}
