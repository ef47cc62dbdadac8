// Package eval evaluates the expressions of a loaded spec: interpolations,
// references to other resources' outputs, config and built-in functions, and
// a resource's options. It also holds the views of a resource's attributes
// that planning and apply share: its inputs and outputs, the inputs it
// manages, the difference between two sets of inputs after normalization and
// ignoreChanges.
//
// Evaluation never talks to a cloud: lookups go through the Evaluator's
// Invoke hook, and references whose values are not yet known evaluate to
// value.Unknown.
package eval
