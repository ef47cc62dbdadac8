package specs

import (
	"bytes"

	"gopkg.in/yaml.v3"
)

// A large spec is loaded in chunks: its resources a few hundred at a time,
// each chunk parsed (while the one before it loads), loaded and let go, so
// that the YAML tree of the whole file (several times the size of the Spec
// made of it) is never held at once. The chunks are cut between the entries of
// the resources section, told apart by their indentation, where a look at
// the lines shows that the chunks parse to the very nodes that the whole
// file parses to; where it cannot tell, the file is parsed whole. A chunk
// that does not parse (a YAML error, or an alias naming an anchor of
// another chunk) makes Load start again, every file parsed whole: errors
// are those of a whole parse.

// defaultChunkMin is the size from which a file is loaded in chunks, and
// defaultChunkEntries the number of resources a chunk holds (tests set
// others in LoadOptions).
const (
	defaultChunkMin     = 256 << 10
	defaultChunkEntries = 256
)

// chunking is how loadFile cuts a file into chunks: the 0-based lines of
// its resources key and of the first entry of each chunk but the first.
type chunking struct {
	key    int
	starts []int
}

// planChunks returns how to cut src, whose lines ix indexes, into chunks
// of perChunk resources, or false when src is to be parsed whole: it is
// smaller than minSize or holds fewer than two chunks' resources, it holds
// what a look at its lines cannot follow (see splittable, selfContained,
// entryKey), or its resources section is not one block mapping of plain
// keys, each named once, under a "resources:" key alone on its line.
func planChunks(src []byte, ix lineIndex, minSize, perChunk int) (chunking, bool) {
	if len(src) < minSize || !splittable(src) {
		return chunking{}, false
	}
	n := ix.count()
	line := func(i int) []byte { return ix.lineBytes(i + 1) } // 0-based
	key, end := -1, n
	for i := range n {
		l := line(i)
		if len(l) == 0 || l[0] == ' ' || l[0] == '#' {
			continue
		}
		switch {
		case isResourcesKey(l):
			if key >= 0 {
				return chunking{}, false // a second resources key
			}
			key = i
		case key >= 0 && end == n:
			end = i
		}
	}
	if key < 0 {
		return chunking{}, false
	}
	indent := -1
	var entries []int
	seen := map[string]bool{}
	for i := key + 1; i < end; i++ {
		l := line(i)
		if !selfContained(l) {
			return chunking{}, false
		}
		sp := 0
		for sp < len(l) && l[sp] == ' ' {
			sp++
		}
		if sp == len(l) || l[sp] == '#' {
			continue // blank or a comment
		}
		if indent < 0 {
			indent = sp
		}
		switch {
		case sp < indent:
			return chunking{}, false
		case sp == indent:
			name, ok := entryKey(l[sp:])
			if !ok || seen[name] {
				return chunking{}, false
			}
			seen[name] = true
			entries = append(entries, i)
		}
	}
	if len(entries) < 2*perChunk {
		return chunking{}, false
	}
	c := chunking{key: key}
	for i := perChunk; i < len(entries); i += perChunk {
		c.starts = append(c.starts, entries[i])
	}
	return c, true
}

// isResourcesKey reports whether l is "resources:" alone on its line, but
// for spaces and a comment.
func isResourcesKey(l []byte) bool {
	rest, ok := bytes.CutPrefix(l, []byte("resources:"))
	if !ok {
		return false
	}
	trimmed := bytes.TrimLeft(rest, " ")
	return len(trimmed) == 0 || trimmed[0] == '#' && len(trimmed) < len(rest)
}

// entryKey returns the key of an entry's line l (from its key on): a plain
// key of letters, digits and "_-.", followed by a colon and a space or the
// end of the line. Other keys (quoted, or with other characters) are not
// compared for repeats here: false.
func entryKey(l []byte) (string, bool) {
	i := 0
	for i < len(l) && (l[i] >= 'a' && l[i] <= 'z' || l[i] >= 'A' && l[i] <= 'Z' || l[i] >= '0' && l[i] <= '9' || l[i] == '_' || l[i] == '-' || l[i] == '.') {
		i++
	}
	if i == 0 || i == len(l) || l[i] != ':' || i+1 < len(l) && l[i+1] != ' ' || l[0] == '-' || l[0] == '.' {
		return "", false
	}
	return string(l[:i]), true
}

// splittable reports whether src has none of what planChunks cannot
// follow line by line: line breaks other than \n (\r, and U+0085, U+2028
// and U+2029, whose UTF-8 starts with 0xc2 or 0xe2), a byte order mark,
// document markers and directives, anchors and aliases ('&' and '*', even
// where they are only text), and block scalars kept with their final line
// breaks (|+ and >+), which would end otherwise at the end of a chunk.
func splittable(src []byte) bool {
	if bytes.ContainsAny(src, "\r&*") || bytes.IndexByte(src, 0xc2) >= 0 || bytes.IndexByte(src, 0xe2) >= 0 || bytes.HasPrefix(src, []byte{0xef, 0xbb, 0xbf}) {
		return false
	}
	for _, marker := range []string{"---", "...", "%"} {
		if bytes.HasPrefix(src, []byte(marker)) || bytes.Contains(src, []byte("\n"+marker)) {
			return false
		}
	}
	for i := bytes.IndexByte(src, '+'); i >= 0; {
		// |+ >+ |2+ >2+ ...: a keep indicator after a block indicator.
		j := i - 1
		if j >= 0 && src[j] >= '1' && src[j] <= '9' {
			j--
		}
		if j >= 0 && (src[j] == '|' || src[j] == '>') {
			return false
		}
		next := bytes.IndexByte(src[i+1:], '+')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return true
}

// selfContained reports whether line l closes every quoted scalar and flow
// collection it opens, as far as a look at l alone can tell: it may say
// false of a line that does (a quote in the text of a block scalar), never
// true of one that does not. A quote opens a scalar at the start of the
// line or of a token (after a space, a tab, '[', '{', ',' or ':');
// brackets count wherever they are outside quotes; a comment ends the
// line.
func selfContained(l []byte) bool {
	depth := 0
	start := true
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == '#' && start:
			return depth == 0
		case c == '"' && start:
			i++
			for i < len(l) && l[i] != '"' {
				if l[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(l) {
				return false
			}
		case c == '\'' && start:
			i++
			for i < len(l) && (l[i] != '\'' || i+1 < len(l) && l[i+1] == '\'') {
				if l[i] == '\'' {
					i++ // '' is a quote within the scalar
				}
				i++
			}
			if i >= len(l) {
				return false
			}
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		}
		start = c == ' ' || c == '\t' || c == '[' || c == '{' || c == ',' || c == ':'
	}
	return depth == 0
}

// loadChunks loads src in the chunks c gives, and reports false when one
// does not parse as it should (the loader must then start again).
func (l *loader) loadChunks(src []byte, ix lineIndex, c chunking) bool {
	// Each chunk is parsed while the one before it loads, on another
	// goroutine: the parse is most of a chunk's work. At most one parsed
	// chunk waits to be loaded.
	parsed := make(chan *yaml.Node)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(parsed)
		for i := 0; i <= len(c.starts); i++ {
			root := parseChunk(src, ix, c, i)
			select {
			case parsed <- root:
			case <-stop:
				return
			}
			if root == nil {
				return
			}
		}
	}()
	for i := 0; i <= len(c.starts); i++ {
		root := <-parsed
		if root == nil {
			return false
		}
		if i > 0 {
			// The root, the key and the section's mapping are counted
			// once in the budget of the whole file.
			l.nodes -= 3
		}
		// A whole parse over the budget loads nothing of the file: a
		// chunk over it starts the load again, parsed whole.
		l.aliased = false
		if !l.budget(root, 0) {
			return false
		}
		l.chunkNext = 0
		if i < len(c.starts) {
			l.chunkNext = int32(c.starts[i] + 1)
		}
		l.loadSections(root)
	}
	l.chunkNext = 0
	return true
}

// parseChunk parses chunk i of src (0: what comes before the resources,
// i > 0: the resources key and the lines of the (i-1)th chunk of entries)
// and returns its tree, placed at its lines in the file; nil when it does
// not parse as a mapping (of the resources key alone, for i > 0).
func parseChunk(src []byte, ix lineIndex, c chunking, i int) *yaml.Node {
	var text []byte
	shift := 0
	if i == 0 {
		text = src[:ix.starts[c.starts[0]]]
	} else {
		// The resources key, then the chunk's lines: line 1 is the
		// key's, line t > 1 the chunk's (t-2)th.
		resourcesLine := src[ix.starts[c.key]:ix.starts[c.key+1]]
		from := int(ix.starts[c.starts[i-1]])
		to := len(src)
		if i < len(c.starts) {
			to = int(ix.starts[c.starts[i]])
		}
		text = make([]byte, 0, len(resourcesLine)+to-from)
		text = append(append(text, resourcesLine...), src[from:to]...)
		shift = c.starts[i-1] - 1
	}
	docs, err := parseDocuments(text)
	if err != nil || len(docs) != 1 || docs[0].Kind != yaml.MappingNode {
		return nil
	}
	root := docs[0]
	if i > 0 {
		if len(root.Content) < 2 || root.Content[0].Value != "resources" || root.Content[0].Line != 1 {
			return nil
		}
		placeChunk(root, c.key+1, shift)
	}
	return root
}

// placeChunk moves the nodes of a chunk's tree to their lines in the file:
// those of line 1 (the root and the resources key) to keyLine, the others
// shift lines down.
func placeChunk(n *yaml.Node, keyLine, shift int) {
	if n.Line == 1 {
		n.Line = keyLine
	} else {
		n.Line += shift
	}
	for _, c := range n.Content {
		placeChunk(c, keyLine, shift)
	}
}
