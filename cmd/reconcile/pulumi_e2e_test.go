package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A Pulumi YAML project as Pulumi lays it out: Pulumi.yaml names the
// project and, with main:, puts the program in a subdirectory, written in
// JSON (Main.json). reconcile is started from another directory; the
// program's directory is ${pulumi.cwd}, the project's
// ${pulumi.rootDirectory}, relative file paths are read from the program's
// directory, and ${res.urn} is the URN Pulumi would give.
func TestE2EPulumiProjectLayout(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	for _, d := range []string{"project/infra", "elsewhere"} {
		if err := os.MkdirAll(w.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.write("project/Pulumi.yaml", "name: orders\nruntime: yaml\nmain: infra/\nconfig:\n  relation:\n    type: string\n    default: editor\n")
	w.write("project/Pulumi.prod.yaml", "config:\n  orders:relation: editor\n")
	w.write("project/relation-note.txt", "from the project directory")
	program := map[string]any{
		"variables": map[string]any{
			"me":   map[string]any{"fn::invoke": map[string]any{"function": "datadog:getCurrentUser"}},
			"note": map[string]any{"fn::readFile": "../relation-note.txt"},
		},
		"resources": map[string]any{
			"pol": map[string]any{
				"type": "datadog:RestrictionPolicy",
				"properties": map[string]any{
					"resourceId": id,
					"bindings":   []any{map[string]any{"relation": "${orders:relation}", "principals": []any{"org:${me.orgId}"}}},
				},
			},
		},
		"outputs": map[string]any{
			"urn":  "${pol.urn}",
			"cwd":  "${pulumi.cwd}",
			"root": "${pulumi.rootDirectory}",
			"note": "${note}",
		},
	}
	b, err := json.MarshalIndent(program, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	w.write("project/infra/Main.json", string(b))

	run := func(want int, args ...string) result {
		t.Helper()
		// From a directory that is neither the project's nor the program's.
		return w.must(want, append(args, "-f", "../project", "--state", "../state.db", "--stack", "prod")...)
	}
	run0 := func(args ...string) result { t.Helper(); return run(0, args...) }
	w.dir = w.path("elsewhere")
	run0("validate")
	run0("apply", "--auto-approve")
	r := run0("output", "--output", "json")
	var doc struct {
		Outputs map[string]struct {
			Value any `json:"value"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("output --output json: %v\n%s", err, r)
	}
	root := filepath.Dir(w.dir) + "/project"
	for name, want := range map[string]string{
		"urn":  "urn:pulumi:prod::orders::datadog:index/restrictionPolicy:RestrictionPolicy::pol",
		"cwd":  root + "/infra",
		"root": root,
		"note": "from the project directory",
	} {
		if got := doc.Outputs[name].Value; got != want {
			t.Errorf("output %s = %v, want %q", name, got, want)
		}
	}
	if r := run0("plan", "--detailed-exitcode"); !strings.Contains(r.stdout, "No changes") {
		t.Errorf("second plan:\n%s", r)
	}

	// A program error is reported at its place in Main.json.
	w.write("../project/infra/Main.json", strings.Replace(string(b), `"outputs"`, `"outptus"`, 1))
	r = run(1, "validate")
	wantStderr(t, r, "Main.json:", `unknown top-level key "outptus" (did you mean "outputs"?)`)
	// main: that leads out of the project is refused, naming where.
	w.write("../project/Pulumi.yaml", "name: orders\nruntime: yaml\nmain: ../elsewhere\n")
	r = run(1, "validate")
	wantStderr(t, r, `Pulumi.yaml:3:7: main "../elsewhere" leads out of the project directory`)
}

// options.additionalSecretOutputs: the named field is never shown nor
// stored in clear, by plan, state or reconcile output.
func TestE2EAdditionalSecretOutputs(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	src := spec(policySpec("pol", id, "        - relation: viewer\n          principals: [\""+role2+"\"]\n",
		"      additionalSecretOutputs: [bindings]\n"))
	w.write("main.yaml", strings.Replace(src, "outputs:\n", "outputs:\n  bindingsOut: ${pol.bindings}\n  policyId: ${pol.id}\n", 1))
	r := w.must(0, "plan")
	if strings.Contains(r.stdout, role2) || !strings.Contains(r.stdout, "(sensitive value)") {
		t.Errorf("plan shows the bindings, or no sensitive value:\n%s", r)
	}
	w.must(0, "apply", "--auto-approve")
	state, err := os.ReadFile(w.path(".reconcile/state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(state), role2) {
		t.Errorf("the state file holds the bindings in clear")
	}
	r = w.must(0, "output")
	if strings.Contains(r.stdout, role2) || !strings.Contains(r.stdout, "bindingsOut  = (sensitive value)") || !strings.Contains(r.stdout, id) {
		t.Errorf("reconcile output:\n%s", r)
	}
	if r = w.must(0, "plan", "--detailed-exitcode"); strings.Contains(r.stdout, role2) {
		t.Errorf("second plan shows the bindings:\n%s", r)
	}
}

// A single-file program that names the project itself (name: at its top
// level, no Pulumi.yaml), as a Pulumi program that is its own project
// file does: ${NAME:key} reads its config, the stack's settings of its
// namespace set it, and the URNs and ${pulumi.project} carry the name.
func TestE2EPulumiProgramNamesProject(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("program.yaml", `name: test-yaml
runtime: yaml
config:
  relation:
    type: string
    default: viewer
variables:
  me:
    fn::invoke:
      function: datadog:getCurrentUser
resources:
  pol:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: `+id+`
      bindings:
        - relation: ${test-yaml:relation}
          principals: ["org:${me.orgId}"]
outputs:
  relation: ${test-yaml:relation}
  project: ${pulumi.project}
  urn: ${pol.urn}
`)
	w.write("Pulumi.prod.yaml", "config:\n  test-yaml:relation: editor\n  aws:region: us-east-1\n")
	w.must(0, "validate", "-f", "program.yaml", "--stack", "prod")
	r := w.must(0, "apply", "--auto-approve", "-f", "program.yaml", "--stack", "prod")
	wantOutput(t, r, "relation", "editor")
	wantOutput(t, r, "project", "test-yaml")
	wantOutput(t, r, "urn", "urn:pulumi:prod::test-yaml::datadog:index/restrictionPolicy:RestrictionPolicy::pol")
}

// Every variable is evaluated, whether anything uses it or not, as Pulumi
// evaluates the whole program (its TestUnusedVariablesEvaluated): plan
// reads an unused lookup and reports the errors of unused variables, and
// validate, offline, reports those the specs alone make, at their
// expressions, in text and in JSON.
func TestE2EUnusedVariablesEvaluated(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	w.write("main.yaml", `config:
  zones:
    type: List<String>
    default: [a, b]
variables:
  me:
    fn::invoke:
      function: datadog:getCurrentUser
  pick:
    fn::select: [5, "${zones}"]
  file:
    fn::readFile: missing.txt
`)
	want := []string{
		"main.yaml:10:5: error: fn::select index 5 out of range (length 2)",
		`main.yaml:12:5: error: fn::readFile "missing.txt": no such file or directory`,
	}
	r := w.must(1, "validate")
	wantStderr(t, r, append(want, "2 errors in the specs")...)
	r = w.must(1, "validate", "--output", "json")
	var doc struct {
		Valid       bool `json:"valid"`
		Diagnostics []struct {
			Line    int    `json:"line"`
			Message string `json:"message"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Valid || len(doc.Diagnostics) != 2 ||
		doc.Diagnostics[0].Line != 10 || doc.Diagnostics[1].Line != 12 {
		t.Errorf("validate --output json: %v, %+v; want the two errors", err, doc)
	}
	mark := e.mark()
	r = w.must(1, "plan")
	wantStderr(t, r, want...)
	if calls := e.callsSince(mark, "current_user"); len(calls) != 1 {
		t.Errorf("plan read the unused lookup %d times, want once: %v", len(calls), calls)
	}

	// Without errors, validate passes and plan reads the unused lookup.
	w.write("main.yaml", "variables:\n  me:\n    fn::invoke:\n      function: datadog:getCurrentUser\n  pick:\n    fn::select: [1, [a, b]]\n")
	w.must(0, "validate")
	mark = e.mark()
	w.must(0, "plan")
	if calls := e.callsSince(mark, "current_user"); len(calls) != 1 {
		t.Errorf("plan read the unused lookup %d times, want once: %v", len(calls), calls)
	}
}

// Map keys are kept as written, however they look: keys beginning with
// "__" (which some Pulumi SDKs reserve), the empty key, keys that differ
// only in case or punctuation, numeric keys; in stack outputs (Pulumi's
// l1-output-map) and in a resource's map property and its outputs
// (l2-map-keys-adversarial), through plan, a saved plan, apply, state and
// reconcile output.
func TestE2EPulumiMapKeysKept(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	w.write("main.yaml", `resources:
`+endpointSpec("ep", model, "map-keys", `      freeformTags:
        __type: dunder type
        __internal: dunder internal
        __provider: dunder provider
        __version: dunder version
        dunder_value: __dunder
`)+`outputs:
  empty: {}
  adversarialStrings:
    __type: dunder type
    __internal: dunder internal
    __provider: dunder provider
    __version: dunder version
    "": empty key
    empty value: ""
    dunder value: __dunder
  numbers:
    '1': 1
    '2': 2
  keys:
    my.key: 1
    my-key: 2
    my_key: 3
    MY_KEY: 4
    mykey: 5
    MYKEY: 6
  tags: ${ep.freeformTags}
`)
	wantOutputs := map[string]any{
		"empty": map[string]any{},
		"adversarialStrings": map[string]any{"__type": "dunder type", "__internal": "dunder internal", "__provider": "dunder provider",
			"__version": "dunder version", "": "empty key", "empty value": "", "dunder value": "__dunder"},
		"numbers": map[string]any{"1": 1.0, "2": 2.0},
		"keys":    map[string]any{"my.key": 1.0, "my-key": 2.0, "my_key": 3.0, "MY_KEY": 4.0, "mykey": 5.0, "MYKEY": 6.0},
		"tags": map[string]any{"__type": "dunder type", "__internal": "dunder internal", "__provider": "dunder provider",
			"__version": "dunder version", "dunder_value": "__dunder"},
	}
	check := func(what, doc string, planned bool) {
		t.Helper()
		var d struct {
			Outputs map[string]struct {
				Value   any  `json:"value"`
				Unknown bool `json:"unknown"`
			} `json:"outputs"`
		}
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, doc)
		}
		for name, want := range wantOutputs {
			got := d.Outputs[name]
			if planned && name == "tags" {
				continue // read from the resource once it exists
			}
			if !reflect.DeepEqual(got.Value, want) {
				t.Errorf("%s: output %s = %#v, want %#v", what, name, got.Value, want)
			}
		}
	}
	w.must(0, "plan", "--out", "keys.plan")
	check("show --output json of the saved plan", w.must(0, "show", "keys.plan", "--output", "json").stdout, true)
	w.must(0, "apply", "keys.plan")
	check("output --output json", w.must(0, "output", "--output", "json").stdout, false)
	if r := w.must(0, "state", "show", "ep"); !strings.Contains(r.stdout, `"__type":"dunder type"`) || !strings.Contains(r.stdout, `"dunder_value":"__dunder"`) {
		t.Errorf("state show ep: want the tags as written:\n%s", r)
	}
	check("plan --output json after apply", w.must(0, "plan", "--output", "json").stdout, false)
}
