package plan

import (
	"bytes"
	"io"
	"io/fs"
	"runtime"
)

// mappedMin is the size from which a plan file is read into memory mapped
// for it (see mapBuffer) rather than into the Go heap.
const mappedMin = 1 << 20

// readAll reads r whole, up to maxPlanFile+1 bytes. A large regular file
// is read at once into memory of its size that the operating system maps
// in one call (mapBuffer), where one is available: touching new heap
// memory page by page costs more than reading the file. The returned
// buffer, when not nil, holds that memory: it stays mapped while the
// buffer is reachable.
func readAll(r io.Reader) ([]byte, *mapped, error) {
	size := -1
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() <= maxPlanFile {
			size = int(fi.Size())
		}
	}
	var buf bytes.Buffer
	if size >= mappedMin {
		if m := mapBuffer(size + 1); m != nil {
			n, err := io.ReadFull(r, m.data)
			switch {
			case err == io.ErrUnexpectedEOF || err == io.EOF:
				return m.data[:n], m, nil
			case err != nil:
				return nil, nil, err
			}
			// The file grew since its size was read: on with the heap.
			buf.Write(m.data)
			runtime.KeepAlive(m) // mapped until copied
		}
	}
	if size >= 0 && buf.Len() == 0 {
		buf.Grow(size + bytes.MinRead) // read at once, not in ever larger copies
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, maxPlanFile+1-int64(buf.Len()))); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), nil, nil
}
