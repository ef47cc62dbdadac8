// Package plan holds the plan model and its file format.
//
// A Plan is the ordered list of Changes that apply would make to bring the
// cloud to what the specs declare, made against one state (its Lineage and
// Serial) from one set of specs and config values (SpecHash). Changes come
// in dependency order, ties by address; deletes come after, in reverse
// dependency order. In a plan without errors, every resource, get and
// lookup the specs declare has one Change, NoOp included, and so has every
// managed resource of state that is to go; config entries and plain
// variables have none. A Destroy
// plan holds only deletes; a RefreshOnly plan holds one Refresh or NoOp
// change per node of state that could be read, sorted by address.
//
// An Action is what apply does to the node: NoOp, Create, Update, Replace,
// Delete, Read (a lookup or a get), Import (adopt an existing object,
// options.import), Forget (drop from state, leave the cloud alone) or
// Refresh (accept the cloud's values into state). HasChanges is false
// when only NoOps and Reads remain and no change has Deposed objects.
//
// A Change names its node (Addr, Type, Kind, Pos), the Action chosen for
// it, and the Reason for that action as data: replace because tainted,
// because a field cannot change in place (ReplacePaths), because
// replaceOnChanges says so; create because it was deleted outside
// reconcile; forget because of retainOnDelete; read during apply because
// an argument is known only then (Deferred); and so on. Renderers derive
// their words from it (ReasonText), and plan JSON exposes it as
// action_reason. Apply reads it only to tell an Update of options alone
// (ReasonOptionsChanged), which changes state and not the cloud. Before
// holds the attributes last applied (or, with refresh, read live), secret
// ones never in clear (sealed, or value.Secret without a value); After
// the desired inputs, in which values not known until apply are
// value.Unknown and secret ones value.Secret. Deposed lists objects an
// earlier replacement left to delete; Options the resource options that
// change. What refresh found changed outside reconcile (Drift,
// DriftDetails, DriftAccess, DeletedOutside) rides along for the
// renderers, as do the members the change's writes remove from and add to
// access policies (Access) and the caller's own access they remove, which a
// plan made with AllowSelfLockout lets through (Lockouts); apply
// ignores it. Idle marks a no-op resource whose record apply would write
// unchanged: apply runs it only if something it runs reads it.
//
// A File is a saved plan: the plan, where its specs are, which backend and
// stack it was made for, and the config values given on the command line
// (not the secret ones). WriteFile signs it with a key derived from the
// state's secret key, so that an edited plan, or one made against another
// state, is refused (ErrFileChanged by Verify) before anything of it is
// applied. Secret values are written sealed, never in clear, and read
// back sealed; Unknown values are written as such. The drift and the
// outputs the plan showed are saved too, though apply uses neither, so
// that File.Shown renders (reconcile show) exactly as the plan did when
// it was made. A File also tells its apply what it runs (Runs) and the
// lines of the specs holding the rest (Cuts, see specs.Spec.Cuts), so that
// the apply of a few changes loads, reads and decodes in proportion to
// them; ReadFileToApply leaves the values of the other no-op entries
// undecoded.
//
// The package depends only on diag, value and kind: it knows nothing of
// the state store, the drivers or the network.
package plan
