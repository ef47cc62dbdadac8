//go:build !unix

package bolt

import (
	"errors"
	"os"
)

// dupFile returns nil: without flock, closing a file is enough to drop its
// lock.
func dupFile(f *os.File) *os.File { return nil }

// dropLock closes f.
func dropLock(f *os.File) { _ = f.Close() }

// errWouldBlock is the error of tryLock when another holds the lock.
var errWouldBlock = errors.New("locked")

// tryLock does nothing: Remove takes no lock where there is no flock.
func tryLock(f *os.File) error { return nil }
