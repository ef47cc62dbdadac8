package main

import (
	"debug/buildinfo"
	"encoding/json"
	"os/exec"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// TestReadBuild: what a binary says of its build, from link-time values and
// Go's build information, for each way reconcile is built.
func TestReadBuild(t *testing.T) {
	t.Parallel()
	const commit = "3f2a9c1e8b7d4a6f0c5e2d1b9a8c7f6e5d4c3b2a"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs.revision", Value: commit}, {Key: "vcs.modified", Value: modified}}
	}
	for name, tc := range map[string]struct {
		relVersion, relCommit string
		main                  string
		settings              []debug.BuildSetting
		noInfo                bool
		want                  string
	}{
		"release build (make dist)": {relVersion: "v1.2.3", relCommit: commit, main: "(devel)",
			want: "reconcile v1.2.3 (commit 3f2a9c1e8b7d, go1.26.8, "},
		"go install of a tag":         {main: "v1.2.3", want: "reconcile v1.2.3 (commit unknown, go1.26.8, "},
		"go install of a pre-release": {main: "v1.3.0-rc.1", want: "reconcile v1.3.0-rc.1 (commit unknown, go1.26.8, "},
		"go install of a pseudo-version": {main: "v0.0.0-20261129020304-3f2a9c1e8b7d",
			want: "reconcile v0.0.0-dev+3f2a9c1e8b7d (commit unknown, go1.26.8, "},
		"checkout at a tag, clean": {main: "v1.2.3", settings: vcs("false"),
			want: "reconcile v1.2.3 (commit 3f2a9c1e8b7d, go1.26.8, linux/arm64)"},
		"checkout past a tag": {main: "v1.2.4-0.20261129020304-3f2a9c1e8b7d", settings: vcs("false"),
			want: "reconcile v0.0.0-dev+3f2a9c1e8b7d (commit 3f2a9c1e8b7d, go1.26.8, linux/arm64)"},
		"checkout with changes": {main: "v0.0.0-20261129020304-3f2a9c1e8b7d+dirty", settings: vcs("true"),
			want: "reconcile v0.0.0-dev+3f2a9c1e8b7d.dirty (commit 3f2a9c1e8b7d, go1.26.8, linux/arm64)"},
		"no VCS stamp":         {main: "(devel)", want: "reconcile v0.0.0-dev (commit unknown, go1.26.8, "},
		"no build information": {noInfo: true, want: "reconcile v0.0.0-dev (commit unknown, "},
	} {
		info := func() (*debug.BuildInfo, bool) {
			if tc.noInfo {
				return nil, false
			}
			return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/reconcile-dev/reconcile", Version: tc.main}, Settings: tc.settings}, true
		}
		if got := readBuild(tc.relVersion, tc.relCommit, info).String(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want it to begin %q", name, got, tc.want)
		}
	}
}

// TestE2EVersion: the binary built from this checkout says it is not a
// release, with the commit it was built from, in text and JSON.
func TestE2EVersion(t *testing.T) {
	needBinary(t)
	t.Parallel()
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	commit := strings.TrimSpace(string(head))
	// Go stamps the commit only where it finds the repository (not in a
	// git worktree, for one): the test is of what reconcile makes of it.
	if bi, err := buildinfo.ReadFile(binPath); err != nil || !slices.ContainsFunc(bi.Settings, func(s debug.BuildSetting) bool { return s.Key == "vcs.revision" }) {
		t.Skipf("go build stamped no commit into the binary here (%v)", err)
	}
	run := func(args ...string) (string, error) {
		out, err := exec.Command(binPath, args...).Output()
		return string(out), err
	}
	out, err := run("version")
	if err != nil || !strings.HasPrefix(out, "reconcile v0.0.0-dev+"+commit[:12]) || !strings.Contains(out, "(commit "+commit[:12]+", go") {
		t.Errorf("version: want v0.0.0-dev+%s and its commit, got %q (%v)", commit[:12], out, err)
	}
	out, err = run("version", "--output", "json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("version --output json: %v\n%s", err, out)
	}
	if doc["commit"] != commit || !strings.HasPrefix(doc["version"].(string), "v0.0.0-dev+") || !strings.HasPrefix(doc["go"].(string), "go1.") || doc["platform"] == "" {
		t.Errorf("version --output json = %v", doc)
	}
}
