package state

// SetCommitHooks makes s call queued each time a caller of a coalescing
// write joins the queue (with its new length) and commit before each
// transaction of such writes (with the number of calls in it). Set it
// before any write.
func SetCommitHooks(s *Store, queued func(n int), commit func(calls int)) {
	s.hooks = &commitHooks{queued: queued, commit: commit}
}

// DamageRecord inverts the last byte of the stored record name of the
// open s, as a disk might.
func DamageRecord(s *Store, name string) error {
	return s.db.Update(flipByte(bucketRecords, []byte(name), -1))
}
