package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noFile fails the test if the working directory holds name.
func (w *ws) noFile(name string) {
	w.t.Helper()
	if _, err := os.Stat(w.path(name)); !errors.Is(err, fs.ErrNotExist) {
		w.t.Errorf("%s exists (%v): a typo started a state", name, err)
	}
}

// A state location that looks like a URL but names no scheme this build
// reads is refused with the URL meant, wherever it is given (--state,
// RECONCILE_STATE, backend: url:, state migrate --to), and starts nothing;
// relative paths are paths.
func TestE2EStateURLTypos(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	w.write("main.yaml", spec(policySpec("pol", rid(t, ""), "", "")))
	for _, tc := range []struct{ url, want string }{
		{"etcd//127.0.0.1:2379/reconcile/p", `did you mean "etcd://127.0.0.1:2379/reconcile/p"?`},
		{"etc://127.0.0.1:2379/p", `did you mean "etcd://127.0.0.1:2379/p"?`},
		{"etcd:/127.0.0.1:2379/p", `did you mean "etcd://127.0.0.1:2379/p"?`},
		{"127.0.0.1:2379/p", `did you mean "etcd://127.0.0.1:2379/p"?`},
		{"postgres://reconcile@db:5432/state", "not supported by this build of reconcile yet"},
		{"s3://bucket/state", `state backend "s3://" is not supported`},
	} {
		wantStderr(t, w.must(1, "plan", "--state", tc.url), "--state: ", tc.want)
		w.extraEnv = []string{"RECONCILE_STATE=" + tc.url}
		wantStderr(t, w.must(1, "plan"), "RECONCILE_STATE: ", tc.want)
		w.extraEnv = nil
		w.write("Pulumi.yaml", "name: typos\nbackend:\n  url: "+tc.url+"\n")
		wantStderr(t, w.must(1, "plan"), "backend: url: in ", tc.want)
		if err := os.Remove(w.path("Pulumi.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"etcd", "etc", "etcd:", "127.0.0.1:2379", "postgres:", "s3:"} {
		w.noFile(name)
	}

	for _, path := range []string{"state/prod.db", "./etcd.db", "etcd/state.db"} {
		w.must(0, "plan", "--state", path)
		if _, err := os.Stat(w.path(filepath.FromSlash(path))); err != nil {
			t.Errorf("plan --state %s: %v", path, err)
		}
	}
	wantStderr(t, w.must(1, "state", "migrate", "--state", "state/prod.db", "--to", "etcd//127.0.0.1:2379/p"),
		"--to: ", `did you mean "etcd://127.0.0.1:2379/p"?`)
}

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
