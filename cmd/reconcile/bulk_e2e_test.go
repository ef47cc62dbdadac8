package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"
)

// endpointCalls counts, among calls, the ListEndpoints calls and the
// GetEndpoint calls.
func endpointCalls(calls []apiCall) (lists, gets int) {
	for _, c := range calls {
		switch {
		case c.Method != "GET":
		case c.Path == "/20221001/endpoints":
			lists++
		case strings.HasPrefix(c.Path, "/20221001/endpoints/"):
			gets++
		}
	}
	return lists, gets
}

// TestE2EBulkRefresh: with more endpoints in a compartment than
// --parallelism, plan and drift list them instead of reading each, and
// read alone only those the list cannot vouch for: a deleted endpoint
// (GetEndpoint then says it is gone) and one that drifted (read again
// before it is reported).
func TestE2EBulkRefresh(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	const n = 12
	var b strings.Builder
	b.WriteString("resources:\n")
	for i := range n {
		b.WriteString(endpointSpec(fmt.Sprintf("ep%d", i), model, fmt.Sprintf("bulk-%d", i), ""))
	}
	w.write("main.yaml", b.String())
	w.must(0, "apply", "--auto-approve")

	mark := e.mark()
	w.must(0, "plan", "--detailed-exitcode")
	if lists, gets := endpointCalls(e.callsSince(mark, "/20221001/")); lists != 1 || gets != 0 {
		t.Errorf("plan of %d unchanged endpoints: %d ListEndpoints and %d GetEndpoint calls, want 1 and 0", n, lists, gets)
	}

	st := w.stateList()
	c := e.ociClient(t.TempDir())
	renamed, deleted := st["ep3"].ID, st["ep7"].ID
	if _, err := c.UpdateEndpoint(context.Background(), ailanguage.UpdateEndpointRequest{EndpointId: &renamed,
		UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{DisplayName: common.String("renamed-by-hand")}}); err != nil {
		t.Fatal(err)
	}
	e.waitActive(c, renamed)
	if _, err := c.DeleteEndpoint(context.Background(), ailanguage.DeleteEndpointRequest{EndpointId: &deleted}); err != nil {
		t.Fatal(err)
	}
	mark = e.mark()
	r := w.must(2, "drift")
	wantStdout(t, r, "# ep3 (oci:AiLanguage:Endpoint) was changed outside reconcile", `~ displayName = "bulk-3" -> "renamed-by-hand"`,
		"# ep7 (oci:AiLanguage:Endpoint) was deleted outside reconcile", "Drift: 1 changed, 1 deleted")
	if lists, gets := endpointCalls(e.callsSince(mark, "/20221001/")); lists != 1 || gets != 2 {
		t.Errorf("drift: %d ListEndpoints and %d GetEndpoint calls, want 1 list, and ep3 and ep7 read alone", lists, gets)
	}
	mark = e.mark()
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, `~ displayName = "bulk-3" -> "renamed-by-hand"`, "# ep7 (oci:AiLanguage:Endpoint) was deleted outside reconcile", "Plan: 1 to create, 1 to update")
	if lists, gets := endpointCalls(e.callsSince(mark, "/20221001/")); lists != 1 || gets != 2 {
		t.Errorf("plan: %d ListEndpoints and %d GetEndpoint calls, want 1 list, and ep3 and ep7 read alone", lists, gets)
	}

	// With as many reads at once as endpoints, one round of reads is as
	// fast as a list: each is read alone.
	mark = e.mark()
	w.must(2, "drift", "--parallelism", fmt.Sprint(n))
	if lists, gets := endpointCalls(e.callsSince(mark, "/20221001/")); lists != 0 || gets != n {
		t.Errorf("drift --parallelism %d: %d ListEndpoints and %d GetEndpoint calls, want 0 and %d", n, lists, gets, n)
	}
}
