package specs

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/engine/diag"
)

// The project's name is LoadOptions.Project (name: of Pulumi.yaml) when
// the caller gives one. Otherwise it is the name: a spec document gives at
// its top level, as a Pulumi program that is its own project file says it
// (Pulumi reads Pulumi.yaml as the program), and else the project
// directory's name. ${PROJECT:key}, ${pulumi.project}, the URNs and the
// stack's settings of the project's namespace all read it.

// validProjectName is the form of a project's name, as package project
// checks it in Pulumi.yaml.
var validProjectName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

// declareName records the top-level name: v of a spec document, at k.
func (l *loader) declareName(k, v *yaml.Node) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || !validProjectName.MatchString(v.Value) {
		l.errorf(l.pos(v), "name must be the project's name, of letters, digits, '-', '_' and '.', got %s", describeNode(v)).Detail =
			"name: names the project, as in Pulumi.yaml; ${NAME:key} reads its config key"
		return
	}
	if l.nameAt == (diag.Pos{}) {
		l.name, l.nameAt = v.Value, l.pos(v)
		return
	}
	if v.Value != l.name {
		l.errorf(l.pos(v), "name %q differs from the project's name %q, given at %s", v.Value, l.name, l.nameAt).Detail =
			"a program has one project name: give the same name: everywhere, or one name: only"
	}
}

// describeNode says what a YAML value is, for messages.
func describeNode(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return fmt.Sprintf("%q", n.Value)
	}
	return kindName(n)
}

// projectName settles the project's name once every source is loaded: the
// caller's, else the program's name:, else the project directory's name.
// A program's name: that differs from the caller's is a warning, as
// Pulumi takes the project file's name.
func (l *loader) projectName() {
	switch {
	case l.spec.Project != "" && l.name != "" && l.name != l.spec.Project:
		l.warnf(l.nameAt, "name %q is not the project's name %q (name: of Pulumi.yaml): the project's is used", l.name, l.spec.Project)
	case l.spec.Project == "" && l.name != "":
		l.spec.Project = l.name
	case l.spec.Project == "":
		l.spec.Project = filepath.Base(l.spec.RootDir)
	}
}

// foldStackConfig returns the stack's settings with the keys of the
// project's namespace, "PROJECT:key", as plain keys, and the keys of
// other namespaces dropped. The caller passes such keys when it does not
// know the project's name (no Pulumi.yaml names it): the program's name:
// may. A setting given both ways is an error.
func (l *loader) foldStackConfig() map[string]StackValue {
	in := l.opts.StackConfig
	namespaced := false
	for k := range in {
		if strings.Contains(k, ":") {
			namespaced = true
			break
		}
	}
	if !namespaced {
		return in
	}
	out := make(map[string]StackValue, len(in))
	for k, sv := range in {
		if !strings.Contains(k, ":") {
			out[k] = sv
		}
	}
	for _, k := range sortedKeys(in) {
		ns, key, ok := strings.Cut(k, ":")
		if !ok || ns != l.spec.Project {
			continue // not namespaced, or another package's setting
		}
		if prev, dup := out[key]; dup {
			l.errorf(in[k].Pos, "the stack's setting %q is given twice, as %q and as %q", key, key, k).Detail = "also at " + prev.Pos.String() + "; keep one of them"
			continue
		}
		out[key] = in[k]
	}
	return out
}
