package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outsideSecret is what the files outside the project hold: no output of
// reconcile may show it.
const outsideSecret = "OUTSIDE-THE-PROJECT-7f3a"

// confineLayout writes files (relative path: content) and symbolic links
// (relative path: target; /ABS/PATH is the absolute path of PATH in w's
// directory) under w's directory, making directories on the
// way. Beside the project (proj/) lies outside/, which a plan of proj must
// never read: a spec, a project file and stack settings that would print
// outsideSecret.
func confineLayout(t *testing.T, w *ws, files, links map[string]string) {
	t.Helper()
	all := map[string]string{
		"outside/leak.yaml":           "outputs:\n  leaked: " + outsideSecret + "\n",
		"outside/Main.json":           `{"outputs": {"leaked": "` + outsideSecret + `"}}`,
		"outside/Pulumi.yaml":         "name: proj\nruntime: yaml\noutputs:\n  leaked: " + outsideSecret + "\n",
		"outside/Pulumi.default.yaml": "config:\n  proj:label: " + outsideSecret + "\n",
		"outside/prog/Main.yaml":      "outputs:\n  leaked: " + outsideSecret + "\n",
	}
	for name, text := range files {
		all[name] = text
	}
	for name, text := range all {
		p := w.path(name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := w.path(name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if rest, ok := strings.CutPrefix(target, "/ABS/"); ok {
			target = w.path(rest) // an absolute link
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
}

// The plan of an untrusted pull request reads no file outside the project
// directory (the directory -f names, or the one holding the file it names,
// where Pulumi.yaml is): not a spec file that is a symbolic link leading
// out, nor Pulumi.yaml, nor the stack's settings by stackConfigDir: or by a
// link, nor the program main: names, nor what a file function reads. Each is refused with exit 1 and an
// error naming the file, where it was named and what to do; nothing of
// what the outside files hold reaches the output.
func TestE2EConfinement(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	// The project's own spec: a config entry the stack's settings may
	// set, shown as an output.
	const spec = "config:\n  label:\n    type: string\n    default: inside\noutputs:\n  label: ${label}\n"
	const project = "name: proj\nruntime: yaml\n"
	for name, tc := range map[string]struct {
		files, links map[string]string
		args         []string // after plan; -f proj when nil
		want         []string // on stderr
	}{
		"spec file that is a link leading out": {
			files: map[string]string{"proj/main.yaml": spec},
			links: map[string]string{"proj/leak.yaml": "../outside/leak.yaml"},
			want:  []string{"proj/leak.yaml leads out of the project directory", "/proj through a symbolic link", "replace the symbolic link by the file"},
		},
		"spec file that is an absolute link leading out": {
			files: map[string]string{"proj/main.yaml": spec},
			links: map[string]string{"proj/leak.yaml": "/ABS/outside/leak.yaml"},
			want:  []string{"proj/leak.yaml leads out of the project directory"},
		},
		"Main.json that is a link leading out": {
			files: map[string]string{"proj/main.yaml": spec},
			links: map[string]string{"proj/Main.json": "../outside/Main.json"},
			want:  []string{"proj/Main.json leads out of the project directory"},
		},
		"-f naming a spec file that is a link leading out": {
			files: map[string]string{"proj/main.yaml": spec},
			links: map[string]string{"proj/leak.yaml": "../outside/leak.yaml"},
			args:  []string{"-f", "proj/leak.yaml"},
			want:  []string{"proj/leak.yaml leads out of the project directory"},
		},
		"Pulumi.yaml that is a link leading out": {
			files: map[string]string{"proj/main.yaml": spec},
			links: map[string]string{"proj/Pulumi.yaml": "../outside/Pulumi.yaml"},
			want:  []string{"proj/Pulumi.yaml leads out of the project directory", "make Pulumi.yaml a file of the project"},
		},
		"stackConfigDir leading out by ..": {
			files: map[string]string{"proj/main.yaml": spec, "proj/Pulumi.yaml": project + "stackConfigDir: ../outside\n"},
			want:  []string{`proj/Pulumi.yaml:3:17: stackConfigDir "../outside" leads out of the project directory`, "name a directory inside the project"},
		},
		"stackConfigDir leading out by ../..": {
			files: map[string]string{"proj/main.yaml": spec, "proj/Pulumi.yaml": project + "stackConfigDir: settings/../../outside\n"},
			want:  []string{`proj/Pulumi.yaml:3:17: stackConfigDir "settings/../../outside" leads out of the project directory`},
		},
		"stackConfigDir that is a link leading out": {
			files: map[string]string{"proj/main.yaml": spec, "proj/Pulumi.yaml": project + "stackConfigDir: settings\n"},
			links: map[string]string{"proj/settings": "../outside"},
			want:  []string{"proj/settings/Pulumi.default.yaml leads out of the project directory", "or set stackConfigDir (proj/Pulumi.yaml:3:17) to a directory inside the project"},
		},
		"stack settings that are a link leading out": {
			files: map[string]string{"proj/main.yaml": spec, "proj/Pulumi.yaml": project},
			links: map[string]string{"proj/Pulumi.default.yaml": "../outside/Pulumi.default.yaml"},
			want:  []string{"proj/Pulumi.default.yaml leads out of the project directory", "replace the symbolic link by the file Pulumi.default.yaml"},
		},
		"fn::readFile of a link leading out": {
			files: map[string]string{"proj/main.yaml": "variables:\n  v:\n    fn::readFile: note.txt\noutputs:\n  o: ${v}\n"},
			links: map[string]string{"proj/note.txt": "../outside/leak.yaml"},
			want:  []string{`proj/main.yaml:3:5: error: fn::readFile "note.txt": a symbolic link leads out of the project directory`, "replace the link by the file"},
		},
		"fn::filebase64 of a path leading out": {
			files: map[string]string{"proj/main.yaml": "variables:\n  v:\n    fn::filebase64: ../outside/leak.yaml\noutputs:\n  o: ${v}\n"},
			want:  []string{`proj/main.yaml:3:5: error: fn::filebase64 "../outside/leak.yaml": the path leaves the project directory`, "copy the file into the project"},
		},
		"main: that is a link leading out": {
			files: map[string]string{"proj/Pulumi.yaml": project + "main: prog\n"},
			links: map[string]string{"proj/prog": "../outside/prog"},
			want:  []string{`proj/Pulumi.yaml:3:7: main "prog" leads out of the project directory through a symbolic link`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWS(t, e)
			confineLayout(t, w, tc.files, tc.links)
			args := append([]string{"plan", "--state", "state.db"}, tc.args...)
			if tc.args == nil {
				args = append(args, "-f", "proj")
			}
			r := w.run(args...)
			if r.code != 1 {
				t.Errorf("want exit 1, got:\n%s", r)
			}
			wantStderr(t, r, tc.want...)
			if strings.Contains(r.stdout+r.stderr, outsideSecret) {
				t.Errorf("the plan shows what a file outside the project holds:\n%s", r)
			}
		})
	}
}

// Symbolic links and ".." that stay inside the project are followed: a
// program directory (main:) whose spec is a link to a shared file of the
// project and which reads a file through a link, and stack settings that
// are a link, in a stackConfigDir: that goes up and down inside it.
func TestE2EConfinementLinksInside(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	confineLayout(t, w, map[string]string{
		"proj/Pulumi.yaml":        "name: proj\nruntime: yaml\nmain: infra\nstackConfigDir: infra/../settings\n",
		"proj/shared/label.yaml":  "config:\n  label:\n    type: string\n    default: inside\nvariables:\n  note:\n    fn::readFile: note.txt\noutputs:\n  label: ${label}\n  note: ${note}\n",
		"proj/shared/note.txt":    "a note of the project",
		"proj/settings/real.yaml": "config:\n  proj:label: from-the-settings\n",
	}, map[string]string{
		"proj/infra/main.yaml":              "../shared/label.yaml",
		"proj/infra/note.txt":               "../shared/note.txt",
		"proj/settings/Pulumi.default.yaml": "real.yaml",
	})
	r := w.must(0, "plan", "--state", "state.db", "-f", "proj")
	wantStdout(t, r, `label = "from-the-settings"`, `note  = "a note of the project"`)
}
