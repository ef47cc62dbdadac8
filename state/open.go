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

// Open opens the state at path.
//
// A state that does not exist is created only if opts.Create is set, also
// for a read-only Store (a plan may start a new state); without it Open
// returns an error wrapping ErrNoState. A new state is made whole under a
// temporary name beside path and then linked into place, so that no other
// process ever sees it half made; it gets mode 0600 and any missing parent
// directories mode 0700. A writer tightens an existing file's mode to
// owner-only.
//
// If another process holds a conflicting lock, Open waits up to
// opts.LockTimeout and then returns a *LockedError naming the holder when it
// is known. A file that is not a reconcile state, including an empty or
// truncated one, yields an error wrapping ErrCorrupt; a file from a newer
// reconcile one wrapping ErrNewerFormat. Neither is ever written to.
func Open(path string, opts Options) (*Store, error) {
	deadline := time.Now().Add(max(opts.LockTimeout, 0))
	s := &Store{path: path, readOnly: opts.ReadOnly}

	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("open state %q: is a directory", path)
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && !opts.Create:
		return nil, &noStateError{path: path}
	case errors.Is(err, fs.ErrNotExist):
		if err := s.create(); err != nil {
			return nil, err
		}
		fi = nil
	default:
		return nil, fmt.Errorf("open state %q: %w", path, err)
	}

	// Check the file read-only first, also for a writer: bbolt may write
	// while opening for writing, and touching a truncated file's missing
	// pages would crash the process instead of returning an error.
	db, err := s.openDB(true, deadline)
	if err != nil {
		return nil, err
	}
	if err := s.validate(db); err != nil {
		db.Close()
		return nil, err
	}
	if opts.ReadOnly {
		s.db = db
		return s, nil
	}
	db.Close()

	if fi != nil && fi.Mode().Perm()&0o077 != 0 {
		// Best effort: a file we cannot chmod is still usable.
		_ = os.Chmod(path, fi.Mode().Perm()&^0o077)
	}
	db, err = s.openDB(false, deadline)
	if err != nil {
		return nil, err
	}
	// Check again: the file may have changed before we took the lock.
	if err := s.validate(db); err != nil {
		db.Close()
		return nil, err
	}
	s.db = db
	s.lockFile = writeHolder(path, opts.Command)
	return s, nil
}

// noStateError is returned by Open for a state that does not exist.
type noStateError struct{ path string }

func (e *noStateError) Error() string { return fmt.Sprintf("state %q does not exist", e.path) }
func (e *noStateError) Unwrap() error { return ErrNoState }

// create makes a new state at s.path. It initializes the state in a
// temporary file beside s.path and then links that into place: a link,
// unlike a rename, never replaces a file, which another process may have
// published meanwhile and may already hold a lock on. If one did, create
// keeps that state and succeeds.
func (s *Store) create() error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create state %q: %w", s.path, err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(s.path)+".*.new") // mode 0600
	if err != nil {
		return fmt.Errorf("create state %q: %w", s.path, err)
	}
	tmp := f.Name()
	err = f.Close()
	if err == nil {
		err = initFile(tmp)
	}
	if err == nil {
		err = os.Link(tmp, s.path)
		if errors.Is(err, fs.ErrExist) {
			err = nil // another process created it first: open theirs
		}
	}
	_ = os.Remove(tmp) // after a link, only a second name of the state
	if err != nil {
		return fmt.Errorf("create state %q: %w", s.path, err)
	}
	syncDir(dir)
	return nil
}

// initFile makes the empty file at path a new state and syncs it.
func initFile(path string) error {
	lineage, err := newLineage()
	if err != nil {
		return err
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return fmt.Errorf("create bucket %q: %w", name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		for _, kv := range [][2][]byte{
			{keyFormat, u64(FormatVersion)},
			{keyLineage, []byte(lineage)},
			{keySerial, u64(0)},
		} {
			if err := meta.Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// bbolt syncs the data it writes; sync the file as a whole too.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// database is an open bbolt file.
type database struct {
	*bolt.DB
	// unlock, for a read-only DB, is a second descriptor of its file,
	// through which Close drops the shared lock (see dropLock).
	unlock *os.File
}

// Close closes d and makes sure its lock is gone.
func (d *database) Close() error {
	err := d.DB.Close()
	if d.unlock != nil {
		dropLock(d.unlock)
		d.unlock = nil
	}
	return err
}

// openDB opens the bbolt file, waiting for its lock until deadline. It
// never creates the file, nor lets bbolt turn an empty file into an empty
// database: an empty file is not a state.
func (s *Store) openDB(readOnly bool, deadline time.Time) (*database, error) {
	// bbolt waits forever for a zero timeout; we want one quick try.
	timeout := max(time.Until(deadline), time.Millisecond)
	var unlock *os.File
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{
		Timeout:  timeout,
		ReadOnly: readOnly,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := openExisting(name, flag, perm)
			if err == nil && readOnly {
				unlock = dupFile(f)
			}
			return f, err
		},
	})
	if err == nil {
		return &database{DB: db, unlock: unlock}, nil
	}
	if unlock != nil {
		dropLock(unlock)
	}
	var (
		pathErr *fs.PathError
		errno   syscall.Errno
	)
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, &LockedError{Path: s.path, Holder: readHolder(s.path)}
	case errors.Is(err, errEmptyFile):
		return nil, s.corrupt(err)
	case errors.Is(err, fs.ErrNotExist):
		return nil, &noStateError{path: s.path}
	case errors.As(err, &pathErr), errors.As(err, &errno):
		return nil, fmt.Errorf("open state %q: %w", s.path, err)
	default:
		// bbolt's own complaints: invalid meta pages, bad checksum,
		// unknown bbolt version, file too small.
		return nil, s.corrupt(err)
	}
}

// errEmptyFile is returned by openExisting for an empty file.
var errEmptyFile = errors.New("empty file")

// openExisting opens a file for bbolt as os.OpenFile does, but never
// creates one, and refuses an empty file, which bbolt would initialize as a
// new database.
func openExisting(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag&^os.O_CREATE, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() == 0 {
		err = errEmptyFile
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// corrupt wraps cause as a corruption of s's file.
func (s *Store) corrupt(cause error) error {
	return fmt.Errorf("open state %q: %w: %w", s.path, ErrCorrupt, cause)
}

// validate checks that db is an intact reconcile state of a format this
// package reads.
func (s *Store) validate(db *database) error {
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
		return s.checkLayout(tx)
	})
}

// checkLayout checks the buckets and the meta values of the state in tx.
func (s *Store) checkLayout(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		var name []byte
		_ = tx.ForEach(func(n []byte, _ *bolt.Bucket) error {
			name = bytes.Clone(n)
			return errStop
		})
		if name != nil {
			return s.corrupt(fmt.Errorf("no %q bucket, found %q", bucketMeta, name))
		}
		return s.corrupt(errors.New("no buckets"))
	}
	_, err := readMeta(meta)
	if errors.Is(err, ErrNewerFormat) {
		return fmt.Errorf("open state %q: %w", s.path, err)
	}
	if err != nil {
		return s.corrupt(err)
	}
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			return s.corrupt(fmt.Errorf("no %q bucket", name))
		}
	}
	return nil
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
