package main

// End-to-end regressions of the trust issue, with the real binary on the
// emulator: each test names the defect it guards against.

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// drift and destroy never evaluate the specs' inputs, so they must not
// demand config values, secrets included, that only plan and apply use.
func TestE2EDriftDestroyNeedNoConfig(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	w.write("main.yaml", `config:
  label:
    type: string
  token:
    type: string
    secret: true
resources:
`+endpointSpec("ep", model, "${label}", "      description: {fn::join: [\"-\", [\"tok\", \"${token}\"]]}\n"))
	w.must(0, "apply", "--auto-approve", "--config", "label=cfg-ep", "--config", "token=s3cr3t-value")
	r := w.must(0, "drift")
	wantStdout(t, r, "No drift")
	r = w.must(0, "destroy", "--auto-approve")
	wantStdout(t, r, "Destroy complete! 0 created, 0 updated, 0 replaced, 1 destroyed")
	r = w.run("plan")
	if r.code != 1 || !strings.Contains(r.stderr, `config "label" has no value`) {
		t.Errorf("plan without the config values: want exit 1 naming the missing value, got:\n%s", r)
	}
}

// What comes from the specs or the cloud is printed escaped: an id holding
// a carriage return or an escape sequence cannot overwrite a line or clear
// the screen, in any command's output.
func TestE2ETerminalInjection(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	hostile := `dashboard:evil\rApply complete! 0 destroyed\e[2J\u202e`
	w.write("main.yaml", "resources:\n  pol:\n    type: datadog:RestrictionPolicy\n    properties:\n      resourceId: \""+hostile+"\"\n"+
		"      bindings:\n        - relation: editor\n          principals: [\""+role1+"\"]\n")
	runs := []result{
		w.must(0, "plan"),
		w.must(0, "apply", "--auto-approve"),
		w.must(0, "state", "list"),
		w.must(0, "state", "show", "pol"),
		w.must(0, "drift"),
		w.must(0, "destroy", "--auto-approve"),
	}
	for _, r := range runs {
		for _, bad := range []string{"\r", "\x1b", "\u202e"} {
			if strings.Contains(r.stdout+r.stderr, bad) {
				t.Errorf("reconcile %s printed %q raw:\n%q", strings.Join(r.args, " "), bad, r.stdout+r.stderr)
			}
		}
	}
	if !strings.Contains(runs[1].stdout, `dashboard:evil\rApply complete!`) && !strings.Contains(runs[1].stdout, `dashboard:evil\u000dApply complete!`) {
		t.Errorf("apply does not show the id escaped:\n%s", runs[1].stdout)
	}
}

// The restriction policy API's create is an upsert. A policy that already
// exists (made in the UI, or by another stack) is never overwritten: apply
// refuses, names it and says how to adopt it; adopting it works; importing
// a policy that does not exist is refused.
func TestE2EPolicyCreateNeverOverwrites(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	pid := rid(t, "")
	e.setPolicy(pid, []binding{{Relation: "viewer", Principals: []string{role2}}})

	w.write("main.yaml", spec(policySpec("pol", pid, "", "")))
	r := w.run("apply", "--auto-approve")
	if r.code != 1 {
		t.Fatalf("apply over a policy made outside: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, `datadog:RestrictionPolicy "`+pid+`" already exists`, "options.import: "+pid, "reconcile import pol "+pid+" --type datadog:RestrictionPolicy")
	if got := e.policy(pid); len(got) != 1 || got[0].Relation != "viewer" {
		t.Errorf("the policy made outside was changed: %+v", got)
	}
	if ins := w.stateIntents(); len(ins) != 0 {
		t.Errorf("a refused create left intents: %+v", ins)
	}

	// Adopted with options.import, it is then updated to the specs.
	w.write("main.yaml", spec(policySpec("pol", pid, "", "      import: "+pid+"\n")))
	r = w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "1 imported")
	if got := e.policy(pid); len(got) != 1 || got[0].Relation != "editor" {
		t.Errorf("the adopted policy was not updated to the specs: %+v", got)
	}

	// Nothing to import where there is no policy.
	r = w.run("import", "other", rid(t, "none"), "--type", "datadog:RestrictionPolicy")
	if r.code != 1 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("import of a policy that does not exist: want exit 1 saying so, got:\n%s", r)
	}
}

// A saved plan file edited after it was made (an added delete) is refused
// whole before anything runs.
func TestE2EPlanFileEditedIsRefused(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	a, b := rid(t, "a"), rid(t, "b")
	w.write("main.yaml", spec(policySpec("a", a, "", ""), policySpec("b", b, "", "")))
	w.must(0, "apply", "--auto-approve")
	w.write("main.yaml", spec(policySpec("a", a, fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n", role2), ""), policySpec("b", b, "", "")))
	w.must(0, "plan", "--out", "p.plan")
	data, err := os.ReadFile(w.path("p.plan"))
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte(`"action":"no-op"`), []byte(`"action":"delete"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatalf("the plan has no no-op to edit:\n%s", data)
	}
	w.write("p.plan", string(edited))
	r := w.run("apply", "p.plan")
	if r.code != 1 || !strings.Contains(r.stderr, "the plan file was changed after it was made") {
		t.Fatalf("apply of an edited plan file: want exit 1 saying it was changed, got:\n%s", r)
	}
	if len(e.policy(b)) != 1 || len(e.policy(a)) != 1 {
		t.Errorf("an edited plan file changed the cloud: a %v, b %v", e.policy(a), e.policy(b))
	}
	w.write("p.plan", string(data))
	w.must(0, "apply", "p.plan")
}
