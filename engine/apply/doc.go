// Package apply carries out a plan.Plan: it changes the cloud through the
// drivers and records every change in state. It also resolves the creates
// an interrupted run left open (ResolveIntents), imports objects (Import),
// applies refresh-only plans (RefreshOnly), checks a saved plan before use
// (CheckPlan), and lets a signal handler stop an apply (StopControl).
//
// The walk. Apply runs the spec's graph with dag.WalkStop, independent
// branches in parallel (Options.Parallelism), plus one node per Delete or
// Forget, run after the nodes that depended on what goes, and one deposed
// node per resource replaced by creating the new object first (or left
// with deposed objects by an earlier apply). Each resource's inputs are
// evaluated again now that its dependencies exist: they must be known, and
// what the plan showed as known must not have changed (else: make a new
// plan). Then the planned action is taken: Create, Update, Import, Replace
// (the new object first, recorded with the old one's id kept as deposed;
// or the old one first, with deleteBeforeReplace), NoOp, or an Update of
// options alone. The deposed node deletes the old objects once every node
// that depends on the resource (directly, through variables, or as its
// record says it did) has finished, and after the deposed nodes of those:
// the old object goes only once nothing uses it, as Terraform's
// create_before_destroy and Pulumi do, for the cloud may refuse to delete
// an object in use (OCI, a model an endpoint deploys). A failed node stops
// only its dependents (report.Apply.Skipped); a deposed node held back by
// a failure, or not started, leaves its old objects deposed, which the
// result lists (report.Apply.Deposed). The result lists what failed, was
// skipped, interrupted or not started, and, for a complete apply, the
// outputs. A driver call starts only while state's lock is held, and
// Options.Observer gets progress events with the node's secrets redacted.
//
// Durable state. State is written after every operation, not at the end:
// an apply that dies keeps everything it completed, and the next plan
// starts from there. A replaced object stays recorded as deposed from the
// create of its successor until its delete succeeds, so that a crash in
// between leaves no orphan; the next apply deletes it (after the
// resource's dependents, again).
//
// Intents. Before a create calls the driver, an intent (node, type, a new
// idempotency token, the inputs sealed, options and dependencies) is
// written and synced; the driver gets the token through its context. The
// record of the new object and the clearing of the intent are one write;
// a refusal by the API (resources.ErrRefused) clears it too. Otherwise
// (the process died, the apply was cancelled, no answer came) the intent
// stays. ResolveIntents, run before planning (the CLI runs it for apply and
// destroy; plan and drift only warn, see PendingIntents), asks each
// driver's Recoverer what the create made, by its token, and reports one
// outcome per intent (report.IntentOutcome): adopted (an object was found
// and recorded as the create would have), recorded (state had it
// already), cleared (nothing was made: the next plan creates the node),
// superseded (the node was recorded with another object since) or kept
// (it cannot be told: no Recoverer, a secret input the search needs, an
// API error). Apply then creates a node whose intent is kept only if its
// inputs are unchanged, and only after the Recoverer, given them in clear,
// looked again; without a Recoverer it replays the create with the same
// token. With other inputs the node fails, saying how to adopt or forget.
//
// Record size. Before a create or an update calls the driver, the record
// it would write (its inputs, and the outputs known so far) is checked
// against what state can write (state.Backend.RecordLimit): one that does
// not fit is refused and nothing is sent. A record that outgrows the limit
// anyway (the cloud's outputs, an object an older run made and could not
// record) is written smaller rather than not at all: without its outputs
// but the id, or by its id alone, tainted (fitRecord), so that the object
// stays known to state, and a destroy deletes it.
//
// Sealing. What the specs mark secret is written sealed (value.Seal under
// the state's key): inputs, intents, and the cloud's echo of a secret input
// among the outputs. Drivers get the values in clear, in memory only. A
// lookup called with a secret argument, and a get whose id or state holds
// one, are secret as a whole (eval.ResultOf, eval.GetResultOf): every
// result is recorded sealed and their id is not recorded; a plan file
// holds their results only sealed, so the apply of one reads them again.
// An object imported before the specs marked an input secret (a lookup
// read before its argument was) is recorded in clear; once they do, the
// next apply seals the record and its earlier versions
// (state.Backend.RewriteVersions).
//
// Import records an existing object as a managed resource whose applied
// inputs are its live ones (less empty values and vendor keys); it refuses
// a name already in state and an object another name manages. A planned
// Import (options.import) reads the object, records it, then updates it
// where it differs from the specs.
//
// RefreshOnly applies a refresh-only plan: it writes what the plan read
// from the cloud into state (a node gone from the cloud leaves state) and
// makes no cloud call. A node whose record no longer has the type, kind
// or id the plan read fails.
//
// Graceful stop. A StopControl carried by ctx (WithStopControl), or
// Options.Stop, makes Apply start no new operation once stopped, while the
// running ones go on to their end; cancelling ctx abandons them too. The
// result then says why (Stopped) and lists what was not started and what
// was interrupted; an interrupted create is resolved by the next run.
package apply
