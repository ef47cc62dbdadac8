// Package engine turns YAML specs into applied state: it loads and validates
// specs (Load, Validate), builds the dependency graph, computes a Plan
// against the state and the drivers, renders plans as text, JSON or
// Markdown, and applies them in dependency order.
package engine
