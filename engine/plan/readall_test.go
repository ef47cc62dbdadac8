package plan

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/kind"
)

// bigPlanFile is a signed plan file over mappedMin bytes.
func bigPlanFile(t *testing.T) []byte {
	t.Helper()
	pl := &Plan{Lineage: "l", Serial: 1, SpecHash: "h"}
	for i := range 4000 {
		pl.Changes = append(pl.Changes, Change{Addr: fmt.Sprintf("r%05d", i), Type: "datadog:RestrictionPolicy", Kind: kind.Resource, Action: NoOp,
			ID: fmt.Sprint("dashboard:", i), Before: map[string]any{"resourceId": fmt.Sprint("dashboard:", i), "pad": string(bytes.Repeat([]byte("x"), 300))}})
	}
	var buf bytes.Buffer
	if err := WriteFile(&buf, File{Plan: pl}, "test", []byte("key")); err != nil {
		t.Fatal(err)
	}
	if buf.Len() < mappedMin {
		t.Fatalf("plan file of %d bytes, want at least %d", buf.Len(), mappedMin)
	}
	return buf.Bytes()
}

// A large plan file read from disk (into mapped memory where there is
// any) reads as it does from memory, verifies, and stays readable through
// collections.
func TestReadLargeFile(t *testing.T) {
	data := bigPlanFile(t)
	path := filepath.Join(t.TempDir(), "plan")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	want, err := ReadFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && got.mapped == nil {
		t.Error("a large plan file was not read into mapped memory")
	}
	runtime.GC()
	runtime.GC()
	if err := got.Verify([]byte("key")); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if !reflect.DeepEqual(got.Plan, want.Plan) || !bytes.Equal(got.body, want.body) {
		t.Error("the plan read from the file differs from the plan read from memory")
	}
}

// growing is a file whose size, as Stat tells it, is less than what it
// holds: one that grew after Stat.
type growing struct {
	*bytes.Reader
	size int64
}

func (g growing) Stat() (fs.FileInfo, error) { return fakeInfo{g.size}, nil }

type fakeInfo struct{ size int64 }

func (fi fakeInfo) Name() string       { return "plan" }
func (fi fakeInfo) Size() int64        { return fi.size }
func (fi fakeInfo) Mode() fs.FileMode  { return 0o600 }
func (fi fakeInfo) ModTime() time.Time { return time.Time{} }
func (fi fakeInfo) IsDir() bool        { return false }
func (fi fakeInfo) Sys() any           { return nil }

func TestReadFileThatGrew(t *testing.T) {
	data := bigPlanFile(t)
	for _, size := range []int64{mappedMin, int64(len(data)) - 1, int64(len(data))} {
		pf, err := ReadFile(growing{bytes.NewReader(data), size})
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if err := pf.Verify([]byte("key")); err != nil || len(pf.Plan.Changes) != 4000 {
			t.Errorf("size %d: Verify %v, %d changes", size, err, len(pf.Plan.Changes))
		}
	}
}
