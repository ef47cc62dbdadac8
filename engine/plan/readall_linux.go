package plan

import (
	"runtime"
	"syscall"
)

// mapped is memory mapped by mapBuffer, unmapped once unreachable.
type mapped struct{ data []byte }

// mapBuffer returns n bytes of memory mapped with MAP_POPULATE, the pages
// made present by the one call instead of a fault each as the Go heap's
// are; nil when the mapping fails.
func mapBuffer(n int) *mapped {
	data, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_POPULATE)
	if err != nil {
		return nil
	}
	m := &mapped{data: data}
	runtime.AddCleanup(m, func(d []byte) { _ = syscall.Munmap(d) }, data)
	return m
}
