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
