// Package etcd keeps reconcile's stacks on an etcd v3 cluster, shared by
// many short-lived CI runners: it implements kv.Backend and kv.Store, and
// knows nothing of what the keys and values mean.
//
// A Backend is a key prefix on a cluster, the path of the state's URL
// (etcd://10.0.0.1:2379/reconcile/acme). A stack's keys are the model's,
// as they are, under "<prefix>/<stack>/", and its lock is
// "<prefix>/<stack>/lock": the layout reconcile has always written, so
// every stack made before reads the same, byte for byte.
//
// A writer's lock is the lock key, holding kv.Options.Holder, attached to
// a lease of kv.Options.LockTTL that the writer keeps alive. A holder that
// dies stops renewing it, and etcd deletes the key when the lease
// expires: no lock outlives its holder by more than LockTTL. Close revokes
// the lease. Every write is one transaction conditional on the lock key
// still having the create revision and the lease this Store gave it, so a
// holder whose lease lapsed (it was stopped, or cut off, past its TTL)
// never writes after another took the lock over.
//
// etcd answers a transaction once a quorum has it on disk. While the
// cluster elects a leader, a write is tried again until its deadline, and
// the Batch's Marker tells whether an attempt whose answer was lost was
// made (see package kv). A reader takes no lock and reads at the revision
// of its Open: one snapshot. If etcd compacts its history past it, reads
// fail and say to run again.
//
// The user name and password never appear in an error, in Options.String
// or in Describe, nor are they stored; an error about a TLS file names its
// path, never its contents. A connection that fails for a reason of TLS
// is tried again as any failed connection is, so a request fails only
// when its time runs out; the error then says what the last connection
// met and what to do, and wraps ErrTLS.
package etcd
