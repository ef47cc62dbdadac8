package github

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

const version = "v0.1.0"

// platforms are those reconcile is released for, as the archives name them.
var platforms = []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}

// runners are the values of RUNNER_OS and RUNNER_ARCH that GitHub gives a
// job on each platform the install step serves.
var runners = map[string][2]string{
	"linux_amd64":  {"Linux", "X64"},
	"linux_arm64":  {"Linux", "ARM64"},
	"darwin_amd64": {"macOS", "X64"},
	"darwin_arm64": {"macOS", "ARM64"},
}

// release is a local release directory laid out as the project publishes
// them: VERSION/ holding an archive for each platform and SHA256SUMS.
type release struct {
	t    *testing.T
	root string // what RECONCILE_RELEASE_URL names, as a file:// URL
	// bins are the reconcile each archive holds: the real binary in the
	// archive for this machine, stand-in scripts in the others.
	bins map[string][]byte
	// sums are the archives' true digests.
	sums map[string]string
}

func archiveName(platform string) string {
	if strings.HasPrefix(platform, "windows") {
		return "reconcile_" + version + "_" + platform + ".zip"
	}
	return "reconcile_" + version + "_" + platform + ".tar.gz"
}

// hostPlatform is the platform of the machine running the tests; the
// test is skipped where reconcile is not released for it.
func hostPlatform(t *testing.T) string {
	t.Helper()
	p := runtime.GOOS + "_" + runtime.GOARCH
	if _, ok := runners[p]; !ok {
		t.Skipf("the install step serves Linux and macOS runners, on amd64 and arm64; not %s", p)
	}
	return p
}

// standIn is a reconcile that is a shell script: it says which platform's
// archive it came from.
func standIn(platform string) []byte {
	return []byte("#!/bin/sh\necho \"reconcile stand-in of " + platform + ": $*\"\n")
}

func newRelease(t *testing.T) *release {
	t.Helper()
	host := hostPlatform(t)
	real, err := os.ReadFile(reconcileBin)
	if err != nil {
		t.Fatal(err)
	}
	r := &release{t: t, root: t.TempDir(), bins: map[string][]byte{}, sums: map[string]string{}}
	if err := os.Mkdir(filepath.Join(r.root, version), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range platforms {
		bin := standIn(p)
		if p == host {
			bin = real
		}
		r.bins[p] = bin
		if strings.HasPrefix(p, "windows") {
			r.sums[archiveName(p)] = r.put(archiveName(p), zipArchive(t, "reconcile.exe", bin))
		} else {
			r.sums[archiveName(p)] = r.put(archiveName(p), tarGz(t, entry{"reconcile", 0o755, bin}, license, readme))
		}
	}
	r.writeSums(r.sums)
	return r
}

// clone is a copy of the release in a directory of its own, for a test to
// change.
func (r *release) clone(t *testing.T) *release {
	t.Helper()
	c := &release{t: t, root: t.TempDir(), bins: r.bins, sums: maps.Clone(r.sums)}
	if err := os.CopyFS(c.root, os.DirFS(r.root)); err != nil {
		t.Fatal(err)
	}
	return c
}

// url is RECONCILE_RELEASE_URL for the release.
func (r *release) url() string {
	return "file://" + r.root
}

// put writes a file of the release, and returns its SHA-256.
func (r *release) put(name string, b []byte) string {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.root, version, name), b, 0o644); err != nil {
		r.t.Fatal(err)
	}
	return digest(b)
}

func (r *release) remove(name string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.root, version, name)); err != nil {
		r.t.Fatal(err)
	}
}

// writeSums writes SHA256SUMS as sha256sum writes it: a line a file,
// sorted by name, the digest and the name apart by two spaces.
func (r *release) writeSums(sums map[string]string) {
	r.t.Helper()
	var lines []string
	for name, sum := range sums {
		lines = append(lines, sum+"  "+name+"\n")
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	r.put("SHA256SUMS", []byte(strings.Join(lines, "")))
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

type entry struct {
	name string
	mode int64
	body []byte
}

var (
	license = entry{"LICENSE", 0o644, []byte("the license\n")}
	readme  = entry{"README.md", 0o644, []byte("# reconcile\n")}
)

// tarGz is a .tar.gz holding the entries at its root.
func tarGz(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.body)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipArchive(t *testing.T, name string, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// installRun is one run of the install step, as a workflow runs it, with
// its directories.
type installRun struct {
	result
	dir, tmp, githubPath string
}

// install runs 'reconcile-gh.sh install VERSION DIR' from the release into
// dir (made a directory of its own when ""), with no GitHub token: the
// step needs none.
func install(t *testing.T, rel *release, dir string, extra []string, args ...string) installRun {
	t.Helper()
	w := newScriptWorkspace(t, newFakeGitHub(t))
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "bin")
	}
	in := installRun{dir: dir, tmp: t.TempDir(), githubPath: filepath.Join(t.TempDir(), "github_path")}
	if err := os.WriteFile(in.githubPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if args == nil {
		args = []string{version, dir}
	}
	path, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	env := append([]string{"GITHUB_TOKEN=", "RECONCILE_RELEASE_URL=" + rel.url(), "GITHUB_PATH=" + in.githubPath, "TMPDIR=" + in.tmp}, extra...)
	in.result = w.exec(env, "bash", append([]string{path, "install"}, args...)...)
	if n := w.gh.totalCalls(); n != 0 {
		t.Errorf("the install step made %d calls to GitHub's API, want none", n)
	}
	return in
}

// files lists dir: name and content of each entry; nil if dir is missing.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = string(b)
	}
	return out
}

// checkInstalled checks that in installed bin as dir/reconcile, and added
// dir to the PATH of later steps, and left nothing else behind.
func checkInstalled(t *testing.T, in installRun, bin []byte) {
	t.Helper()
	if in.code != 0 {
		t.Fatalf("install failed:\n%s", in.result)
	}
	got := files(t, in.dir)
	if len(got) != 1 || got["reconcile"] != string(bin) {
		names := slices.Sorted(maps.Keys(got))
		t.Errorf("%s holds %v, want reconcile alone, as the archive holds it (equal: %v)", in.dir, names, got["reconcile"] == string(bin))
	}
	if fi, err := os.Stat(filepath.Join(in.dir, "reconcile")); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("the installed reconcile is not executable: %v", fi.Mode())
	}
	if b, _ := os.ReadFile(in.githubPath); string(b) != in.dir+"\n" {
		t.Errorf("GITHUB_PATH holds %q, want %q", b, in.dir+"\n")
	}
	if left := files(t, in.tmp); len(left) != 0 {
		t.Errorf("the step left %v in its temporary directory", left)
	}
}

// TestInstall installs a release from a local release directory, as the
// workflows do from GitHub's: the archive of the runner's platform,
// checked against SHA256SUMS, and against the pinned digest when one is,
// is unpacked into the directory, which later steps find on PATH; the
// binary installed is the release's, and runs.
func TestInstall(t *testing.T) {
	needTools(t)
	t.Parallel()
	rel := newRelease(t)
	host := hostPlatform(t)

	in := install(t, rel, "", nil)
	checkInstalled(t, in, rel.bins[host])
	if !strings.Contains(in.stdout, "Installed reconcile "+version) || !strings.Contains(in.stdout, archiveName(host)) ||
		!strings.Contains(in.stdout, "pin the digest with RECONCILE_SHA256") {
		t.Errorf("install without a pinned digest:\n%s", in.result)
	}
	// A later step finds it on PATH, as GitHub makes it from GITHUB_PATH.
	added, err := os.ReadFile(in.githubPath)
	if err != nil {
		t.Fatal(err)
	}
	step := exec.Command("bash", "-c", "command -v reconcile && reconcile version")
	step.Env = append(os.Environ(), "PATH="+strings.TrimSuffix(string(added), "\n")+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := step.CombinedOutput()
	if first, _, _ := strings.Cut(string(out), "\n"); err != nil || first != filepath.Join(in.dir, "reconcile") {
		t.Errorf("reconcile version in a later step: %v\n%s", err, out)
	}

	// Pinned (in capitals, as some tools print digests), over an older
	// reconcile.
	dir := filepath.Join(t.TempDir(), "bin")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "reconcile"), []byte("#!/bin/sh\necho old\n"), 0o755)
	in = install(t, rel, dir, []string{"RECONCILE_SHA256=" + strings.ToUpper(rel.sums[archiveName(host)])})
	checkInstalled(t, in, rel.bins[host])
	if !strings.Contains(in.stdout, "as pinned by RECONCILE_SHA256 and listed in SHA256SUMS") {
		t.Errorf("install with a pinned digest:\n%s", in.result)
	}

	// Each runner gets its own platform's archive.
	for p, runner := range runners {
		in := install(t, rel, "", []string{"RUNNER_OS=" + runner[0], "RUNNER_ARCH=" + runner[1], "RECONCILE_SHA256=" + rel.sums[archiveName(p)]})
		checkInstalled(t, in, rel.bins[p])
		if p != host && !strings.Contains(in.stdout, "reconcile stand-in of "+p+": version") {
			t.Errorf("on %s/%s: the install did not run the installed reconcile:\n%s", runner[0], runner[1], in.result)
		}
	}
}

// TestInstallFromDist installs from a release built by the project's own
// release tool (make dist runs internal/dist) for this machine, with its
// digest pinned as the docs say: the kit reads the layout that releases
// have, and a later step runs the release's binary, which says its
// version.
func TestInstallFromDist(t *testing.T) {
	needTools(t)
	t.Parallel()
	host := hostPlatform(t)
	root := filepath.Join("..", "..")
	if err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Run(); err != nil {
		t.Skipf("make dist builds from a git checkout, and this is not one: %v", err)
	}
	rel := &release{t: t, root: t.TempDir()}
	gobin := filepath.Join(runtime.GOROOT(), "bin")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	dist := exec.CommandContext(ctx, filepath.Join(gobin, "go"), "run", "./internal/dist", "-version", version,
		"-out", filepath.Join(rel.root, version), "-platforms", strings.Replace(host, "_", "/", 1), "-allow-dirty")
	dist.Dir = root
	dist.Env = append(os.Environ(), "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := dist.CombinedOutput(); err != nil {
		t.Fatalf("internal/dist: %v\n%s", err, out)
	}
	sums, err := os.ReadFile(filepath.Join(rel.root, version, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	pin, name, _ := strings.Cut(strings.TrimSuffix(string(sums), "\n"), "  ")
	if name != archiveName(host) {
		t.Fatalf("make dist's SHA256SUMS is %q, want a line for %s", sums, archiveName(host))
	}

	in := install(t, rel, "", []string{"RECONCILE_SHA256=" + pin})
	if in.code != 0 || !strings.Contains(in.stdout, "as pinned by RECONCILE_SHA256") {
		t.Fatalf("install from make dist's release:\n%s", in.result)
	}
	added, err := os.ReadFile(in.githubPath)
	if err != nil {
		t.Fatal(err)
	}
	step := exec.Command("bash", "-c", "reconcile version --output json")
	step.Env = append(os.Environ(), "PATH="+strings.TrimSuffix(string(added), "\n")+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := step.Output()
	var v struct{ Version string }
	if err != nil || json.Unmarshal(out, &v) != nil || v.Version != version {
		t.Errorf("reconcile version --output json in a later step: %v\n%s\nwant version %s", err, out, version)
	}
}
