// Package state keeps reconcile's state: one bbolt file holding, for every
// managed resource, resource read with get, and lookup, its type, id,
// inputs, outputs and dependencies, plus a lineage id, a serial that grows
// by one with every change, past versions of each record, a history of
// applies, and the intents recorded before each create.
//
// # Opening and locking
//
// Open takes the file's lock for the life of the Store. A writer holds an
// exclusive lock; read-only stores (plans, drift) share a lock, so they never
// block each other but do exclude writers. The lock is bbolt's flock on the
// database file itself, so the kernel drops it when the holder exits, even
// when it is killed: a crashed run never leaves a stale lock behind. A writer
// also writes who holds the lock (pid, host, command, since when, and the
// CI job when the environment names one: see NewHolder) to the path with
// ".lock" appended and removes it on Close; an Open that gives up
// waiting reads that file to name the holder in a *LockedError. The ".lock"
// file is information only and a leftover one is simply overwritten.
//
// # Creating
//
// Only a caller that sets Options.Create starts a new state; any other Open
// of a missing state fails with ErrNoState, so that a mistyped path or a
// lost file is never mistaken for a new, empty state. A new state is
// created whole under a temporary name in the same directory, synced, and
// then published with a hard link, which fails rather than replace a file
// another process published meanwhile (and may already hold a lock on);
// the loser of such a race opens the winner's state. So no process ever
// sees a state half made, and a file that is empty, truncated or holds no
// reconcile buckets is corrupt, never a new state. Open tightens the mode
// of a file it writes to owner-only (a new state is made so).
//
// A state made to receive a copy (Options.Copy, as reconcile state
// migrate opens its target) is no state until the copy is written: it is
// made marked incomplete, and Load removes the mark in the transaction
// that writes the copy. Every Open without Options.Copy refuses a state so
// marked with an *IncompleteError naming the copy to run again, so that a
// copy interrupted before its end is never taken for a new, empty state.
//
// # Durability
//
// Every write method commits its own bbolt transaction and returns only once
// it is synced to disk, so an interrupted apply loses at most the step that
// was running. Put, PutAndClearIntent, Delete, PutIntent and ClearIntent
// may be called from many goroutines at once: concurrent calls are
// coalesced into shared commits. PutAndClearIntent stores the record a
// create made and clears that create's intent in one commit, where Put and
// ClearIntent would take two.
//
// Lost returns a channel that never closes: the kernel holds the lock for
// as long as the process lives. It is there for callers written for every
// backend, as is Location, which names the state in messages.
//
// # Copying
//
// Dump reads the whole state (meta, secret key, records, every version and
// tombstone, history, intents and outputs) as a Snapshot, and Load writes one into a
// new state, so that a state can be copied to another backend, such as
// package etcdstate, and back without loss. Load refuses, with ErrNotEmpty,
// a state that holds anything the snapshot does not, and does nothing to an
// identical copy. The package statetest holds the contract every backend
// passes.
//
// # Layout
//
// The file (format 2) has five buckets:
//
//	meta      "format"      8-byte big-endian format version (2)
//	          "format.crc"  4-byte check of the "format" value
//	          "serial"      8-byte big-endian serial
//	          "serial.crc"  4-byte check of the "serial" value
//	          "lineage"     lineage id (text), then its check
//	          "key"         the 32-byte secret key, then its check
//	          "outputs"     JSON Outputs: the stack outputs last recorded,
//	                        then its check (absent until an apply records them)
//	          "incomplete"  JSON CopyMark, then its check: present only while
//	                        a copy is written into the state
//	          "count"       the number of records and the serial it was
//	                        counted at, 8 bytes big-endian each, then its check
//	records   name                                → JSON Record, then its check
//	versions  name, 0x00, 8-byte big-endian serial → JSON Record, or nothing
//	                                                 for a delete (a tombstone),
//	                                                 then its check
//	history   8-byte serial, 8-byte sequence      → JSON HistoryEntry, then its check
//	intents   name                                → JSON Intent, then its check
//
// Names never contain a zero byte, so a name's versions keys are exactly
// those that start with the name and a zero byte and have 8 bytes more.
//
// # Integrity
//
// Every value carries a check: the CRC-32C (Castagnoli) of the bucket name,
// a zero byte, the key's length as 4 big-endian bytes, the key, and the
// value's bytes, stored as 4 big-endian bytes after the value. As it covers
// the key and the bucket, a value copied or swapped to another key fails its
// check too. The meta format and serial values are the exception: they keep
// the 8 bytes format 1 gave them, because a reconcile that reads format 1
// checks both lengths before it compares the version, and must ask for an
// upgrade rather than call the file damaged; their checks are stored under
// "format.crc" and "serial.crc". The "format" value and its check keep this
// encoding in every format, so that any reconcile can tell what it reads.
//
// Open runs bbolt's consistency check and verifies every value; every read
// verifies what it reads again. A damaged value is reported with an error
// wrapping ErrCorrupt that names it, e.g. `record "ep01": checksum
// mismatch`, and a state found damaged is never written to.
//
// Every write that changes the serial writes the record count at the new
// serial in the same transaction, so that a record deleted outside
// reconcile, which no checksum can catch, is found when the records are
// read whole: Open (which reads them all) and, on etcd, List, ListLazy and
// Dump return a *CountError wrapping ErrCorrupt that names each record
// whose last version says it exists but that is gone. A count left at
// another serial, by a reconcile that did not keep it, is not checked, and
// the next write counts the records again. The checks guard against
// accidental and hand damage, not against an attacker with write access,
// who could recompute them.
//
// The encoders and decoders of stored values are exported (EncodeRecord,
// DecodeRecord and the like) for the other backends of this model, such as
// package etcdstate: every backend stores the same bytes, with checks that
// cover the bucket and key a value has in this layout.
//
// Open upgrades a format 1 file (the same layout with no checks and no key)
// in place, in one transaction, the first time it opens it: it first checks
// that every value decodes, then appends the checks and makes the key. A
// writer does this under its own lock; a reader takes the write lock for
// the upgrade, waiting up to Options.LockTimeout like any writer, and then
// opens the file again read-only. A file of a newer format is refused with
// ErrNewerFormat and a message asking to upgrade reconcile; a file that is
// not a reconcile state is refused with ErrCorrupt. Neither is written to.
//
// # Memory
//
// bbolt reads the file through a read-only shared mapping, whose pages
// count in the process's resident memory once read, and Open's check reads
// them all. After a read of every record (List, Dump), which decodes what
// it reads into memory of its own, the Store tells the kernel (on Linux,
// with madvise) that it no longer needs those pages: they stay in the page
// cache, shared and reclaimable, and a later read maps again the few it
// needs. So a plan holds the state's records once, decoded, and not also
// the file. The check at Open keeps its pages: List, which nearly every
// command runs next, would only fault them in again. Commits release them
// too, every 64: bbolt reads through the mapping each page a commit
// changes, and writes to free pages all over the file, so that a long
// apply would otherwise come to hold the whole file.
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
// Prefetch, on a read-only Store, reads them ahead, and the file's pages
// are released at once: a plan opens its state while its specs load, and
// prefetching then, it never holds the file's pages and the loaded specs
// together. The file holds every version of every record, so on a state
// that has seen many applies it is several times the size of its records.
//
// # Limits
//
// Every backend says how large a record it can write (RecordLimit): the
// bbolt store's is bbolt's limit on a value, about 2 GiB; an etcd stack's
// is half of one etcd request. CheckRecordSize tells whether a record
// fits, without encoding one that surely does, so that the engine refuses
// to create in the cloud what state could not record. A write of a record
// too large is refused whole with an error wrapping ErrTooLarge.
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
// Put or PutIntent: whatever they pass is written to disk as is. When a
// value turns out to be secret after it was stored, RewriteVersions
// redacts it from the current record and from every past version in one
// transaction, without changing the serial. The bytes it replaces may stay
// in the file's free pages until bbolt reuses them.
//
// # Values
//
// Inputs and outputs are JSON-shaped. They come back from the file as
// map[string]any, []any, string, bool, nil, int64 (for integral numbers)
// and float64 (for the rest), whatever Go types were put. A record in the
// form json.Marshal writes it (no escapes in its strings) is decoded by a
// reader of that form alone, to exactly what encoding/json makes of it,
// several times faster; every other value goes through encoding/json.
package state
