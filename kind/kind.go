// Package kind names the three kinds of node a spec declares and state
// records. It imports nothing, so that state, the engine's stages and the
// renderers share one definition.
package kind

// Kind is the kind of a node.
type Kind string

// Kinds.
const (
	// Resource is a resource reconcile manages: created, updated, deleted.
	Resource Kind = "resource"
	// Get is an existing resource read by id with options.get, never
	// changed.
	Get Kind = "get"
	// Lookup is an fn::invoke lookup: a read whose result is recorded.
	Lookup Kind = "lookup"
)

// Valid reports whether k is one of the kinds above.
func (k Kind) Valid() bool {
	switch k {
	case Resource, Get, Lookup:
		return true
	}
	return false
}
