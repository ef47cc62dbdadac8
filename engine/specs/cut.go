package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"path/filepath"
	"slices"

	"gopkg.in/yaml.v3"
)

// FileCuts names lines of one source that a load may leave out: the
// entries of resources that the apply of a saved plan does not run. It
// holds for the bytes whose SHA-256 is Digest only.
type FileCuts struct {
	// Name is the source's base name, as Hash takes it.
	Name   string
	Digest string
	// Lines are the cut spans, in order, apart from each other: each the
	// lines from its first number up to, not including, its second
	// (1-based).
	Lines [][2]int
}

// Cuts returns, for each source, the lines of the resources keep refuses
// that a later load of the same sources may leave out (LoadOptions.Skip):
// each one's entry, from its key up to the next entry of its section. Such
// a load gives what it keeps as this one did. A resource whose entry
// cannot be cut out whole stays (the last of its section, one in a flow
// mapping or in a document with anchors or aliases), and so does whatever
// something that stays refers to.
func (s *Spec) Cuts(keep func(name string) bool) []FileCuts {
	g := s.Graph()
	var roots []string
	for _, name := range g.Order() {
		if r, ok := s.Resources[name]; !ok || r.cutEnd == 0 || keep(name) {
			roots = append(roots, name)
		}
	}
	kept := g.Closure(roots)
	byFile := map[string][][2]int{}
	for name, r := range s.Resources {
		if !kept[name] {
			byFile[r.Pos.File] = append(byFile[r.Pos.File], [2]int{int(r.Pos.Line), int(r.cutEnd)})
		}
	}
	var out []FileCuts
	for _, file := range slices.Sorted(maps.Keys(byFile)) {
		spans := byFile[file]
		slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
		merged := spans[:1]
		for _, sp := range spans[1:] {
			if last := &merged[len(merged)-1]; last[1] == sp[0] {
				last[1] = sp[1]
			} else {
				merged = append(merged, sp)
			}
		}
		out = append(out, FileCuts{Name: filepath.Base(file), Digest: s.digests[file], Lines: merged})
	}
	return out
}

// cutEnd returns the line of the key after the i-th key of the section m
// (a mapping of resources) when the lines from the i-th key up to it hold
// that entry alone, so that leaving them out leaves the rest of the
// document as it was; 0 otherwise. It holds in a block mapping whose keys
// each start their line, in a document without anchors or aliases (an
// alias in one entry could name an anchor in another).
func (l *loader) cutEnd(m *yaml.Node, i int) int32 {
	m = deref(m)
	if l.aliased || l.configOnly || m.Kind != yaml.MappingNode || m.Style&yaml.FlowStyle != 0 || i+2 > len(m.Content) || i+2 == len(m.Content) && l.chunkNext == 0 {
		return 0
	}
	k := m.Content[i]
	// The last entry of a chunk: the next is the first of the next chunk,
	// at the same indentation (see planChunks).
	nextLine, nextCol := int(l.chunkNext), k.Column
	if i+2 < len(m.Content) {
		nextLine, nextCol = m.Content[i+2].Line, m.Content[i+2].Column
	}
	if k.Line < 1 || nextLine <= k.Line || nextCol != k.Column || k.Column < 1 || nextLine > l.lines.count() {
		return 0
	}
	// Nothing but indentation before the key on its line ("? key" does
	// not qualify).
	start := int(l.lines.starts[k.Line-1])
	for j := range k.Column - 1 {
		if start+j >= len(l.lines.src) || l.lines.src[start+j] != ' ' {
			return 0
		}
	}
	return int32(nextLine)
}

// skip returns src's bytes with the lines LoadOptions.Skip names for it
// left out, or nil to load src whole: when Skip names none, src's bytes
// are not those the cuts were made for, or the cuts do not fit them. The
// lines stay, empty, so that every position is what it was; the first of
// each span becomes a comment at its key's indentation, which ends a block
// scalar of the entry before it as the key did.
func (l *loader) skip(src Source) []byte {
	sum := sha256.Sum256(src.Data)
	digest := hex.EncodeToString(sum[:])
	l.spec.digests[src.Name] = digest
	if len(l.opts.Skip) == 0 || src.ConfigOnly {
		return nil
	}
	base := filepath.Base(src.Name)
	var spans [][2]int
	for _, fc := range l.opts.Skip {
		if fc.Name == base && fc.Digest == digest {
			spans = fc.Lines
			break
		}
	}
	if len(spans) == 0 {
		return nil
	}
	ix := indexLines(src.Data)
	out := make([]byte, 0, len(src.Data)/4)
	at := 0 // the first byte of src not yet copied
	prev := 0
	for _, sp := range spans {
		start, end := sp[0], sp[1]
		if start <= prev || end <= start || end > ix.count() {
			return nil
		}
		prev = end - 1
		from, to := int(ix.starts[start-1]), int(ix.starts[end-1])
		out = append(out, src.Data[at:from]...)
		indent := from
		for indent < to && src.Data[indent] == ' ' {
			indent++
		}
		out = append(out, src.Data[from:indent]...)
		out = append(out, '#')
		// One break per line cut, whatever breaks it had: the lines after
		// keep their numbers.
		for range end - start {
			out = append(out, '\n')
		}
		at = to
	}
	out = append(out, src.Data[at:]...)
	l.spec.Partial = true
	return out
}
