package aiendpoint_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// TestApplyAbsorbsFaults applies endpoints through the engine against the
// emulator server while a fifth of the cloud calls fail with 429, 500, 503
// or a dropped connection: the driver's retries must absorb every one.
func TestApplyAbsorbsFaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := server.Start(server.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	srv.Apply(server.Settings{FaultRate: 0.2, FaultStatuses: []int{429, 500, 503, 0}})
	applyEndpoints(t, srv, dir, 12, 4)
	resp, err := http.Get(srv.URL + "/_emulator/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var stats map[string]int
	json.NewDecoder(resp.Body).Decode(&stats)
	if stats["faultsInjected"] == 0 {
		t.Fatalf("stats = %v: no fault was injected, so the test proved nothing", stats)
	}
	t.Logf("%d of %d calls failed and were absorbed", stats["faultsInjected"], stats["requests"])
}
