package state

import (
	"fmt"
	"strings"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// Format 1 is the bbolt file's layout with no checks and no key: its
// values are their payloads alone, the meta format and serial 8 bytes.

// v1Prefixes are the spaces of a format 1 state's values, but the meta.
var v1Prefixes = []string{prefixRecords, prefixVersions, prefixHistory, prefixIntents}

// checkValuesV1 checks that every value of the format 1 state in vw
// decodes: format 1 has no other way to tell a damaged value, and the
// checks upgradeV1 adds must never vouch for one.
func checkValuesV1(vw kv.View) error {
	for _, prefix := range v1Prefixes {
		err := vw.Scan(prefix, "", false, func(k string, v []byte) error {
			bucket, key, err := placeOf(k)
			if err == nil {
				if err = checkV1Value(k, v); err != nil {
					err = fmt.Errorf("%s: %w", describe(bucket, key), err)
				}
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// checkV1Value checks that v, a format 1 value at key, decodes.
func checkV1Value(key string, v []byte) error {
	var err error
	switch {
	case strings.HasPrefix(key, prefixVersions) && len(v) == 0:
		// a tombstone
	case strings.HasPrefix(key, prefixRecords), strings.HasPrefix(key, prefixVersions):
		_, err = decodeRecord(v)
	case strings.HasPrefix(key, prefixHistory):
		_, err = decodeHistory(v)
	case strings.HasPrefix(key, prefixIntents):
		_, err = decodeIntent(v)
	}
	return err
}

// upgradeV1 rewrites the format 1 state of s, a writer, in the current
// format, in one write: it appends its check to every value, adds the
// checks of the format and serial values, makes the secret key, and
// counts the records. Lineage, serial, records, versions, history and
// intents stay as they are. It checks the state again first, as it may
// have changed before the write lock was taken.
func (s *Store) upgradeV1() error {
	var (
		m       Meta
		b       kv.Batch
		records int64
		format  []byte
	)
	err := s.read(func(vw kv.View) error {
		mv, err := readMetaValues(vw)
		if err != nil {
			return err
		}
		if m, err = mv.metaV1(); err == nil {
			err = checkValuesV1(vw)
		}
		if err != nil {
			return corruptData(err)
		}
		format = mv.format
		for _, prefix := range v1Prefixes {
			err := vw.Scan(prefix, "", false, func(k string, v []byte) error {
				bucket, key, err := placeOf(k)
				if err != nil {
					return corruptData(err)
				}
				if prefix == prefixRecords {
					records++
				}
				b.Put(k, seal(bucket, key, v))
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	key, err := newSecretKey()
	if err != nil {
		return err
	}
	b.Put(kvFormat, EncodeFormat())
	b.Put(kvSerial, EncodeSerial(m.Serial))
	b.Put(kvLineage, EncodeLineage(m.Lineage))
	b.Put(kvSecret, EncodeSecretKey(key))
	b.Put(kvCount, EncodeCount(records, m.Serial))
	b.Expect(kvFormat, format)
	b.Marker = kvFormat
	if l := s.limits; l.Ops > 0 && len(b.Ops)+1 > l.Ops || l.Bytes > 0 && b.Size() > l.Bytes {
		return fmt.Errorf("%w: the upgrade of %d values does not fit in one write (%s)", ErrTooLarge, len(b.Ops), l.Why)
	}
	s.commits.Add(1)
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.kv.Write(ctx, &b); err != nil {
		return mapErr(err)
	}
	s.serial, s.count, s.countKnown = m.Serial, records, true
	return nil
}
