package render

import (
	"fmt"
	"maps"
	"slices"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
	"github.com/reconcile-dev/reconcile/kind"
)

// Body lines.
//
// A change's body is built once as a list of lines, independent of the
// format; the text and Markdown renderers then lay the lines out their own
// way.

// sign marks what happens to one line of a body.
type sign int

const (
	signNone   sign = iota // shown as is: read results, forget, outputs
	signAdd                // added
	signRemove             // removed
	signChange             // changed in place
)

// lineKind says how a line is laid out.
type lineKind int

const (
	lineValue  lineKind = iota // key = value, or a bare list element
	lineOpen                   // key = { or key = [; children are one level deeper
	lineClose                  // } or ], closing the last open line of its depth
	lineHidden                 // a comment counting unchanged entries
	lineMember                 // a member of a role, added or removed: key (the role), then text (the member)
)

// line is one line of a change's body.
type line struct {
	kind  lineKind
	sign  sign
	depth int    // nesting level, 0 for top-level fields
	key   string // rendered key; empty for list elements, closers and comments
	pad   int    // width to pad key to, to line up with its siblings
	old   string // previous value of a changed value; empty when one value is shown
	text  string // the value, the bracket of an open or close line, or the comment
	note  string // trailing comment, such as "forces replacement"
}

// body accumulates the lines of one change.
type body struct{ lines []line }

func (b *body) add(l line) { b.lines = append(b.lines, l) }

// changeLines returns the body of c: the fields each action shows. It
// appends them to buf[:0], so that a caller writing many bodies reuses one.
func changeLines(c *plan.Change, buf []line) []line {
	b := body{lines: buf[:0]}
	before, after, err := c.Values() // decoded, when the planner packed them
	if err != nil {
		b.add(line{kind: lineHidden, text: "# " + untrusted.Text(err.Error())})
		return b.lines
	}
	switch c.Action {
	case plan.Create:
		b.entries(0, signAdd, after)
	case plan.Delete:
		b.entries(0, signRemove, before)
	case plan.Update, plan.Replace:
		force := map[string]bool{}
		for _, p := range c.ReplacePaths {
			force[p] = true
		}
		b.diffEntries(0, before, after, force)
	case plan.Import:
		if before == nil {
			b.entries(0, signNone, after)
		} else {
			b.diffEntries(0, before, after, nil)
		}
	case plan.Read:
		b.entries(0, signNone, after)
	case plan.Forget:
		if c.ID != "" {
			b.add(line{kind: lineValue, key: "id", text: value.Quote(c.ID)})
		}
	case plan.Refresh:
		return driftLines(driftItemOf(c))
	}
	for _, o := range c.Options {
		b.add(line{kind: lineValue, sign: signChange, key: "options." + o.Name, old: fmt.Sprint(o.Before), text: fmt.Sprint(o.After)})
	}
	b.access(c.Access, "access to %s (its live policy, read now): the apply removes (-) and adds (+)")
	for _, l := range c.Lockouts {
		b.add(line{kind: lineHidden, text: "# ! the apply removes the caller's own access: " + untrusted.Text(oneLine(lockoutText(l))) + " (allowed by --allow-self-lockout)"})
	}
	return b.lines
}

// lockoutText says which of the caller's own roles a write removes.
func lockoutText(l plan.Lockout) string {
	return fmt.Sprintf("%s loses %s on %s, which it has through %s", l.Caller, l.Role, l.Resource, l.Member)
}

// access appends the members of access policies that changes add and
// remove, one line each, under a comment per policy, head with the
// policy's resource for its %s, the roles lined up.
func (b *body) access(changes []plan.AccessChange, head string) {
	for i := 0; i < len(changes); {
		res := changes[i].Resource
		j := i
		for j < len(changes) && changes[j].Resource == res {
			j++
		}
		if res == "" {
			res = "the policy"
		}
		b.add(line{kind: lineHidden, text: "# " + untrusted.Text(oneLine(fmt.Sprintf(head, res)))})
		start := len(b.lines)
		for _, a := range changes[i:j] {
			s := signAdd
			if !a.Added {
				s = signRemove
			}
			role := a.Role
			if a.Condition != "" {
				role += " (condition " + value.Quote(a.Condition) + ")"
			}
			b.add(line{kind: lineMember, sign: s, key: untrusted.Text(role), text: untrusted.Text(a.Member)})
		}
		b.align(start, 0)
		i = j
	}
}

// driftLines is the body of a node's drift, in plans and drift reports
// alike: the node's id, then each field that changed outside reconcile,
// from the value last applied to the live one, then the details as
// comments (or, for an access policy, the members added and removed, one
// line each); for a node deleted outside reconcile, its id removed. A
// policyData whose details or members say what changed is left to them.
func driftLines(it report.DriftItem) []line {
	var b body
	if it.Status == report.DriftDeleted {
		if it.ID != "" {
			b.add(line{kind: lineValue, sign: signRemove, key: "id", text: value.Quote(it.ID)})
		}
		return b.lines
	}
	if it.ID != "" && !slices.ContainsFunc(it.Fields, func(f plan.FieldDrift) bool { return f.Path == "id" }) {
		b.add(line{kind: lineValue, key: "id", text: value.Quote(it.ID)})
	}
	for _, f := range it.Fields {
		if f.Path == "policyData" && len(it.Details) > 0 || len(it.Access) > 0 && (f.Path == "policyData" || f.Path == "members") {
			continue // the member by member lines below say it better
		}
		b.diffValue(0, keyText(f.Path), f.Applied, f.Live, f.Applied != nil, f.Live != nil)
	}
	b.align(0, 0)
	if len(it.Access) > 0 {
		// The details say the same, in fewer words.
		b.access(it.Access, "access to %s: removed (-) and added (+) outside reconcile since the last apply")
		return b.lines
	}
	for _, d := range it.Details {
		b.add(line{kind: lineHidden, text: "# " + untrusted.Text(oneLine(d))})
	}
	return b.lines
}

// driftHeadline says how a node moved away from what was last applied.
func driftHeadline(it report.DriftItem) string {
	switch {
	case it.Status == report.DriftDeleted && it.Kind == kind.Get:
		return "no longer exists"
	case it.Status == report.DriftDeleted:
		return "was deleted outside reconcile"
	case it.Kind == kind.Lookup:
		return "returns a new result"
	case it.Kind == kind.Get:
		return "changed since it was last read"
	}
	return "was changed outside reconcile"
}

// driftedChanges returns the changes of p that refresh found changed or
// deleted outside reconcile, in plan order.
func driftedChanges(p *plan.Plan) []*plan.Change {
	var out []*plan.Change
	for i := range p.Changes {
		if c := &p.Changes[i]; c.Drifted() {
			out = append(out, c)
		}
	}
	return out
}

// Texts of the drift section of a plan.
const (
	driftTitle = "Objects changed outside reconcile since the last apply:"
	driftNote  = "These are not changes reconcile will make. The plan compares the specs with the cloud as it is now, and undoes these changes where the specs say otherwise. To accept them into state instead, run 'reconcile apply --refresh-only'."
)

// entries appends every entry of m, sorted by key, each line with sign s.
func (b *body) entries(depth int, s sign, m map[string]any) {
	start := len(b.lines)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b.value(depth, s, keyText(k), m[k])
	}
	b.align(start, depth)
}

// value appends v whole, multi-line when it is a non-empty map or list.
func (b *body) value(depth int, s sign, key string, v any) {
	switch x := norm(v).(type) {
	case map[string]any:
		if len(x) == 0 {
			b.add(line{kind: lineValue, sign: s, depth: depth, key: key, text: "{}"})
			return
		}
		b.add(line{kind: lineOpen, sign: s, depth: depth, key: key, text: "{"})
		b.entries(depth+1, s, x)
		b.add(line{kind: lineClose, depth: depth, text: "}"})
	case []any:
		if len(x) == 0 {
			b.add(line{kind: lineValue, sign: s, depth: depth, key: key, text: "[]"})
			return
		}
		b.add(line{kind: lineOpen, sign: s, depth: depth, key: key, text: "["})
		for _, e := range x {
			b.value(depth+1, s, "", e)
		}
		b.add(line{kind: lineClose, depth: depth, text: "]"})
	default:
		b.add(line{kind: lineValue, sign: s, depth: depth, key: key, text: scalarText(x)})
	}
}

// align pads the keys of the lines at depth added since start, which are
// the entries of one map, to a common width.
func (b *body) align(start, depth int) {
	width := 0
	for _, l := range b.lines[start:] {
		if l.depth == depth && l.key != "" {
			width = max(width, textWidth(l.key))
		}
	}
	for i := start; i < len(b.lines); i++ {
		if b.lines[i].depth == depth && b.lines[i].key != "" {
			b.lines[i].pad = width
		}
	}
}

// diffEntries appends the differences between two maps: changed, added and
// removed entries, then a count of the unchanged ones. Entries named in
// force get a "forces replacement" note on their first line.
func (b *body) diffEntries(depth int, before, after map[string]any, force map[string]bool) {
	start := len(b.lines)
	unchanged := 0
	keys := slices.Sorted(maps.Keys(before))
	keys = slices.Compact(slices.Sorted(slices.Values(append(keys, slices.Collect(maps.Keys(after))...))))
	for _, k := range keys {
		bv, inBefore := before[k]
		av, inAfter := after[k]
		if inBefore && inAfter && value.Same(bv, av) {
			unchanged++
			continue
		}
		first := len(b.lines)
		b.diffValue(depth, keyText(k), bv, av, inBefore, inAfter)
		if force[k] && len(b.lines) > first {
			b.lines[first].note = "forces replacement"
		}
	}
	b.align(start, depth)
	b.hidden(depth, unchanged, "attribute")
}

// hidden appends a comment counting n unchanged entries, if n > 0.
func (b *body) hidden(depth, n int, noun string) {
	if n == 0 {
		return
	}
	if n != 1 {
		noun += "s"
	}
	b.add(line{kind: lineHidden, depth: depth, text: fmt.Sprintf("# (%d unchanged %s hidden)", n, noun)})
}

// diffValue appends the difference between two values of one entry, which
// differ. A value missing on one side is added or removed whole.
func (b *body) diffValue(depth int, key string, before, after any, inBefore, inAfter bool) {
	switch {
	case !inBefore:
		b.value(depth, signAdd, key, after)
		return
	case !inAfter:
		b.value(depth, signRemove, key, before)
		return
	}
	before, after = norm(before), norm(after)
	if isSecret(before) || isSecret(after) {
		// Either side being secret hides both: an old plain value may
		// equal the new secret one.
		b.add(line{kind: lineValue, sign: signChange, depth: depth, key: key, text: value.SensitiveText})
		return
	}
	switch bx := before.(type) {
	case map[string]any:
		if ax, ok := after.(map[string]any); ok {
			b.add(line{kind: lineOpen, sign: signChange, depth: depth, key: key, text: "{"})
			b.diffEntries(depth+1, bx, ax, nil)
			b.add(line{kind: lineClose, depth: depth, text: "}"})
			return
		}
	case []any:
		if ax, ok := after.([]any); ok {
			b.add(line{kind: lineOpen, sign: signChange, depth: depth, key: key, text: "["})
			b.diffList(depth+1, bx, ax)
			b.add(line{kind: lineClose, depth: depth, text: "]"})
			return
		}
	}
	if !isContainer(before) && !isContainer(after) {
		b.add(line{kind: lineValue, sign: signChange, depth: depth, key: key,
			old: scalarText(before), text: scalarText(after)})
		return
	}
	// The kind changed, say from a list to a map: show both whole.
	b.value(depth, signRemove, key, before)
	b.value(depth, signAdd, key, after)
}

// diffList appends the differences between two lists, element by element:
// elements kept are counted, runs of removed and added elements are shown,
// and a removed map or list followed by an added one is shown as changed.
func (b *body) diffList(depth int, before, after []any) {
	edits := listEdits(before, after)
	kept := 0
	for i := 0; i < len(edits); {
		if edits[i].op == editKeep {
			kept++
			i++
			continue
		}
		b.hidden(depth, kept, "element")
		kept = 0
		var removed, added []any
		for ; i < len(edits) && edits[i].op != editKeep; i++ {
			if edits[i].op == editRemove {
				removed = append(removed, before[edits[i].index])
			} else {
				added = append(added, after[edits[i].index])
			}
		}
		b.diffRun(depth, removed, added)
	}
	b.hidden(depth, kept, "element")
}

// diffRun appends one run of removed and added list elements. When every
// removed element pairs with an added one of the same shape (both maps or
// both lists), the pairs are shown as changed in place.
func (b *body) diffRun(depth int, removed, added []any) {
	pairs := min(len(removed), len(added))
	for i := range pairs {
		if !sameShape(removed[i], added[i]) {
			pairs = 0
			break
		}
	}
	for i := range pairs {
		b.diffValue(depth, "", removed[i], added[i], true, true)
	}
	for _, v := range removed[pairs:] {
		b.value(depth, signRemove, "", v)
	}
	for _, v := range added[pairs:] {
		b.value(depth, signAdd, "", v)
	}
}

// sameShape reports whether a and b are both maps or both lists.
func sameShape(a, b any) bool {
	switch norm(a).(type) {
	case map[string]any:
		_, ok := norm(b).(map[string]any)
		return ok
	case []any:
		_, ok := norm(b).([]any)
		return ok
	}
	return false
}

type editOp int

const (
	editKeep editOp = iota
	editRemove
	editAdd
)

// edit is one step turning a list into another; index is into the old list
// for keep and remove, into the new list for add.
type edit struct {
	op    editOp
	index int
}

// maxLCSCells bounds the work of a longest-common-subsequence list diff.
// Past it, the elements between the common ends are all shown as removed
// and added.
const maxLCSCells = 1 << 18

// listEdits returns the steps turning before into after, keeping their
// common ends and a longest common subsequence of equal elements between.
func listEdits(before, after []any) []edit {
	var head, tail []edit
	for len(before) > len(head) && len(after) > len(head) && value.Same(before[len(head)], after[len(head)]) {
		head = append(head, edit{editKeep, len(head)})
	}
	lo := len(head)
	n, m := len(before), len(after)
	for n > lo && m > lo && value.Same(before[n-1], after[m-1]) {
		n, m = n-1, m-1
		tail = append(tail, edit{editKeep, n})
	}
	slices.Reverse(tail)
	return slices.Concat(head, middleEdits(before[:n], after[:m], lo), tail)
}

// middleEdits is listEdits for before[lo:] and after[lo:], with indexes
// into the whole lists.
func middleEdits(before, after []any, lo int) []edit {
	n, m := len(before)-lo, len(after)-lo
	w := m + 1
	lcs := make([]int, (n+1)*w) // lcs[i*w+j]: LCS of before[lo+i:], after[lo+j:]
	if n*m <= maxLCSCells {
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if value.Same(before[lo+i], after[lo+j]) {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
	}
	var out []edit
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case lcs[i*w+j] > 0 && value.Same(before[lo+i], after[lo+j]):
			out = append(out, edit{editKeep, lo + i})
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			out = append(out, edit{editRemove, lo + i})
			i++
		default:
			out = append(out, edit{editAdd, lo + j})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, edit{editRemove, lo + i})
	}
	for ; j < m; j++ {
		out = append(out, edit{editAdd, lo + j})
	}
	return out
}
