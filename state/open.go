package state

import (
	"bytes"
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
// directories mode 0700.
//
// With opts.Copy, a state Open creates is marked incomplete until Load
// has written into it, and Open accepts a state so marked; without it,
// Open refuses one with an *IncompleteError.
//
// Open checks the whole file, including the check of every value stored. A
// format 1 file is upgraded to the current format in place: by a writer at
// once, by a reader under the write lock, which it takes for the upgrade
// only, waiting for it like a writer. Open tightens the mode of a file it
// writes to owner-only.
//
// If another process holds a conflicting lock, Open waits up to
// opts.LockTimeout and then returns a *LockedError naming the holder when it
// is known. A file that is not a reconcile state, including an empty,
// truncated or damaged one, yields an error wrapping ErrCorrupt; a file from
// a newer reconcile one wrapping ErrNewerFormat. Neither is ever written
// to.
func Open(path string, opts Options) (*Store, error) {
	deadline := time.Now().Add(max(opts.LockTimeout, 0))
	s := &Store{path: path, readOnly: opts.ReadOnly, onWait: opts.OnWait, copying: opts.Copy, onLoad: opts.OnLoad}

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
	format, err := s.validate(db)
	if err != nil {
		db.Close()
		return nil, err
	}
	if opts.ReadOnly && format == FormatVersion {
		s.db = db
		return s, nil
	}
	db.Close()

	// A writer, or a reader that must upgrade the file first.
	db, err = s.openDB(false, deadline)
	if err != nil {
		return nil, err
	}
	lockFile := writeHolder(path, opts.Command)
	if err := s.prepare(db, fi); err != nil {
		removeHolder(lockFile)
		db.Close()
		return nil, err
	}
	if !opts.ReadOnly {
		s.db = db
		s.lockFile = lockFile
		return s, nil
	}

	// A reader that upgraded the file: open it again as a reader.
	removeHolder(lockFile)
	db.Close()
	db, err = s.openDB(true, deadline)
	if err != nil {
		return nil, err
	}
	if _, err := s.validate(db); err != nil {
		db.Close()
		return nil, err
	}
	s.db = db
	return s, nil
}

// prepare readies the state in db, opened for writing, to be written: it
// checks it again, as it may have changed before the write lock was taken,
// tightens the file's mode to owner-only (fi is the file as Open found it,
// nil if Open created it), and rewrites a state of an older format in the
// current one, in one transaction.
func (s *Store) prepare(db *database, fi fs.FileInfo) error {
	format, err := s.validate(db)
	if err != nil {
		return err
	}
	if fi != nil && fi.Mode().Perm()&0o077 != 0 {
		// Best effort: a file we cannot chmod is still usable.
		_ = os.Chmod(s.path, fi.Mode().Perm()&^0o077)
	}
	if format == FormatVersion {
		return nil
	}
	if err := db.Update(upgradeV1); err != nil {
		return fmt.Errorf("open state %q: upgrade from format %d: %w", s.path, format, err)
	}
	return nil
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
		err = initFile(tmp, s.copying)
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

// initFile makes the empty file at path a new state and syncs it. A state
// made for a copy (mark is not nil) is marked incomplete in the same
// transaction.
func initFile(path string, mark *CopyMark) error {
	lineage, err := newLineage()
	if err != nil {
		return err
	}
	key, err := newSecretKey()
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
		if mark != nil {
			if err := tx.Bucket(bucketMeta).Put(keyIncomplete, EncodeCopyMark(*mark)); err != nil {
				return err
			}
		}
		return putMeta(tx, Meta{Lineage: lineage}, key)
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
	if s.onWait != nil && time.Until(deadline) > 10*time.Millisecond {
		// One quick try first: if the lock is held, say so before waiting.
		db, err := s.openDBUntil(readOnly, time.Now())
		var locked *LockedError
		if !errors.As(err, &locked) {
			return db, err
		}
		s.onWait(locked.Holder)
		s.onWait = nil
	}
	return s.openDBUntil(readOnly, deadline)
}

// openDBUntil is openDB without the notice of a wait.
func (s *Store) openDBUntil(readOnly bool, deadline time.Time) (*database, error) {
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
// package reads, and returns that format. For the current format, it
// checks every value stored.
func (s *Store) validate(db *database) (format int, err error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		return 0, fmt.Errorf("open state %q: %w", s.path, err)
	}
	err = db.View(func(tx *bolt.Tx) error {
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
		if format, err = s.checkLayout(tx); err != nil {
			return err
		}
		return s.checkComplete(tx, format)
	})
	return format, err
}

// checkComplete refuses the state in tx if a copy into it has not
// finished, unless s is opened for that copy.
func (s *Store) checkComplete(tx *bolt.Tx, format int) error {
	if format != FormatVersion || s.copying != nil {
		return nil
	}
	v := tx.Bucket(bucketMeta).Get(keyIncomplete)
	if v == nil {
		return nil
	}
	m, err := DecodeCopyMark(v)
	if err != nil {
		return s.corrupt(err)
	}
	return &IncompleteError{Location: fmt.Sprintf("%q", s.path), Mark: m}
}

// checkLayout checks the buckets and the meta values of the state in tx,
// and, for the current format, the check of every value. It returns the
// format.
func (s *Store) checkLayout(tx *bolt.Tx) (format int, err error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		var name []byte
		_ = tx.ForEach(func(n []byte, _ *bolt.Bucket) error {
			name = bytes.Clone(n)
			return errStop
		})
		if name != nil {
			return 0, s.corrupt(fmt.Errorf("no %q bucket, found %q", bucketMeta, name))
		}
		return 0, s.corrupt(errors.New("no buckets"))
	}
	format, err = readFormat(meta)
	if errors.Is(err, ErrNewerFormat) {
		return 0, fmt.Errorf("open state %q: %w", s.path, err)
	}
	if err != nil {
		return 0, s.corrupt(err)
	}
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			return 0, s.corrupt(fmt.Errorf("no %q bucket", name))
		}
	}
	if format == 1 {
		err = checkValuesV1(tx)
	} else {
		err = checkValues(tx)
	}
	var ce *CountError
	if errors.As(err, &ce) {
		ce.Location = fmt.Sprintf("%q", s.path)
		return 0, ce
	}
	if err != nil {
		return 0, s.corrupt(err)
	}
	return format, nil
}

// checkValues checks the meta values of the state in tx and the check of
// every value in its buckets.
func checkValues(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if _, err := readMeta(meta); err != nil {
		return err
	}
	if _, err := readSecretKey(meta); err != nil {
		return err
	}
	var records int64
	for _, name := range allBuckets {
		err := tx.Bucket(name).ForEach(func(k, v []byte) error {
			switch {
			case v == nil:
				return fmt.Errorf("%s: a bucket where a value belongs", describe(name, k))
			case bytes.Equal(name, bucketMeta) && (bytes.Equal(k, keyFormat) || bytes.Equal(k, keyFormatCheck) ||
				bytes.Equal(k, keySerial) || bytes.Equal(k, keySerialCheck)):
				return nil // checked by readMeta
			case bytes.Equal(name, bucketRecords):
				records++
			}
			_, err := openValue(name, k, v)
			return err
		})
		if err != nil {
			return err
		}
	}
	return checkCount(tx, records)
}

// checkCount returns a *CountError if the state in tx, which holds have
// records, does not hold as many as its record count says. A count left
// at another serial (by a reconcile that did not keep it) is not checked.
func checkCount(tx *bolt.Tx, have int64) error {
	meta := tx.Bucket(bucketMeta)
	v := meta.Get(keyCount)
	if v == nil {
		return nil
	}
	want, at, err := DecodeCount(v)
	if err != nil {
		return err
	}
	m, err := readMeta(meta)
	if err != nil || at != m.Serial || want == have {
		return err
	}
	records := tx.Bucket(bucketRecords)
	missing, err := FindMissing(func(name string) bool { return records.Get([]byte(name)) != nil },
		func(yield func(name string, serial int64, live bool) bool) error {
			return tx.Bucket(bucketVersions).ForEach(func(k, v []byte) error {
				if n := len(k) - 9; n >= 0 && k[n] == 0 {
					yield(string(k[:n]), int64(binary.BigEndian.Uint64(k[n+1:])), len(v) > checkSize)
				}
				return nil
			})
		})
	if err != nil {
		return err
	}
	return &CountError{Have: have, Want: want, Missing: missing, Restore: "Restore the state file from a backup"}
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
