package main

// End-to-end regressions of the trust issue, with the real binary on the
// emulator: each test names the defect it guards against.

import (
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
