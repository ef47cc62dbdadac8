package statetest

import (
	"fmt"
	"time"

	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state"
)

// BenchSnapshot returns a Snapshot of lineage, with key, holding n records,
// each with one version, like those of a real apply, for benchmarks of
// every backend.
func BenchSnapshot(lineage string, key []byte, n int) state.Snapshot {
	snap := state.Snapshot{Meta: state.Meta{Lineage: lineage, Serial: int64(n), FormatVersion: state.FormatVersion}, Key: key}
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for i := range n {
		r := state.Record{
			Name:    fmt.Sprintf("ep%05d", i),
			Type:    "oci:AiLanguage:Endpoint",
			Kind:    kind.Resource,
			ID:      fmt.Sprintf("ocid1.ailanguageendpoint.oc1.iad.%05d", i),
			Inputs:  map[string]any{"displayName": "sentiment-prod", "inferenceUnits": int64(2)},
			Outputs: map[string]any{"id": "ocid1.ailanguageendpoint.oc1.iad.x", "lifecycleState": "ACTIVE"},
			Serial:  int64(i + 1), UpdatedAt: at,
		}
		snap.Records = append(snap.Records, r)
		snap.Versions = append(snap.Versions, state.VersionEntry{Name: r.Name, Serial: r.Serial, Record: r})
	}
	return snap
}
