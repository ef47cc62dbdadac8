package endpointsiam

import "time"

// SetConflictBackoff shortens the pauses between attempts of a
// read-modify-write that met a newer etag, for the length of a test.
func SetConflictBackoff(base, most time.Duration) (restore func()) {
	ob, om := conflictBase, conflictMax
	conflictBase, conflictMax = base, most
	return func() { conflictBase, conflictMax = ob, om }
}

// Lockouts and AccessChanges expose the comparisons of access.go.
var (
	Lockouts      = lockouts
	AccessChanges = accessChanges
)
