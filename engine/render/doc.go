// Package render turns the engine's models into what people and programs
// read: plans (PlanText for a terminal, PlanJSON in the versioned format of
// docs/plan-json.md, PlanMarkdown for a pull-request comment), drift reports
// (DriftText, DriftJSON as in docs/drift-json.md, DriftMarkdown), and the
// values in them (DisplayValue, JSONValue).
//
// Renderers are pure: they read a plan.Plan or a report.Drift and the value
// model, and write; they never read state, call a driver or touch the
// network. Their words come from the typed data: a change's action and
// plan.Reason, a drift item's status. Secret values are always shown as
// "(sensitive value)", and values known only after apply as "(known after
// apply)". JSON output has a format_version, uses snake_case keys and
// writes [] rather than null for an empty list.
package render
