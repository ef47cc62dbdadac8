//go:build unix

package bolt

import (
	"errors"
	"os"
	"syscall"
)

// dupFile returns a second descriptor of f, closed on exec like f, or nil
// if there is none. It shares f's open file description, and so f's flock.
func dupFile(f *os.File) *os.File {
	// Hold off forks until the new descriptor is closed on exec.
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return nil
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), f.Name())
}

// dropLock drops the flock on the file description of f, a descriptor from
// dupFile, and closes f. Closing a descriptor drops its flock only when no
// other descriptor shares its file description, and a child process forked
// meanwhile (by any goroutine) shares them all until it execs: a read-only
// bbolt DB, which bbolt closes without unlocking, could so keep a file
// locked against a writer opening it right after, such as Open after its
// read-only check.
func dropLock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	_ = f.Close()
}

// errWouldBlock is the error of tryLock when another holds the lock.
var errWouldBlock = errors.New("locked")

// tryLock takes the exclusive flock of f, or fails with errWouldBlock at
// once.
func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errWouldBlock
	}
	return err
}
