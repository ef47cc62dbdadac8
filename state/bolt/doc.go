// Package bolt keeps reconcile's stacks in local bbolt files, as a
// kv.Backend: the files of format 2, byte for byte, so that every
// existing state file opens unchanged. It knows files, keys, bytes and
// locks; what the values mean is the model's (package state).
//
// A Backend is given the path of the default stack's file
// (.reconcile/state.db); another stack's file is beside it, the stack's
// name put before the extension (.reconcile/state.prod.db). A new file is
// written whole under a temporary name, synced, and linked into place,
// which fails rather than replace a file another process made meanwhile:
// the loser of such a race opens the winner's. New files get mode 0600
// and missing directories 0700; a writer tightens a file's mode to
// owner-only. Open checks a file read-only before anything reads it, so
// that a damaged file cannot crash the process: an empty, truncated or
// foreign file, or one that fails bbolt's consistency check (up to 64
// MiB), is refused with kv.ErrCorrupt and never written to.
//
// The lock is bbolt's flock on the file: shared by readers, exclusive for
// a writer; the kernel drops it when its holder exits, so it is never lost
// and never outlives its holder. A writer writes kv.Options.Holder to the
// path with ".lock" appended, for a waiter to name it, and removes it on
// Close.
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
// Keys sort alike in both. A history entry raises the history bucket's
// sequence to its own, for a reconcile that numbers entries by it. A key
// outside the layout, which the model never writes, is kept as it is in a
// bucket "kv".
//
// bbolt reads the file through a read-only shared mapping, whose pages
// count in the process's resident memory once read: Release (kv.Releaser)
// hands them back to the kernel, on Linux with madvise. The values a
// View's Scan gives are the mapping's and die with the Read.
package bolt
