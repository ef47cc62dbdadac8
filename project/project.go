package project

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/internal/boundedfile"
)

// FileName is the project file of a Pulumi project.
const FileName = "Pulumi.yaml"

// Project is what Pulumi.yaml says of the project.
type Project struct {
	// Name is the project's name, "name:"; it is what ${pulumi.project}
	// reads and what config keys are namespaced with ("name:key").
	Name string
	// Backend is the URL of "backend: url:", where the project's state
	// lives; "" when not given.
	Backend string
	// Main is "main:", the directory of the program when it is not the
	// project's own; "" when not given.
	Main string
	// mainAt is where main: is given, for errors.
	mainAt posOf
	// StackConfigDir is "stackConfigDir:", the directory of the
	// Pulumi.<stack>.yaml files, relative to the project's; "" for the
	// project's own.
	StackConfigDir string
	// stackConfigDirAt is where stackConfigDir: is given, for errors.
	stackConfigDirAt posOf
}

// ParseProject reads a Pulumi.yaml. file names it in errors. Keys other than
// those it reads are left alone: the same file may hold the program.
func ParseProject(file string, data []byte) (*Project, error) {
	root, err := parseRoot(file, data)
	if err != nil || root == nil {
		return &Project{}, err
	}
	p := &Project{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "name":
			if p.Name, err = scalar(file, k, v); err != nil {
				return nil, err
			}
			if !validName.MatchString(p.Name) {
				return nil, posErr(file, v, "name %q is not a valid project name: use letters, digits, '-', '_' and '.'", p.Name)
			}
		case "main":
			if p.Main, err = scalar(file, k, v); err != nil {
				return nil, err
			}
			p.mainAt = posOf{file, v.Line, v.Column}
		case "stackConfigDir":
			if p.StackConfigDir, err = scalar(file, k, v); err != nil {
				return nil, err
			}
			p.stackConfigDirAt = posOf{file, v.Line, v.Column}
		case "backend":
			if v.Kind != yaml.MappingNode {
				return nil, posErr(file, v, "backend must be a mapping with url:, got %s", kindOf(v))
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				bk, bv := v.Content[j], v.Content[j+1]
				if bk.Value != "url" {
					return nil, posErr(file, bk, "unknown key %q in backend; the one key is url", bk.Value)
				}
				if p.Backend, err = scalar(file, bk, bv); err != nil {
					return nil, err
				}
			}
		}
	}
	return p, nil
}

// posOf is a position in a settings file.
type posOf struct {
	file      string
	line, col int
}

// ProgramDir returns the directory of the program of the project whose
// directory is root: root itself, or the directory main: names, relative
// to root (a file there stands for its directory, as Pulumi takes it).
// The program must be inside the project: an absolute main:, one that
// leads out of root by ".." or by a symbolic link, and one that names
// nothing are errors at main:. (The caller reads the program's files
// through an os.Root of root too, so that a link changed since cannot
// lead out either.)
func (p *Project) ProgramDir(root string) (string, error) {
	if p.Main == "" {
		return root, nil
	}
	errorf := func(format string, args ...any) error {
		return &Error{File: p.mainAt.file, Line: p.mainAt.line, Col: p.mainAt.col, Msg: fmt.Sprintf(format, args...)}
	}
	if filepath.IsAbs(p.Main) {
		return "", errorf("main %q must be a path relative to the project directory", p.Main)
	}
	rel := filepath.Clean(p.Main)
	if leadsOut(rel) {
		return "", errorf("main %q leads out of the project directory; the program must be inside it", p.Main)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", errorf("main %q: %v", p.Main, err)
	}
	defer r.Close()
	// os.Root follows a symbolic link only while it stays inside root.
	fi, err := r.Stat(rel)
	if boundedfile.LeadsOut(err) {
		return "", errorf("main %q leads out of the project directory through a symbolic link; the program must be inside it", p.Main)
	}
	if err != nil {
		return "", errorf("main %q: %v", p.Main, errors.Unwrap(err))
	}
	if !fi.IsDir() {
		rel = filepath.Dir(rel)
	}
	return filepath.Join(root, rel), nil
}

// StackFile returns the path of the settings file of stack, relative to
// the project directory: Pulumi.<stack>.yaml in the directory
// stackConfigDir: names, or in the project's own. The file must be inside
// the project, as the program is: a stackConfigDir: that is absolute or
// leads out by ".." is an error at stackConfigDir:. (A symbolic link that
// leads out is the caller's to refuse, as it reads the file through an
// os.Root of the project directory.)
func (p *Project) StackFile(stack string) (string, error) {
	name := StackFileName(stack)
	if p.StackConfigDir == "" {
		return name, nil
	}
	at := p.stackConfigDirAt
	if filepath.IsAbs(p.StackConfigDir) || leadsOut(filepath.Clean(p.StackConfigDir)) {
		return "", &Error{File: at.file, Line: at.line, Col: at.col, Msg: fmt.Sprintf(
			"stackConfigDir %q leads out of the project directory: reconcile reads no stack settings from outside it (the specs may come from anyone who can open a pull request); name a directory inside the project, relative to Pulumi.yaml", p.StackConfigDir)}
	}
	return filepath.Join(filepath.Clean(p.StackConfigDir), name), nil
}

// StackConfigDirAt is where stackConfigDir: is given, "FILE:LINE:COL";
// "" when it is not.
func (p *Project) StackConfigDirAt() string {
	if p.StackConfigDir == "" || p.stackConfigDirAt.file == "" {
		return ""
	}
	at := p.stackConfigDirAt
	return fmt.Sprintf("%s:%d:%d", at.file, at.line, at.col)
}

// leadsOut reports whether the clean relative path rel leads out of its
// base directory by "..".
func leadsOut(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// validName is the form of a project or stack name.
var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

// ValidStackName reports whether name can name a stack: letters, digits,
// '-', '_' and '.', at most 100 of them.
func ValidStackName(name string) bool {
	return validName.MatchString(name) && name != "." && name != ".."
}

// StackFileName is the settings file of the stack named stack.
func StackFileName(stack string) string { return "Pulumi." + stack + ".yaml" }

// IsStackFile reports whether the file base name is a stack's settings
// file, Pulumi.<stack>.yaml or .yml: not a spec.
func IsStackFile(base string) bool {
	for _, ext := range []string{".yaml", ".yml"} {
		if s, ok := strings.CutSuffix(base, ext); ok {
			if stack, ok := strings.CutPrefix(s, "Pulumi."); ok && stack != "" {
				return true
			}
		}
	}
	return false
}

// parseRoot parses data and returns its top-level mapping, nil for an
// empty file.
func parseRoot(file string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, posErr(file, root, "want a mapping, got %s", kindOf(root))
	}
	return root, nil
}

func scalar(file string, k, v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		return "", posErr(file, v, "%s must be a string, got %s", k.Value, kindOf(v))
	}
	return v.Value, nil
}

func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.ShortTag() == "!!null" {
		return "nothing"
	}
	return "a scalar"
}

// Error is a problem in a settings file, at a position.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg) }

func posErr(file string, n *yaml.Node, format string, args ...any) error {
	return &Error{File: file, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, args...)}
}

// ErrNoPassphrase is returned by Stack.Decrypt when secure values need a
// passphrase and none is given.
var ErrNoPassphrase = errors.New("the stack's config holds secure values: set PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE to the passphrase that encrypted them")
