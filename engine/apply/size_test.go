package apply

import (
	"errors"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state"
)

// smallState is a state whose records may be no larger than limit bytes.
type smallState struct {
	state.Backend
	limit int
}

func (s smallState) RecordLimit() state.RecordLimit {
	return state.RecordLimit{Bytes: s.limit, Why: "the test says so"}
}

// TestFitRecord: a record that fits is kept whole; one that does not
// loses its outputs but the id, then its inputs too, tainted, never its
// id, options and dependencies.
func TestFitRecord(t *testing.T) {
	rec := state.Record{Name: "big", Type: "oci:AiLanguage:Endpoint", Kind: kind.Resource, ID: "ocid1.x",
		Inputs:       map[string]any{"displayName": strings.Repeat("i", 2000)},
		Outputs:      map[string]any{"id": "ocid1.x", "lifecycleDetails": strings.Repeat("o", 2000)},
		Dependencies: []string{"project"}, Protect: true}
	for name, tc := range map[string]struct {
		limit          int
		outputs        int // how many outputs are kept
		inputs, taints bool
	}{
		"fits":            {limit: 8000, outputs: 2, inputs: true},
		"without outputs": {limit: 3000, outputs: 1, inputs: true},
		"by id":           {limit: 1000, outputs: 1, taints: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, cut := fitRecord(smallState{limit: tc.limit}, rec)
			if (cut != nil) != (tc.outputs < 2) || cut != nil && !errors.Is(cut, state.ErrTooLarge) {
				t.Errorf("fitRecord(limit %d) says %v", tc.limit, cut)
			}
			if len(got.Outputs) != tc.outputs || got.Outputs["id"] != "ocid1.x" || (got.Inputs != nil) != tc.inputs || (got.Tainted != "") != tc.taints ||
				got.ID != rec.ID || !got.Protect || len(got.Dependencies) != 1 {
				t.Errorf("fitRecord(limit %d) = %+v", tc.limit, got)
			}
			if err := state.CheckRecordSize(smallState{limit: tc.limit}, got); err != nil {
				t.Errorf("fitRecord(limit %d) gave a record that does not fit: %v", tc.limit, err)
			}
		})
	}
}
