package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/state/bolt"
	"github.com/reconcile-dev/reconcile/state/kv"
)

// Open opens the state in the local file at path: the default stack of a
// backend of bbolt files (see package state/bolt), through OpenBackend.
//
// A state that does not exist is created only if opts.Create is set, also
// for a read-only Store (a plan may start a new state); without it Open
// returns an error wrapping ErrNoState. A new file is made whole and then
// linked into place, so that no other process ever sees it half made; it
// gets mode 0600 and any missing parent directories mode 0700.
func Open(path string, opts Options) (*Store, error) {
	s, err := OpenBackend(context.Background(), bolt.New(path), bolt.DefaultStack, opts)
	if err != nil {
		return nil, err
	}
	s.owned = true
	return s, nil
}

// OpenBackend opens stack on the kv backend b. The caller keeps b and
// closes it after the Store.
//
// A writer takes the stack's lock; if another process holds a conflicting
// lock, OpenBackend waits up to opts.LockTimeout and then returns a
// *LockedError naming the holder when it is known. A reader of a local
// file shares its lock with other readers; a reader of a shared backend
// takes none, and reads one snapshot.
//
// A stack that does not exist is created only with opts.Create, in one
// write that makes all its meta values (and, with opts.Copy, marks it
// incomplete), so that no other process ever sees it half made; a
// read-only Store of a shared backend with opts.NoCreateShared creates
// nothing (see Store.Absent).
// With opts.Copy, OpenBackend accepts a state marked incomplete; without
// it, it refuses one with an *IncompleteError.
//
// OpenBackend checks the meta values; a local file's, it checks whole,
// the check of every value stored and the record count included, first
// as a reader, so that a writer never opens a damaged state. A state that
// fails them yields an error wrapping ErrCorrupt, a state of a newer
// reconcile one wrapping ErrNewerFormat; neither is written to. A format 1
// file is upgraded to the current format in place: by a writer at once,
// by a reader under the write lock, which it takes for the upgrade only,
// waiting for it like a writer.
func OpenBackend(ctx context.Context, b kv.Backend, stack string, opts Options) (*Store, error) {
	o := &opening{b: b, stack: stack, opts: opts, local: !b.Shared(), onWait: opts.OnWait,
		deadline: time.Now().Add(max(opts.LockTimeout, 0))}
	if o.local && !opts.ReadOnly {
		// Check the state as a reader first: a damaged state is never
		// opened for writing, nor its file's mode changed.
		r, _, err := o.open(ctx, false)
		if err != nil {
			return nil, err
		}
		r.kv.Close()
	}
	s, format, err := o.open(ctx, !opts.ReadOnly)
	if err != nil || format == FormatVersion {
		return s, err
	}
	// Format 1: upgrade it, under the write lock.
	if !opts.ReadOnly {
		if err := s.upgradeV1(); err != nil {
			s.Close()
			return nil, fmt.Errorf("open state %s: upgrade from format 1: %w", s.quoted, err)
		}
		return s, nil
	}
	s.kv.Close()
	w, format, err := o.open(ctx, true)
	if err != nil {
		return nil, err
	}
	if format != FormatVersion {
		err = w.upgradeV1()
	}
	w.Close()
	if err != nil {
		return nil, fmt.Errorf("open state %s: upgrade from format 1: %w", w.quoted, err)
	}
	s, _, err = o.open(ctx, false)
	return s, err
}

// opening is one OpenBackend.
type opening struct {
	b        kv.Backend
	stack    string
	opts     Options
	local    bool
	deadline time.Time
	onWait   func(Holder) // until called
}

// open opens the stack for writing or reading, and checks it. It returns
// the Store and the format of the state.
func (o *opening) open(ctx context.Context, write bool) (*Store, int, error) {
	kvo := kv.Options{Write: write, LockTTL: o.opts.LockTTL, LockTimeout: max(time.Until(o.deadline), 0), OnWait: o.wait}
	if write {
		kvo.Holder = encodeHolder(NewHolder(o.opts.Command), !o.local)
	}
	if o.opts.Create && (o.local || write || !o.opts.NoCreateShared) {
		var err error
		if kvo.Init, err = initOps(o.opts.Copy); err != nil {
			return nil, 0, err
		}
	}
	ks, err := o.b.Open(ctx, o.stack, kvo)
	if err != nil {
		return nil, 0, o.openError(err)
	}
	s := &Store{kv: ks, backend: o.b, where: ks.Describe(), local: o.local, limits: ks.Limits(), timeout: o.opts.Timeout,
		readOnly: !write, copying: o.opts.Copy, onLoad: o.opts.OnLoad}
	s.quoted = s.where
	if s.local {
		s.quoted = fmt.Sprintf("%q", s.where)
	}
	if s.timeout <= 0 {
		s.timeout = defaultTimeout
	}
	s.releaser, _ = ks.(kv.Releaser)
	if r, ok := ks.(kv.RemoteReads); ok {
		s.remote = r.RemoteReads()
	}
	format, err := s.check(o.opts.Create && o.opts.NoCreateShared)
	if err != nil {
		ks.Close()
		return nil, 0, err
	}
	return s, format, nil
}

// wait says, once, that Open waits for the lock holder holds.
func (o *opening) wait(holder []byte) {
	if f := o.onWait; f != nil {
		o.onWait = nil
		f(decodeHolder(holder, o.local))
	}
}

// openError returns the error of the backend's Open as the model's.
func (o *opening) openError(err error) error {
	var locked *kv.LockedError
	switch {
	case errors.As(err, &locked):
		return &LockedError{Path: locked.Where, Holder: decodeHolder(locked.Holder, o.local)}
	case errors.Is(err, kv.ErrNotFound):
		where := fmt.Sprintf("%s (stack %s)", o.b.Describe(), o.stack)
		// A backend of local files names the file of a stack.
		if p, ok := o.b.(interface{ Path(stack string) string }); ok {
			where = fmt.Sprintf("%q", p.Path(o.stack))
		}
		return &noStateError{location: where}
	}
	return mapErr(err)
}

// noStateError is returned by Open for a state that does not exist.
type noStateError struct{ location string }

func (e *noStateError) Error() string { return fmt.Sprintf("state %s does not exist", e.location) }
func (e *noStateError) Unwrap() error { return ErrNoState }

// check checks the state s opened, as OpenBackend says, readies a
// writer's mirror of it, and returns its format. A reader of a stack of a
// shared backend that does not exist reads it as empty with absent.
func (s *Store) check(absent bool) (format int, err error) {
	err = s.read(func(vw kv.View) error {
		mv, err := readMetaValues(vw)
		if err != nil {
			return err
		}
		if mv.format == nil && !s.local {
			// A stack without meta/format does not exist.
			if !s.readOnly || !absent {
				return &noStateError{location: s.quoted}
			}
			s.absent = true
			if s.viewKey, err = newSecretKey(); err != nil {
				return err
			}
			format = FormatVersion
			return nil
		}
		if format, err = formatOf(mv.format, !s.local); err != nil {
			if errors.Is(err, ErrNewerFormat) {
				return fmt.Errorf("open state %s: %w", s.quoted, err)
			}
			return s.corrupt(err)
		}
		if format == 1 {
			if _, err := mv.metaV1(); err != nil {
				return s.corrupt(err)
			}
			if err := checkValuesV1(vw); err != nil {
				return s.corrupt(err)
			}
			return nil
		}
		m, err := s.metaOf(mv)
		if err == nil {
			_, err = secretKeyOf(mv.key)
			err = corruptData(err)
		}
		if err == nil && s.local {
			err = s.checkValues(vw)
		}
		var ce *CountError
		switch {
		case errors.As(err, &ce):
			return err
		case err != nil:
			return fmt.Errorf("open state %s: %w", s.quoted, err)
		}
		if mv.incomplete != nil && s.copying == nil {
			mark, err := DecodeCopyMark(mv.incomplete)
			if err != nil {
				return fmt.Errorf("open state %s: %w", s.quoted, err)
			}
			return &IncompleteError{Location: s.quoted, Mark: mark}
		}
		if !s.readOnly {
			s.serial = m.Serial
			if s.count, s.countKnown, err = mv.countAt(m.Serial); err != nil {
				return s.corrupt(err)
			}
			if s.countKnown && s.count == 0 {
				// No records: none to learn of (a new state's first apply).
				s.noteWrite(map[string]bool{}, true)
			}
		}
		return nil
	})
	return format, err
}

// corrupt wraps cause, which names what is damaged, as the corruption of
// the state s opens.
func (s *Store) corrupt(cause error) error {
	return fmt.Errorf("open state %s: %w: %w", s.quoted, ErrCorrupt, cause)
}

// checkValues checks every value of the state in vw but the meta values
// that metaOf checks, bucket by bucket of the bbolt file's layout, key by
// key, and that the records are as many as their count says.
func (s *Store) checkValues(vw kv.View) error {
	var records int64
	check := func(k string, v []byte) error {
		if err := checkStored(k, v); err != nil {
			return corruptData(err)
		}
		return nil
	}
	err := vw.Scan(prefixMeta, "", false, func(k string, v []byte) error {
		if k == kvFormat || k == kvSerial {
			return nil
		}
		return check(k, v)
	})
	if err != nil {
		return err
	}
	if v, err := vw.Get(kvOutputs); err != nil || v != nil {
		if err == nil {
			err = check(kvOutputs, v)
		}
		if err != nil {
			return err
		}
	}
	for _, prefix := range []string{prefixRecords, prefixVersions, prefixHistory, prefixIntents} {
		err := vw.Scan(prefix, "", false, func(k string, v []byte) error {
			if prefix == prefixRecords {
				records++
			}
			return check(k, v)
		})
		if err != nil {
			return err
		}
	}
	return s.checkCount(vw, records)
}

// corruptData marks err, from decoding something stored, as corruption. It
// returns nil for nil.
func corruptData(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

// kvErrors pairs the errors of package kv with the model's.
var kvErrors = []struct{ kv, state error }{
	{kv.ErrCorrupt, ErrCorrupt},
	{kv.ErrReadOnly, ErrReadOnly},
	{kv.ErrLeaseLost, ErrLockLost},
	{kv.ErrTooLarge, ErrTooLarge},
	{kv.ErrNotFound, ErrNoState},
}

// mapErr returns err, an error of a kv backend, as the model's: wrapping
// the model's error for the backend's too, its text saying it.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	for _, e := range kvErrors {
		if errors.Is(err, e.kv) && !errors.Is(err, e.state) {
			return &kvError{text: strings.Replace(err.Error(), e.kv.Error(), e.state.Error(), 1), errs: []error{e.state, err}}
		}
	}
	return err
}

// kvError is an error of a kv backend that says the model's error too.
type kvError struct {
	text string
	errs []error
}

func (e *kvError) Error() string   { return e.text }
func (e *kvError) Unwrap() []error { return e.errs }
