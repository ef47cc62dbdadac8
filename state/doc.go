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
// also writes who holds the lock (pid, host, command, since when) to the
// path with ".lock" appended and removes it on Close; an Open that gives up
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
// reconcile buckets is corrupt, never a new state.
//
// # Durability
//
// Every write method commits its own bbolt transaction and returns only once
// it is synced to disk, so an interrupted apply loses at most the step that
// was running. Put, Delete, PutIntent and ClearIntent may be called from many
// goroutines at once: concurrent calls are coalesced into shared commits.
//
// # Layout
//
// The file has five buckets: "meta" (format version, lineage, serial),
// "records" (name → JSON Record), "versions" (name, a zero byte and the
// 8-byte big-endian serial → JSON Record, or an empty tombstone for a
// delete), "history" (8-byte serial and 8-byte sequence → JSON HistoryEntry)
// and "intents" (name → JSON Intent). A file written by a newer format is
// refused with a message asking to upgrade reconcile; a file that is not a
// reconcile state is refused with ErrCorrupt and never written to.
//
// # Secrets
//
// The package cannot tell a secret from any other string. Callers must
// redact credentials and secret values before passing inputs and outputs to
// Put or PutIntent: whatever they pass is written to disk as is.
//
// # Values
//
// Inputs and outputs are JSON-shaped. They come back from the file as
// map[string]any, []any, string, bool, nil, int64 (for integral numbers)
// and float64 (for the rest), whatever Go types were put.
package state
