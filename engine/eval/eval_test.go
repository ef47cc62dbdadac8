package eval_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
)

// load loads one spec file from text, written into a fresh project
// directory, with extra files beside it.
func load(t *testing.T, text string, files map[string]string) *specs.Spec {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, diags := specs.Load(dir, []specs.Source{{Name: "main.yaml", Data: []byte(text)}}, nil)
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	return s
}

// env holds what references read: config values, the variables evaluated
// so far, and resource outputs.
type env struct {
	ev   *eval.Evaluator
	vals map[string]any
}

func newEnv(s *specs.Spec, outputs map[string]any) *env {
	e := &env{vals: map[string]any{}}
	for k, v := range s.Values {
		e.vals[k] = v
	}
	for k, v := range outputs {
		e.vals[k] = v
	}
	e.ev = &eval.Evaluator{Spec: s, Env: eval.EnvFunc(func(name string) (any, bool) {
		v, ok := e.vals[name]
		return v, ok
	})}
	return e
}

// variable evaluates the variables named, in order, and returns the last
// one's value; the values are kept for later references.
func (e *env) variable(t *testing.T, names ...string) (any, error) {
	t.Helper()
	var out any
	for _, name := range names {
		v, ok := e.ev.Spec.Variables[name]
		if !ok {
			t.Fatalf("no variable %q", name)
		}
		var err error
		if out, err = e.ev.Eval(v.Expr); err != nil {
			return nil, err
		}
		e.vals[name] = out
	}
	return out, nil
}

func TestEvalInterpolation(t *testing.T) {
	s := load(t, `
config:
  region:
    type: string
    default: eu-frankfurt-1
variables:
  plain: "${region}/${ep.id}"
  later: "${ep.state}/v1"
  hidden:
    fn::secret: s3cr3t
  wrapped: "key=${hidden}"
  revealed:
    fn::unsecret: ${hidden}
resources:
  ep:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: c
      modelId: m
`, nil)
	e := newEnv(s, map[string]any{"ep": map[string]any{"id": "ocid1.x", "state": value.Unknown{}}})

	if got, err := e.variable(t, "plain"); err != nil || got != "eu-frankfurt-1/ocid1.x" {
		t.Errorf("plain = %#v, %v; want the interpolated text", got, err)
	}
	if got, err := e.variable(t, "later"); err != nil || !value.ContainsUnknown(got) {
		t.Errorf("later = %#v, %v; want Unknown, since ep.state is known only after apply", got, err)
	}
	got, err := e.variable(t, "hidden", "wrapped")
	if err != nil {
		t.Fatal(err)
	}
	sec, ok := got.(value.Secret)
	if !ok || sec.Value != "key=s3cr3t" {
		t.Errorf("wrapped = %#v; want a Secret holding the whole text", got)
	}
	if got, err := e.variable(t, "revealed"); err != nil || got != "s3cr3t" {
		t.Errorf("revealed = %#v, %v; want the plain text", got, err)
	}
}

func TestEvalReadFileStaysInProject(t *testing.T) {
	s := load(t, `
variables:
  inside:
    fn::readFile: policy/readme.txt
  outside:
    fn::readFile: ../secrets.txt
`, map[string]string{"policy/readme.txt": "hello"})
	e := newEnv(s, nil)
	if got, err := e.variable(t, "inside"); err != nil || got != "hello" {
		t.Errorf("inside = %#v, %v; want the file's text", got, err)
	}
	_, err := e.variable(t, "outside")
	var ee *eval.Error
	if !errors.As(err, &ee) {
		t.Fatalf("outside: err = %v; want an *eval.Error", err)
	}
	if ee.Pos.Line != 6 || !strings.Contains(ee.Msg, "project directory") {
		t.Errorf("outside: %v; want an error at line 6 saying the path leaves the project directory", err)
	}
}

func TestEvalSizeBound(t *testing.T) {
	// Each variable doubles the one before: 2^30 bytes by the last, from a
	// spec of a few hundred bytes.
	var b strings.Builder
	b.WriteString("variables:\n  v0: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n")
	for i := 1; i <= 26; i++ {
		b.WriteString("  v" + strconv.Itoa(i) + ": \"${v" + strconv.Itoa(i-1) + "}${v" + strconv.Itoa(i-1) + "}\"\n")
	}
	s := load(t, b.String(), nil)
	e := newEnv(s, nil)
	names := make([]string, 27)
	for i := range names {
		names[i] = "v" + strconv.Itoa(i)
	}
	_, err := e.variable(t, names...)
	if err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("v26: err = %v; want the size limit", err)
	}
}

// The built-ins of Pulumi YAML beyond the first ones, with the values its
// conformance programs (l1-builtin-file, -list, -string, -sha1) expect.
func TestEvalBuiltins(t *testing.T) {
	s := load(t, `
config:
  aList:
    type: List<String>
    default: [a, b, c]
  token:
    type: string
    secret: true
    default: hunter2-hunter2
variables:
  fileContent:
    fn::readFile: testfile.txt
  fileB64:
    fn::filebase64: testfile.txt
  fileSha:
    fn::filebase64sha256: testfile.txt
  nestedB64:
    fn::filebase64: data/nested.bin
  hash:
    fn::sha1: abc
  listLength:
    fn::length: ${aList}
  mapLength:
    fn::length: {a: 1, b: 2}
  # "é" written as e and a combining accent, and a family emoji joined
  # by zero-width joiners: one character each to a reader.
  stringLength:
    fn::length: "e\u0301\U0001F468\u200D\U0001F469\u200D\U0001F467x"
  none:
    fn::singleOrNone: []
  single:
    fn::singleOrNone: [only]
  two:
    fn::singleOrNone: ${aList}
  secretLength:
    fn::length: ${token}
  secretHash:
    fn::sha1: ${token}
  later:
    fn::length: ${ep.freeformTags}
resources:
  ep:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: c
      modelId: m
`, map[string]string{"testfile.txt": "The quick brown fox jumps over the lazy dog", "data/nested.bin": "\x00\xff"})
	e := newEnv(s, map[string]any{"ep": map[string]any{"freeformTags": value.Unknown{}}})
	for _, c := range []struct {
		name string
		want any
	}{
		{"fileContent", "The quick brown fox jumps over the lazy dog"},
		{"fileB64", "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw=="},
		{"fileSha", "16j7swfXgJRpypq8sAguT41WUeRtPNt2LQLQvzfJ5ZI="},
		{"nestedB64", "AP8="},
		{"hash", "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"listLength", int64(3)},
		{"mapLength", int64(2)},
		{"stringLength", int64(3)},
		{"none", nil},
		{"single", "only"},
		{"secretLength", value.Secret{Value: int64(15)}},
		{"secretHash", value.Secret{Value: "ddf177405687b93ebc8ca2791ed4d3bcc6c94232"}},
		{"later", value.Unknown{}},
	} {
		got, err := e.variable(t, c.name)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %#v, %v; want %#v", c.name, got, err, c.want)
		}
	}
	_, err := e.variable(t, "two")
	var ee *eval.Error
	if !errors.As(err, &ee) || ee.Pos.Line != 34 || !strings.Contains(ee.Msg, "fn::singleOrNone takes a list of 0 or 1 items, got 3") {
		t.Errorf("two: %v; want an error at line 34 saying the list has 3 items", err)
	}
}

// Every function that reads a file reads one inside the project directory
// only, whatever the path.
func TestEvalFileFunctionsStayInProject(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"readFile", "filebase64", "filebase64sha256"} {
		for path, want := range map[string]string{
			"../secret.txt":                      "leaves the project directory",
			filepath.Join(outside, "secret.txt"): "must be inside the project directory",
			"link/secret.txt":                    "symbolic link leads out of the project directory",
			"missing.txt":                        "no such file",
			"dir":                                "not a regular file",
		} {
			s := load(t, fmt.Sprintf("variables:\n  v:\n    fn::%s: %q\n", fn, path), map[string]string{"dir/x": "x"})
			if err := os.Symlink(outside, filepath.Join(s.Dir, "link")); err != nil {
				t.Fatal(err)
			}
			_, err := newEnv(s, nil).variable(t, "v")
			var ee *eval.Error
			if !errors.As(err, &ee) || ee.Pos.Line != 3 || !strings.Contains(ee.Msg, want) || strings.Contains(ee.Msg, "s3cret") {
				t.Errorf("fn::%s %q: %v; want an error at line 3 containing %q", fn, path, err, want)
			}
		}
	}
}

// ${res.urn} is known from the specs alone, while the resource's id and
// outputs are not yet; so are fn::pulumiResourceName and
// fn::pulumiResourceType.
func TestEvalURN(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders")
	s, diags := specs.LoadWith(dir, []specs.Source{{Name: "main.yaml", Data: []byte(`
variables:
  urn: ${ep.urn}
  text: "urn=${ep.urn}"
  name:
    fn::pulumiResourceName: ${ep}
  type:
    fn::pulumiResourceType: ${ep}
  id: ${ep.id}
resources:
  ep:
    type: oci:AiLanguage:Endpoint
    name: sentiment-prod
    properties:
      compartmentId: c
      modelId: m
`)}}, nil, specs.LoadOptions{Stack: "prod"})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	e := newEnv(s, map[string]any{"ep": map[string]any{"id": value.Unknown{}}})
	const urn = "urn:pulumi:prod::orders::oci:AiLanguage/endpoint:Endpoint::sentiment-prod"
	for name, want := range map[string]any{
		"urn":  urn,
		"text": "urn=" + urn,
		"name": "sentiment-prod",
		"type": "oci:AiLanguage/endpoint:Endpoint",
		"id":   value.Unknown{},
	} {
		if got, err := e.variable(t, name); err != nil || got != want {
			t.Errorf("%s = %#v, %v; want %#v", name, got, err, want)
		}
	}
}

// With the program in a subdirectory of the project (main:), ${pulumi.cwd}
// is the program's directory and ${pulumi.rootDirectory} the project's,
// whatever the process's working directory; relative paths are read from
// the program's directory, and may reach the rest of the project, not
// beyond.
func TestEvalProgramDirectory(t *testing.T) {
	root := t.TempDir()
	program := filepath.Join(root, "infra")
	for name, body := range map[string]string{"shared.txt": "shared", "infra/local.txt": "local"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, diags := specs.LoadWith(program, []specs.Source{
		{Name: "Main.yaml", Data: []byte(`
variables:
  cwd: ${pulumi.cwd}
  root: ${pulumi.rootDirectory}
  project: ${pulumi.project}
  local:
    fn::readFile: local.txt
  shared:
    fn::readFile: ../shared.txt
  beyond:
    fn::readFile: ../../x.txt
`)},
		{Name: "Pulumi.yaml", Data: []byte("name: orders\nruntime: yaml\nmain: infra\n"), ConfigOnly: true},
	}, nil, specs.LoadOptions{RootDir: root})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	e := newEnv(s, nil)
	for name, want := range map[string]any{"cwd": program, "root": root, "project": "orders", "local": "local", "shared": "shared"} {
		if got, err := e.variable(t, name); err != nil || got != want {
			t.Errorf("%s = %#v, %v; want %#v", name, got, err, want)
		}
	}
	if _, err := e.variable(t, "beyond"); err == nil || !strings.Contains(err.Error(), "leaves the project directory") {
		t.Errorf("beyond: %v; want the path refused", err)
	}

	// The project file of a program elsewhere gives config only.
	_, diags = specs.LoadWith(program, []specs.Source{
		{Name: "Main.yaml", Data: []byte("outputs:\n  o: ${x}\n")},
		{Name: "Pulumi.yaml", Data: []byte("name: orders\nmain: infra\nvariables:\n  x: 1\n"), ConfigOnly: true},
	}, nil, specs.LoadOptions{RootDir: root})
	if len(diags) != 1 || diags[0].Pos.File != "Pulumi.yaml" || diags[0].Pos.Line != 3 || !strings.Contains(diags[0].Summary, "variables in the project file are not part of the program") {
		t.Errorf("variables in a config-only project file: %v; want one error at Pulumi.yaml:3", diags)
	}
}
