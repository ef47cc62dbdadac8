// Package engine is the home of reconcile's pipeline, one package per
// stage; each imports only stages listed before it below. (The compiler
// only forbids import cycles; the order is kept by hand.) This package
// holds no code of its own: its tests run the stages together, from specs
// to applied state, against a fake cloud and real state files.
//
// The stages, in the order data flows through them:
//
//   - diag: positions (FILE:LINE:COL) and diagnostics.
//   - value: the value model: Unknown (known only after apply), Secret,
//     sealing of secrets into keyed digests for state, equality under a
//     field's schema, and how values are shown.
//   - dag: the dependency graph and its parallel walk.
//   - specs: spec files to a checked Spec (resources, gets, lookups,
//     variables, config, outputs) with their expressions and the graph of
//     references.
//   - eval: expressions to values (Unknown and Secret propagate), resource
//     options, and the views of a resource's attributes that planning and
//     apply share.
//   - outputs: the stack outputs in state: what a complete apply records
//     of them (secrets sealed), and a secret one computed again from the
//     specs and state for 'reconcile output --show-secrets'.
//   - plan: the Plan model (Change, Action, typed Reason) and the signed
//     plan-file format.
//   - report: the results of running: an apply's result and progress
//     events, a drift report, resolved intents.
//   - refresh: reading the nodes recorded in state from the cloud, and what
//     differs from what was last applied: drift (reconcile drift), and the
//     refresh-only plan that accepts it into state.
//   - planner: specs, state and the cloud (lookups and gets; managed
//     resources too unless --refresh=false) to a Plan.
//   - apply: a Plan to changes in the cloud and in state, in dependency
//     order, with an intent recorded before every create; also the
//     resolution of interrupted creates, import, refresh-only apply, and
//     the graceful stop.
//   - render: plans and reports to text, JSON and Markdown; pure.
//
// Values: what the planner cannot know until apply is value.Unknown,
// shown as "(known after apply)"; apply evaluates it again once the
// dependencies exist. Secrets are value.Secret marks that travel with
// their values; state, intents and plan files hold them sealed (an HMAC
// under the state's own key), and output shows "(sensitive value)".
//
// A Plan lists one Change per resource, get and lookup, and per managed
// resource to delete, in dependency order, each with an Action (create,
// update, replace, delete, read, import, forget, refresh, no-op) and a
// typed plan.Reason that renderers put into words.
//
// Refresh and drift: drift is what refresh finds. reconcile drift reports
// it and changes nothing; plan shows it above the changes (Change.Drift)
// and plans from the cloud as it is; plan --refresh-only plans to accept
// it into state (Action Refresh), which apply --refresh-only does.
//
// Intents: apply records an intent (the create's idempotency token and
// inputs, secrets sealed) durably before each create, and clears it in the
// same write that records the object. A run that finds intents left by one
// that died (apply and destroy do) resolves them before planning, asking
// the driver what each create made: the object is adopted or recorded,
// the intent cleared or superseded, or kept for apply to settle.
package engine
