package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDistReproducible builds the linux/amd64 archive twice, into two
// directories: the archives and SHA256SUMS are byte for byte the same,
// hold the binary, LICENSE and README.md in that order with the commit's
// time, and the binary says the release's version and commit.
func TestDistReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds reconcile: skipped in -short mode")
	}
	t.Chdir(filepath.Join("..", ".."))
	head, err := git("rev-parse", "HEAD")
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	ct, _ := git("log", "-1", "--format=%ct", "HEAD")
	secs, _ := strconv.ParseInt(ct, 10, 64)
	const version = "v9.8.7-test.1"
	var outs [2]string
	for i := range outs {
		outs[i] = t.TempDir()
		if err := Dist(Options{Version: version, Out: outs[i], Platforms: []string{"linux/amd64"}, AllowDirty: true, Log: io.Discard}); err != nil {
			t.Fatal(err)
		}
	}
	const name = "reconcile_" + version + "_linux_amd64.tar.gz"
	for _, f := range []string{name, "SHA256SUMS"} {
		a, err := os.ReadFile(filepath.Join(outs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(outs[1], f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds of one commit", f)
		}
	}
	sums, _ := os.ReadFile(filepath.Join(outs[0], "SHA256SUMS"))
	if !regexpMatch(`^[0-9a-f]{64}  `+strings.ReplaceAll(name, ".", `\.`)+"\n$", string(sums)) {
		t.Errorf("SHA256SUMS = %q", sums)
	}

	f, err := os.Open(filepath.Join(outs[0], name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	bin := filepath.Join(t.TempDir(), "reconcile")
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(time.Unix(secs, 0)) || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: modified %v, owner %d:%d; want the commit's time and root", h.Name, h.ModTime, h.Uid, h.Gid)
		}
		if h.Name == "reconcile" {
			data, _ := io.ReadAll(tr)
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if strings.Join(names, " ") != "reconcile LICENSE README.md" {
		t.Errorf("the archive holds %v, want reconcile, LICENSE, README.md", names)
	}
	out, err := exec.Command(bin, "version").Output()
	if want := "reconcile " + version + " (commit " + head[:12] + ", go"; err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("the archive's binary says %q (%v), want it to begin %q", out, err, want)
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestDockerfile keeps the Dockerfile, which CI does not build, in step
// with the module: the Go of go.mod, a static build of cmd/reconcile, and
// a final image that runs it as a user without privileges.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	df, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(mod)
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	for _, want := range []string{
		"FROM golang:" + string(goVersion[1]) + "-",
		"CGO_ENABLED=0 go build -trimpath",
		"./cmd/reconcile",
		"FROM gcr.io/distroless/static-debian12:nonroot",
		"USER nonroot:nonroot",
		`ENTRYPOINT ["/usr/local/bin/reconcile"]`,
	} {
		if !strings.Contains(string(df), want) {
			t.Errorf("the Dockerfile does not hold %q", want)
		}
	}
}
