// Package boundedfile reads local files whole, but never more than a
// bound: a path naming a named pipe (FIFO), a device such as /dev/zero, a
// directory or a file over the bound fails at once with an error that says
// so, instead of hanging or filling memory. It serves the spec and project
// files the CLI reads, the files fn::readFile reads inside a project (through
// an os.Root), and the drivers' checks of the credential and configuration
// files their vendor libraries read whole.
//
// Errors quote the path and say what is wrong: a *fs.PathError from the
// operating system when the file cannot be examined or opened (it matches
// fs.ErrNotExist, fs.ErrPermission, ...), an error matching ErrNotRegular
// naming the kind of file, or one matching ErrTooLarge giving its size and
// the bound.
package boundedfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// DefaultLimit is the bound of a file that people write: a spec, a project
// or stack settings file, a file a spec reads with fn::readFile. A limit of
// zero or less given to the functions of this package means DefaultLimit.
const DefaultLimit = 8 << 20

var (
	// ErrNotRegular is matched by the error about a path that names
	// something other than a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge is matched by the error about a file over the bound.
	ErrTooLarge = errors.New("file too large")
)

// Check returns nil when path names (through symbolic links) a regular file
// of at most limit bytes, and the error Read would return otherwise. It
// opens nothing: it is for files that a library reads itself.
func Check(path string, limit int64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return check(path, fi, bound(limit))
}

// Read returns the content of the regular file at path (symbolic links
// followed), of at most limit bytes. What is not a regular file is refused
// before it is opened; a file that grows past limit while it is read is
// refused too, having been read no further than limit+1 bytes.
func Read(path string, limit int64) ([]byte, error) {
	return read(osFS{}, path, bound(limit))
}

// ReadIn is Read of the file name inside root: os.Root resolves name and
// every symbolic link on its way inside root's directory, so that nothing
// outside it is read (the error of a path that leaves it is os.Root's).
func ReadIn(root *os.Root, name string, limit int64) ([]byte, error) {
	return read(root, name, bound(limit))
}

// LeadsOut reports whether err is an *os.Root's refusal of a name that
// leads out of its directory: by "..", as an absolute path, or through a
// symbolic link that leads out or is absolute (os.Root follows only
// relative links that stay inside). The os package exports no error to
// match it with, so its text is compared.
func LeadsOut(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}

// dir is where read finds files: the file system (osFS) or an *os.Root.
type dir interface {
	Stat(name string) (fs.FileInfo, error)
	Open(name string) (*os.File, error)
}

type osFS struct{}

func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }
func (osFS) Open(name string) (*os.File, error)    { return os.Open(name) }

func read(d dir, name string, limit int64) ([]byte, error) {
	// Refuse what is not a regular file before opening it: opening a named
	// pipe blocks until someone writes to it, and a device may never end.
	fi, err := d.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := check(name, fi, limit); err != nil {
		return nil, err
	}
	f, err := d.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have been replaced since it was examined.
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := check(name, fi, limit); err != nil {
		return nil, err
	}
	// One byte more than the size, to see the end without growing the
	// buffer; if the file grew, the rest is read up to the bound.
	b := make([]byte, fi.Size()+1)
	n, err := io.ReadFull(f, b)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return b[:n], nil
	case err != nil:
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	rest, err := io.ReadAll(io.LimitReader(f, limit+1-int64(n)))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	b = append(b, rest...)
	if int64(len(b)) > limit {
		return nil, &fileError{is: ErrTooLarge,
			msg: fmt.Sprintf("%q grew past the limit of %s while it was read", name, size(limit))}
	}
	return b, nil
}

// check returns the error about a file of name described by fi that is not
// a regular file of at most limit bytes.
func check(name string, fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return &fileError{is: ErrNotRegular,
			msg: fmt.Sprintf("%q is %s, not a regular file", name, kind(fi.Mode()))}
	}
	if fi.Size() > limit {
		return &fileError{is: ErrTooLarge,
			msg: fmt.Sprintf("%q holds %d bytes, over the limit of %s", name, fi.Size(), size(limit))}
	}
	return nil
}

// fileError is an error about a file that matches one sentinel.
type fileError struct {
	msg string
	is  error // ErrNotRegular or ErrTooLarge
}

func (e *fileError) Error() string        { return e.msg }
func (e *fileError) Is(target error) bool { return target == e.is }

func bound(limit int64) int64 {
	if limit <= 0 {
		return DefaultLimit
	}
	return limit
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// size says n bytes, and in KiB or MiB when that is a round number.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d bytes (%d MiB)", n, n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d bytes (%d KiB)", n, n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
