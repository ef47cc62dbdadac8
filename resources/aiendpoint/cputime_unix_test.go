//go:build unix

package aiendpoint_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process used so far: a
// benchmark's and the emulator's, which share it. On a shared machine it
// varies less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
