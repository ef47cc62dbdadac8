package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/resources"
)

// describingCloud is the fake cloud whose driver describes the drift of
// its inputs, as the IAM binding drivers do.
type describingCloud struct{ *fakeCloud }

var _ resources.ResultComparer = describingCloud{}

func (describingCloud) EqualResultField(string, any, any) bool {
	panic("EqualResultField is not called for a driver")
}

func (describingCloud) DescribeResultChange(before, after resources.Attrs) []string {
	return []string{fmt.Sprintf("displayName %v became %v", before["displayName"], after["displayName"])}
}

// TestDriftDetailsOfDriver checks that a driver that is a ResultComparer
// describes the drift of its objects, in drift reports and in plans, and
// only when something drifted.
func TestDriftDetailsOfDriver(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.reg.Drivers[endpointToken] = describingCloud{h.cloud}
	src := resourcesOf(endpoint("a", "a"))
	h.mustApply(src)
	if rep := h.drift(src); rep.HasDrift() {
		t.Fatalf("drift right after apply: %+v", rep.Items)
	}
	h.edit(h.record("a").ID, resources.Attrs{"displayName": "renamed"})
	rep := h.drift(src)
	if len(rep.Items) != 1 || strings.Join(rep.Items[0].Details, "|") != "displayName a became renamed" {
		t.Fatalf("drift = %+v, want the driver's description", rep.Items)
	}
	p := h.plan(src, planner.Options{Refresh: true})
	if c := change(t, p, "a"); strings.Join(c.DriftDetails, "|") != "displayName a became renamed" {
		t.Errorf("plan: drift details %q, want the driver's description", c.DriftDetails)
	}
	if text := textOf(t, p); !strings.Contains(text, "# displayName a became renamed") {
		t.Errorf("plan text does not show the description:\n%s", text)
	}
}
