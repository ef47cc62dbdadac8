package state

import (
	"os"

	"go.etcd.io/bbolt"

	"github.com/reconcile-dev/reconcile/state/bolt"
)

// rawDB returns the bbolt database of s, a Store of a local file, for
// tests that read or damage it below the model.
func (s *Store) rawDB() *bbolt.DB { return s.kv.(*bolt.Store).DB() }

// holderPath is the path of the holder file of the state file at path.
func holderPath(path string) string { return path + ".lock" }

// readHolder returns the holder that the holder file of the state file at
// path names, as a waiter for its lock sees it.
func readHolder(path string) Holder {
	data, _ := os.ReadFile(holderPath(path))
	return decodeHolder(data, true)
}

// putCheckedInt stores n as the 8-byte meta value key of the bbolt file
// in b, and its check under checkKey, as the file keeps the format and
// the serial.
func putCheckedInt(b *bbolt.Bucket, key, checkKey []byte, n uint64) error {
	raw := u64(n)
	if err := b.Put(key, raw); err != nil {
		return err
	}
	return b.Put(checkKey, checksum(bucketMeta, key, raw))
}

// putValue stores payload and its check at key in the bucket named bucket
// of the bbolt file's tx.
func putValue(tx *bbolt.Tx, bucket, key, payload []byte) error {
	return tx.Bucket(bucket).Put(key, seal(bucket, key, payload))
}
