package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reconcile-dev/reconcile/internal/boundedfile"
	"github.com/reconcile-dev/reconcile/project"
)

// The files reconcile reads on the specs' say-so (the spec files, Pulumi.yaml,
// the program's directory main: names, the stack's settings file wherever
// stackConfigDir: puts it) are read through an os.Root of the project
// directory: the directory of the specs named by -f (a directory, or the
// one holding the file), which holds Pulumi.yaml when there is one. Plans
// run on pull requests, whose authors choose every file and symbolic link
// of the checkout; what a spec file holds is printed in the plan. os.Root
// resolves every name and every link on the way inside that directory, on
// the file it opens, so that no file outside can be read, whatever the
// links say now or are changed to while reconcile runs. The file functions
// of the specs (fn::readFile and the like) are confined the same way, in
// package eval.

// readInProject reads the regular file name, relative to the project
// directory dir, of at most boundedfile.DefaultLimit bytes, through an
// os.Root of dir. shown is how errors name the file. A name that leads out
// of dir, by a symbolic link or otherwise, is an error saying so; fix says
// what to do about it.
func readInProject(dir, name, shown, fix string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", shown, unwrapPath(err))
	}
	defer root.Close()
	b, err := boundedfile.ReadIn(root, name, boundedfile.DefaultLimit)
	if err != nil {
		return nil, projectFileErr(err, dir, shown, fix)
	}
	return b, nil
}

// projectFileErr words err, an error reading the file shown inside the
// project directory dir through an os.Root.
func projectFileErr(err error, dir, shown, fix string) error {
	switch {
	case boundedfile.LeadsOut(err):
		return &leadsOutError{file: shown, dir: dir, fix: fix}
	case errors.Is(err, boundedfile.ErrTooLarge):
		return fmt.Errorf("read %s: %w; split it over several files", shown, err)
	case errors.Is(err, boundedfile.ErrNotRegular):
		return fmt.Errorf("read %s: %w", shown, err)
	}
	return fmt.Errorf("read %s: %w", shown, unwrapPath(err))
}

// leadsOutError is the error about a file the specs name that lies outside
// the project directory, or is reached through a symbolic link that leads
// out of it.
type leadsOutError struct {
	file, dir string
	fix       string // what to do, or ""
}

func (e *leadsOutError) Error() string {
	dir := e.dir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	msg := fmt.Sprintf("%s leads out of the project directory %s through a symbolic link: reconcile reads no file outside it on the specs' say-so, since they may come from anyone who can open a pull request, and follows only relative links that stay inside it", e.file, dir)
	if e.fix != "" {
		msg += "; " + e.fix
	}
	return msg
}

// unwrapPath drops the operation and the name an *fs.PathError adds
// ("statat NAME: ..."): the callers name the file as the user wrote it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		return pe.Err
	}
	return err
}

// readStackFile reads the stack's settings file, Pulumi.<stack>.yaml, in
// the project directory or the directory stackConfigDir: names inside it,
// and returns its path (as errors name it) and content. The error of a
// file that does not exist matches fs.ErrNotExist; a stackConfigDir: that
// leads out of the project, or a file that is (or is reached through) a
// symbolic link that leads out, is an error saying so.
func (ws *workspace) readStackFile() (string, []byte, error) {
	rel, err := ws.project.StackFile(ws.stack)
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(ws.dir, rel)
	fix := fmt.Sprintf("replace the symbolic link by the file %s", project.StackFileName(ws.stack))
	if at := ws.project.StackConfigDirAt(); at != "" {
		fix += fmt.Sprintf(", or set stackConfigDir (%s) to a directory inside the project", at)
	}
	data, err := readInProject(ws.dir, rel, path, fix)
	return path, data, err
}
