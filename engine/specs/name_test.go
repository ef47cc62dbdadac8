package specs_test

import (
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/specs"
)

// The project's name is the caller's (Pulumi.yaml's), else the name: a
// spec document gives, else the project directory's; the stack's settings
// of that project's namespace are its config, those of other namespaces
// are not.
func TestProjectName(t *testing.T) {
	t.Parallel()
	const program = "config:\n  foo:\n    type: string\n    default: from-default\noutputs:\n  foo: ${foo}\n  project: ${pulumi.project}\n"
	at := func(line int) diag.Pos { return diag.At("Pulumi.prod.yaml", line, 3) }
	for name, tc := range map[string]struct {
		srcs    []string
		project string
		stack   map[string]specs.StackValue
		want    string // project, or "error: ..." / "warning: ..."
		foo     string
	}{
		"the directory's name": {srcs: []string{program}, want: "proj-dir", foo: "from-default"},
		"the caller's":         {srcs: []string{program}, project: "acme", want: "acme", foo: "from-default"},
		"the program's name:":  {srcs: []string{"name: orders\n" + program}, want: "orders", foo: "from-default"},
		"the same name: twice": {srcs: []string{"name: orders\n" + program, "name: orders\n"}, want: "orders", foo: "from-default"},
		"the settings of the program's namespace": {srcs: []string{"name: orders\n" + program},
			stack: map[string]specs.StackValue{"orders:foo": {Value: "from-stack", Pos: at(2)}, "aws:foo": {Value: "not-ours", Pos: at(3)}},
			want:  "orders", foo: "from-stack"},
		"the settings of the directory's namespace": {srcs: []string{program},
			stack: map[string]specs.StackValue{"proj-dir:foo": {Value: "from-stack", Pos: at(2)}},
			want:  "proj-dir", foo: "from-stack"},
		"another namespace only": {srcs: []string{"name: orders\n" + program},
			stack: map[string]specs.StackValue{"other:foo": {Value: "not-ours", Pos: at(2)}},
			want:  "orders", foo: "from-default"},
		"a setting given twice": {srcs: []string{"name: orders\n" + program},
			stack: map[string]specs.StackValue{"orders:foo": {Value: "a", Pos: at(2)}, "foo": {Value: "b", Pos: at(3)}},
			want:  `error: Pulumi.prod.yaml:2:3: the stack's setting "foo" is given twice, as "foo" and as "orders:foo"`},
		"two names": {srcs: []string{"name: orders\n" + program, "name: billing\n"},
			want: `error: b.yaml:1:7: name "billing" differs from the project's name "orders", given at a.yaml:1:7`},
		"a name that is no project's": {srcs: []string{"name: [orders]\n" + program},
			want: `error: a.yaml:1:7: name must be the project's name, of letters, digits, '-', '_' and '.', got a list`},
		"a name: other than the caller's": {srcs: []string{"name: orders\n" + program}, project: "acme",
			want: `warning: a.yaml:1:7: name "orders" is not the project's name "acme" (name: of Pulumi.yaml): the project's is used`, foo: "from-default"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir() + "/proj-dir"
			var srcs []specs.Source
			for i, s := range tc.srcs {
				srcs = append(srcs, specs.Source{Name: string(rune('a'+i)) + ".yaml", Data: []byte(s)})
			}
			s, diags := specs.LoadWith(dir, srcs, nil, specs.LoadOptions{Project: tc.project, StackConfig: tc.stack})
			if msg, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if len(diags) != 1 || !diags.HasErrors() || diags[0].Pos.String()+": "+diags[0].Summary != msg {
					t.Errorf("diagnostics %v, want one error %q", diags, msg)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags.Err())
			}
			want := tc.want
			if msg, ok := strings.CutPrefix(tc.want, "warning: "); ok {
				if len(diags) != 1 || diags.HasErrors() || diags[0].Pos.String()+": "+diags[0].Summary != msg {
					t.Errorf("diagnostics %v, want one warning %q", diags, msg)
				}
				want = tc.project
			}
			if s.Project != want || s.Values["foo"] != tc.foo {
				t.Errorf("project %q, foo %v; want %q and %q", s.Project, s.Values["foo"], want, tc.foo)
			}
		})
	}
}
