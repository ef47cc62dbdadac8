//go:build unix

// Package fifotest makes named pipes for tests of code that must never read
// them (a credentials path pointing at a FIFO must fail at once, not hang).
package fifotest

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
)

// New makes a FIFO named name in dir and returns its path. Until the test
// ends, whatever opens it for reading reads end-of-file at once, so that
// code wrongly reading it fails the test instead of hanging it.
func New(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			f, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for a reader
			if err != nil {
				return
			}
			f.Close()
		}
	}()
	t.Cleanup(func() {
		stop.Store(true)
		// A reader held open until the writer is done lets its open through.
		r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Errorf("open %s: %v", path, err)
			return
		}
		<-done
		r.Close()
	})
	return path
}
