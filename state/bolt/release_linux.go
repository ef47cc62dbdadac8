//go:build linux

package bolt

import (
	"go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// release tells the kernel that this process no longer needs the pages of
// tx's file that it has read through bbolt's mapping. The mapping is
// read-only and shared, so its pages are the page cache's: they stay
// there, and a later read maps them again. Called after a read of every
// record, and every so many commits, it keeps the file out of the
// process's resident memory, where it would otherwise stay for the life
// of the Store.
//
// It must run inside tx: a transaction holds off bbolt's remapping, so the
// address is still the mapping's.
func release(tx *bbolt.Tx) {
	n := uintptr(tx.Size())
	if n == 0 {
		return
	}
	// Best effort: a kernel that refuses only keeps the pages mapped.
	unix.Syscall(unix.SYS_MADVISE, tx.DB().Info().Data, n, unix.MADV_DONTNEED)
}
