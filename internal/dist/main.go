// Command dist builds reconcile's release archives, reproducibly: the same
// commit and version give the same bytes, on any machine with the same Go,
// so that anyone can check a published binary against the source.
//
// Usage (make dist VERSION=v1.2.3 runs it from the checkout's root):
//
//	go run ./internal/dist -version v1.2.3 [-out dist] [-platforms linux/amd64,...]
//
// For each platform it builds cmd/reconcile with -trimpath, no VCS stamp,
// no build id and the version and commit set at link time, and writes
// reconcile_VERSION_OS_ARCH.tar.gz (.zip for windows) holding the binary,
// LICENSE and README.md at its root, in that order, owned by root, with the
// commit's time as their modification time; then SHA256SUMS, a line per
// archive as sha256sum writes it, sorted by name. It refuses a checkout
// with changes (a release is built from a commit), unless -allow-dirty.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Platforms are the OS/arch pairs a release is built for.
var Platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// releaseTag is the form of a version: v1.2.3, or a pre-release v1.2.3-rc.1.
var releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

func main() {
	version := flag.String("version", "", "the release's version, vX.Y.Z")
	out := flag.String("out", "dist", "the directory to write the archives and SHA256SUMS to")
	platforms := flag.String("platforms", strings.Join(Platforms, ","), "the OS/arch pairs to build, comma-separated")
	dirty := flag.Bool("allow-dirty", false, "build from a checkout with changes (not for a release)")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("dist takes no arguments, got %q", flag.Args()))
	}
	err := Dist(Options{Version: *version, Out: *out, Platforms: strings.Split(*platforms, ","), AllowDirty: *dirty, Log: os.Stderr})
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "dist: %v\n", err)
	os.Exit(1)
}

// Options say what Dist builds.
type Options struct {
	Version    string   // vX.Y.Z
	Out        string   // where the archives go
	Platforms  []string // OS/arch pairs
	AllowDirty bool     // build a checkout with changes
	Log        io.Writer
}

// Dist builds the archives and SHA256SUMS of opts, from the checkout in
// the current directory.
func Dist(opts Options) error {
	if !releaseTag.MatchString(opts.Version) {
		return fmt.Errorf("-version %q: want a release version such as v1.2.3 (make dist VERSION=v1.2.3)", opts.Version)
	}
	for _, p := range opts.Platforms {
		if !slices.Contains(Platforms, p) {
			return fmt.Errorf("-platforms: %q is not one of %s", p, strings.Join(Platforms, ", "))
		}
	}
	commit, err := git("rev-parse", "HEAD")
	if err != nil {
		return err
	}
	if changes, err := git("status", "--porcelain"); err != nil {
		return err
	} else if changes != "" && !opts.AllowDirty {
		return fmt.Errorf("the checkout has changes, and a release is built from a commit:\n%s\ncommit or stash them, or build from a clean clone", changes)
	}
	unix, err := git("log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return err
	}
	secs, err := strconv.ParseInt(unix, 10, 64)
	if err != nil {
		return fmt.Errorf("the commit's time %q: %v", unix, err)
	}
	mtime := time.Unix(secs, 0).UTC()
	files := map[string][]byte{}
	for _, name := range []string{"LICENSE", "README.md"} {
		if files[name], err = os.ReadFile(name); err != nil {
			return fmt.Errorf("%v (run it from the checkout's root)", err)
		}
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "reconcile-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var sums []string
	for _, p := range opts.Platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		bin := "reconcile"
		if goos == "windows" {
			bin += ".exe"
		}
		fmt.Fprintf(opts.Log, "building %s %s\n", opts.Version, p)
		exe, err := build(filepath.Join(tmp, goos+"_"+goarch, bin), goos, goarch, opts.Version, commit)
		if err != nil {
			return err
		}
		entries := []entry{{bin, exe, 0o755}, {"LICENSE", files["LICENSE"], 0o644}, {"README.md", files["README.md"], 0o644}}
		name := fmt.Sprintf("reconcile_%s_%s_%s", opts.Version, goos, goarch)
		var archive []byte
		if goos == "windows" {
			name += ".zip"
			archive, err = zipOf(entries, mtime)
		} else {
			name += ".tar.gz"
			archive, err = tarGzOf(entries, mtime)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(opts.Out, name), archive, 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(archive)
		sums = append(sums, hex.EncodeToString(sum[:])+"  "+name+"\n")
	}
	slices.SortFunc(sums, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	if err := os.WriteFile(filepath.Join(opts.Out, "SHA256SUMS"), []byte(strings.Join(sums, "")), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(opts.Log, "wrote %d archives and SHA256SUMS to %s\n", len(sums), opts.Out)
	return nil
}

// build compiles cmd/reconcile for goos/goarch into out, and returns it.
func build(out, goos, goarch, version, commit string) ([]byte, error) {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-mod=readonly",
		"-ldflags", "-s -w -buildid= -X main.releaseVersion="+version+" -X main.releaseCommit="+commit,
		"-o", out, "./cmd/reconcile")
	// Nothing of the machine's own settings may change the binary: no
	// cgo, and GOFLAGS from the command line above only.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=", "GOAMD64=v1", "GOARM64=v8.0")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build for %s/%s: %v\n%s", goos, goarch, err, stderr.String())
	}
	return os.ReadFile(out)
}

// entry is one file of an archive.
type entry struct {
	name string
	data []byte
	mode int64
}

// tarGzOf is a gzip'd tar of entries, in their order, each owned by root
// and modified at mtime, with no time or name in the gzip header.
func tarGzOf(entries []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: int64(len(e.data)),
			ModTime: mtime, Uname: "root", Gname: "root", Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipOf is a zip of entries, in their order, each modified at mtime.
func zipOf(entries []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(os.FileMode(e.mode))
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// git runs git with args in the current directory and returns what it
// printed, trimmed.
func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %v (dist builds from a git checkout)", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
