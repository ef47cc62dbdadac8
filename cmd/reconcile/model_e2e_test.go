package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// modelSpec declares a project, a model trained in it and an endpoint
// deploying the model, all named after prefix; bucket is the training
// data's bucket (a change of it retrains the model).
func modelSpec(prefix, bucket, modelName string) string {
	return fmt.Sprintf(`resources:
  project:
    type: oci:AiLanguage:Project
    properties:
      compartmentId: %[1]s
      displayName: %[2]s-project
      definedTags: {"Operations.CostCenter": "42"}
  model:
    type: oci:AiLanguage:Model
    properties:
      compartmentId: %[1]s
      projectId: ${project.id}
      displayName: %[4]s
      modelDetails:
        modelType: TEXT_CLASSIFICATION
      trainingDataset:
        datasetType: OBJECT_STORAGE
        locationDetails:
          locationType: OBJECT_LIST
          namespace: acme
          bucket: %[3]s
          objectNames: [train.jsonl]
  endpoint:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: %[1]s
      modelId: ${model.id}
      displayName: %[2]s-endpoint
outputs:
  accuracy: ${model.evaluationResults[0].metrics[0].accuracy}
  modelState: ${model.state}
`, server.Tenancy, prefix, bucket, modelName)
}

// liveOf lists, with the official SDK, the projects, models and endpoints
// of the tenancy named prefix-* (the model by its name) that are not
// DELETED or DELETING, by display name.
func liveOf(t *testing.T, c ailanguage.AIServiceLanguageClient, prefix, modelName string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	comp := server.Tenancy
	gone := func(s string) bool { return s == "DELETED" || s == "DELETING" }
	ps, err := c.ListProjects(context.Background(), ailanguage.ListProjectsRequest{CompartmentId: &comp, Limit: common.Int(1000)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps.Items {
		if n := strOf(p.DisplayName); strings.HasPrefix(n, prefix+"-") && !gone(string(p.LifecycleState)) {
			out[n] = append(out[n], strOf(p.Id))
		}
	}
	ms, err := c.ListModels(context.Background(), ailanguage.ListModelsRequest{CompartmentId: &comp, Limit: common.Int(1000)})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms.Items {
		if n := strOf(m.DisplayName); n == modelName && !gone(string(m.LifecycleState)) {
			out[n] = append(out[n], strOf(m.Id))
		}
	}
	es, err := c.ListEndpoints(context.Background(), ailanguage.ListEndpointsRequest{CompartmentId: &comp, Limit: common.Int(1000)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range es.Items {
		if n := strOf(ep.DisplayName); strings.HasPrefix(n, prefix+"-") && !gone(string(ep.LifecycleState)) {
			out[n] = append(out[n], strOf(ep.Id))
		}
	}
	return out
}

// checkModelConverged checks that the emulator holds the project, the
// model and the endpoint of the spec once each, the endpoint deploying the
// model, and that state names exactly them, with no intent left.
func checkModelConverged(t *testing.T, c ailanguage.AIServiceLanguageClient, w *ws, prefix, modelName string) {
	t.Helper()
	live := liveOf(t, c, prefix, modelName)
	st := w.stateList()
	for node, name := range map[string]string{"project": prefix + "-project", "model": modelName, "endpoint": prefix + "-endpoint"} {
		if ids := live[name]; len(ids) != 1 || st[node].ID != ids[0] {
			t.Errorf("the emulator holds %s %v, state %q; want exactly the one state names", name, ids, st[node].ID)
		}
		delete(live, name)
		delete(st, node)
	}
	for name, ids := range live {
		t.Errorf("the emulator holds undeclared %s %v", name, ids)
	}
	for node, ent := range st {
		t.Errorf("state holds undeclared %s = %+v", node, ent)
	}
	if ins := w.stateIntents(); len(ins) != 0 {
		t.Errorf("intents left after a complete apply: %+v", ins)
	}
}

// TestE2EProjectModelEndpoint applies a project, a model trained in it and
// an endpoint deploying the model, in that order from their references;
// the next plan is clean; a rename updates the model in place, a new
// training dataset replaces it (and the endpoint moves to the new model);
// import prints YAML that declares the model; destroy leaves nothing.
func TestE2EProjectModelEndpoint(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	c := e.sdkClient(t)
	prefix := strings.ToLower(t.Name())
	w.write("main.yaml", modelSpec(prefix, "reviews", prefix+"-model"))

	r := w.must(0, "apply", "--auto-approve", "--progress-interval", "200ms")
	wantStdout(t, r, "project: Creation complete", "model: Creating...", "model: Creation complete", "endpoint: Creation complete", "Apply complete! 3 created")
	if strings.Index(r.stdout, "model: Creation complete") > strings.Index(r.stdout, "endpoint: Creating...") {
		t.Errorf("the endpoint was created before its model was trained:\n%s", r.stdout)
	}
	wantOutput(t, r, "modelState", "ACTIVE")
	checkModelConverged(t, c, w, prefix, prefix+"-model")
	model := w.stateShow("model")
	if model.Outputs["version"] == nil || model.Outputs["evaluationResults"] == nil {
		t.Errorf("state of the model: outputs %v, want its version and evaluation results", model.Outputs)
	}
	ep, err := c.GetEndpoint(context.Background(), ailanguage.GetEndpointRequest{EndpointId: common.String(w.stateShow("endpoint").ID)})
	if err != nil || strOf(ep.ModelId) != model.ID || strOf(ep.ProjectId) != w.stateShow("project").ID {
		t.Errorf("the endpoint deploys %s of %s (%v), want the model %s of the project", strOf(ep.ModelId), strOf(ep.ProjectId), err, model.ID)
	}
	w.must(0, "plan", "--detailed-exitcode")
	w.must(0, "drift")

	w.write("main.yaml", modelSpec(prefix, "reviews", prefix+"-model-v2"))
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "~ model", "updated in place")
	w.must(0, "apply", "--auto-approve")
	if got := w.stateShow("model"); got.ID != model.ID {
		t.Errorf("a rename replaced the model: %s → %s", model.ID, got.ID)
	}

	w.write("main.yaml", modelSpec(prefix, "reviews-2", prefix+"-model-v2"))
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "model (oci:AiLanguage:Model) must be replaced", "forces replacement")
	// The emulator refuses, as OCI does, to delete a model an endpoint
	// deploys: the old model goes once the endpoint has moved.
	r = w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "Apply complete! 0 created, 1 updated, 1 replaced, 0 destroyed")
	moved, deleted := strings.Index(r.stdout, "endpoint: Modifications complete"), strings.Index(r.stdout, "model: Destroying... [id="+model.ID+"]")
	if moved < 0 || deleted < moved || strings.Index(r.stdout, "model: Creation complete") > moved {
		t.Errorf("want the new model created, the endpoint moved to it, then the old model %s destroyed:\n%s", model.ID, r.stdout)
	}
	checkModelConverged(t, c, w, prefix, prefix+"-model-v2")
	if got := w.stateShow("model"); got.ID == model.ID {
		t.Errorf("a new training dataset did not replace the model %s", model.ID)
	}
	w.must(0, "plan", "--detailed-exitcode")

	other := newWS(t, e)
	other.write("main.yaml", "resources: {}\n")
	other.must(0, "plan") // a new, empty state
	r = other.must(0, "import", "adopted", w.stateShow("model").ID, "--type", "oci:AiLanguage/model:Model")
	wantStdout(t, r, "type: oci:AiLanguage:Model", "modelDetails:", "modelType: TEXT_CLASSIFICATION", "bucket: reviews-2", "projectId: "+w.stateShow("project").ID)
	if strings.Contains(r.stdout, "evaluationResults") || strings.Contains(r.stdout, "Oracle-Tags") {
		t.Errorf("import printed outputs or the cloud's tags:\n%s", r.stdout)
	}

	w.must(0, "destroy", "--auto-approve")
	if live := liveOf(t, c, prefix, prefix+"-model-v2"); len(live) != 0 {
		t.Errorf("destroy left %v", live)
	}
}

// TestE2EModelTrainingFails: a training that fails stops the apply with the
// service's lifecycleDetails, keeps the model in state tainted and skips
// the endpoint that needed it; once training works again, the next apply
// replaces the failed model and creates the endpoint.
func TestE2EModelTrainingFails(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	prefix := strings.ToLower(t.Name())
	const why = "Training failed: the training dataset contains no labelled records"
	e.settings(server.Settings{TrainingFailure: why})
	w.write("main.yaml", modelSpec(prefix, "reviews", prefix+"-model"))
	r := w.must(1, "apply", "--auto-approve")
	wantContains(t, r, why, "project: Creation complete")
	st := w.stateList()
	if !st["model"].Tainted || st["model"].ID == "" {
		t.Errorf("after the failed training, state has model = %+v; want it tainted", st["model"])
	}
	if _, ok := st["endpoint"]; ok {
		t.Errorf("the endpoint of a failed model was created: %+v", st["endpoint"])
	}
	failed := st["model"].ID

	e.settings(server.Settings{})
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "model (oci:AiLanguage:Model) must be replaced")
	w.must(0, "apply", "--auto-approve")
	checkModelConverged(t, e.sdkClient(t), w, prefix, prefix+"-model")
	if w.stateShow("model").ID == failed {
		t.Errorf("the failed model %s was kept", failed)
	}
	w.must(0, "plan", "--detailed-exitcode")
}

// TestCrashSIGKILLModel kills applies of a project, a model and an endpoint
// deploying it with SIGKILL while the model trains (after its "Creating..."
// line, at a random moment of a 1.5 s training): the next apply resolves
// the interrupted create by replaying it with its retry token, adopting the
// model the first create made (or making it, had the create not reached
// OCI), and the emulator then holds each object once, with state naming
// them; destroy then leaves nothing.
func TestCrashSIGKILLModel(t *testing.T) {
	needBinary(t)
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	t.Parallel()
	n := trialCount(t, 4)
	var killedTraining atomic.Int32
	runTrials(t, n, 2, server.Settings{TrainingDelayMS: 1500, LatencyMS: 20}, func(t *testing.T, e *emu, _ string, i int, rng *rand.Rand) {
		w := newWS(t, e)
		c := e.sdkClient(t)
		prefix := fmt.Sprintf("train%02d-%d", i, rng.IntN(1e6))
		w.write("main.yaml", modelSpec(prefix, "reviews", prefix+"-model"))
		p := w.startProc(nil, "apply", "--auto-approve")
		p.waitFor(&p.out, "model: Creating...", 1)
		time.Sleep(time.Duration(rng.IntN(1200)) * time.Millisecond)
		killed := p.signal(syscall.SIGKILL)
		r := p.wait(30 * time.Second)
		if killed && p.signaled != syscall.SIGKILL {
			killed = false
		}
		if !killed && r.code != 0 {
			t.Fatalf("the first apply failed without being killed:\n%s", r)
		}
		intents := w.stateIntents()
		for _, in := range intents {
			if in.Name == "model" {
				killedTraining.Add(1)
			}
		}
		t.Logf("killed %v, intents pending %d", killed, len(intents))
		r = w.must(0, "apply", "--auto-approve")
		if len(intents) > 0 && !strings.Contains(r.stdout, "Resolving") {
			t.Errorf("%d intents were pending but the apply did not resolve them:\n%s", len(intents), r)
		}
		checkModelConverged(t, c, w, prefix, prefix+"-model")
		w.must(0, "plan", "--detailed-exitcode")
		w.must(0, "destroy", "--auto-approve")
		if live := liveOf(t, c, prefix, prefix+"-model"); len(live) != 0 {
			t.Errorf("destroy left %v", live)
		}
	})
	t.Logf("%d of %d trials were killed with the model's create in flight", killedTraining.Load(), n)
	if killedTraining.Load() == 0 {
		t.Errorf("no trial killed an apply while the model trained: the harness does not exercise the model's recovery")
	}
}

// TestCrashSIGKILLModelReplacement kills, with SIGKILL, an apply that
// replaces a model (a new training dataset) once the new model is trained
// and the endpoint has started moving to it. The old model, deleted only
// after the endpoint has moved (the emulator keeps the endpoint UPDATING
// for 20 s, so that the kill comes first), is then still live and recorded
// in state as deposed, beside the new one: nothing is orphaned. The next
// apply deletes it, and the emulator holds each declared object once.
func TestCrashSIGKILLModelReplacement(t *testing.T) {
	needBinary(t)
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	c := e.sdkClient(t)
	prefix := strings.ToLower(t.Name())
	w.write("main.yaml", modelSpec(prefix, "reviews", prefix+"-model"))
	w.must(0, "apply", "--auto-approve")
	old := w.stateShow("model").ID

	// The endpoint stays UPDATING long past the moment the kill follows
	// the line below, even on a loaded machine; the next apply waits out
	// what is left of it.
	e.settings(server.Settings{UpdateDelayMS: 20000})
	w.write("main.yaml", modelSpec(prefix, "reviews-2", prefix+"-model"))
	p := w.startProc(nil, "apply", "--auto-approve")
	if !p.waitFor(&p.out, "endpoint: Modifying...", 1) {
		t.Fatalf("the apply ended before it moved the endpoint:\n%s", p.wait(30*time.Second))
	}
	if !p.signal(syscall.SIGKILL) {
		t.Fatalf("the apply ended before it could be killed:\n%s", p.wait(30*time.Second))
	}
	if r := p.wait(30 * time.Second); p.signaled != syscall.SIGKILL {
		t.Fatalf("the apply was not killed:\n%s", r)
	}
	rec := w.stateShow("model")
	if rec.ID == old || !slices.Contains(rec.Deposed, old) {
		t.Errorf("after the kill, state has the model %s with deposed %v; want the new model with %s deposed", rec.ID, rec.Deposed, old)
	}
	if m, err := c.GetModel(context.Background(), ailanguage.GetModelRequest{ModelId: &old}); err != nil || m.LifecycleState != ailanguage.ModelLifecycleStateActive {
		t.Errorf("after the kill, the old model is %s (%v); want it ACTIVE: it may go only once the endpoint has moved", m.LifecycleState, err)
	}

	e.settings(server.Settings{})
	r := w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "model: Destroying... [id="+old+"]", "Apply complete!")
	checkModelConverged(t, c, w, prefix, prefix+"-model")
	if m, err := c.GetModel(context.Background(), ailanguage.GetModelRequest{ModelId: &old}); err == nil && m.LifecycleState != ailanguage.ModelLifecycleStateDeleted {
		t.Errorf("after the next apply, the old model is %s; want it DELETED", m.LifecycleState)
	}
	if rec := w.stateShow("model"); len(rec.Deposed) != 0 {
		t.Errorf("after the next apply, state still has %v deposed", rec.Deposed)
	}
	w.must(0, "plan", "--detailed-exitcode")
}
