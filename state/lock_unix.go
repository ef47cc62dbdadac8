//go:build unix

package state

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with the given pid exists on this
// host. EPERM means it exists but belongs to another user.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
