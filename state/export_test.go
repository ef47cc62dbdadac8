package state

import bolt "go.etcd.io/bbolt"

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

// DeleteRecordKey deletes the stored record name of the open s, as a hand
// with bbolt's tools might, leaving its versions and the record count.
func DeleteRecordKey(s *Store, name string) error {
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketRecords).Delete([]byte(name)) })
}

// DeleteRecordCount deletes the record count of the open s, as a state
// written by a reconcile that predates it is.
func DeleteRecordCount(s *Store) error {
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyCount) })
}
