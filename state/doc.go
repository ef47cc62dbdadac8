// Package state keeps reconcile's state: for every managed resource,
// resource read with get, and lookup, its type, id, inputs, outputs and
// dependencies, plus a lineage id, a serial that grows by one with every
// change, past versions of each record, a history of applies, and the
// intents recorded before each create.
//
// The package is the model of the state, and it holds its every rule
// once; it keeps a stack on any backend of package kv, a small store of
// keys and bytes: a local bbolt file (package state/bolt), a key prefix on
// etcd, a PostgreSQL database. Open opens a local file; OpenBackend a
// stack of any backend. One Store, with one set of guarantees, serves the
// engine on every backend.
//
// # Opening and locking
//
// A writer takes the stack's lock for the life of the Store. On a local
// file, the lock is bbolt's flock on the file itself: read-only stores
// (plans, drift) share it, so they never block each other but do exclude
// writers, and the kernel drops it when its holder exits, even when it is
// killed: a crashed run never leaves a stale lock behind. On a shared
// backend, the lock is a lease its holder renews, and readers take none:
// each reads one snapshot, taken at Open. A writer records who holds the
// lock (pid, host, command, since when, and the CI job when the
// environment names one: see NewHolder), beside a local file in the path
// with ".lock" appended, which it removes on Close; an Open that gives up
// waiting names the holder in a *LockedError. The record is information
// only.
//
// A writer whose lease lapsed (it was paused, or cut off, for longer than
// its TTL) writes nothing once another took the lock: every write is
// conditional on the lease, in the backend's transaction, and fails with
// an error wrapping ErrLockLost; Lost's channel closes, and Held says so
// before a change in the cloud that no write could fence.
//
// # Creating
//
// Only a caller that sets Options.Create starts a new state; any other Open
// of a missing state fails with ErrNoState, so that a mistyped path or a
// lost file is never mistaken for a new, empty state. A new state is made
// in one write that holds all its meta values, which the backend makes
// atomically (a local file is written whole under a temporary name, synced,
// and linked into place); of processes starting one new state at once, one
// makes it and the others open it. So no process ever sees a state half
// made: a local file that is empty, truncated or holds no reconcile
// buckets is corrupt, never a new state, and a stack of a shared backend
// without its format value does not exist. Open tightens the mode of a
// local file it writes to owner-only (a new one is made so).
//
// A state made to receive a copy (Options.Copy, as reconcile state
// migrate opens its target) is no state until the copy is written: it is
// made marked incomplete, and Load removes the mark in the write that
// ends the copy. Every Open without Options.Copy refuses a state so
// marked with an *IncompleteError naming the copy to run again, so that a
// copy interrupted before its end is never taken for a new, empty state.
//
// # Durability
//
// Every write method returns only once its write is durable (a local
// file's synced to disk), so an interrupted apply loses at most the step
// that was running. Put, PutAndClearIntent, Delete, PutIntent and
// ClearIntent may be called from many goroutines at once: concurrent
// calls share writes, split to stay within what one write of the backend
// holds. PutAndClearIntent stores the record a create made and clears that
// create's intent in one write, where Put and ClearIntent would take two.
//
// A writer mirrors what it needs of the stack (the serial, the record
// count, which records exist, the history's sequence), since under its
// lock no one else writes, and so writes without reading first. A write
// that changes the serial is conditional on the serial being what the
// writer last wrote; every write, on the format being the current one. A
// write whose outcome the backend could not tell (a server lost in the
// middle of it) makes the writer read what it mirrors again before its
// next write, so that nothing is written twice or lost.
//
// # Copying
//
// Dump reads the whole state (meta, secret key, records, every version and
// tombstone, history, intents and outputs) as a Snapshot, and Load writes one into a
// new state, so that a state can be copied to another backend and back
// without loss. Load refuses, with ErrNotEmpty, a state that holds
// anything the snapshot does not, and does nothing to an identical copy.
// The package statetest holds the contract the model passes on every
// backend.
//
// # Keys
//
// A stack holds these keys (package kv), each value sealed with its check:
//
//	meta/format      format version, 8 bytes big-endian (2)
//	meta/serial      serial, 8 bytes big-endian
//	meta/lineage     lineage id (text)
//	meta/key         the 32-byte secret key
//	meta/count       the number of records and the serial it was counted
//	                 at, 8 bytes big-endian each
//	meta/incomplete  JSON CopyMark: present only while a copy is written
//	                 into the state
//	outputs          JSON Outputs: the stack outputs last recorded (absent
//	                 until an apply records them)
//	records/NAME                  JSON Record
//	versions/NAME\x00SERIAL       JSON Record, or nothing for a delete (a tombstone)
//	history/SERIAL/SEQ            JSON HistoryEntry
//	intents/NAME                  JSON Intent
//
// Serials and sequence numbers in keys are 20 decimal digits. Names never
// contain a zero byte, so a name's versions keys are exactly those that
// start with the name and a zero byte. A local file keeps them in the
// buckets and binary keys of its format 2 (see package state/bolt).
//
// # Integrity
//
// Every value carries a check: the CRC-32C (Castagnoli) of the bucket name,
// a zero byte, the key's length as 4 big-endian bytes, the key, and the
// value's bytes, stored as 4 big-endian bytes after the value, where the
// bucket and the key are those the value has in the bbolt file's layout,
// on every backend: a value has the same bytes everywhere, and as the
// check covers the key and the bucket, a value copied or swapped to
// another key fails it too. The bbolt file keeps the meta format and
// serial values apart from their checks, because a reconcile that reads
// format 1 checks both lengths before it compares the version, and must
// ask for an upgrade rather than call the file damaged. The format value
// and its check keep this encoding in every format, so that any reconcile
// can tell what it reads.
//
// Open checks the meta values; on a local file, it checks every value
// (and bbolt's consistency check runs). Every read verifies what it reads
// again. A damaged value is reported with an error wrapping ErrCorrupt
// that names it, e.g. `record "ep01": checksum mismatch`, and a state
// found damaged is never written to.
//
// Every write that changes the serial writes the record count at the new
// serial in the same write, so that a record deleted outside reconcile,
// which no checksum can catch, is found when the records are read whole:
// Open of a local file, List, ListLazy and Dump return a *CountError
// wrapping ErrCorrupt that names each record whose last version says it
// exists but that is gone. A count left at another serial, by a reconcile
// that did not keep it, is not checked, and the next write counts the
// records again. The checks guard against accidental and hand damage, not
// against an attacker with write access, who could recompute them.
//
// The encoders and decoders of stored values are exported (EncodeRecord,
// DecodeRecord and the like) for tools and backends that read them.
//
// Open upgrades a format 1 file (the same layout with no checks and no key)
// in place, in one write, the first time it opens it: it first checks
// that every value decodes, then appends the checks and makes the key. A
// writer does this under its own lock; a reader takes the write lock for
// the upgrade, waiting up to Options.LockTimeout like any writer, and then
// opens the file again read-only. A state of a newer format is refused with
// ErrNewerFormat and a message asking to upgrade reconcile; a file that is
// not a reconcile state is refused with ErrCorrupt. Neither is written to.
//
// # Memory
//
// bbolt reads a local file through a read-only shared mapping, whose
// pages count in the process's resident memory once read, and Open's check
// reads them all. After a read of every record (List, Dump), which decodes
// what it reads into memory of its own, the Store has the backend tell the
// kernel (on Linux, with madvise) that it no longer needs those pages: they
// stay in the page cache, shared and reclaimable, and a later read maps
// again the few it needs. So a plan holds the state's records once,
// decoded, and not also the file. The check at Open keeps its pages: List,
// which nearly every command runs next, would only fault them in again.
// Writes release them too, every 64: bbolt reads through the mapping each
// page a commit changes, and writes to free pages all over the file, so
// that a long apply would otherwise come to hold the whole file. A
// backend whose every read is a round trip says so (KeepsValues), for its
// callers to keep what they read.
//
// List decodes the records on every CPU, each decoding goroutine making
// its strings through an intern.Table: the keys every record of a type
// spells, the values that recur (a type, a principal) and an id echoed in
// the outputs and inputs are then held once.
//
// ListLazy (and the function of that name, for any Backend) reads the
// records as LazyRecords: each one's head (name, type, id, dependencies,
// options) decoded, its inputs and outputs kept as the JSON stored, a
// fraction of the memory of the maps they decode to, until Full decodes
// them. The planner reads them so and decodes each as it plans its node.
// Prefetch, on a read-only Store, reads them ahead, and a local file's
// pages are released at once: a plan opens its state while its specs
// load, and prefetching then, it never holds the file's pages and the
// loaded specs together. The file holds every version of every record, so
// on a state that has seen many applies it is several times the size of
// its records.
//
// # Limits
//
// Every backend says how large a record it can write (RecordLimit): a
// local file's is bbolt's limit on a value, about 2 GiB; a backend whose
// writes are limited in size, as an etcd transaction is, takes a little
// under half of one write, since a record's write holds the record and
// its version. CheckRecordSize tells whether a record fits, without
// encoding one that surely does, so that the engine refuses to create in
// the cloud what state could not record. A write of a record too large is
// refused whole with an error wrapping ErrTooLarge.
//
// # Outputs
//
// PutOutputs records the stack outputs an apply computed, replacing those
// recorded before, in one value that does not change the serial (like
// history and intents); Outputs reads them back. Secrets in them must be
// sealed by the caller, as in records. A reconcile that predates them
// checks the value like any other of the meta bucket and ignores it.
//
// # Secret key
//
// Every state has a secret key, 32 random bytes made when the state is
// created (or upgraded from format 1) and never changed. SecretKey returns
// it; reconcile uses it as an HMAC key for digests of secret values and to
// sign plan files. It appears in no error or other text of this package.
//
// # Secrets
//
// The package cannot tell a secret from any other string. Callers must
// redact credentials and secret values before passing inputs and outputs to
// Put or PutIntent: whatever they pass is stored as is. When a value turns
// out to be secret after it was stored, RewriteVersions redacts it from
// the current record and from every past version without changing the
// serial. The bytes it replaces may stay in a file's free pages until
// bbolt reuses them.
//
// # Values
//
// Inputs and outputs are JSON-shaped. They come back from the store as
// map[string]any, []any, string, bool, nil, int64 (for integral numbers)
// and float64 (for the rest), whatever Go types were put. A record in the
// form json.Marshal writes it (no escapes in its strings) is decoded by a
// reader of that form alone, to exactly what encoding/json makes of it,
// several times faster; every other value goes through encoding/json.
package state
