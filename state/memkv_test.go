package state_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// memBackend is a kv backend in memory, shared as etcd's is: readers take
// no lock and read the snapshot of their Open, a writer's lock is a lease
// that a test can make lapse, and writes are limited in size, so that the
// model's tests run its every path for shared backends (writes split to
// fit, leases lost, outcomes unknown) before one is written.
type memBackend struct {
	name   string
	limits kv.Limits

	mu     sync.Mutex
	stacks map[string]*memStack
	// unknown, when set, is asked before each write: with apply set, the
	// write is made; either way it fails with kv.ErrUnknownOutcome.
	unknown func(b *kv.Batch) (fail, apply bool)
	// writes counts the writes made, conflicts those refused for a
	// condition.
	writes, conflicts int
}

// memStack is one stack: its keys, and its lock's holder.
type memStack struct {
	data   map[string][]byte
	holder *memStore
	freed  chan struct{} // closed when holder lets go
}

var (
	_ kv.Backend     = (*memBackend)(nil)
	_ kv.Store       = (*memStore)(nil)
	_ kv.RemoteReads = (*memStore)(nil)
)

func newMem(name string, limits kv.Limits) *memBackend {
	return &memBackend{name: name, limits: limits, stacks: map[string]*memStack{}}
}

var memStackName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

func (b *memBackend) stack(name string) *memStack {
	st := b.stacks[name]
	if st == nil {
		st = &memStack{data: map[string][]byte{}}
		b.stacks[name] = st
	}
	return st
}

func (b *memBackend) Shared() bool     { return true }
func (b *memBackend) Describe() string { return "mem://" + b.name }
func (b *memBackend) Close() error     { return nil }

func (b *memBackend) Stacks(ctx context.Context) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for name, st := range b.stacks {
		if st.data["meta/format"] != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (b *memBackend) Open(ctx context.Context, stack string, opts kv.Options) (kv.Store, error) {
	if !memStackName.MatchString(stack) {
		return nil, fmt.Errorf("bad stack %q", stack)
	}
	s := &memStore{b: b, stack: stack, write: opts.Write, lost: make(chan struct{})}
	if opts.Write {
		if err := b.lock(ctx, s, opts.LockTimeout, opts.Holder, opts.OnWait); err != nil {
			return nil, err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.stack(stack)
	if opts.Init != nil && st.data["meta/format"] == nil {
		for _, op := range opts.Init {
			st.data[op.Key] = slices.Clone(op.Value)
		}
	}
	if !opts.Write {
		s.snap = copyData(st.data)
	}
	return s, nil
}

func copyData(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

// lock takes stack's lock for s, waiting up to timeout.
func (b *memBackend) lock(ctx context.Context, s *memStore, timeout time.Duration, holder []byte, onWait func([]byte)) error {
	deadline := time.After(max(timeout, 0))
	for {
		b.mu.Lock()
		st := b.stack(s.stack)
		if st.holder == nil {
			st.holder, st.freed = s, make(chan struct{})
			s.holder = holder
			b.mu.Unlock()
			return nil
		}
		held, freed := st.holder.holder, st.freed
		b.mu.Unlock()
		if timeout <= 0 {
			return &kv.LockedError{Where: b.Describe() + " (stack " + s.stack + ")", Holder: held}
		}
		if onWait != nil {
			onWait(held)
			onWait = nil
		}
		select {
		case <-freed:
		case <-deadline:
			return &kv.LockedError{Where: b.Describe() + " (stack " + s.stack + ")", Holder: held}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// unlock lets go of the lock s holds, if it still does.
func (b *memBackend) unlock(s *memStore) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st := b.stacks[s.stack]; st != nil && st.holder == s {
		st.holder = nil
		close(st.freed)
	}
}

// expire makes the lease of stack's lock lapse, as its holder's would.
func (b *memBackend) expire(stack string) {
	b.mu.Lock()
	st := b.stacks[stack]
	var s *memStore
	if st != nil {
		s = st.holder
	}
	b.mu.Unlock()
	if s != nil {
		s.lostOnce.Do(func() { close(s.lost) })
		b.unlock(s)
	}
}

func (b *memBackend) Remove(ctx context.Context, stack string, timeout time.Duration) error {
	s := &memStore{b: b, stack: stack, lost: make(chan struct{})}
	if err := b.lock(ctx, s, timeout, nil, nil); err != nil {
		return err
	}
	b.mu.Lock()
	b.stacks[stack].data = map[string][]byte{}
	b.mu.Unlock()
	b.unlock(s)
	return nil
}

// memStore is a Store of a memBackend.
type memStore struct {
	b        *memBackend
	stack    string
	write    bool
	holder   []byte
	snap     map[string][]byte // a reader's
	lost     chan struct{}
	lostOnce sync.Once
	closed   bool
}

func (s *memStore) RemoteReads() bool { return true }
func (s *memStore) Limits() kv.Limits { return s.b.limits }
func (s *memStore) Describe() string  { return s.b.Describe() + " (stack " + s.stack + ")" }
func (s *memStore) Lost() <-chan struct{} {
	if !s.write {
		return nil
	}
	return s.lost
}

func (s *memStore) Held() error {
	select {
	case <-s.lost:
		return kv.ErrLeaseLost
	default:
		return nil
	}
}

func (s *memStore) Close() error {
	if s.write {
		s.b.unlock(s)
	}
	return nil
}

func (s *memStore) Read(ctx context.Context, fn func(kv.View) error) error {
	data := s.snap
	if data == nil {
		s.b.mu.Lock()
		data = copyData(s.b.stack(s.stack).data)
		s.b.mu.Unlock()
	}
	return fn(memView(data))
}

func (s *memStore) Write(ctx context.Context, b *kv.Batch) error {
	if !s.write {
		return kv.ErrReadOnly
	}
	l := s.b.limits
	if l.Ops > 0 && len(b.Ops)+len(b.Conds) > l.Ops || l.Bytes > 0 && b.Size() > l.Bytes {
		return fmt.Errorf("%w: %d operations, %d bytes", kv.ErrTooLarge, len(b.Ops)+len(b.Conds), b.Size())
	}
	for _, op := range b.Ops {
		if len(op.Value) > l.Value {
			return fmt.Errorf("%w: a value of %d bytes", kv.ErrTooLarge, len(op.Value))
		}
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	st := s.b.stack(s.stack)
	if st.holder != s {
		return kv.ErrLeaseLost
	}
	var fail, apply bool
	if s.b.unknown != nil {
		fail, apply = s.b.unknown(b)
	}
	if fail && !apply {
		return kv.ErrUnknownOutcome
	}
	for _, c := range b.Conds {
		v, ok := st.data[c.Key]
		if ok != (c.Value != nil) || ok && string(v) != string(c.Value) {
			s.b.conflicts++
			return fmt.Errorf("%w: %q", kv.ErrConflict, c.Key)
		}
	}
	for _, op := range b.Ops {
		if op.Delete {
			delete(st.data, op.Key)
		} else {
			st.data[op.Key] = slices.Clone(op.Value)
		}
	}
	s.b.writes++
	if fail {
		return kv.ErrUnknownOutcome
	}
	return nil
}

// memView is a View of a copy of a stack's keys.
type memView map[string][]byte

func (v memView) Get(key string) ([]byte, error) { return slices.Clone(v[key]), nil }

func (v memView) GetMany(keys []string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = slices.Clone(v[k])
	}
	return out, nil
}

func (v memView) Scan(prefix, after string, keysOnly bool, fn func(string, []byte) error) error {
	var keys []string
	for k := range v {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		val := v[k]
		if keysOnly {
			val = nil
		}
		if err := fn(k, val); err != nil {
			return err
		}
	}
	return nil
}
