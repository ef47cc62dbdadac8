package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/kind"

	bolt "go.etcd.io/bbolt"
)

// sampleState writes a state with a value of every kind and returns its
// path. Its serials:
//
//	1 put ep01    2 put ep02    3 put ep01 again
//	4 put gone    5 delete gone (a tombstone), then a history entry
//
// and an intent named ep01.
func sampleState(t *testing.T) string {
	t.Helper()
	path := statePath(t)
	s := openStore(t, path, Options{Create: true})
	mustPut(t, s, Record{Name: "ep01", Kind: kind.Resource, ID: "id-1", Inputs: map[string]any{"displayName": "one"}})
	mustPut(t, s, Record{Name: "ep02", Kind: kind.Resource, ID: "id-2"})
	mustPut(t, s, Record{Name: "ep01", Kind: kind.Resource, ID: "id-3", Inputs: map[string]any{"displayName": "three"}})
	mustPut(t, s, Record{Name: "gone", Kind: kind.Lookup})
	if err := s.Delete("gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddHistory(HistoryEntry{Command: "apply", Counts: Counts{Create: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIntent(Intent{Name: "ep01", Type: "oci:AiLanguage:Endpoint", Token: "t1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// storedValue names one value of sampleState and how errors name it.
type storedValue struct {
	bucket, key []byte
	named       string
}

// sampleValues are the values of sampleState, one of each kind.
var sampleValues = map[string]storedValue{
	"record":            {bucketRecords, []byte("ep01"), `record "ep01"`},
	"version":           {bucketVersions, versionKey("ep01", 1), `record "ep01" at serial 1`},
	"tombstone":         {bucketVersions, versionKey("gone", 5), `record "gone" at serial 5`},
	"history entry":     {bucketHistory, historyKey(5, 1), `history entry 1 at serial 5`},
	"intent":            {bucketIntents, []byte("ep01"), `intent "ep01"`},
	"meta format":       {bucketMeta, keyFormat, `meta "format"`},
	"meta format check": {bucketMeta, keyFormatCheck, `meta "format"`},
	"meta serial":       {bucketMeta, keySerial, `meta "serial"`},
	"meta serial check": {bucketMeta, keySerialCheck, `meta "serial"`},
	"meta lineage":      {bucketMeta, keyLineage, `meta "lineage"`},
	"meta key":          {bucketMeta, keySecret, `meta "key"`},
}

// flipByte returns an edit that inverts the byte at i (counted from the end
// if negative) of the value at key in bucket.
func flipByte(bucket, key []byte, i int) func(tx *bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		v := bytes.Clone(b.Get(key))
		if len(v) == 0 {
			return fmt.Errorf("no value at %q %q", bucket, key)
		}
		if i < 0 {
			i += len(v)
		}
		v[i] ^= 0xff
		return b.Put(key, v)
	}
}

// swapValues returns an edit that swaps the values of a and b.
func swapValues(a, b storedValue) func(tx *bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		va, vb := bytes.Clone(tx.Bucket(a.bucket).Get(a.key)), bytes.Clone(tx.Bucket(b.bucket).Get(b.key))
		if va == nil || vb == nil {
			return fmt.Errorf("no value at %q %q or %q %q", a.bucket, a.key, b.bucket, b.key)
		}
		return errors.Join(tx.Bucket(a.bucket).Put(a.key, vb), tx.Bucket(b.bucket).Put(b.key, va))
	}
}

func TestOpenFindsDamage(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(sampleState(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range sampleValues {
		for _, at := range []struct {
			what string
			i    int
		}{{"first byte", 0}, {"last byte", -1}} {
			t.Run(name+"/"+at.what, func(t *testing.T) {
				t.Parallel()
				damaged := edited(t, data, flipByte(v.bucket, v.key, at.i))
				checkRefused(t, damaged, ErrCorrupt, v.named+": checksum mismatch")
			})
		}
	}
}

func TestOpenFindsSwappedValues(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(sampleState(t))
	if err != nil {
		t.Fatal(err)
	}
	var (
		ep02      = storedValue{bucketRecords, []byte("ep02"), `record "ep02"`}
		ep01At3   = storedValue{bucketVersions, versionKey("ep01", 3), `record "ep01" at serial 3`}
		goneAt4   = storedValue{bucketVersions, versionKey("gone", 4), `record "gone" at serial 4`}
		record    = sampleValues["record"]
		version   = sampleValues["version"]
		tombstone = sampleValues["tombstone"]
		intent    = sampleValues["intent"]
	)
	for name, tc := range map[string]struct {
		a, b storedValue
	}{
		"two records":                {record, ep02},
		"two versions of one record": {version, ep01At3},
		"a record and its version":   {record, ep01At3},
		"a record and an intent":     {record, intent},
		"a version and a tombstone":  {goneAt4, tombstone},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			swapped := edited(t, data, swapValues(tc.a, tc.b))
			// Open checks bucket by bucket, key by key: a comes first.
			checkRefused(t, swapped, ErrCorrupt, tc.a.named+": checksum mismatch")
		})
	}
}

func TestReadsFindDamage(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		value storedValue
		read  func(s *Store) error
	}{
		"Get":                    {sampleValues["record"], func(s *Store) error { _, _, err := s.Get("ep01"); return err }},
		"List":                   {sampleValues["record"], func(s *Store) error { _, err := s.List(); return err }},
		"Version":                {sampleValues["version"], func(s *Store) error { _, _, err := s.Version("ep01", 2); return err }},
		"Version of a tombstone": {sampleValues["tombstone"], func(s *Store) error { _, _, err := s.Version("gone", 5); return err }},
		"History":                {sampleValues["history entry"], func(s *Store) error { _, err := s.History(); return err }},
		"Intents":                {sampleValues["intent"], func(s *Store) error { _, err := s.Intents(); return err }},
		"Meta":                   {sampleValues["meta lineage"], func(s *Store) error { _, err := s.Meta(); return err }},
		"SecretKey":              {sampleValues["meta key"], func(s *Store) error { _, err := s.SecretKey(); return err }},
		"Delete":                 {sampleValues["record"], func(s *Store) error { return s.Delete("ep01") }},
		"Rename":                 {sampleValues["record"], func(s *Store) error { return s.Rename("ep01", "ep09") }},
		"Rename, a dependent":    {sampleValues["record"], func(s *Store) error { return s.Rename("ep02", "ep09") }},
		"ClearIntent":            {sampleValues["intent"], func(s *Store) error { return s.ClearIntent("ep01") }},
		"Put":                    {sampleValues["meta serial"], func(s *Store) error { _, err := s.Put(Record{Name: "ep09"}); return err }},
		"AddHistory":             {sampleValues["meta format"], func(s *Store) error { return s.AddHistory(HistoryEntry{Command: "apply"}) }},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := sampleState(t)
			s := openStore(t, path, Options{})
			// Damage the file under the open Store, as a disk might.
			if err := s.rawDB().Update(flipByte(tc.value.bucket, tc.value.key, 0)); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			err = tc.read(s)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.value.named+": checksum mismatch") {
				t.Errorf("%s after damaging %s = %v, want ErrCorrupt naming it", name, tc.value.named, err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Errorf("%s wrote to a damaged state", name)
			}
		})
	}
}

func TestCorruptRecord(t *testing.T) {
	t.Parallel()
	for name, value := range map[string][]byte{
		"fails its check":         []byte("{not json"),
		"checked, but not JSON":   seal(bucketRecords, []byte("a"), []byte("{not json")),
		"checked, but two values": seal(bucketRecords, []byte("a"), []byte(`{"name":"a"}{}`)),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			mustPut(t, s, Record{Name: "a"})
			err := s.rawDB().Update(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketRecords).Put([]byte("a"), value)
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Get("a"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `record "a": `) {
				t.Errorf("Get of a damaged record = %v, want ErrCorrupt naming the record", err)
			}
			if _, err := s.List(); !errors.Is(err, ErrCorrupt) {
				t.Errorf("List with a damaged record = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestSecretKey(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	s := openStore(t, path, Options{Create: true})
	key, err := s.SecretKey()
	if err != nil || len(key) != 32 {
		t.Fatalf("SecretKey() of a new state = %d bytes, %v, want 32 bytes", len(key), err)
	}
	if bytes.Equal(key, make([]byte, 32)) {
		t.Errorf("SecretKey() of a new state is all zero")
	}
	clobbered, _ := s.SecretKey()
	clear(clobbered) // a copy: changing it changes nothing stored
	if again, err := s.SecretKey(); err != nil || !bytes.Equal(again, key) {
		t.Errorf("SecretKey() after changing the slice an earlier call returned = %x, %v, want %x", again, err, key)
	}
	mustPut(t, s, Record{Name: "a"})
	s.Close()

	for _, opts := range []Options{{}, {ReadOnly: true}, {Create: true}} {
		s := openStore(t, path, opts)
		if got, err := s.SecretKey(); err != nil || !bytes.Equal(got, key) {
			t.Errorf("SecretKey() after reopening with %+v = %x, %v, want %x, as before", opts, got, err, key)
		}
		s.Close()
	}

	other := newStore(t)
	if got, _ := other.SecretKey(); bytes.Equal(got, key) {
		t.Errorf("two new states share the secret key %x", key)
	}
}

func TestSecretKeyNeverShown(t *testing.T) {
	t.Parallel()
	path := sampleState(t)
	s := openStore(t, path, Options{})
	key, err := s.SecretKey()
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(tx *bolt.Tx) error{
		"damaged": flipByte(bucketMeta, keySecret, 3),
		"short": func(tx *bolt.Tx) error {
			return putValue(tx, bucketMeta, keySecret, key[:31])
		},
	} {
		if err := s.rawDB().Update(edit); err != nil {
			t.Fatal(err)
		}
		_, err := s.SecretKey()
		if err == nil {
			t.Fatalf("%s: SecretKey() of a %s key = nil error", name, name)
		}
		for i := 0; i+8 <= len(key); i++ {
			w := key[i : i+8]
			q := fmt.Sprintf("%q", w)
			for _, shown := range []string{string(w), fmt.Sprintf("%x", w), fmt.Sprintf("%X", w), q[1 : len(q)-1]} {
				if strings.Contains(err.Error(), shown) {
					t.Fatalf("%s: SecretKey() error %q shows the key", name, err)
				}
			}
		}
	}
}
