package localfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Check returns nil when path names (through symbolic links) a regular file
// of at most limit bytes. Otherwise its error quotes path and says what is
// wrong: the os error when the file cannot be examined, its kind when it is
// not a regular file, its size when it is too large. Check opens nothing.
func Check(path string, limit int64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%q is %s, not a regular file", path, kind(fi.Mode()))
	}
	if fi.Size() > limit {
		return fmt.Errorf("%q holds %d bytes, more than the %s such a file may hold", path, fi.Size(), size(limit))
	}
	return nil
}

// Read checks path with Check and reads it, reading no more than limit
// bytes even if the file grew since.
func Read(path string, limit int64) ([]byte, error) {
	if err := Check(path, limit); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%q holds more than the %s such a file may hold", path, size(limit))
	}
	return b, nil
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

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
