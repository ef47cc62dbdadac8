package gcpiam

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The principal identifiers of allow policies (IAM v1), as Google's IAM
// documentation lists them ("Principal identifiers"): a type, a colon and
// an id, or one of the special members.
var (
	// emailTypes take an email address: a Google Account, a Google group,
	// a service account.
	emailTypes = []string{"user", "group", "serviceAccount"}
	// uriTypes take "//" and the rest of a URI: a single identity
	// (principal://iam.googleapis.com/..., principal://goog/subject/...)
	// or a set of them (principalSet://...).
	uriTypes = []string{"principal", "principalSet"}
	// conveniences are the basic-role convenience values, of a project id.
	conveniences = []string{"projectOwner", "projectEditor", "projectViewer"}
	// specials are the members without a type: everyone, and everyone
	// signed in to a Google account; and the legacy basic-role members of
	// Cloud Storage.
	specials = []string{"allUsers", "allAuthenticatedUsers", "projectOwners", "projectReaders", "projectWriters"}
)

// memberTypes are every type a member may have, for suggestions.
var memberTypes = slices.Concat(emailTypes, uriTypes, []string{"domain"}, conveniences)

// CheckMember checks an IAM member as IAM reads it, and says what is
// wrong: a type IAM does not know (types are case-sensitive:
// serviceAccount, not serviceaccount), an id of the wrong form for its
// type (user:, group: and serviceAccount: take an email address, or for a
// Kubernetes service account PROJECT.svc.id.goog[NAMESPACE/NAME];
// domain: a domain; principal: and principalSet: a "//" URI), blanks, or a
// deleted principal ("deleted:..."), which appears in policies read but
// cannot be granted a role.
func CheckMember(m string) error {
	if slices.Contains(specials, m) {
		return nil
	}
	if strings.HasPrefix(m, "deleted:") {
		return fmt.Errorf("%q is a deleted principal: deleted principals appear in policies read, but cannot be granted roles", m)
	}
	if strings.TrimSpace(m) != m || strings.ContainsAny(m, " \t\r\n") {
		return fmt.Errorf("%q is not an IAM member: it holds blanks", m)
	}
	typ, id, ok := strings.Cut(m, ":")
	if !ok || typ == "" || id == "" {
		if s := suggest(m, specials); s != "" {
			return fmt.Errorf("%q is not an IAM member (did you mean %q?)", m, s)
		}
		return fmt.Errorf("%q is not an IAM member: want TYPE:ID (user:, group:, serviceAccount:, domain:, principal://..., principalSet://...), allUsers or allAuthenticatedUsers", m)
	}
	var err error
	switch {
	case slices.Contains(emailTypes, typ):
		if !isEmail(id) && (typ != "serviceAccount" || !isKubernetesSA(id)) {
			err = fmt.Errorf("%s: takes an email address", typ)
			if typ == "serviceAccount" {
				err = fmt.Errorf("%s: takes an email address (NAME@PROJECT.iam.gserviceaccount.com), or PROJECT.svc.id.goog[NAMESPACE/NAME] for a Kubernetes service account", typ)
			}
		}
	case typ == "domain":
		if !isDomain(id) {
			err = errors.New("domain: takes a domain name, such as example.com")
		}
	case slices.Contains(uriTypes, typ):
		if rest, ok := strings.CutPrefix(id, "//"); !ok || !strings.Contains(rest, "/") {
			err = fmt.Errorf("%s: takes a URI, %s://iam.googleapis.com/... or %s://goog/...", typ, typ, typ)
		}
	case slices.Contains(conveniences, typ):
	default:
		err = fmt.Errorf("IAM knows no principal type %q", typ)
		if s := suggest(typ, memberTypes); s != "" {
			err = fmt.Errorf("IAM knows no principal type %q (did you mean %q?)", typ, s)
		}
	}
	if err != nil {
		return fmt.Errorf("%q is not an IAM member: %w", m, err)
	}
	return nil
}

// isEmail reports whether s has the form of an email address: one "@"
// between a local part and a host name.
func isEmail(s string) bool {
	local, host, ok := strings.Cut(s, "@")
	return ok && local != "" && isHost(host, 1)
}

// isDomain reports whether s has the form of a domain name: a host name
// of two labels or more.
func isDomain(s string) bool { return isHost(s, 2) }

// isHost reports whether s has the form of a host name of at least n
// labels of letters, digits and hyphens, separated by dots.
func isHost(s string, n int) bool {
	labels := strings.Split(s, ".")
	if len(labels) < n {
		return false
	}
	for _, l := range labels {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// isKubernetesSA reports whether s is the id of a Kubernetes service
// account in Workload Identity: PROJECT.svc.id.goog[NAMESPACE/NAME].
func isKubernetesSA(s string) bool {
	pool, rest, ok := strings.Cut(s, "[")
	if !ok || !strings.HasSuffix(pool, ".svc.id.goog") || !strings.HasSuffix(rest, "]") {
		return false
	}
	ns, name, ok := strings.Cut(strings.TrimSuffix(rest, "]"), "/")
	return ok && ns != "" && name != ""
}

// suggest returns the name of names that s is a case or small spelling
// change of, or "".
func suggest(s string, names []string) string {
	for _, n := range names {
		if strings.EqualFold(n, s) {
			return n
		}
	}
	best, bestD := "", 3
	for _, n := range names {
		if d := distance(strings.ToLower(s), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
