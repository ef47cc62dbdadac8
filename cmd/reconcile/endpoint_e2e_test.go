package main

import (
	"context"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
)

// TestE2EFailedEndpointRecovers deploys a model whose training failed: the
// endpoint ends FAILED, apply reports its lifecycleDetails and keeps it in
// state as tainted, an independent resource is still created, and the next
// apply with a good model replaces the failed endpoint.
func TestE2EFailedEndpointRecovers(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	oci := e.ociClient(t.TempDir())
	withModel := func(model string) string {
		return spec(endpointSpec("ep", model, strings.ToLower(t.Name()), ""), policySpec("pol", rid(t, "p"), "", ""))
	}
	w.write("main.yaml", withModel("ocid1.ailanguagemodel.oc1.iad.emulatorfailedmodel"))
	r := w.must(1, "apply", "--auto-approve")
	wantContains(t, r, "Training failed", "pol: Creation complete")
	list := w.stateList()
	failed := list["ep"]
	if !failed.Tainted || failed.ID == "" {
		t.Fatalf("after the failed create, state has ep = %+v; want it recorded as tainted", failed)
	}
	if _, ok := list["pol"]; !ok {
		t.Errorf("the independent policy is not in state: %v", list)
	}

	w.write("main.yaml", withModel(e.activeModel(t.TempDir())))
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "must be replaced", "previous create failed")
	w.must(0, "apply", "--auto-approve")
	now := w.stateShow("ep")
	if now.ID == failed.ID || now.Outputs["state"] != "ACTIVE" {
		t.Errorf("after recovery ep is %s in state %v; want a new ACTIVE endpoint", now.ID, now.Outputs["state"])
	}
	old, err := oci.GetEndpoint(context.Background(), ailanguage.GetEndpointRequest{EndpointId: &failed.ID})
	if err == nil && old.LifecycleState != ailanguage.EndpointLifecycleStateDeleted {
		t.Errorf("the failed endpoint %s is %s, want it deleted", failed.ID, old.LifecycleState)
	}
	w.must(0, "plan", "--detailed-exitcode")
}
