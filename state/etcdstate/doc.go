// Package etcdstate keeps reconcile's state on an etcd v3 cluster, for
// many short-lived CI runners that share one truth. It is a second
// implementation of package state's model, with the same methods and
// semantics as *state.Store: records with lineage and serial, every
// version of every record, tombstones, history, intents, a secret key, and
// a check on every stored value (the very bytes the bbolt file stores,
// encoded by package state). The package statetest holds the contract both
// stores pass.
//
// # Layout
//
// A state is a stack under a key prefix (the path of the state's URL, e.g.
// etcd://10.0.0.1:2379/reconcile/acme). Under "<prefix>/<stack>/", one
// key per value, never one document rewritten:
//
//	meta/format                         format version: 8 bytes big-endian, then its check
//	meta/serial                         serial: 8 bytes big-endian, then its check
//	meta/lineage                        lineage id, then its check
//	meta/key                            the 32-byte secret key, then its check
//	meta/incomplete                     JSON state.CopyMark, then its check: only while a copy is written
//	meta/count                          record count and the serial it was counted at, 8 bytes big-endian each, then its check
//	records/<name>                      JSON Record, then its check
//	versions/<name>\x00<serial>         JSON Record, or nothing for a tombstone, then its check
//	history/<serial>/<seq>              JSON HistoryEntry, then its check
//	intents/<name>                      JSON Intent, then its check
//	outputs                             JSON Outputs (the stack outputs last recorded), then its check
//	lock                                JSON state.Holder, then its check, attached to the holder's lease
//
// Serials and sequence numbers in keys are 20 decimal digits, so that keys
// sort as the numbers do. A check is the CRC-32C package state computes
// over the bucket and key the value has in the bbolt layout, so a value
// has the same bytes in both stores and one moved to another key fails its
// check. A value that fails its check is reported with an error wrapping
// state.ErrCorrupt that names it, e.g. `record "ep01": checksum mismatch`.
// Open checks the meta values; other values are checked as they are read
// (reading every value of a large stack at every Open would cost every CI
// run a full download), and a write that reads a damaged value writes
// nothing. Every transaction that changes the serial writes the record
// count too (see count.go for how a writer knows what a Put adds), and
// List, ListLazy and Dump compare the records they read with the count at
// the same revision: a record key deleted with etcdctl is reported, with a
// *state.CountError, rather than planned as a create.
//
// # Creating and copying
//
// A stack is made in one transaction that writes all its meta values, and
// only if meta/format is not there yet: of runners starting one new stack
// at once, one makes it and the others open it. Open tells a missing stack
// from a damaged one by what it reads at one revision, so it never takes a
// stack another process made meanwhile for one that lost its meta values.
// Whatever removes a stack must do it in one transaction too (one delete
// of its prefix), or readers would meet it half removed.
//
// A copy into a stack (Load) that one transaction cannot hold is written
// in several. The stack is marked incomplete (meta/incomplete) from the
// first, or from its making when Open made it for the copy
// (Options.Copy), and the last writes the meta values and removes the
// mark, all at once. Until then every Open but the copier's refuses the
// stack with a *state.IncompleteError naming the copy to run again, so
// that a copy interrupted part way, with some of the records, is never
// taken for a state: an apply on it would create again every object whose
// record is missing. A reconcile older than the mark does not know it.
//
// # Locking and fencing
//
// A writer takes the stack's lock at Open: it puts the lock key, recording
// itself as the holder (pid, host, command, since when, and the CI job of
// GitHub Actions, GitLab, Buildkite, CircleCI or Jenkins), attached to a
// lease of Options.LockTTL that it keeps alive in the background. Another
// writer waits for the key's deletion by watching it, up to
// Options.LockTimeout, then fails with a *state.LockedError naming the
// holder. A holder that dies stops keeping its lease alive, and etcd
// deletes the key when the lease expires: no lock outlives its holder by
// more than LockTTL, and none needs forcing. Close revokes the lease,
// which frees the lock at once.
//
// Every write is one etcd transaction conditional on the lock key still
// having the create revision this Store gave it and this Store's lease,
// and, for a write that
// changes the serial, on the serial key being as this Store last wrote it.
// A holder whose lease lapsed (it was paused, or cut off from etcd, for
// longer than LockTTL) therefore never writes after another runner took
// the lock over: its write fails with an error wrapping state.ErrLockLost,
// and Lost's channel closes, as it does as soon as the keep-alive or a
// watch of the lock key sees the lease gone, so that the caller can stop.
//
// # Durability and coalescing
//
// etcd answers a transaction once a quorum has it on disk, so every write
// is durable when its method returns. Concurrent Put, PutAndClearIntent,
// Delete, PutIntent and ClearIntent calls share transactions, as the bbolt
// store's calls share commits, in groups split to stay within the server's
// limits (Options.MaxTxnOps, 128 operations, and Options.MaxRequestBytes,
// 1.5 MiB, by default); the serial grows by one per change. A record is
// written with its version in one transaction, so RecordLimit, the
// largest record, is a little under half of MaxRequestBytes. While the
// cluster elects a new leader, a write is tried again, up to
// Options.RequestTimeout, and an attempt that was made is told from one
// that was not by the value it wrote, so that no write is made twice.
//
// # Snapshots
//
// A read-only Store takes no lock. It reads every value at the revision
// of its Open: one consistent snapshot, in which each write of a writer
// working meanwhile is seen whole or not at all. If etcd compacts its
// history past that revision, reads fail and say to run again.
//
// # TLS
//
// Any of Options.CertFile, KeyFile and CAFile set turns TLS on. Open and
// Stacks check the files before they connect: one that cannot be read, or
// holds no usable certificate or key, fails them at once, with an error
// naming the file. A connection that fails for a reason of TLS (etcd's
// certificate not signed by the CA trusted, etcd asking for a client
// certificate or refusing the one given, one side not speaking TLS) is
// tried again as any failed connection is, so the request fails only when
// its time runs out (RequestTimeout; DialTimeout when logging in with a
// user name); the error then says what the last connection met and what
// to do. These errors wrap ErrTLS.
//
// # Credentials
//
// Options holds a user name, a password and the paths of TLS files. The
// user name and password never appear in an error, in Options.String or
// in Location, nor are they stored. No error shows a private key; one
// about a TLS file names its path, so that the user can tell which file
// to fix.
//
// Tests start etcd in-process with package etcdtest.
package etcdstate
