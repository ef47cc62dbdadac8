package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// checkLimit is the largest file that Open runs bbolt's full consistency
// check on. State files are normally far smaller; above it only the cheap
// checks run.
const checkLimit = 64 << 20

// layoutFormat is the last format whose layout this package knows: a file
// of a later one is opened without the checks of its buckets, for the
// model to refuse it as newer.
const layoutFormat = 2

// Open opens stack's file (see the package doc).
func (b *Backend) Open(ctx context.Context, stack string, opts kv.Options) (kv.Store, error) {
	path, err := b.file(stack)
	if err != nil {
		return nil, err
	}
	o := &opener{path: path, opts: opts, deadline: time.Now().Add(max(opts.LockTimeout, 0)), onWait: opts.OnWait}
	for {
		s, err := o.open()
		if err != errReplaced {
			return s, err
		}
	}
}

// errReplaced says the file was removed or replaced while Open waited for
// its lock: Open starts again.
var errReplaced = errors.New("replaced")

// opener is one Open.
type opener struct {
	path     string
	opts     kv.Options
	deadline time.Time
	onWait   func(holder []byte) // until called
}

func (o *opener) open() (*Store, error) {
	fi, err := os.Stat(o.path)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("open state %q: is a directory", o.path)
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && o.opts.Init == nil:
		return nil, fmt.Errorf("state %q: %w", o.path, kv.ErrNotFound)
	case errors.Is(err, fs.ErrNotExist):
		if err := create(o.path, o.opts.Init); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("open state %q: %w", o.path, err)
	}

	// Check the file read-only first, also for a writer: bbolt may write
	// while opening for writing, and touching a truncated file's missing
	// pages would crash the process instead of returning an error.
	s, err := o.openDB(true)
	if err != nil {
		return nil, err
	}
	if !o.opts.Write {
		return s, nil
	}
	s.Close()
	if s, err = o.openDB(false); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(o.path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		// Best effort: a file we cannot chmod is still usable.
		_ = os.Chmod(o.path, fi.Mode().Perm()&^0o077)
	}
	s.holder = writeHolder(o.path, o.opts.Holder)
	return s, nil
}

// openDB opens and checks the file, waiting for its lock until the
// deadline, saying so once with onWait.
func (o *opener) openDB(readOnly bool) (*Store, error) {
	if o.onWait != nil && time.Until(o.deadline) > 10*time.Millisecond {
		// One quick try first: if the lock is held, say so before waiting.
		s, err := o.openUntil(readOnly, time.Now())
		var locked *kv.LockedError
		if !errors.As(err, &locked) {
			return s, err
		}
		o.onWait(locked.Holder)
		o.onWait = nil
	}
	return o.openUntil(readOnly, o.deadline)
}

// openUntil opens the file, waiting for its lock until deadline, and
// checks it. It never creates the file, nor lets bbolt make a database of
// an empty file: an empty file is not a state.
func (o *opener) openUntil(readOnly bool, deadline time.Time) (*Store, error) {
	// bbolt waits forever for a zero timeout; we want one quick try.
	timeout := max(time.Until(deadline), time.Millisecond)
	var (
		unlock *os.File
		file   fs.FileInfo
	)
	db, err := bbolt.Open(o.path, 0o600, &bbolt.Options{
		Timeout:  timeout,
		ReadOnly: readOnly,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := openExisting(name, flag, perm)
			if err == nil {
				file, _ = f.Stat()
				if readOnly {
					unlock = dupFile(f)
				}
			}
			return f, err
		},
	})
	if err != nil {
		if unlock != nil {
			dropLock(unlock)
		}
		return nil, o.openError(err)
	}
	s := &Store{path: o.path, db: db, unlock: unlock, write: !readOnly}
	// The file may have been removed, or replaced, while we waited.
	if now, err := os.Stat(o.path); err != nil || file == nil || !os.SameFile(now, file) {
		s.Close()
		return nil, errReplaced
	}
	if err := check(db, file.Size()); err != nil {
		s.Close()
		return nil, fmt.Errorf("open state %q: %w", o.path, err)
	}
	return s, nil
}

// openError returns the error of bbolt.Open of the file.
func (o *opener) openError(err error) error {
	var (
		pathErr *fs.PathError
		errno   syscall.Errno
	)
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return &kv.LockedError{Where: o.path, Holder: readHolder(o.path)}
	case errors.Is(err, errEmptyFile):
		return fmt.Errorf("open state %q: %w: %w", o.path, kv.ErrCorrupt, err)
	case errors.Is(err, fs.ErrNotExist):
		return errReplaced
	case errors.As(err, &pathErr), errors.As(err, &errno):
		return fmt.Errorf("open state %q: %w", o.path, err)
	}
	// bbolt's own complaints: invalid meta pages, bad checksum, unknown
	// bbolt version, file too small.
	return fmt.Errorf("open state %q: %w: %w", o.path, kv.ErrCorrupt, err)
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

// check checks that db, whose file holds size bytes, is an intact bbolt
// file of reconcile's layout. Errors wrap kv.ErrCorrupt.
func check(db *bbolt.DB, size int64) error {
	return db.View(func(tx *bbolt.Tx) error {
		// Everything below the high-water mark must be in the file: a
		// read past its end would kill the process with SIGBUS.
		if tx.Size() > size {
			return fmt.Errorf("%w: truncated: %d bytes, want at least %d", kv.ErrCorrupt, size, tx.Size())
		}
		if size <= checkLimit {
			for err := range tx.Check() {
				return fmt.Errorf("%w: %w", kv.ErrCorrupt, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			var name []byte
			_ = tx.ForEach(func(n []byte, _ *bbolt.Bucket) error {
				name = append([]byte(nil), n...)
				return errStop
			})
			if name != nil {
				return fmt.Errorf("%w: no %q bucket, found %q", kv.ErrCorrupt, bucketMeta, name)
			}
			return fmt.Errorf("%w: no buckets", kv.ErrCorrupt)
		}
		if f := meta.Get([]byte(metaFormat)); len(f) == 8 && binary.BigEndian.Uint64(f) > layoutFormat {
			return nil // a later layout: the model refuses it
		}
		for _, name := range layoutBuckets {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("%w: no %q bucket", kv.ErrCorrupt, name)
			}
		}
		return nil
	})
}

// errStop ends a ForEach early.
var errStop = errors.New("stop")

// create makes the file at path, holding init. It writes the file whole
// under a temporary name beside path, syncs it, and then links it into
// place: a link, unlike a rename, never replaces a file, which another
// process may have made meanwhile and may already hold a lock on. If one
// did, create keeps that file and succeeds.
func create(path string, init []kv.Op) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create state %q: %w", path, err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".*.new") // mode 0600
	if err != nil {
		return fmt.Errorf("create state %q: %w", path, err)
	}
	tmp := f.Name()
	err = f.Close()
	if err == nil {
		err = initFile(tmp, init)
	}
	if err == nil {
		err = os.Link(tmp, path)
		if errors.Is(err, fs.ErrExist) {
			err = nil // another process created it first: open theirs
		}
	}
	_ = os.Remove(tmp) // after a link, only a second name of the file
	if err != nil {
		return fmt.Errorf("create state %q: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// initFile makes the empty file at path a file of the layout holding
// init, and syncs it.
func initFile(path string, init []kv.Op) error {
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range layoutBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return fmt.Errorf("create bucket %q: %w", name, err)
			}
		}
		for _, op := range init {
			if err := put(tx, locate(op.Key), op.Value); err != nil {
				return fmt.Errorf("%q: %w", op.Key, err)
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

// holderPath is the path of the holder file of the file at path.
func holderPath(path string) string { return path + ".lock" }

// writeHolder records holder as what holds path's lock, and returns the
// holder file's path, or "" if it wrote none. It is best effort: the lock
// is held already, and the file only helps a waiter name its holder. The
// file is written to a temporary name and renamed into place, so that a
// waiter never reads half of it.
func writeHolder(path string, holder []byte) string {
	if holder == nil {
		return ""
	}
	dst := holderPath(path)
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(dst)+".*.tmp") // mode 0600
	if err != nil {
		return ""
	}
	_, err = f.Write(holder)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return ""
	}
	return dst
}

// readHolder returns what the holder file of path holds, nil if there is
// none.
func readHolder(path string) []byte {
	data, err := os.ReadFile(holderPath(path))
	if err != nil {
		return nil
	}
	return data
}
