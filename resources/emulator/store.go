package emulator

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Store persists emulated cloud objects as JSON documents in named buckets
// of one bbolt file. It is safe for concurrent use.
type Store struct {
	db *bolt.DB
}

// OpenStore opens (creating it if needed) the bbolt file at path.
func OpenStore(path string) (*Store, error) {
	// Writes are not synced: what the emulator holds survives its own
	// restarts and kills (the pages are in the file, in the kernel's
	// cache), not a crash of the machine, which an emulator need not. A
	// sync per write would make it the slowest part of every run: the
	// real APIs it stands for do not make their callers wait a disk.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second, NoSync: true})
	if err != nil {
		return nil, fmt.Errorf("open emulator data %q: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Tx is a read-write view of the store inside Update.
type Tx struct{ tx *bolt.Tx }

// Get decodes the document under bucket/key into v and reports whether it
// exists.
func (t Tx) Get(bucket, key string, v any) (bool, error) {
	b := t.tx.Bucket([]byte(bucket))
	if b == nil {
		return false, nil
	}
	raw := b.Get([]byte(key))
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("decode %s/%s: %w", bucket, key, err)
	}
	return true, nil
}

// Put stores v as JSON under bucket/key.
func (t Tx) Put(bucket, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s/%s: %w", bucket, key, err)
	}
	b, err := t.tx.CreateBucketIfNotExists([]byte(bucket))
	if err != nil {
		return err
	}
	return b.Put([]byte(key), raw)
}

// Delete removes bucket/key; a missing key is not an error.
func (t Tx) Delete(bucket, key string) error {
	b := t.tx.Bucket([]byte(bucket))
	if b == nil {
		return nil
	}
	return b.Delete([]byte(key))
}

// ID identifies the data the transaction sees: two read-only transactions
// with the same ID see the same documents (it is the number of the last
// committed read-write transaction). A cache of decoded documents may be
// keyed by it.
func (t Tx) ID() int { return t.tx.ID() }

// List calls fn for every document of bucket in key order. The raw bytes are
// valid only during the call.
func (t Tx) List(bucket string, fn func(key string, raw []byte) error) error {
	b := t.tx.Bucket([]byte(bucket))
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error { return fn(string(k), v) })
}

// Update runs fn in one serialised read-write transaction: use it for every
// read-modify-write so that concurrent requests cannot interleave.
func (s *Store) Update(fn func(tx Tx) error) error {
	return s.db.Update(func(tx *bolt.Tx) error { return fn(Tx{tx}) })
}

// View runs fn in a read-only transaction. Put and Delete fail inside it.
func (s *Store) View(fn func(tx Tx) error) error {
	return s.db.View(func(tx *bolt.Tx) error { return fn(Tx{tx}) })
}
