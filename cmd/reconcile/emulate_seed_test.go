package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runEmulate runs "reconcile emulate" with a context that is already done,
// so that it starts, reports and stops at once.
func runEmulate(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var so, se bytes.Buffer
	args = append([]string{"emulate", "--listen", "127.0.0.1:0", "--data", t.TempDir()}, args...)
	code = run(ctx, args, strings.NewReader(""), &so, &se)
	return code, so.String(), se.String()
}

func TestCLIEmulateSeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"datadog": {"policies": [{"resourceId": "dashboard:x", "bindings": [{"relation": "viewer", "principals": ["role:11111111-2222-4333-8444-555555555555"]}]}]}}`), 0o600)
	code, out, errOut := runEmulate(t, "--seed", good)
	if code != 0 || !strings.Contains(out, "Seeded from "+good+": 1 object added, 0 already there") {
		t.Errorf("emulate --seed %s: exit %d\nstdout: %s\nstderr: %s", good, code, out, errOut)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"oci": {"models": [{"id": "ocid1.ailanguagemodel.oc1.iad.m", "displayName": "m", "projectId": "p", "state": "BOGUS"}]}}`), 0o600)
	code, out, errOut = runEmulate(t, "--seed", bad)
	if code != 1 || strings.Contains(out, "listening") || !strings.Contains(errOut, bad) || !strings.Contains(errOut, `oci.models[0] "ocid1.ailanguagemodel.oc1.iad.m": state "BOGUS"`) {
		t.Errorf("emulate --seed %s: exit %d\nstdout: %s\nstderr: %s\nwant exit 1 naming the file and the entry, before listening", bad, code, out, errOut)
	}
}
