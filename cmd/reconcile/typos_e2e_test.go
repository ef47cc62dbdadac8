package main

import (
	"strings"
	"testing"
)

// A misspelt key of the project's namespace in Pulumi.<stack>.yaml, whose
// value would be lost and the default used instead, is an error at its
// place, as the same typo given to --config is; keys of other namespaces
// (providers' settings) are left alone.
func TestE2EStackSettingTypo(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	w.write("Pulumi.yaml", "name: orders\nruntime: yaml\n")
	w.write("main.yaml", "config:\n  team:\n    type: string\n    default: core\n"+spec(policySpec("pol", rid(t, "")+"-${team}", "", "")))
	w.write("Pulumi.dev.yaml", "config:\n  gcp:project: acme-prod\n  orders:teem: nlp\n  oci:region: eu-frankfurt-1\n  replicas: 3\n")

	for _, cmd := range []string{"validate", "plan"} {
		r := w.must(1, cmd, "--stack", "dev")
		wantStderr(t, r, `Pulumi.dev.yaml:3:3: error: unknown config key "orders:teem" (did you mean "orders:team"?)`,
			`Pulumi.dev.yaml:5:3: error: unknown config key "replicas"`, "declare it under config:")
		if strings.Contains(r.stderr, "gcp:project") && !strings.Contains(r.stderr, "such as gcp:project") || strings.Contains(r.stderr, `"oci:region"`) {
			t.Errorf("a provider's setting is reported:\n%s", r)
		}
	}
	wantStderr(t, w.must(1, "validate", "--config", "teem=nlp"), `--config teem: no config named "teem" is declared (did you mean "team"?)`)

	w.write("Pulumi.dev.yaml", "config:\n  gcp:project: acme-prod\n  orders:team: nlp\n  oci:region: eu-frankfurt-1\n")
	w.must(0, "apply", "--auto-approve", "--stack", "dev")
	if got := e.policy(rid(t, "") + "-nlp"); len(got) == 0 {
		t.Errorf("the stack's setting was not used: no policy on %s-nlp", rid(t, ""))
	}
}
