// Package bolt keeps reconcile's state in local bbolt files, one per
// stack, as a kv.Backend: the files of format 2 that reconcile has always
// written, byte for byte, so that every existing state file opens
// unchanged. It knows files, keys, bytes and locks; what the values mean
// is the model's (package state).
//
// # Files
//
// A Backend is given the path of the default stack's file
// (.reconcile/state.db); another stack's file is beside it, the stack's
// name put before the extension (.reconcile/state.prod.db). A new file is
// made whole under a temporary name in the same directory, synced, and
// then published with a hard link, which fails rather than replace a
// file another process published meanwhile; the loser of such a race
// opens the winner's. A new file gets mode 0600 and its missing parent
// directories 0700; a writer tightens an existing file's mode to
// owner-only.
//
// Open checks the file before anything reads it: a file that is empty,
// truncated, not a bbolt file, or fails bbolt's consistency check (run on
// files of up to 64 MiB), or that holds no reconcile buckets, is refused
// with an error wrapping kv.ErrCorrupt, and never written to. The check is
// made on the file opened read-only, also for a writer, so that a damaged
// file cannot crash the process.
//
// # Locks
//
// The lock is bbolt's flock on the file itself: shared by readers,
// exclusive for a writer, so readers never block each other but exclude
// writers. The kernel drops it when its holder exits, even when it is
// killed, so a lock is never lost while its holder lives and never
// outlives it. A writer writes what the model records of it (kv.Options
// Holder) to the path with ".lock" appended and removes it on Close; an
// Open that gives up waiting reads it for its *kv.LockedError. The ".lock"
// file is information only and a leftover one is simply overwritten.
//
// # Layout
//
// The model's keys map to the file's five buckets:
//
//	meta/format, meta/serial   meta "format", "serial": the value's first 8 bytes,
//	                           and its check, the rest, at "format.crc", "serial.crc"
//	meta/NAME                  meta NAME (lineage, key, count, incomplete)
//	outputs                    meta "outputs"
//	records/NAME               records NAME
//	versions/NAME\x00SERIAL    versions NAME, 0x00, the serial as 8 bytes big-endian
//	history/SERIAL/SEQ         history: the serial, then the sequence, 8 bytes big-endian each
//	intents/NAME               intents NAME
//
// The order of keys within a bucket is the order of the model's keys. A
// history entry put raises the history bucket's sequence to its own, so
// that a reconcile that numbers entries with the bucket's sequence never
// takes one in use. A key outside the layout, which the model never
// writes, is kept as it is in a bucket "kv" made for it.
//
// # Memory
//
// bbolt reads the file through a read-only shared mapping, whose pages
// count in the process's resident memory once read. Release (see
// kv.Releaser) tells the kernel, on Linux with madvise, that the process
// no longer needs them: they stay in the page cache, and a later read maps
// again the few it needs. The values a View's Scan gives are the mapping's
// and die with the Read.
package bolt
