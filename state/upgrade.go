package state

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// checkValuesV1 checks the meta values of the format 1 state in tx, and
// that every value in its buckets decodes: format 1 has no other way to
// tell a damaged value, and the checks upgradeV1 adds must never vouch for
// one.
func checkValuesV1(tx *bolt.Tx) error {
	if _, err := readMetaV1(tx.Bucket(bucketMeta)); err != nil {
		return err
	}
	for _, name := range allBuckets {
		if bytes.Equal(name, bucketMeta) {
			continue
		}
		b := tx.Bucket(name)
		err := b.ForEach(func(k, v []byte) error {
			if v == nil && b.Bucket(k) != nil {
				return fmt.Errorf("%s: a bucket where a value belongs", describe(name, k))
			}
			if err := checkV1Value(name, v); err != nil {
				return fmt.Errorf("%s: %w", describe(name, k), err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// checkV1Value checks that v, a format 1 value of the bucket name,
// decodes.
func checkV1Value(name, v []byte) error {
	var err error
	switch {
	case bytes.Equal(name, bucketVersions) && len(v) == 0:
		// a tombstone
	case bytes.Equal(name, bucketRecords), bytes.Equal(name, bucketVersions):
		_, err = decodeRecord(v)
	case bytes.Equal(name, bucketHistory):
		_, err = decodeHistory(v)
	case bytes.Equal(name, bucketIntents):
		_, err = decodeIntent(v)
	}
	return err
}

// upgradeV1 rewrites the format 1 state in tx, which checkValuesV1 passed,
// in the current format: it appends its check to every value, adds the
// checks of the format and serial values, and makes the secret key.
// Lineage, serial, records, versions, history and intents stay as they are.
func upgradeV1(tx *bolt.Tx) error {
	m, err := readMetaV1(tx.Bucket(bucketMeta))
	if err != nil {
		return corruptData(err)
	}
	key, err := newSecretKey()
	if err != nil {
		return err
	}
	for _, name := range allBuckets {
		if bytes.Equal(name, bucketMeta) {
			continue // rewritten whole below
		}
		// Copy first: bbolt slices are not valid across writes to their
		// bucket.
		var kvs [][2][]byte
		err := tx.Bucket(name).ForEach(func(k, v []byte) error {
			kvs = append(kvs, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
			return nil
		})
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			if err := putValue(tx, name, kv[0], kv[1]); err != nil {
				return err
			}
		}
	}
	return putMeta(tx, m, key)
}
