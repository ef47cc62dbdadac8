// Package render turns the engine's models into what people and programs
// read:
//
//   - plans: PlanText for a terminal, PlanJSON in the versioned format of
//     docs/plan-json.md, PlanMarkdown for a pull-request comment;
//   - drift reports: DriftText, DriftJSON (docs/drift-json.md),
//     DriftMarkdown, DriftSummary;
//   - apply results: ApplyText, ApplyJSON (docs/apply-json.md) and
//     ApplySummary, for apply, destroy and refresh-only runs (Run), and
//     the progress lines of a running apply (Progress);
//   - the event stream of --output jsonl (docs/events-jsonl.md):
//     EventStream writes a plan's drift and changes, each apply
//     report.Event (the events Progress writes as lines), the retries of
//     calls outside operations, diagnostics, the outputs and a summary,
//     one JSON object a line, each stamped by the clock it is given;
//   - the resolution of interrupted creates: IntentsHeading, IntentsText,
//     IntentProgress, and IntentsWarning for commands that only read state;
//   - the other commands' JSON, from small models the CLI fills:
//     StateListJSON, RecordJSON and HistoryJSON (state list, show and
//     history, from StateNode and HistoryEntry), StacksJSON (stack ls),
//     StackInitJSON (stack init),
//     MigrateJSON (state migrate, from MigratedStack) and VersionJSON,
//     all in docs/state-json.md; ValidateJSON (docs/validate-json.md,
//     from a Validation);
//   - DeclarationYAML, the spec text that declares an imported object;
//   - the dependency graph of the specs, coloured by a plan's actions:
//     GraphOf, then GraphDOT or GraphMermaid;
//   - single values: DisplayValue and JSONValue.
//
// Renderers are pure: they read a plan.Plan, a report.Drift, report.Apply,
// report.Event or report.Intents, a Graph, one of the models above and the
// value model, and write; they never read state, call a driver or touch the
// network, and the package imports neither the state store nor a network
// client (TestRenderImports). Their words come from the typed data: a
// change's Action and plan.Reason (plan JSON has both the reason's name,
// action_reason, and its words, reason), a drift item's status, an
// intent's outcome.
//
// Access: the members a change's writes remove from and add to access
// policies (plan.Change.Access) are shown under the change, one line per
// member, sign first ("- ROLE  MEMBER"), under a comment naming the
// policy; the summary counts those removed ("1 to update (removes 3
// members)"); drift of an access policy is shown the same way. The
// caller's own access a plan made with --allow-self-lockout removes is a
// comment of the change, and in Markdown a caution above the changes. Plan
// JSON has them as access_changes and self_lockouts.
//
// Unknown and secret values: for people, a value known only after apply
// is shown as "(known after apply)" and a secret, whether a value.Secret
// or sealed in state, as "(sensitive value)"; neither is ever shown in
// clear. In JSON both are written as null, and plan JSON lists their
// places as JSON Pointers (after_unknown, after_sensitive,
// before_sensitive). Every JSON document is an object with a
// format_version, uses snake_case keys (but for names from the specs and
// the cloud: a node's fields, the outputs), writes [] rather than null for
// an empty list and times in RFC 3339, in UTC.
package render
