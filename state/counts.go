package state

import "iter"

// Counts counts what one operation recorded in history did, by outcome.
// Only the counts that are not zero are stored.
type Counts struct {
	// Actions completed by an apply, a destroy, an import or a state edit.
	Create  int `json:"create,omitempty"`
	Update  int `json:"update,omitempty"`
	Replace int `json:"replace,omitempty"`
	Delete  int `json:"delete,omitempty"`
	Read    int `json:"read,omitempty"`
	Import  int `json:"import,omitempty"`
	Forget  int `json:"forget,omitempty"`
	Refresh int `json:"refresh,omitempty"`
	Move    int `json:"move,omitempty"`
	// Nodes an apply did not complete.
	Failed      int `json:"failed,omitempty"`
	Skipped     int `json:"skipped,omitempty"`
	Interrupted int `json:"interrupted,omitempty"`
	NotStarted  int `json:"not_started,omitempty"`
	// Interrupted creates resolved, by outcome.
	Adopted    int `json:"adopted,omitempty"`
	Recorded   int `json:"recorded,omitempty"`
	Cleared    int `json:"cleared,omitempty"`
	Superseded int `json:"superseded,omitempty"`
	Kept       int `json:"kept,omitempty"`
}

// All yields each count that is not zero, with its name as stored, in the
// order of the fields.
func (c Counts) All() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		for _, f := range []struct {
			name string
			n    int
		}{
			{"create", c.Create}, {"update", c.Update}, {"replace", c.Replace}, {"delete", c.Delete},
			{"read", c.Read}, {"import", c.Import}, {"forget", c.Forget}, {"refresh", c.Refresh}, {"move", c.Move},
			{"failed", c.Failed}, {"skipped", c.Skipped}, {"interrupted", c.Interrupted}, {"not_started", c.NotStarted},
			{"adopted", c.Adopted}, {"recorded", c.Recorded}, {"cleared", c.Cleared}, {"superseded", c.Superseded}, {"kept", c.Kept},
		} {
			if f.n != 0 && !yield(f.name, f.n) {
				return
			}
		}
	}
}
