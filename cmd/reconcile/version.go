package main

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time by release builds (make dist):
//
//	-ldflags "-X main.releaseVersion=v1.2.3 -X main.releaseCommit=<hash>"
//
// Other builds leave them empty and take what Go stamped into the binary.
var releaseVersion, releaseCommit string

// build is what a binary knows of how it was built.
type build struct {
	// Version is the release tag (v1.2.3) of a release build, or of a
	// build of a tagged module version (go install ...@v1.2.3); any other
	// build says it is not a release: v0.0.0-dev+COMMIT (".dirty" after
	// the commit when the checkout had changes).
	Version string
	// Commit is the commit built, "" when the binary does not know it (a
	// go install of a module version, which carries no VCS stamp).
	Commit string
	// Go is the Go version it was built with, Platform its OS/arch.
	Go, Platform string
}

// thisBuild is how this binary was built; version is its Version.
var (
	thisBuild = readBuild(releaseVersion, releaseCommit, debug.ReadBuildInfo)
	version   = thisBuild.Version
)

// readBuild works out a build from the link-time values and Go's build
// information.
func readBuild(relVersion, relCommit string, info func() (*debug.BuildInfo, bool)) build {
	b := build{Version: relVersion, Commit: relCommit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := info()
	var modified bool
	if ok {
		b.Go = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			case "GOOS":
				b.Platform = s.Value + b.Platform[strings.IndexByte(b.Platform, '/'):]
			case "GOARCH":
				b.Platform = b.Platform[:strings.IndexByte(b.Platform, '/')+1] + s.Value
			}
		}
	}
	if b.Version != "" {
		return b
	}
	// A module version Go knows (go install ...@v1.2.3, or a build of a
	// clean checkout at a tag) is a release; a pseudo-version, "(devel)"
	// or a checkout with changes is not.
	if ok && releaseTag.MatchString(bi.Main.Version) && !pseudoVersion.MatchString(bi.Main.Version) {
		b.Version = bi.Main.Version
		return b
	}
	b.Version = "v0.0.0-dev"
	if c := shortCommit(b.Commit); c != "" {
		b.Version += "+" + c
		if modified {
			b.Version += ".dirty"
		}
	} else if ok {
		if m := pseudoVersion.FindStringSubmatch(bi.Main.Version); m != nil {
			b.Version += "+" + m[1] // a pseudo-version names the commit's first 12 hex digits
		}
	}
	return b
}

// releaseTag matches a module version that names a release: vX.Y.Z, with
// a pre-release (v1.2.0-rc.1) but no build metadata (+dirty).
var releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// pseudoVersion matches a Go pseudo-version, whose last part is a commit
// time and the commit's first 12 hex digits (its group): v0.0.0-20261129
// 020304-abcdefabcdef, or v1.2.4-0.20261129020304-abcdefabcdef, and
// +dirty when built from a checkout with changes.
var pseudoVersion = regexp.MustCompile(`[-.][0-9]{14}-([0-9a-f]{12})(\+.*)?$`)

// shortCommit is the first 12 hex digits of a commit hash.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// String is the line 'reconcile version' prints.
func (b build) String() string {
	commit := shortCommit(b.Commit)
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("reconcile %s (commit %s, %s, %s)", b.Version, commit, b.Go, b.Platform)
}
