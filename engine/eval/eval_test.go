package eval_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"reconcile/engine/eval"
	"reconcile/engine/specs"
	"reconcile/engine/value"
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
