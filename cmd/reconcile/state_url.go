package main

import (
	"fmt"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/diag"
)

// stateSchemes are the schemes of state locations this build reads;
// comingSchemes those it does not read yet.
var (
	stateSchemes  = []string{"etcd", "file"}
	comingSchemes = []string{"postgres", "postgresql"}
)

// stateLocationHint is the form of a state location, for errors.
const stateLocationHint = "use a path, file://PATH or etcd://HOST:PORT[,HOST:PORT...]/PREFIX"

// checkStateShape refuses a state location that looks like a URL but is
// not one of a scheme this build reads, so that a typo in a URL is not
// taken for a local path (where a new, empty state would be started):
//
//   - anything with "://" but a scheme other than etcd:// and file://
//     ("etc://", "postgres://", "s3://");
//   - a first path element with a colon, other than a drive letter
//     ("etcd:/HOST:PORT/P", "etcd:HOST:PORT/P", "HOST:PORT/P");
//   - a scheme's name followed by "//", or by a HOST:PORT element
//     ("etcd//HOST:PORT/P", "etcd/HOST:PORT/P").
//
// Relative paths such as state/prod.db, ./etcd.db or etcd/state.db pass.
// The error suggests the URL that was meant.
func checkStateShape(s string) error {
	if strings.HasPrefix(s, "etcd://") || strings.HasPrefix(s, "file://") {
		return nil
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok && !strings.ContainsAny(scheme, `/\`) {
		return unknownScheme(s, scheme, rest)
	}
	first, after := s, ""
	if i := strings.IndexAny(s, `/\`); i >= 0 {
		first, after = s[:i], s[i:]
	}
	if len(first) == 2 && first[1] == ':' && isASCIILetter(first[0]) {
		return nil // a drive letter: C:\state.db
	}
	if word, port, ok := strings.Cut(first, ":"); ok {
		if scheme := schemeNamed(word); scheme != "" {
			return unknownScheme(s, scheme, strings.TrimLeft(s[len(word)+1:], `/\`))
		}
		if port, _, _ = strings.Cut(port, ","); isPort(port) {
			return fmt.Errorf("%q is not a path: it starts with HOST:PORT but names no scheme (did you mean %q?); %s", s, "etcd://"+s, stateLocationHint)
		}
		return fmt.Errorf("%q is not a path nor a URL: its first element %q holds a colon; write ./%s for a file of that name; otherwise %s", s, first, s, stateLocationHint)
	}
	scheme := schemeNamed(first)
	if scheme == "" {
		return nil
	}
	if rest, ok := strings.CutPrefix(after, "//"); ok {
		return unknownScheme(s, scheme, strings.TrimLeft(rest, `/\`))
	}
	next, _, _ := strings.Cut(strings.TrimLeft(after, `/\`), "/")
	if strings.Contains(next, ":") {
		return unknownScheme(s, scheme, strings.TrimLeft(after, `/\`))
	}
	return nil
}

// unknownScheme is the error of s, a state location that was meant as a
// URL of scheme (as written) with rest after its "://".
func unknownScheme(s, scheme, rest string) error {
	known := schemeNamed(scheme)
	switch {
	case known == "":
		return fmt.Errorf("state backend %q is not supported: %s", scheme+"://", stateLocationHint)
	case isComing(known):
		return fmt.Errorf("%q: state on PostgreSQL (postgres://) is not supported by this build of reconcile yet; %s", s, stateLocationHint)
	}
	return fmt.Errorf("%q is not a valid state location (did you mean %q?); %s", s, known+"://"+rest, stateLocationHint)
}

// schemeNamed returns the scheme, read or coming, that word names or is a
// typo of ("etc", "ETCD", "postgres"); "" when it is none.
func schemeNamed(word string) string {
	if word == "" {
		return ""
	}
	return diag.Suggest(word, append(append([]string(nil), stateSchemes...), comingSchemes...))
}

func isComing(scheme string) bool {
	for _, c := range comingSchemes {
		if c == scheme {
			return true
		}
	}
	return false
}

func isASCIILetter(b byte) bool { return ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z') }

// isPort reports whether s is a port number.
func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
