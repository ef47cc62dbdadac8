package etcdstate

// SetCommitHooks makes s call queued each time a caller of a coalescing
// write joins the queue (with its new length) and commit before each
// transaction of such writes (with the number of calls in it). Set it
// before any write.
func SetCommitHooks(s *Store, queued func(n int), commit func(calls int)) {
	s.hooks = &commitHooks{queued: queued, commit: commit}
}

// LockKey returns the key of s's lock.
func LockKey(s *Store) string { return s.k.lock() }

// RecordKey returns the key of the record name of s.
func RecordKey(s *Store, name string) string { return s.k.record(name) }

// CountKey returns the key of the record count of s.
func CountKey(s *Store) string { return s.k.count() }

// Lease returns the id of s's lease.
func Lease(s *Store) int64 { return int64(s.lease) }

// StopBackground stops s's keep-alive and its watch of the lock key, as a
// process paused or cut off would, so that s notices a lost lock only
// when a write fails.
func StopBackground(s *Store) {
	s.stopBg()
	s.bg.Wait()
}
