// Package plan holds the plan model and its file format.
//
// A Plan is the ordered list of Changes that apply would make to bring the
// cloud to what the specs declare, made against one state (its Lineage and
// Serial) from one set of specs and config values (SpecHash). Changes come
// in dependency order, then by address; deletes come after, in reverse
// dependency order. Every node of the specs and of state has exactly one
// Change, NoOp included.
//
// A Change names its node (Addr, Type, Kind), the Action chosen for it, and
// the Reason for that action as data: replace because tainted, because a
// field cannot change in place (ReplacePaths), because replaceOnChanges
// says so; create because it was deleted outside reconcile; forget because
// of retainOnDelete; read during apply because an argument is known only
// then; and so on. Apply never reads the Reason: renderers derive their
// words from it, and plan JSON exposes it as action_reason. Before holds
// the attributes last applied; After the desired inputs, in which values
// not known until apply are value.Unknown and secret ones value.Secret.
// What refresh found changed outside reconcile (Drift, DeletedOutside)
// rides along for the renderers; apply ignores it too.
//
// A File is a saved plan: the plan, where its specs are, which backend and
// stack it was made for, and the config values given on the command line.
// WriteFile signs it with a key derived from the state's secret key, so
// that an edited plan, or one made against another state, is refused
// (ErrFileChanged) before anything of it is applied. Secret values are
// written sealed, never in clear; Unknown values are written as such.
//
// The package depends only on diag, value and kind: it knows nothing of
// the state store, the drivers or the network.
package plan
