package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var (
	linkRE     = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	htmlIDRE   = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	headingRE  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// TestLinks checks the relative links of README.md and the guides: each
// leads to a file or directory of the checkout, and a link with an anchor to
// a heading of the Markdown file it names (as GitHub makes anchors of
// headings). Every guide of docs/ must be reached from the README, directly
// or through other guides.
func TestLinks(t *testing.T) {
	root := moduleRoot(t)
	files := docFiles(t, root)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(rel string) map[string]bool {
		if a, ok := anchors[rel]; ok {
			return a
		}
		a := headingAnchors(t, filepath.Join(root, rel))
		anchors[rel] = a
		return a
	}
	reached := map[string]bool{"README.md": true}
	edges := map[string][]string{}
	for _, f := range files {
		for _, l := range readLines(t, filepath.Join(root, f)) {
			if l.inCode {
				continue
			}
			text := codeSpanRE.ReplaceAllString(l.text, "")
			for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				pos := fmt.Sprintf("%s:%d", f, l.n)
				path, anchor, _ := strings.Cut(target, "#")
				rel := f
				if path != "" {
					rel = filepath.ToSlash(filepath.Join(filepath.Dir(f), path))
					if strings.HasPrefix(rel, "../") {
						t.Errorf("%s: link %q leads out of the checkout", pos, target)
						continue
					}
					if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
						t.Errorf("%s: link %q: %s does not exist", pos, target, rel)
						continue
					}
					edges[f] = append(edges[f], rel)
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(rel, ".md") {
					t.Errorf("%s: link %q has an anchor into %s, which is not Markdown", pos, target, rel)
					continue
				}
				if !anchorsOf(rel)[anchor] {
					t.Errorf("%s: link %q: %s has no heading whose anchor is #%s", pos, target, rel, anchor)
				}
			}
		}
	}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, to := range edges[f] {
			if !reached[to] {
				reached[to] = true
				queue = append(queue, to)
			}
		}
	}
	for _, f := range files {
		if !reached[f] {
			t.Errorf("%s is linked from neither the README nor a guide it links to", f)
		}
	}
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown
// file (lower case, spaces as hyphens, punctuation but - and _ dropped, a
// repeated one numbered -1, -2...), and the ids of its <a id="..."> tags.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range readLines(t, path) {
		if l.inCode {
			continue
		}
		for _, m := range htmlIDRE.FindAllStringSubmatch(l.text, -1) {
			anchors[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		slug := slugify(m[1])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// slugify makes a heading's text into its anchor as GitHub does: link
// targets left out, lower case, letters, digits, - and _ kept, spaces
// turned into hyphens, everything else dropped.
func slugify(heading string) string {
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func TestSlugify(t *testing.T) {
	for heading, want := range map[string]string{
		"State on etcd":                      "state-on-etcd",
		"Drift in plans, and accepting it":   "drift-in-plans-and-accepting-it",
		"`--output json`: machine output":    "--output-json-machine-output",
		"etcd users and roles":               "etcd-users-and-roles",
		"What it **can** do":                 "what-it-can-do",
		"See [the guide](docs/ci.md) for CI": "see-the-guide-for-ci",
	} {
		if got := slugify(heading); got != want {
			t.Errorf("slugify(%q) = %q, want %q", heading, got, want)
		}
	}
}
