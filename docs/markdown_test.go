package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// moduleRoot is the root of the checkout: the directory above this
// package, which holds go.mod and README.md.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod above the docs package: %v", err)
	}
	return root
}

// docFiles are the Markdown files a reader is sent to, relative to root:
// README.md, then the guides of docs/ in name order.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, g := range guides {
		files = append(files, filepath.ToSlash(must(filepath.Rel(root, g))))
	}
	slices.Sort(files[1:])
	return files
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// line is one line of a Markdown file, with whether it is inside a fenced
// code block (the fences themselves count as inside).
type line struct {
	n      int // 1-based
	text   string
	inCode bool
}

// readLines reads a Markdown file and marks its fenced code blocks.
func readLines(t *testing.T, path string) []line {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []line
	fence := ""
	for i, s := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		trimmed := strings.TrimLeft(s, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			lines = append(lines, line{i + 1, s, true})
		case fence != "" && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" ") == "":
			fence = ""
			lines = append(lines, line{i + 1, s, true})
		default:
			lines = append(lines, line{i + 1, s, fence != ""})
		}
	}
	return lines
}

// block is a fenced code block that a doctest comment selects.
type block struct {
	pos  string // FILE:LINE of its opening fence
	info string // the fence's info string: sh, text...
	text string // its lines, each ended by a newline
}

// walkthrough is what the doctest comments of one name select, in the
// order of the files.
type walkthrough struct {
	name    string
	scripts []block // <!-- doctest: NAME -->
	outputs []block // <!-- doctest-output: NAME -->
}

// script is the walkthrough's blocks as one bash script, each block
// preceded by a comment naming where it comes from.
func (w *walkthrough) script() string {
	var b strings.Builder
	for _, s := range w.scripts {
		fmt.Fprintf(&b, "# %s\n%s", s.pos, s.text)
	}
	return b.String()
}

var markerRE = regexp.MustCompile(`^<!--\s*doctest(-output)?:\s*([A-Za-z0-9_-]+)\s*-->\s*$`)

// walkthroughs finds every walkthrough of files (relative to root), in the
// order their first block appears. A marker that is not followed by a
// fenced block, or a script block that is not sh, is an error.
func walkthroughs(t *testing.T, root string, files []string) []*walkthrough {
	t.Helper()
	var all []*walkthrough
	byName := map[string]*walkthrough{}
	for _, f := range files {
		lines := readLines(t, filepath.Join(root, f))
		for i := 0; i < len(lines); i++ {
			m := markerRE.FindStringSubmatch(lines[i].text)
			if m == nil || lines[i].inCode {
				continue
			}
			output, name := m[1] != "", m[2]
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j].text) == "" {
				j++
			}
			if j == len(lines) || !lines[j].inCode {
				t.Errorf("%s:%d: the doctest comment %q is not followed by a fenced code block", f, lines[i].n, lines[i].text)
				continue
			}
			info := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[j].text), "`~"))
			var text strings.Builder
			k := j + 1
			for ; k < len(lines) && !(lines[k].inCode && isFence(lines[k].text)); k++ {
				text.WriteString(lines[k].text + "\n")
			}
			b := block{pos: fmt.Sprintf("%s:%d", f, lines[j].n), info: info, text: text.String()}
			w := byName[name]
			if w == nil {
				w = &walkthrough{name: name}
				byName[name] = w
				all = append(all, w)
			}
			if output {
				w.outputs = append(w.outputs, b)
			} else {
				if info != "sh" && info != "bash" {
					t.Errorf("%s: the block of walkthrough %q is %q: a walkthrough's blocks are sh", b.pos, name, info)
				}
				w.scripts = append(w.scripts, b)
			}
			i = k
		}
	}
	for _, w := range all {
		if len(w.scripts) == 0 {
			t.Errorf("walkthrough %q has output blocks (%s) but no commands", w.name, w.outputs[0].pos)
		}
	}
	return all
}

func isFence(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~")
}

// matchOutput checks that output holds the non-blank lines of want in
// order, each matching a whole line of output after trailing spaces are
// trimmed: "..." in a wanted line stands for any text, a wanted line that is
// only "..." for any lines. It returns the first line of want not found.
func matchOutput(output, want string) (missing string, ok bool) {
	got := strings.Split(output, "\n")
	i := 0
	for _, w := range strings.Split(want, "\n") {
		w = strings.TrimRight(w, " \t")
		if strings.TrimSpace(w) == "" || strings.TrimSpace(w) == "..." {
			continue
		}
		re := wildcard(w)
		for i < len(got) && !re.MatchString(strings.TrimRight(got[i], " \t\r")) {
			i++
		}
		if i == len(got) {
			return w, false
		}
		i++
	}
	return "", true
}

// wildcard is a regular expression that matches a whole line equal to
// pattern, where each "..." stands for any text.
func wildcard(pattern string) *regexp.Regexp {
	parts := strings.Split(pattern, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

func TestMatchOutput(t *testing.T) {
	out := "make demo\nApply complete! 8 created.\n\nOutputs:\n  id = \"ocid1.x.amaaaaaa123\"\nNo changes. The cloud matches the specs.\n"
	for name, tc := range map[string]struct {
		want string
		ok   bool
	}{
		"lines in order":          {want: "Apply complete! 8 created.\nNo changes. The cloud matches the specs.", ok: true},
		"wildcard in a line":      {want: "  id = \"ocid1.x.amaaaaaa...\"", ok: true},
		"a line of dots":          {want: "Outputs:\n...\nNo changes...", ok: true},
		"blank lines are ignored": {want: "\n\nOutputs:\n\n", ok: true},
		"out of order":            {want: "No changes. The cloud matches the specs.\nOutputs:"},
		"part of a line only":     {want: "Apply complete!"},
		"absent":                  {want: "Destroy complete!"},
	} {
		t.Run(name, func(t *testing.T) {
			missing, ok := matchOutput(out, tc.want)
			if ok != tc.ok {
				t.Errorf("matchOutput(%q) = %q, %v; want ok %v", tc.want, missing, ok, tc.ok)
			}
		})
	}
}
