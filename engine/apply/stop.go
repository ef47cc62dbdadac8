package apply

import (
	"context"
	"sync"
	"sync/atomic"
)

// StopControl lets a signal handler stop an apply gracefully. An Apply
// whose context carries it (see WithStopControl) starts no new operation
// once Stop is called and lets the running ones go on to their end; the
// handler cancels the context to abandon them too, at once (a second
// signal) or after a grace period. State is written after every operation
// that ends, so what completed is kept either way, and the result of Apply
// lists what was left undone.
type StopControl struct {
	ch   chan struct{}
	once sync.Once

	mu     sync.Mutex
	reason string

	applying atomic.Int32 // Apply calls in progress
	running  atomic.Int32 // their operations in progress
}

// NewStopControl returns a StopControl that has not been stopped.
func NewStopControl() *StopControl { return &StopControl{ch: make(chan struct{})} }

// Stop asks every Apply using s to start nothing new; reason says why, e.g.
// "interrupt" or "SIGTERM". It reports whether an Apply is running, that
// is whether anything honours the request (otherwise the caller should
// cancel at once), and how many operations are running. Calling it again
// does nothing more.
func (s *StopControl) Stop(reason string) (applying bool, running int) {
	s.once.Do(func() {
		s.mu.Lock()
		s.reason = reason
		s.mu.Unlock()
		close(s.ch)
	})
	return s.applying.Load() > 0, int(s.running.Load())
}

// Done is closed once Stop is called.
func (s *StopControl) Done() <-chan struct{} { return s.ch }

// Reason is the reason given to Stop, or "" before it.
func (s *StopControl) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

type stopKey struct{}

// WithStopControl returns a context carrying s, for Apply.
func WithStopControl(ctx context.Context, s *StopControl) context.Context {
	return context.WithValue(ctx, stopKey{}, s)
}

// StopControlOf returns the StopControl ctx carries, or nil.
func StopControlOf(ctx context.Context) *StopControl {
	s, _ := ctx.Value(stopKey{}).(*StopControl)
	return s
}

// StopReason returns the reason a stop was requested for ctx's
// StopControl (the signal's name), or "" when none was, or ctx carries
// none.
func StopReason(ctx context.Context) string {
	if s := StopControlOf(ctx); s != nil {
		return s.Reason()
	}
	return ""
}
