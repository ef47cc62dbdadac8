package state

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// checkLimit is the largest file that Open runs bbolt's full consistency
// check on. State files are normally far smaller; above it only the cheap
// checks run.
const checkLimit = 64 << 20

// Open opens the state file at path. A writer creates the file (mode 0600)
// and its parent directories (mode 0700) if needed, and tightens an existing
// file's mode to owner-only. A reader of a file that does not exist gets an
// empty Store and nothing is created.
//
// If another process holds a conflicting lock, Open waits up to
// opts.LockTimeout and then returns a *LockedError naming the holder when it
// is known. A file that is not a reconcile state yields an error wrapping
// ErrCorrupt; a file from a newer reconcile one wrapping ErrNewerFormat.
func Open(path string, opts Options) (*Store, error) {
	deadline := time.Now().Add(max(opts.LockTimeout, 0))
	s := &Store{path: path, readOnly: opts.ReadOnly}

	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("open state %q: is a directory", path)
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && opts.ReadOnly:
		return s, nil
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("open state %q: %w", path, err)
		}
	default:
		return nil, fmt.Errorf("open state %q: %w", path, err)
	}
	exists := err == nil && fi.Size() > 0

	if opts.ReadOnly {
		if !exists {
			// An empty file is a state whose first writer died before
			// initializing it; bbolt cannot open it read-only.
			return s, nil
		}
		db, err := s.openDB(true, deadline)
		if err != nil {
			return nil, err
		}
		if err := s.validate(db); err != nil {
			db.Close()
			return nil, err
		}
		s.db = db
		return s, nil
	}

	if exists {
		// Check the file read-only before bbolt opens it for writing: bbolt
		// may write while opening, and touching a truncated file's missing
		// pages would crash the process instead of returning an error.
		db, err := s.openDB(true, deadline)
		if err != nil {
			return nil, err
		}
		err = s.validate(db)
		db.Close()
		if err != nil {
			return nil, err
		}
	}
	if fi != nil && fi.Mode().Perm()&0o077 != 0 {
		// Best effort: a file we cannot chmod is still usable.
		_ = os.Chmod(path, fi.Mode().Perm()&^0o077)
	}
	db, err := s.openDB(false, deadline)
	if err != nil {
		return nil, err
	}
	if err := s.initialize(db); err != nil {
		db.Close()
		return nil, err
	}
	if !exists {
		syncDir(filepath.Dir(path))
	}
	s.db = db
	s.lockFile = writeHolder(path, opts.Command)
	return s, nil
}

// openDB opens the bbolt file, waiting for its lock until deadline.
func (s *Store) openDB(readOnly bool, deadline time.Time) (*bolt.DB, error) {
	// bbolt waits forever for a zero timeout; we want one quick try.
	timeout := max(time.Until(deadline), time.Millisecond)
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{
		Timeout:  timeout,
		ReadOnly: readOnly,
	})
	if err == nil {
		return db, nil
	}
	var (
		pathErr *fs.PathError
		errno   syscall.Errno
	)
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, &LockedError{Path: s.path, Holder: readHolder(s.path)}
	case errors.As(err, &pathErr), errors.As(err, &errno):
		return nil, fmt.Errorf("open state %q: %w", s.path, err)
	default:
		// bbolt's own complaints: invalid meta pages, bad checksum,
		// unknown bbolt version, file too small.
		return nil, s.corrupt(err)
	}
}

// corrupt wraps cause as a corruption of s's file.
func (s *Store) corrupt(cause error) error {
	return fmt.Errorf("open state %q: %w: %w", s.path, ErrCorrupt, cause)
}

// validate checks that db is an intact reconcile state of a format this
// package reads.
func (s *Store) validate(db *bolt.DB) error {
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("open state %q: %w", s.path, err)
	}
	return db.View(func(tx *bolt.Tx) error {
		// Everything below the high-water mark must be in the file: a
		// read past its end would kill the process with SIGBUS.
		if tx.Size() > fi.Size() {
			return s.corrupt(fmt.Errorf("truncated: %d bytes, want at least %d", fi.Size(), tx.Size()))
		}
		if fi.Size() <= checkLimit {
			var first error
			for err := range tx.Check() {
				if first == nil {
					first = err
				}
			}
			if first != nil {
				return s.corrupt(first)
			}
		}
		_, err := s.checkLayout(tx)
		return err
	})
}

// checkLayout checks the buckets and the meta values of the state in tx.
// fresh reports a bbolt file without any bucket, which a writer killed
// right after bbolt created the file leaves behind: an empty state.
func (s *Store) checkLayout(tx *bolt.Tx) (fresh bool, err error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		var name []byte
		_ = tx.ForEach(func(n []byte, _ *bolt.Bucket) error {
			name = bytes.Clone(n)
			return errStop
		})
		if name != nil {
			return false, s.corrupt(fmt.Errorf("no %q bucket, found %q", bucketMeta, name))
		}
		return true, nil
	}
	_, err = readMeta(meta)
	if errors.Is(err, ErrNewerFormat) {
		return false, fmt.Errorf("open state %q: %w", s.path, err)
	}
	if err != nil {
		return false, s.corrupt(err)
	}
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			return false, s.corrupt(fmt.Errorf("no %q bucket", name))
		}
	}
	return false, nil
}

// corruptData marks err, from decoding something stored, as corruption. It
// returns nil for nil.
func corruptData(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

// errStop ends a ForEach early.
var errStop = errors.New("stop")

// initialize creates the buckets and the meta values of a new state. It
// checks an existing one again first, as it may have changed between
// validate and taking the write lock, and then writes nothing.
func (s *Store) initialize(db *bolt.DB) error {
	var fresh bool
	err := db.View(func(tx *bolt.Tx) error {
		var err error
		fresh, err = s.checkLayout(tx)
		return err
	})
	if err != nil || !fresh {
		return err
	}
	lineage, err := newLineage()
	if err != nil {
		return fmt.Errorf("open state %q: %w", s.path, err)
	}
	return db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return fmt.Errorf("open state %q: create bucket %q: %w", s.path, name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		for _, kv := range [][2][]byte{
			{keyFormat, u64(FormatVersion)},
			{keyLineage, []byte(lineage)},
			{keySerial, u64(0)},
		} {
			if err := meta.Put(kv[0], kv[1]); err != nil {
				return fmt.Errorf("open state %q: %w", s.path, err)
			}
		}
		return nil
	})
}

// readMeta reads and checks the meta bucket.
func readMeta(b *bolt.Bucket) (Meta, error) {
	format, lineage, serial := b.Get(keyFormat), b.Get(keyLineage), b.Get(keySerial)
	switch {
	case len(format) != 8:
		return Meta{}, fmt.Errorf("bad format version %x", format)
	case len(serial) != 8:
		return Meta{}, fmt.Errorf("bad serial %x", serial)
	case len(lineage) == 0:
		return Meta{}, fmt.Errorf("no lineage")
	}
	m := Meta{
		FormatVersion: int(binary.BigEndian.Uint64(format)),
		Lineage:       string(lineage),
		Serial:        int64(binary.BigEndian.Uint64(serial)),
	}
	switch {
	case m.FormatVersion > FormatVersion:
		return Meta{}, fmt.Errorf("%w (file format %d, this one reads up to %d); upgrade reconcile to use it", ErrNewerFormat, m.FormatVersion, FormatVersion)
	case m.FormatVersion < 1:
		return Meta{}, fmt.Errorf("bad format version %d", m.FormatVersion)
	case m.Serial < 0:
		return Meta{}, fmt.Errorf("bad serial %d", m.Serial)
	}
	return m, nil
}

// newLineage returns a random version 4 UUID.
func newLineage() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// syncDir makes a new directory entry durable. It is best effort: the data
// itself is already synced, and some file systems refuse to sync a
// directory.
func syncDir(dir string) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = f.Sync()
	_ = f.Close()
}
