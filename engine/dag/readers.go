package dag

// Readers counts, for each node of a walk, the nodes yet to finish that
// depend on it: what a node made (its value) can be let go once none of
// them is left, unless it is kept for a reader after the walk. A large walk
// so holds the values of the nodes in flight, not of every node it ran.
//
// It is not safe for concurrent use: its user calls Done under its own
// lock, the one that guards the values.
type Readers struct {
	left map[string]int
	kept map[string]bool
}

// CountReaders counts the readers of each node among nodes, whose
// dependencies deps gives; the values of kept are never let go.
func CountReaders(nodes []string, deps map[string][]string, kept []string) *Readers {
	r := &Readers{left: make(map[string]int, len(nodes)), kept: make(map[string]bool, len(kept))}
	for _, n := range nodes {
		for _, d := range deps[n] {
			r.left[d]++
		}
	}
	for _, k := range kept {
		r.kept[k] = true
	}
	return r
}

// Done notes that node, which depended on deps, has finished, and calls
// letGo for each value no node left to run reads: node's own when nothing
// reads it, and those of deps that node was the last to read. A node that
// never finishes (skipped, stopped) never lowers a count, so what it would
// have read is kept.
func (r *Readers) Done(node string, deps []string, letGo func(name string)) {
	if r.left[node] == 0 && !r.kept[node] {
		letGo(node)
	}
	for _, d := range deps {
		if r.left[d]--; r.left[d] == 0 && !r.kept[d] {
			letGo(d)
		}
	}
}
