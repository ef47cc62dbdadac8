package state

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// format1 returns the bytes of testdata/format1.db, a format 1 state that
// reconcile's format 1 code (commit 94c8600) wrote with:
//
//	1 Put ep01 (ID id-1, displayName "one", inferenceUnits 2, depends on compartment)
//	2 Put old (ID id-old)
//	3 Put ep01 (ID id-3, displayName "three", inferenceUnits 3)
//	4 Delete old
//	AddHistory apply {create 2, update 1, delete 1}
//	PutIntent ep02 (token token-2)
func format1(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "format1.db"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// rawView runs fn in a read transaction of the bbolt file at path, opened
// without this package.
func rawView(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(fn); err != nil {
		t.Error(err)
	}
}

func TestUpgradeFormat1(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]Options{
		"writer":          {},
		"reader":          {ReadOnly: true},
		"reader, create":  {ReadOnly: true, Create: true},
		"writer, timeout": {LockTimeout: time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.db")
			if err := os.WriteFile(path, format1(t), 0o600); err != nil {
				t.Fatal(err)
			}
			var lineage string
			rawView(t, path, func(tx *bolt.Tx) error {
				lineage = string(tx.Bucket(bucketMeta).Get(keyLineage))
				return nil
			})

			s := openStore(t, path, opts)
			if m, err := s.Meta(); err != nil || m != (Meta{Lineage: lineage, Serial: 4, FormatVersion: FormatVersion}) {
				t.Errorf("Meta() after the upgrade = %+v, %v, want lineage %q, serial 4, format %d", m, err, lineage, FormatVersion)
			}
			rs, err := s.List()
			if err != nil || !slices.Equal(names(rs), []string{"ep01"}) {
				t.Fatalf("List() after the upgrade = %q, %v, want [ep01]", names(rs), err)
			}
			want := map[string]any{"displayName": "three", "inferenceUnits": int64(3)}
			if r := rs[0]; r.ID != "id-3" || r.Serial != 3 || !reflect.DeepEqual(r.Inputs, want) || !slices.Equal(r.Dependencies, []string{"compartment"}) {
				t.Errorf("record ep01 after the upgrade = %+v, want ID id-3 at serial 3 with inputs %v", r, want)
			}
			for _, tc := range []struct {
				name   string
				serial int64
				wantID string // "" means not found
			}{
				{"ep01", 1, "id-1"}, {"ep01", 2, "id-1"}, {"ep01", 3, "id-3"},
				{"old", 1, ""}, {"old", 2, "id-old"}, {"old", 3, "id-old"}, {"old", 4, ""},
			} {
				r, ok, err := s.Version(tc.name, tc.serial)
				if err != nil || ok != (tc.wantID != "") || r.ID != tc.wantID {
					t.Errorf("Version(%q, %d) after the upgrade = %+v, %v, %v, want ID %q", tc.name, tc.serial, r, ok, err, tc.wantID)
				}
			}
			hs, err := s.History()
			if err != nil || len(hs) != 1 || hs[0].Serial != 4 || hs[0].Command != "apply" || hs[0].Counts.Delete != 1 {
				t.Errorf("History() after the upgrade = %+v, %v, want the apply at serial 4", hs, err)
			}
			ins, err := s.Intents()
			if err != nil || len(ins) != 1 || ins[0].Name != "ep02" || ins[0].Token != "token-2" || ins[0].Inputs["displayName"] != "two" {
				t.Errorf("Intents() after the upgrade = %+v, %v, want ep02 with token-2", ins, err)
			}
			key, err := s.SecretKey()
			if err != nil || len(key) != 32 {
				t.Errorf("SecretKey() after the upgrade = %d bytes, %v, want 32", len(key), err)
			}
			if !opts.ReadOnly {
				if r := mustPut(t, s, Record{Name: "ep02", ID: "id-5"}); r.Serial != 5 {
					t.Errorf("Put after the upgrade got serial %d, want 5", r.Serial)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			if got := dirNames(t, filepath.Dir(path)); !slices.Equal(got, []string{"state.db"}) {
				t.Errorf("files beside the state after the upgrade = %q, want only state.db", got)
			}
			rawView(t, path, func(tx *bolt.Tx) error {
				meta := tx.Bucket(bucketMeta)
				raw, check := meta.Get(keyFormat), meta.Get(keyFormatCheck)
				if !bytes.Equal(raw, u64(FormatVersion)) || !bytes.Equal(check, checksum(bucketMeta, keyFormat, raw)) {
					t.Errorf("format on disk after the upgrade = %x, check %x, want %d checked", raw, check, FormatVersion)
				}
				return nil
			})
			// Open checks every value.
			again := openStore(t, path, Options{ReadOnly: true})
			if got, err := again.SecretKey(); err != nil || !bytes.Equal(got, key) {
				t.Errorf("SecretKey() after reopening the upgraded state = %x, %v, want %x as at the upgrade", got, err, key)
			}
		})
	}
}

func TestUpgradeRefusesDamagedFormat1(t *testing.T) {
	t.Parallel()
	data := format1(t)
	put := func(bucket []byte, key, value string) func(tx *bolt.Tx) error {
		return func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put([]byte(key), []byte(value)) }
	}
	for name, tc := range map[string]struct {
		edit    func(tx *bolt.Tx) error
		mention string
	}{
		"record":  {put(bucketRecords, "ep01", `{"name":"ep01"`), `record "ep01"`},
		"version": {func(tx *bolt.Tx) error { return tx.Bucket(bucketVersions).Put(versionKey("ep01", 1), []byte("{")) }, `record "ep01" at serial 1`},
		"history entry": {func(tx *bolt.Tx) error {
			return tx.Bucket(bucketHistory).Put(historyKey(4, 1), []byte(`{"serial":"4"}`))
		}, `history entry 1 at serial 4`},
		"intent":        {put(bucketIntents, "ep02", `{"inputs":{"n":1e999}}`), `intent "ep02"`},
		"checked value": {put(bucketRecords, "ep01", string(seal(bucketRecords, []byte("ep01"), []byte(`{"name":"ep01"}`)))), `record "ep01"`},
		"format 2 meta": {put(bucketMeta, "key", "0123456789abcdef0123456789abcdef"), `meta "format"`},
		"no lineage":    {put(bucketMeta, "lineage", ""), `lineage`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkRefused(t, edited(t, data, tc.edit), ErrCorrupt, tc.mention)
		})
	}
}

func TestUpgradeByReaderTakesWriteLock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	data := format1(t)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// Another reader, of a reconcile that reads format 1 only, holds a
	// shared lock: a reader can read beside it, but not upgrade.
	other, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, Options{ReadOnly: true})
	wantLocked(t, "read-only Open of a format 1 state beside another reader", err, path)
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Errorf("read-only Open that could not take the write lock changed the file")
	}

	done := make(chan error, 1)
	go func() {
		s, err := Open(path, Options{ReadOnly: true, LockTimeout: time.Minute})
		if err == nil {
			var m Meta
			m, err = s.Meta()
			if err == nil && m.FormatVersion != FormatVersion {
				err = errors.New("not upgraded")
			}
			err = errors.Join(err, s.Close())
		}
		done <- err
	}()
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("read-only Open of a format 1 state, waiting for the write lock = %v, want the upgraded state", err)
	}
}
