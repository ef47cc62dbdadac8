package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// The functions below encode and decode, with their checks, the values of
// a state exactly as every backend stores them, for the model and for
// tools that read them (and package etcdstate). The check of a value
// always covers the bucket and the key the value has in the bbolt layout
// (see the package documentation), so a value has the same bytes in every
// backend and a value moved to another record, serial or kind fails its
// check. Decoders check the value first;
// their errors wrap ErrCorrupt and name the value, e.g. `record "ep01":
// checksum mismatch`.
//
// The meta format and serial values are sealed like the others (payload,
// then check); the bbolt file keeps the two apart, to stay readable by
// format 1.

// EncodeRecord returns the stored form of r as the current record r.Name.
func EncodeRecord(r Record) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode record %q: %w", r.Name, err)
	}
	return seal(bucketRecords, []byte(r.Name), data), nil
}

// DecodeRecord checks and decodes value, stored as the current record
// name.
func DecodeRecord(name string, value []byte) (Record, error) {
	r, err := readValue(bucketRecords, []byte(name), value, decodeRecord)
	return r, corruptData(err)
}

// DecodeLazyRecord checks value, stored as the current record name, and
// decodes it as a LazyRecord (see Store.ListLazy).
func DecodeLazyRecord(name string, value []byte) (LazyRecord, error) {
	r, err := readValue(bucketRecords, []byte(name), value, func(data []byte) (LazyRecord, error) { return decodeLazy(nil, data) })
	return r, corruptData(err)
}

// EncodeVersion returns the stored form of r as the version of r.Name at
// r.Serial.
func EncodeVersion(r Record) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode record %q: %w", r.Name, err)
	}
	return seal(bucketVersions, versionKey(r.Name, r.Serial), data), nil
}

// EncodeTombstone returns the stored form of the tombstone that says the
// record name was deleted (or renamed away) at serial.
func EncodeTombstone(name string, serial int64) []byte {
	return seal(bucketVersions, versionKey(name, serial), nil)
}

// DecodeVersion checks and decodes value, stored as the version of name at
// serial. It returns false for a tombstone.
func DecodeVersion(name string, serial int64, value []byte) (Record, bool, error) {
	key := versionKey(name, serial)
	payload, err := openValue(bucketVersions, key, value)
	switch {
	case err != nil:
		return Record{}, false, corruptData(err)
	case len(payload) == 0:
		return Record{}, false, nil
	}
	r, err := decodeRecord(payload)
	if err != nil {
		return Record{}, false, corruptData(fmt.Errorf("%s: %w", describe(bucketVersions, key), err))
	}
	return r, true, nil
}

// EncodeHistory returns the stored form of e as the history entry with
// sequence number seq at e.Serial. Sequence numbers order the entries of a
// serial and are never reused.
func EncodeHistory(e HistoryEntry, seq uint64) ([]byte, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode history %q: %w", e.Command, err)
	}
	return seal(bucketHistory, historyKey(e.Serial, seq), data), nil
}

// DecodeHistory checks and decodes value, stored as the history entry with
// sequence number seq at serial.
func DecodeHistory(serial int64, seq uint64, value []byte) (HistoryEntry, error) {
	h, err := readValue(bucketHistory, historyKey(serial, seq), value, decodeHistory)
	return h, corruptData(err)
}

// EncodeIntent returns the stored form of in as the intent in.Name.
func EncodeIntent(in Intent) ([]byte, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode intent %q: %w", in.Name, err)
	}
	return seal(bucketIntents, []byte(in.Name), data), nil
}

// DecodeIntent checks and decodes value, stored as the intent name.
func DecodeIntent(name string, value []byte) (Intent, error) {
	in, err := readValue(bucketIntents, []byte(name), value, decodeIntent)
	return in, corruptData(err)
}

// EncodeFormat returns the stored form of the format version: FormatVersion
// as 8 big-endian bytes, then its check. Every format keeps this encoding.
func EncodeFormat() []byte {
	return seal(bucketMeta, keyFormat, u64(FormatVersion))
}

// DecodeFormat checks value, the stored format version, and returns it. A
// version above FormatVersion yields an error wrapping ErrNewerFormat,
// whatever its check (a later format may check it otherwise); any other
// version but FormatVersion one wrapping ErrCorrupt.
func DecodeFormat(value []byte) (int, error) {
	if len(value) >= 8 {
		if v := binary.BigEndian.Uint64(value); v > FormatVersion {
			return 0, newerFormat(v)
		}
	}
	raw, err := openValue(bucketMeta, keyFormat, value)
	switch {
	case err != nil:
		return 0, corruptData(err)
	case len(raw) != 8:
		return 0, corruptData(fmt.Errorf("meta %q: bad format version %x", keyFormat, raw))
	}
	if v := binary.BigEndian.Uint64(raw); v != FormatVersion {
		return 0, corruptData(fmt.Errorf("meta %q: bad format version %d", keyFormat, v))
	}
	return FormatVersion, nil
}

// EncodeSerial returns the stored form of the state serial.
func EncodeSerial(serial int64) []byte {
	return seal(bucketMeta, keySerial, u64(uint64(serial)))
}

// DecodeSerial checks value, the stored state serial, and returns it.
func DecodeSerial(value []byte) (int64, error) {
	raw, err := openValue(bucketMeta, keySerial, value)
	switch {
	case err != nil:
		return 0, corruptData(err)
	case len(raw) != 8:
		return 0, corruptData(fmt.Errorf("meta %q: %d bytes, want 8", keySerial, len(raw)))
	}
	serial := int64(binary.BigEndian.Uint64(raw))
	if serial < 0 {
		return 0, corruptData(fmt.Errorf("meta %q: bad serial %d", keySerial, serial))
	}
	return serial, nil
}

// EncodeLineage returns the stored form of the lineage id.
func EncodeLineage(lineage string) []byte {
	return seal(bucketMeta, keyLineage, []byte(lineage))
}

// DecodeLineage checks value, the stored lineage id, and returns it.
func DecodeLineage(value []byte) (string, error) {
	raw, err := openValue(bucketMeta, keyLineage, value)
	switch {
	case err != nil:
		return "", corruptData(err)
	case len(raw) == 0:
		return "", corruptData(fmt.Errorf("meta %q: empty", keyLineage))
	}
	return string(raw), nil
}

// EncodeSecretKey returns the stored form of the secret key.
func EncodeSecretKey(key []byte) []byte {
	return seal(bucketMeta, keySecret, key)
}

// DecodeSecretKey checks value, the stored secret key, and returns a copy
// of the key. Its errors never show the key.
func DecodeSecretKey(value []byte) ([]byte, error) {
	raw, err := openValue(bucketMeta, keySecret, value)
	switch {
	case err != nil:
		return nil, corruptData(err)
	case len(raw) != secretKeySize:
		return nil, corruptData(fmt.Errorf("meta %q: %d bytes, want %d", keySecret, len(raw), secretKeySize))
	}
	return append([]byte(nil), raw...), nil
}

// NewLineage returns a new random lineage id, a version 4 UUID.
func NewLineage() (string, error) { return newLineage() }

// NewSecretKey returns a new random secret key of 32 bytes.
func NewSecretKey() ([]byte, error) { return newSecretKey() }

// CheckName returns an error if name cannot name a record or an intent: it
// is empty or holds a zero byte.
func CheckName(name string) error { return checkName(name) }

// historyKey is the history key of the entry with sequence number seq at
// serial.
func historyKey(serial int64, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(u64(uint64(serial)), seq)
}

// bucketLock and keyHolder name the lock-holder value of backends that
// store it beside the state, for its check.
var (
	bucketLock = []byte("lock")
	keyHolder  = []byte("holder")
)

// EncodeHolder returns the stored form of h, as the holder of a state's
// lock: its JSON, then its check.
func EncodeHolder(h Holder) []byte {
	data, _ := json.Marshal(h) // a Holder always encodes
	return seal(bucketLock, keyHolder, data)
}

// DecodeHolder checks and decodes value, a stored lock holder.
func DecodeHolder(value []byte) (Holder, error) {
	h, err := readValue(bucketLock, keyHolder, value, func(data []byte) (Holder, error) {
		var h Holder
		err := decodeJSON(data, &h)
		return h, err
	})
	return h, corruptData(err)
}
