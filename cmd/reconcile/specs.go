package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/internal/boundedfile"
	"github.com/reconcile-dev/reconcile/project"
)

// maxSpecFiles bounds how many files one -f directory may hold.
const maxSpecFiles = 10_000

// mainJSON is the one JSON file of a directory that is read as a spec, as
// Pulumi YAML reads a program written in JSON.
const mainJSON = "Main.json"

// readSources reads the spec file at path, or every *.yaml and *.yml file
// directly inside the directory at path, and its Main.json (the program
// file Pulumi YAML also reads, in JSON), sorted by name. path is the
// project directory dir, a file directly inside it, or the program's
// directory inside it (main:). Every file is read through an os.Root of
// dir (see readInProject): a spec file, or the program's directory, that
// is a symbolic link leading out of the project is an error. It returns
// the directory of the program too.
func readSources(dir, path string) (string, []specs.Source, error) {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return "", nil, fmt.Errorf("read specs: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", nil, fmt.Errorf("read specs: %s: %w", dir, unwrapPath(err))
	}
	defer root.Close()
	fileErr := func(err error, name string) error {
		err = projectFileErr(err, dir, name, "replace the symbolic link by the file, or make it a relative link to a file inside the project")
		var lo *leadsOutError
		if errors.As(err, &lo) {
			return fmt.Errorf("read specs: %w", err)
		}
		return err
	}
	fi, err := root.Stat(rel)
	if err != nil {
		return "", nil, fileErr(err, path)
	}
	if !fi.IsDir() {
		b, err := boundedfile.ReadIn(root, rel, boundedfile.DefaultLimit)
		if err != nil {
			return "", nil, fileErr(err, path)
		}
		abs, _ := filepath.Abs(filepath.Dir(path))
		return abs, []specs.Source{{Name: path, Data: b}}, nil
	}
	d, err := root.Open(rel)
	if err != nil {
		return "", nil, fmt.Errorf("read specs: %s: %w", path, unwrapPath(err))
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return "", nil, fmt.Errorf("read specs: %s: %w", path, unwrapPath(err))
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") || !(strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") || n == mainJSON) {
			continue
		}
		if project.IsStackFile(n) {
			continue // a stack's settings (Pulumi.<stack>.yaml), not a spec
		}
		// Follows a link inside the project; one that leads out, and a
		// loop, fail here.
		st, err := root.Stat(filepath.Join(rel, n))
		if err != nil {
			return "", nil, fileErr(err, filepath.Join(path, n))
		}
		if st.Mode().IsRegular() {
			names = append(names, n)
		}
	}
	if len(names) > maxSpecFiles {
		return "", nil, fmt.Errorf("read specs: %s holds %d spec files, over the limit of %d", path, len(names), maxSpecFiles)
	}
	sort.Strings(names)
	var srcs []specs.Source
	for _, n := range names {
		full := filepath.Join(path, n)
		b, err := boundedfile.ReadIn(root, filepath.Join(rel, n), boundedfile.DefaultLimit)
		if err != nil {
			return "", nil, fileErr(err, full)
		}
		srcs = append(srcs, specs.Source{Name: full, Data: b})
	}
	abs, _ := filepath.Abs(path)
	return abs, srcs, nil
}

// readLimited reads a file the user wrote (a spec, the project or stack
// settings file, a passphrase file): a regular file of at most
// boundedfile.DefaultLimit bytes.
func readLimited(path string) ([]byte, error) {
	b, err := boundedfile.Read(path, boundedfile.DefaultLimit)
	if errors.Is(err, boundedfile.ErrTooLarge) {
		return nil, fmt.Errorf("read: %w; split it over several files", err)
	}
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return b, nil
}

// readSpec reads and loads the specs named by -f. The error is for specs
// that cannot be read at all; problems in them are diagnostics.
func (c *cli) readSpec() (*specs.Spec, diag.Diagnostics, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, nil, err
	}
	path := c.g.specPath
	if ws.program != "" {
		path = ws.program // Pulumi.yaml's main:
	}
	dir, srcs, err := readSources(ws.dir, path)
	if err != nil {
		return nil, nil, err
	}
	var root string
	if ws.program != "" {
		// The project file beside the program's directory gives the
		// project's config, as Pulumi reads it.
		root, _ = filepath.Abs(ws.dir)
		if ws.projectFile != nil {
			srcs = append(srcs, specs.Source{Name: filepath.Join(ws.dir, project.FileName), Data: ws.projectFile, ConfigOnly: true})
		}
	}
	// destroy, drift and graph evaluate none of the specs' inputs: they
	// must not demand config values, secrets least of all, that they
	// never use.
	lenient := c.cmd == "destroy" || c.cmd == "drift" || c.cmd == "graph"
	opts := specs.LoadOptions{UnsetConfigUnknown: lenient, Project: ws.project.Name, Stack: ws.stack, RootDir: root, Checked: c.planSpecHash, Skip: c.planCuts}
	if !lenient {
		opts.Checkers = inputCheckers()
	}
	if !lenient {
		if opts.StackConfig, err = ws.stackConfig(); err != nil {
			return nil, nil, err
		}
	}
	spec, diags := specs.LoadWith(dir, srcs, c.g.config, opts)
	if diags.HasErrors() && len(opts.Skip) > 0 {
		// What the cuts left may not load on its own (specs changed since
		// the plan, which apply then refuses): the errors shown are those
		// of the whole specs.
		opts.Skip = nil
		spec, diags = specs.LoadWith(dir, srcs, c.g.config, opts)
	}
	if spec != nil {
		c.redactSecrets(specs.SecretTexts(spec))
	}
	return spec, diags, nil
}

// loadSpec reads and loads the specs named by -f, printing diagnostics.
func (c *cli) loadSpec() (*specs.Spec, bool) {
	spec, diags, err := c.readSpec()
	if err != nil {
		c.errorf("%v", err)
		return nil, false
	}
	c.printDiags(diags)
	if diags.HasErrors() {
		fmt.Fprintf(c.stderr, "%s in the specs; nothing was done\n", render.Count(countErrors(diags), "error", "errors"))
		return nil, false
	}
	return spec, true
}

func countErrors(ds diag.Diagnostics) int {
	n := 0
	for _, d := range ds {
		if d.Severity == diag.Error {
			n++
		}
	}
	return n
}
