package main

// In-process tests of the command line: run() with buffers, no network.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/plan"
)

// runCLI runs reconcile in-process with no stdin.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var so, se bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &so, &se)
	if strings.Contains(se.String(), "goroutine ") || strings.Contains(se.String(), "panic:") {
		t.Errorf("reconcile %v printed a stack trace:\n%s", args, se.String())
	}
	return code, so.String(), se.String()
}

func TestCLIHelpForEveryCommand(t *testing.T) {
	t.Parallel()
	for _, cmd := range commands() {
		for _, args := range [][]string{{cmd.name, "-h"}, {cmd.name, "--help"}, {"help", cmd.name}} {
			code, out, errOut := runCLI(t, args...)
			if code != 0 {
				t.Errorf("reconcile %v: exit %d, want 0\n%s", args, code, errOut)
			}
			if !strings.HasPrefix(out, "Usage: reconcile "+cmd.name) {
				t.Errorf("reconcile %v: stdout does not start with the usage line:\n%s", args, out)
			}
			if !strings.Contains(out, cmd.summary) || !strings.Contains(out, "--output") {
				t.Errorf("reconcile %v: usage lacks the summary or the global flags:\n%s", args, out)
			}
			// The command's own flags come first, described; the global
			// ones after them, named only.
			own, global := strings.Index(out, "\nFlags:\n"), strings.Index(out, "\nGlobal flags")
			if global < 0 || own > global || strings.Contains(out[global:], "where state lives") {
				t.Errorf("reconcile %v: want the command's flags, then the global ones named:\n%s", args, out)
			}
			if errOut != "" {
				t.Errorf("reconcile %v: help wrote to stderr: %s", args, errOut)
			}
		}
	}
	// Every flag is described somewhere: a command's own in its help, the
	// global ones in 'reconcile help'.
	_, top, _ := runCLI(t, "help")
	for _, cmd := range commands() {
		_, help, _ := runCLI(t, cmd.name, "-h")
		fs, _ := (&cli{}).flagSet(cmd)
		fs.VisitAll(func(f *flag.Flag) {
			where, text := "reconcile "+cmd.name+" -h", help[strings.Index(help, "\nFlags:\n")+1:]
			if isGlobal(f.Name) {
				where, text = "reconcile help", top
			}
			_, usage := flag.UnquoteUsage(f)
			if !strings.Contains(text, "  "+dashed(f.Name)) || !strings.Contains(text, usage) {
				t.Errorf("%s does not describe %s of %s (%q)", where, dashed(f.Name), cmd.name, usage)
			}
		})
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, out, _ := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("reconcile %v: exit %d\n%s", args, code, out)
		}
		for _, cmd := range commands() {
			if !strings.Contains(out, "  "+cmd.name+" ") {
				t.Errorf("reconcile %v does not list %s:\n%s", args, cmd.name, out)
			}
		}
	}
	// No command at all: usage on stderr, exit 1.
	code, out, errOut := runCLI(t)
	if code != 1 || out != "" || !strings.Contains(errOut, "Usage:") {
		t.Errorf("reconcile with no command: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestCLIEmulateHelpDocumentsAdminAPI(t *testing.T) {
	t.Parallel()
	_, out, _ := runCLI(t, "emulate", "-h")
	for _, s := range []string{"/_emulator/credentials", "/_emulator/settings", "latencyMs", "faultRate", "createDelayMs", "--emulator=http://", "--seed FILE", "consumerPolicies", "resourceId"} {
		if !strings.Contains(out, s) {
			t.Errorf("emulate -h does not mention %s", s)
		}
	}
}

func TestCLIUnknownCommandSuggests(t *testing.T) {
	t.Parallel()
	for typo, want := range map[string]string{"pln": "plan", "aply": "apply", "valdate": "validate", "stat": "state"} {
		code, out, errOut := runCLI(t, typo)
		if code != 1 {
			t.Errorf("reconcile %s: exit %d, want 1", typo, code)
		}
		if out != "" {
			t.Errorf("reconcile %s wrote to stdout: %q", typo, out)
		}
		if !strings.Contains(errOut, `unknown command "`+typo+`"`) || !strings.Contains(errOut, `did you mean "`+want+`"`) {
			t.Errorf("reconcile %s: stderr %q, want a suggestion of %q", typo, errOut, want)
		}
	}
	code, _, errOut := runCLI(t, "state", "lst")
	if code != 1 || !strings.Contains(errOut, `did you mean "list"`) {
		t.Errorf("reconcile state lst: exit %d, stderr %q", code, errOut)
	}
}

func TestCLIBadFlag(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"plan", "--nope"},
		{"apply", "--parallelism", "many"},
		{"plan", "--lock-timeout", "soon"},
		{"validate", "--config", "novalue"},
		{"plan", "--emulator=ftp://x"},
		{"plan", "--emulator=http://10.1.2.3:8080"},
		{"plan", "--emulator=https://emulator.example.com"},
		{"apply", "--parallelism", "0"},
		{"drift", "--parallelism", "-3"},
		{"apply", "--lock-ttl", "2s"},
		{"plan", "--lock-timeout", "-1s"},
		{"state", "migrate"}, // no --to
		{"state", "migrate", "--to", "ftp://x"},
		{"plan", "--state", "etcd://user:pw@h:2379/p"}, // credentials belong in ETCDCTL_*
		{"version", "-f", "x.yaml"},                    // version takes no -f
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 1 {
			t.Errorf("reconcile %v: exit %d, want 1", args, code)
		}
		if errOut == "" {
			t.Errorf("reconcile %v: nothing on stderr", args)
		}
		if out != "" {
			t.Errorf("reconcile %v wrote to stdout: %q", args, out)
		}
		if strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "Usage:") {
			t.Errorf("reconcile %v: want one line on stderr, got:\n%s", args, errOut)
		}
	}
}

// A flag the command does not take, or a value a flag refuses, is one line:
// what is wrong, a suggestion for a near miss, and where the flags are.
func TestCLIFlagErrorsAreOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--detailed-exit-code"}, "reconcile plan: unknown flag --detailed-exit-code (did you mean --detailed-exitcode?); 'reconcile plan -h' lists its flags"},
		{[]string{"apply", "--auto-aprove"}, "reconcile apply: unknown flag --auto-aprove (did you mean --auto-approve?); 'reconcile apply -h' lists its flags"},
		{[]string{"plan", "-detailed-exit-code=true"}, "unknown flag --detailed-exit-code (did you mean --detailed-exitcode?)"},
		{[]string{"drift", "--auto-approve"}, "reconcile drift: unknown flag --auto-approve (a flag of apply and destroy); 'reconcile drift -h' lists its flags"},
		{[]string{"plan", "--nope"}, "reconcile plan: unknown flag --nope; 'reconcile plan -h' lists its flags"},
		{[]string{"apply", "--parallelism", "many"}, `reconcile apply: --parallelism "many": want a whole number; 'reconcile apply -h' lists its flags`},
		{[]string{"plan", "--lock-timeout", "soon"}, `--lock-timeout "soon": want a duration such as 30s or 5m`},
		{[]string{"plan", "--refresh=maybe"}, `--refresh "maybe": want true or false`},
		{[]string{"plan", "--out"}, "reconcile plan: --out needs a value; 'reconcile plan -h' lists its flags"},
		{[]string{"validate", "--config", "novalue"}, `reconcile validate: --config: want KEY=VALUE, got "novalue"`},
		{[]string{"plan", "--emulator=http://10.1.2.3:8080"}, "reconcile plan: --emulator=http://10.1.2.3:8080: the emulator must be on this machine"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("reconcile %v: exit %d, stdout %q, stderr %q; want exit 1 and one line holding %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestCLIOutputFormatRefused(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"plan", "validate", "version", "state"} {
		code, _, errOut := runCLI(t, cmd, "--output", "yaml")
		if code != 1 || !strings.Contains(errOut, "--output must be text, json or markdown") || !strings.Contains(errOut, `"yaml"`) {
			t.Errorf("reconcile %s --output yaml: exit %d, stderr %q", cmd, code, errOut)
		}
	}
}

// The types reconcile serves, by canonical token and kind: the five of the
// SPEC and the GCP IAM resources.
var wantTypes = map[string]string{
	"gcp:endpoints:getServiceIamPolicy":          "function",
	"gcp:endpoints:getServiceConsumersIamPolicy": "function",
	"gcp:endpoints:ServiceIamPolicy":             "resource",
	"gcp:endpoints:ServiceIamBinding":            "resource",
	"gcp:endpoints:ServiceIamMember":             "resource",
	"gcp:endpoints:ConsumersIamPolicy":           "resource",
	"gcp:endpoints:ConsumersIamBinding":          "resource",
	"gcp:endpoints:ConsumersIamMember":           "resource",
	"gcp:organizations:getIAMPolicy":             "function",
	"oci:AiLanguage:Endpoint":                    "resource",
	"oci:AiLanguage:Project":                     "resource",
	"oci:AiLanguage:Model":                       "resource",
	"datadog:RestrictionPolicy":                  "resource",
	"datadog:getCurrentUser":                     "function",
}

func TestCLISchemaList(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "schema")
	if code != 0 {
		t.Fatalf("schema: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(wantTypes) {
		t.Errorf("schema lists %d types, want %d:\n%s", len(lines), len(wantTypes), out)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Errorf("schema line %q: want TYPE KIND", line)
			continue
		}
		kind, ok := wantTypes[f[0]]
		if !ok {
			t.Errorf("schema lists an unexpected type %q", f[0])
		} else if kind != f[1] {
			t.Errorf("schema: %s is a %s, want %s", f[0], f[1], kind)
		}
	}
}

func TestCLISchemaType(t *testing.T) {
	t.Parallel()
	for arg, token := range map[string]string{
		"oci:ai_language:Endpoint":                          "oci:AiLanguage:Endpoint",
		"oci:AiLanguage/endpoint:Endpoint":                  "oci:AiLanguage:Endpoint",
		"oci:AiLanguage/model:Model":                        "oci:AiLanguage:Model",
		"oci:ai_language:Project":                           "oci:AiLanguage:Project",
		"datadog:index/restrictionPolicy:RestrictionPolicy": "datadog:RestrictionPolicy",
		"gcp:endpoints:getServiceIamPolicy":                 "gcp:endpoints:getServiceIamPolicy",
		"datadog:getCurrentUser":                            "datadog:getCurrentUser",
	} {
		code, out, errOut := runCLI(t, "schema", arg)
		if code != 0 {
			t.Errorf("schema %s: exit %d: %s", arg, code, errOut)
			continue
		}
		var doc struct {
			Token      string                     `json:"x-token"`
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Errorf("schema %s does not print JSON: %v\n%s", arg, err, out)
			continue
		}
		if doc.Token != token || doc.Type != "object" || len(doc.Properties) == 0 {
			t.Errorf("schema %s: x-token %q type %q, %d properties", arg, doc.Token, doc.Type, len(doc.Properties))
		}
	}
	code, out, _ := runCLI(t, "schema", "oci:ai_language:Endpoint")
	if code == 0 {
		var doc struct {
			Properties map[string]struct {
				Default any `json:"default"`
			} `json:"properties"`
		}
		json.Unmarshal([]byte(out), &doc)
		if d, ok := doc.Properties["inferenceUnits"].Default.(float64); !ok || d != 1 {
			t.Errorf("schema oci:AiLanguage:Endpoint: inferenceUnits default = %v, want 1", doc.Properties["inferenceUnits"].Default)
		}
	}
	code, _, errOut := runCLI(t, "schema", "datadog:RestrictionPolicyy")
	if code != 1 || !strings.Contains(errOut, `did you mean "datadog:RestrictionPolicy"`) {
		t.Errorf("schema of a misspelt type: exit %d, stderr %q", code, errOut)
	}
	code, out, _ = runCLI(t, "schema", "document")
	if code != 0 || !json.Valid([]byte(out)) {
		t.Errorf("schema document: exit %d, valid JSON %v", code, json.Valid([]byte(out)))
	}
}

var posRE = regexp.MustCompile(`(?m)^testdata/invalid\.yaml:(\d+):(\d+): `)

func TestCLIValidate(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "validate", "-f", "testdata/valid.yaml")
	if code != 0 {
		t.Fatalf("validate of a valid spec: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "The specs are valid: 2 resources, 3 variables, 3 outputs.") {
		t.Errorf("validate: stdout %q", out)
	}
	code, out, _ = runCLI(t, "validate", "-f", "testdata/valid.yaml", "--output", "json")
	var v struct {
		Valid     bool `json:"valid"`
		Resources int  `json:"resources"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || !v.Valid || v.Resources != 2 {
		t.Errorf("validate --output json: exit %d, %s", code, out)
	}
	doc := checkJSONDoc(t, "validate --output json", out, "1.0")
	wantEmptyList(t, "validate --output json", doc, "diagnostics")

	code, out, errOut = runCLI(t, "validate", "-f", "testdata/invalid.yaml")
	if code != 1 {
		t.Fatalf("validate of an invalid spec: exit %d, want 1\n%s", code, out)
	}
	// All the errors at once, each FILE:LINE:COL, in file order.
	want := []struct {
		line, col string
		text      string
	}{
		{"8", "7", `unknown field "displayNme"`},
		{"9", "23", `"inferenceUnits"`},
		{"13", "29", `unknown reference ${nope.id}`},
	}
	got := posRE.FindAllStringSubmatchIndex(errOut, -1)
	if len(got) != len(want) {
		t.Fatalf("validate: %d positioned errors, want %d:\n%s", len(got), len(want), errOut)
	}
	for i, w := range want {
		m := got[i]
		line, col := errOut[m[2]:m[3]], errOut[m[4]:m[5]]
		end := len(errOut)
		if i+1 < len(got) {
			end = got[i+1][0]
		}
		msg := errOut[m[1]:end]
		if line != w.line || col != w.col || !strings.Contains(msg, w.text) {
			t.Errorf("error %d: %s:%s: %q, want %s:%s: ...%s...", i, line, col, msg, w.line, w.col, w.text)
		}
	}
	if !strings.Contains(errOut, `did you mean "displayName"`) {
		t.Errorf("validate: no suggestion for displayNme:\n%s", errOut)
	}

	// The same as JSON, on stdout (docs/validate-json.md).
	code, out, _ = runCLI(t, "validate", "-f", "testdata/invalid.yaml", "--output", "json")
	var invalid struct {
		FormatVersion string `json:"format_version"`
		Valid         bool   `json:"valid"`
		ErrorCount    int    `json:"error_count"`
		Diagnostics   []struct {
			File, Severity, Message, Detail, Suggestion string
			Line, Column                                int
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &invalid); err != nil || code != 1 {
		t.Fatalf("validate --output json of an invalid spec: exit %d, %v:\n%s", code, err, out)
	}
	checkJSONDoc(t, "validate --output json of an invalid spec", out, "1.0")
	if invalid.FormatVersion != "1.0" || invalid.Valid || invalid.ErrorCount != len(want) || len(invalid.Diagnostics) != len(want) {
		t.Fatalf("validate --output json: %+v, want %d errors", invalid, len(want))
	}
	for i, w := range want {
		d := invalid.Diagnostics[i]
		if fmt.Sprint(d.Line) != w.line || fmt.Sprint(d.Column) != w.col || d.File != "testdata/invalid.yaml" || d.Severity != "error" || !strings.Contains(d.Message, w.text) {
			t.Errorf("diagnostic %d = %+v, want %s:%s %s", i, d, w.line, w.col, w.text)
		}
	}
	if d := invalid.Diagnostics[0]; d.Suggestion != "displayName" || !strings.Contains(d.Detail, "valid fields") {
		t.Errorf("diagnostic 0: suggestion %q, detail %q; want displayName and the valid fields", d.Suggestion, d.Detail)
	}

	code, _, errOut = runCLI(t, "validate", "-f", "testdata/does-not-exist.yaml")
	if code != 1 || !strings.Contains(errOut, "does-not-exist.yaml") {
		t.Errorf("validate of a missing file: exit %d, stderr %q", code, errOut)
	}
	code, _, _ = runCLI(t, "validate", "-f", "testdata/valid.yaml", "extra")
	if code != 1 {
		t.Errorf("validate with an argument: exit %d, want 1", code)
	}
}

func TestCLIVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		code, out, _ := runCLI(t, args...)
		if code != 0 || out != thisBuild.String()+"\n" {
			t.Errorf("reconcile %v: exit %d, stdout %q", args, code, out)
		}
	}
	code, out, _ := runCLI(t, "version", "--output", "json")
	if code != 0 {
		t.Fatalf("version --output json: exit %d, %s", code, out)
	}
	v := checkJSONDoc(t, "version --output json", out, "2.1")
	if v["version"] != version || v["plan_format"] != float64(plan.FileVersion) || v["commit"] != thisBuild.Commit || v["go"] != thisBuild.Go || v["platform"] != thisBuild.Platform {
		t.Errorf("version --output json = %s, want version %q and plan_format %d", out, version, plan.FileVersion)
	}
}

// Commands that only read state fail on a state that does not exist,
// naming its path: a cron job with a typo in --state must not report a
// clean, empty state forever.
func TestCLIStateMissing(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/none.db"
	for _, args := range [][]string{
		{"state", "list"}, {"state", "list", "--output", "json"}, {"state", "show", "x"}, {"state", "history"},
		{"state", "rm", "x"}, {"state", "mv", "x", "y"}, {"drift", "-f", "testdata/valid.yaml"},
		{"destroy", "-f", "testdata/valid.yaml", "--auto-approve"},
	} {
		code, out, errOut := runCLI(t, append(args, "--state", path)...)
		if code != 1 || out != "" || !strings.Contains(errOut, path+`" does not exist`) {
			t.Errorf("reconcile %v on a missing state: exit %d, stdout %q, stderr %q; want exit 1 naming the path", args, code, out, errOut)
		}
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("a command created %s", path)
	}
	// plan starts it, empty.
	specFile := filepath.Join(t.TempDir(), "main.yaml")
	if err := os.WriteFile(specFile, []byte("variables:\n  a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "plan", "-f", specFile, "--state", path); code != 0 {
		t.Errorf("plan: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCLI(t, "state", "list", "--state", path)
	if code != 0 || !strings.Contains(out, "is empty") {
		t.Errorf("state list of an empty state: exit %d, %q %q", code, out, errOut)
	}
	// Each JSON document of an empty state: an object, [] for the lists.
	code, out, errOut = runCLI(t, "state", "list", "--state", path, "--output", "json")
	if code != 0 {
		t.Fatalf("state list --output json of an empty state: exit %d, %s", code, errOut)
	}
	doc := checkJSONDoc(t, "state list --output json", out, "2.0")
	wantEmptyList(t, "state list --output json of an empty state", doc, "nodes")
	if lineage, _ := doc["lineage"].(string); lineage == "" {
		t.Errorf("state list --output json: no lineage:\n%s", out)
	}
	code, out, errOut = runCLI(t, "state", "history", "--state", path, "--output", "json")
	if code != 0 {
		t.Fatalf("state history --output json of an empty state: exit %d, %s", code, errOut)
	}
	doc = checkJSONDoc(t, "state history --output json", out, "2.0")
	wantEmptyList(t, "state history --output json of an empty state", doc, "entries")
	code, out, errOut = runCLI(t, "stack", "ls", "--state", path, "--output", "json")
	if code != 0 {
		t.Fatalf("stack ls --output json: exit %d, %s", code, errOut)
	}
	doc = checkJSONDoc(t, "stack ls --output json", out, "1.0")
	if fmt.Sprint(doc["stacks"]) != "[map[current:true name:default]]" {
		t.Errorf("stack ls --output json = %s, want the default stack, current", out)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	code, out, errOut = runCLI(t, "state", "migrate", "--state", path, "--to", copyPath, "--output", "json")
	if code != 0 {
		t.Fatalf("state migrate --output json: exit %d, %s", code, errOut)
	}
	doc = checkJSONDoc(t, "state migrate --output json", out, "1.0")
	if s, _ := doc["stacks"].([]any); len(s) != 1 || s[0].(map[string]any)["copied"] != true {
		t.Errorf("state migrate --output json = %s, want the default stack copied", out)
	}
	code, _, _ = runCLI(t, "state")
	if code != 1 {
		t.Errorf("state without a subcommand: exit %d, want 1", code)
	}
	code, _, _ = runCLI(t, "state", "show", "x", "--state", path)
	if code != 1 {
		t.Errorf("state show of a missing node: exit %d, want 1", code)
	}
}

func TestCLIValidateDirectory(t *testing.T) {
	t.Parallel()
	// Every *.yaml and *.yml of the directory, merged; other files ignored.
	code, out, errOut := runCLI(t, "validate", "-f", "testdata/split")
	if code != 0 || !strings.Contains(out, "The specs are valid: 1 resource, 1 variable, 0 outputs.") {
		t.Errorf("validate -f testdata/split: exit %d\n%s%s", code, out, errOut)
	}
	// A name declared in two files: an error naming both places.
	code, _, errOut = runCLI(t, "validate", "-f", "testdata/dup")
	if code != 1 || !strings.Contains(errOut, "testdata/dup/b.yaml:2:3: ") || !strings.Contains(errOut, "testdata/dup/a.yaml:2:3") ||
		!strings.Contains(errOut, "\n2 errors in the specs\n") {
		t.Errorf("validate -f testdata/dup: exit %d, stderr:\n%s", code, errOut)
	}
	// One error is one error.
	one := filepath.Join(t.TempDir(), "one.yaml")
	if err := os.WriteFile(one, []byte("resources:\n  pol:\n    type: datadog:RestrictionPolicy\n    properties:\n      resourceId: dashboard:x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut = runCLI(t, "validate", "-f", one); code != 1 || !strings.HasSuffix(errOut, "\n1 error in the specs\n") {
		t.Errorf("validate of one error: exit %d, stderr:\n%s", code, errOut)
	}
}
