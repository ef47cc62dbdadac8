// Package refresh reads from the cloud what state records and compares it
// with what was last applied. It serves three callers, which are easy to
// confuse:
//
//   - Refresh, as part of planning: with planner.Options.Refresh (the
//     CLI's default; off with --refresh=false) the planner reads each
//     managed resource during its plan, so that the plan is made against
//     the live values, not the recorded ones. What differs from the last
//     apply rides along on the plan.Change (Drift, DeletedOutside) for the
//     renderers; the Action is still chosen to take the cloud to the
//     specs. This package gives the planner its pieces: ReadObject,
//     ResourceDrift, GetDrift, LookupDrift and ManagedBy.
//   - Drift (reconcile drift): reads every node recorded in state and
//     reports, as a report.Drift, how the cloud moved away from the last
//     apply. It neither plans nor changes anything, and evaluates nothing
//     of the specs, which it reads only for ignoreChanges and read
//     timeouts.
//   - Plan (plan --refresh-only): reads as Drift does and makes a Plan
//     with RefreshOnly set: one Refresh change per node that drifted, a
//     NoOp for the others, sorted by address. Applying it
//     (apply.RefreshOnly) accepts the cloud's values into state and makes
//     no cloud call; after it, Drift reports nothing, and a normal plan
//     shows what would take the cloud back to the specs.
//
// What counts as drift: for a managed resource, only the inputs that were
// applied (a field the specs leave to the cloud is not drift), compared
// under each field's schema (sets, empty values) after the driver's
// normalisation of both sides, without the map entries the cloud adds by
// itself (resources.VendorKeys) and without the fields named by
// ignoreChanges; a resource gone from the cloud is report.DriftDeleted.
// For a get, the input fields of what it reads now against what it read
// at the last apply. For a lookup, its output-only results against those
// last read; a lookup whose arguments were secret, or a get whose id or
// state was, is not read again, since state holds them only sealed.
//
// Secrets: state holds secret inputs sealed (see package value). A live
// value is sealed where the applied one is (value.SealAs) before the two
// are compared, and drift shows it as a secret, never in clear. A
// refresh-only plan carries a live secret input wrapped in value.Secret;
// apply seals it again before writing it.
//
// Objects whose driver reads in bulk (resources.BulkReader) are read
// first, in a few list calls (ReadBulk; the planner does the same before
// its walk); the others, and those the bulk read did not return, are read
// one by one, in parallel (dag.Walk with no edges), up to the given
// parallelism. An object whose bulk attributes drifted is read again with
// Read, so that what is reported and recorded is what Read returns, and
// only Read decides that an object is gone. A node that cannot be read is a report.DriftError, or an
// error diagnostic in a refresh-only plan; the others are still read. When
// ctx ends, Drift returns one error for the run, not one per node (and
// planner.Plan, which calls Plan, one diagnostic).
package refresh
