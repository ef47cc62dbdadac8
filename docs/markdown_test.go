package docs

import (
	"os"
	"path/filepath"
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
