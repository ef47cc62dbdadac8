package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// TestE2EFailedEndpointRecovers deploys a model that stops being ACTIVE
// between the plan (which checks it) and the apply of that plan: the
// endpoint ends FAILED, apply reports its lifecycleDetails and keeps it in
// state as tainted, an independent resource is still created, and the
// next apply, with a model of its own, replaces the failed endpoint.
func TestE2EFailedEndpointRecovers(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	oci := e.ociClient(t.TempDir())
	withModel := func(model, more string) string {
		return spec(endpointSpec("ep", model, strings.ToLower(t.Name()), ""), policySpec("pol", rid(t, "p"), "", ""), more)
	}
	model := e.activeModel(t.TempDir())
	w.write("main.yaml", withModel(model, ""))
	w.must(0, "plan", "--out", "p.plan")
	// An update keeps the model UPDATING for an hour: not deployable.
	e.settings(server.Settings{UpdateDelayMS: 3600 * 1000})
	if _, err := oci.UpdateModel(context.Background(), ailanguage.UpdateModelRequest{ModelId: &model,
		UpdateModelDetails: ailanguage.UpdateModelDetails{Description: common.String("being updated")}}); err != nil {
		t.Fatalf("OCI update model: %v", err)
	}
	r := w.must(1, "apply", "p.plan")
	wantContains(t, r, "only an ACTIVE model can be deployed", "pol: Creation complete")
	list := w.stateList()
	failed := list["ep"]
	if !failed.Tainted || failed.ID == "" {
		t.Fatalf("after the failed create, state has ep = %+v; want it recorded as tainted", failed)
	}
	if _, ok := list["pol"]; !ok {
		t.Errorf("the independent policy is not in state: %v", list)
	}

	// A plan now refuses the model, which is not ACTIVE.
	r = w.must(1, "plan")
	wantStderr(t, r, `field "modelId"`, "is UPDATING, not ACTIVE")

	e.settings(server.Settings{TrainingDelayMS: -1})
	w.write("main.yaml", withModel("${m2.id}", fmt.Sprintf(`  proj:
    type: oci:AiLanguage:Project
    properties:
      compartmentId: %[1]s
      displayName: recovers-project
  m2:
    type: oci:AiLanguage:Model
    properties:
      compartmentId: %[1]s
      projectId: ${proj.id}
      displayName: recovers-model
      modelDetails:
        modelType: TEXT_CLASSIFICATION
      trainingDataset:
        datasetType: OBJECT_STORAGE
        locationDetails:
          locationType: OBJECT_LIST
          namespace: acme
          bucket: reviews
          objectNames: [train.jsonl]
`, server.Tenancy)))
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
