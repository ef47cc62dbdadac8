package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
)

// noFile fails the test if the working directory holds name.
func (w *ws) noFile(name string) {
	w.t.Helper()
	if _, err := os.Stat(w.path(name)); !errors.Is(err, fs.ErrNotExist) {
		w.t.Errorf("%s exists (%v): a typo started a state", name, err)
	}
}

// A mistyped --stack or RECONCILE_STACK never starts an empty stack: a
// stack with neither state nor Pulumi.<stack>.yaml is an error naming the
// stacks there are (with state, or with a settings file) and how to create
// it; 'stack init NAME' creates one, and refuses one that exists. The
// default stack of a new project, and a stack declared by its settings
// file, are started by their first plan.
func TestE2EUnknownStack(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	w.write("main.yaml", spec(policySpec("pol", rid(t, "")+"-${pulumi.stack}", "", "")))

	w.must(0, "apply", "--auto-approve") // the default stack of a new project
	r := w.must(1, "apply", "--auto-approve", "--stack", "defualt")
	wantStderr(t, r, `stack "defualt" (--stack) does not exist (did you mean "default"?)`, "reconcile stack init defualt")
	w.noFile(".reconcile/state.defualt.db")

	r = w.must(0, "stack", "init", "dev")
	wantStdout(t, r, "Created stack dev", "state.dev.db")
	if _, err := os.Stat(w.path(".reconcile/state.dev.db")); err != nil {
		t.Fatalf("stack init dev made no state: %v", err)
	}
	r = w.must(1, "stack", "init", "dev")
	wantStderr(t, r, `stack "dev" exists already`)
	w.must(0, "apply", "--auto-approve", "--stack", "dev")

	for _, args := range [][]string{{"plan", "--stack", "dve"}, {"apply", "--auto-approve", "--stack", "dve"}, {"drift", "--stack", "dve"}, {"state", "list", "--stack", "dve"}} {
		r = w.must(1, args...)
		wantStderr(t, r, `stack "dve" (--stack) does not exist (did you mean "dev"?)`, "existing stacks: default, dev",
			"reconcile stack init dve", "Pulumi.dve.yaml")
	}
	w.extraEnv = []string{"RECONCILE_STACK=dve"}
	r = w.must(1, "apply", "--auto-approve")
	wantStderr(t, r, `stack "dve" (RECONCILE_STACK) does not exist (did you mean "dev"?)`)
	w.extraEnv = nil
	w.noFile(".reconcile/state.dve.db")
	if got := e.policy(rid(t, "") + "-dve"); len(got) != 0 {
		t.Errorf("the mistyped stack's apply wrote a policy: %+v", got)
	}

	// A stack declared by its settings file is started by its first plan,
	// and is among those suggested.
	w.write("Pulumi.staging.yaml", "config: {}\n")
	r = w.must(1, "plan", "--stack", "stagin")
	wantStderr(t, r, `(did you mean "staging"?)`, "existing stacks: default, dev, staging")
	w.must(0, "plan", "--stack", "staging")
	if _, err := os.Stat(w.path(".reconcile/state.staging.db")); err != nil {
		t.Errorf("the declared stack's plan started no state: %v", err)
	}

	r = w.must(0, "stack", "init", "qa", "--output", "json")
	doc := checkJSONDoc(t, "stack init --output json", r.stdout, "1.0")
	if doc["stack"] != "qa" || doc["lineage"] == "" || doc["backend"] != w.path(".reconcile/state.db") {
		t.Errorf("stack init --output json = %s", r.stdout)
	}
	if r = w.must(0, "stack", "ls"); r.stdout != "* default\n  dev\n  qa\n  staging\n" {
		t.Errorf("stack ls = %q", r.stdout)
	}
	wantStderr(t, w.must(1, "stack", "init", "no/such"), `stack name "no/such"`)
	wantStderr(t, w.must(1, "stack", "init"), "stack init takes one NAME")
}

// On etcd too: a stack is created by 'stack init' (or declared by its
// settings file), and a mistyped one writes nothing under the prefix.
func TestE2EUnknownStackEtcd(t *testing.T) {
	needBinary(t)
	t.Parallel()
	eps := etcdtest.Start(t)
	e := startEmulator(t)
	w := newWS(t, e)
	w.extraEnv = []string{"RECONCILE_STATE=" + etcdStateURL(eps, "/reconcile/typos")}
	w.write("main.yaml", spec(policySpec("pol", rid(t, "")+"-${pulumi.stack}", "", "")))

	r := w.must(1, "plan", "--stack", "prod")
	wantStderr(t, r, `stack "prod" (--stack) does not exist`, "reconcile stack init prod")
	if r = w.must(0, "stack", "ls"); !strings.HasPrefix(r.stdout, "No stacks in") {
		t.Fatalf("a refused plan started a stack on etcd:\n%s", r)
	}
	w.must(0, "stack", "init", "prod")
	wantStderr(t, w.must(1, "stack", "init", "prod"), `stack "prod" exists already`)
	w.must(0, "apply", "--auto-approve", "--stack", "prod")
	r = w.must(1, "apply", "--auto-approve", "--stack", "prdo")
	wantStderr(t, r, `stack "prdo" (--stack) does not exist (did you mean "prod"?)`, "existing stacks: prod")
	if r = w.must(0, "stack", "ls", "--stack", "prod"); r.stdout != "* prod\n" {
		t.Errorf("stack ls = %q, want prod alone", r.stdout)
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

// import in a new project starts the state, as plan and apply do: of the
// default stack, or of a declared one; never of a mistyped stack.
func TestE2EImportStartsState(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	c := e.ociClient(t.TempDir())
	first := e.createEndpoint(c, model, "first")
	second := e.createEndpoint(c, model, "second")
	w.write("main.yaml", lookupsSpec)
	w.write("Pulumi.dev.yaml", "config: {}\n")

	r := w.must(1, "import", "ep", first, "--type", "oci:AiLanguage:Endpoint", "--stack", "dve")
	wantStderr(t, r, `stack "dve" (--stack) does not exist (did you mean "dev"?)`)
	w.noFile(".reconcile/state.dve.db")

	r = w.must(0, "import", "ep", first, "--type", "oci:AiLanguage:Endpoint")
	wantStderr(t, r, "Imported "+first)
	w.must(0, "import", "ep", second, "--type", "oci:AiLanguage:Endpoint", "--stack", "dev")
	if got := w.stateList(); got["ep"].ID != first {
		t.Errorf("the default stack's state: %+v, want ep = %s", got, first)
	}
	wantStdout(t, w.must(0, "state", "list", "--stack", "dev"), second)
}
