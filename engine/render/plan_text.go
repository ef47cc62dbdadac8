package render

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

// Options control rendering.
type Options struct {
	// Color adds ANSI colour to PlanText. cmd/reconcile sets it only when
	// stdout is a terminal and neither NO_COLOR nor --no-color is given.
	// PlanJSON and PlanMarkdown ignore it.
	Color bool
	// Version is the reconcile version, written into JSON output.
	Version string
}

// Texts that stand in for values a renderer must not or cannot show.
const (
	noChanges = "No changes. The cloud matches the specs."
	// noDrift ends a refresh-only plan that has nothing to accept.
	noDrift = "No changes. State matches the cloud: nothing changed outside reconcile since the last apply."
)

// actionCounts counts a plan's changes by action, indexed by Action.
type actionCounts [plan.NumActions]int

func countActions(p *plan.Plan) actionCounts { return count(p, false) }

// countShown counts the changes a reader is shown (see visibleChanges), so
// that the summary of a text or markdown plan adds up to what it lists: a
// read of what state already holds is neither shown nor counted.
func countShown(p *plan.Plan) actionCounts { return count(p, true) }

func count(p *plan.Plan, shownOnly bool) actionCounts {
	var n actionCounts
	for i := range p.Changes {
		c := &p.Changes[i]
		if shownOnly && c.Action == plan.Read && unchangedRead(c) {
			continue
		}
		if c.Action >= 0 && int(c.Action) < len(n) {
			n[c.Action]++
		}
		n[plan.Delete] += len(c.Deposed) // objects left by an earlier replacement
	}
	return n
}

// summaryTerms are the terms of a summary, in order. Create, update,
// replace and destroy always appear, so that scripts and eyes find them in
// the same place; the rarer actions appear only when they occur.
var summaryTerms = []struct {
	action plan.Action
	verb   string
	always bool
}{
	{plan.Create, "create", true},
	{plan.Update, "update", true},
	{plan.Replace, "replace", true},
	{plan.Delete, "destroy", true},
	{plan.Import, "import", false},
	{plan.Forget, "forget", false},
	{plan.Read, "read", false},
}

// countRemoved counts, by action, the members that the changes a reader
// is shown remove from access policies (plan.Change.Access).
func countRemoved(p *plan.Plan) actionCounts {
	var n actionCounts
	for i := range p.Changes {
		if c := &p.Changes[i]; c.Action >= 0 && int(c.Action) < len(n) {
			n[c.Action] += c.Removed()
		}
	}
	return n
}

// phrase is the body of a summary: "1 to create, 0 to update, ...", each
// count followed by the members its changes remove from access policies,
// when there are any: "1 to update (removes 3 members)".
func (n actionCounts) phrase(removed actionCounts) string {
	var terms []string
	for _, t := range summaryTerms {
		if t.always || n[t.action] > 0 {
			term := fmt.Sprintf("%d to %s", n[t.action], t.verb)
			if removed[t.action] > 0 {
				term += " (removes " + plural(removed[t.action], "member") + ")"
			}
			terms = append(terms, term)
		}
	}
	return strings.Join(terms, ", ")
}

// summaryText is the last line of a text plan.
func summaryText(p *plan.Plan, n actionCounts) string {
	if p.RefreshOnly {
		if !p.HasChanges() {
			return noDrift
		}
		return fmt.Sprintf("Plan: %d to accept into state (refresh only: nothing in the cloud changes).", n[plan.Refresh])
	}
	if !p.HasChanges() {
		return noChanges
	}
	return "Plan: " + n.phrase(countRemoved(p)) + "."
}

// visibleChanges returns the changes a reader is shown: all but no-ops and
// reads whose result is what state already holds.
func visibleChanges(p *plan.Plan) []*plan.Change {
	var out []*plan.Change
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Action == plan.NoOp && len(c.Deposed) == 0 || c.Action == plan.Read && unchangedRead(c) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// unchangedRead reports whether c reads what state already holds, which
// the reader is not shown.
func unchangedRead(c *plan.Change) bool {
	before, after, err := c.Values()
	return err == nil && !c.Deferred && before != nil && value.Same(before, after)
}

// blockSymbol is the sign before a change's block: Action.Symbol, except
// that a replacement creating the new object first shows "+/-".
func blockSymbol(c *plan.Change) string {
	if c.Action == plan.Replace && !c.DeleteBeforeReplace {
		return "+/-"
	}
	if c.Action == plan.Refresh && c.DeletedOutside {
		return "-"
	}
	return c.Action.Symbol()
}

// verbPhrase says what happens to c, as in "sentiment will be created".
func verbPhrase(c *plan.Change) string {
	switch c.Action {
	case plan.Create:
		return "will be created"
	case plan.Update:
		return "will be updated in place"
	case plan.Replace:
		return "must be replaced"
	case plan.Delete:
		return "will be destroyed"
	case plan.Read:
		if c.Deferred {
			return "will be read during apply"
		}
		return "will be read"
	case plan.Import:
		if c.ImportID != "" {
			return "will be imported from id " + value.Quote(c.ImportID)
		}
		return "will be imported"
	case plan.Forget:
		if c.Reason == plan.ReasonGoneOutside {
			return "will be removed from state: it was already deleted outside reconcile"
		}
		return "will be removed from state without being destroyed"
	case plan.Refresh:
		if c.DeletedOutside {
			return driftHeadline(driftItemOf(c)) + ": it will be removed from state"
		}
		return driftHeadline(driftItemOf(c)) + ": the cloud's values will be accepted into state"
	}
	if len(c.Deposed) > 0 {
		return "is unchanged, but objects an earlier replacement left behind will be destroyed"
	}
	return "is unchanged"
}

// actionLabel names c's action for a reader.
func actionLabel(c *plan.Change) string {
	switch c.Action {
	case plan.Replace:
		if c.DeleteBeforeReplace {
			return "replace (destroy first)"
		}
		return "replace (create first)"
	case plan.Delete:
		return "destroy"
	case plan.Read:
		if c.Deferred {
			return "read during apply"
		}
		return "read"
	case plan.Update:
		return "update in place"
	case plan.Forget:
		return "forget (keep the object)"
	case plan.Refresh:
		if c.DeletedOutside {
			return "remove from state (deleted outside reconcile)"
		}
		return "accept the cloud's values into state"
	}
	return c.Action.String()
}

// targetNote says that a targeted plan (--target) was limited to its
// targets, each written with name: a title and the rest; "", "" for a
// plan that is not.
func targetNote(p *plan.Plan, name func(string) string) (string, string) {
	if len(p.Targets) == 0 {
		return "", ""
	}
	names := make([]string, len(p.Targets))
	for i, t := range p.Targets {
		names[i] = name(t)
	}
	list := strings.Join(names, ", ")
	if p.Destroy {
		return "Targeted destroy", "(--target " + list + "): only these resources and the resources that depend on them are destroyed; the others are left as they are."
	}
	return "Targeted plan", "(--target " + list + "): only these and what they depend on were planned. The specs may need other changes, which this plan leaves out; plan without --target to see them."
}

// oneLine flattens text meant for a single line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Text rendering.

// ANSI SGR parameters used by PlanText.
const (
	ansiBold    = "1"
	ansiRed     = "31"
	ansiGreen   = "32"
	ansiYellow  = "33"
	ansiMagenta = "35"
	ansiCyan    = "36"
)

// PlanText writes p for a terminal: a header with the symbols used, one
// block per change that is not a no-op, a summary line and the outputs.
//
// The summary reads "Plan: C to create, U to update, R to replace, D to
// destroy." and adds "N to import", "N to forget" and "N to read" when
// those are not zero; a plan without changes (reads alone are not changes)
// ends with "No changes. The cloud matches the specs." instead. Without
// opts.Color the output holds no escape sequence; values are quoted so that
// they cannot bring one in.
func PlanText(w io.Writer, p *plan.Plan, opts Options) error {
	t := &textWriter{color: opts.Color}
	visible := visibleChanges(p)
	if title, note := targetNote(p, unbreakable); title != "" {
		t.b.WriteString(t.paint(ansiBold, wrapText(title+" "+note, 80)) + "\n\n")
	}
	if !p.RefreshOnly {
		t.drift(driftedChanges(p))
	}
	if len(visible) > 0 {
		t.header(p, visible)
		for _, c := range visible {
			t.change(c)
			if err := t.flush(w, 32<<10); err != nil {
				return err
			}
		}
	}
	t.b.WriteString(t.paint(ansiBold, summaryText(p, countShown(p))) + "\n")
	t.outputs(p.Outputs)
	return t.flush(w, 0)
}

// textWriter builds the text form of a plan, a part at a time.
type textWriter struct {
	b     bytes.Buffer // kept between flushes, not grown again each time
	lines []line       // the last change's body, its array reused for the next
	color bool
}

// flush writes what t holds to w once it holds more than n bytes, so that
// a large plan is written as it is made rather than held whole.
func (t *textWriter) flush(w io.Writer, n int) error {
	if t.b.Len() <= n {
		return nil
	}
	_, err := w.Write(t.b.Bytes())
	t.b.Reset()
	return err
}

// paint wraps s in the ANSI colour code, when colour is on.
func (t *textWriter) paint(code, s string) string {
	if !t.color || code == "" || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// write writes s, in the ANSI colour code when colour is on: paint
// without building the string.
func (t *textWriter) write(code, s string) {
	if !t.color || code == "" || s == "" {
		t.b.WriteString(s)
		return
	}
	t.b.WriteString("\x1b[")
	t.b.WriteString(code)
	t.b.WriteByte('m')
	t.b.WriteString(s)
	t.b.WriteString("\x1b[0m")
}

// spaces writes n spaces (none when n is negative).
func spaces(w io.StringWriter, n int) {
	const blank = "                                                                "
	for ; n > len(blank); n -= len(blank) {
		w.WriteString(blank)
	}
	w.WriteString(blank[:max(n, 0)])
}

// actionColor is the colour of a change's symbol.
func actionColor(a plan.Action) string {
	switch a {
	case plan.Create:
		return ansiGreen
	case plan.Update:
		return ansiYellow
	case plan.Replace:
		return ansiMagenta
	case plan.Delete, plan.Forget:
		return ansiRed
	case plan.Read, plan.Import, plan.Refresh:
		return ansiCyan
	}
	return ""
}

// signColor is the colour of a body line's sign.
func signColor(s sign) string {
	switch s {
	case signAdd:
		return ansiGreen
	case signRemove:
		return ansiRed
	case signChange:
		return ansiYellow
	}
	return ""
}

// signText is a body line's sign.
func signText(s sign) string {
	return [...]string{" ", "+", "-", "~"}[s]
}

// drift writes the section of the objects changed outside reconcile, each
// with its fields from the value last applied to the live one, and a note
// saying how to read it. Nothing when there are none.
func (t *textWriter) drift(drifted []*plan.Change) {
	if len(drifted) == 0 {
		return
	}
	t.b.WriteString(t.paint(ansiBold, driftTitle) + "\n\n")
	for _, c := range drifted {
		t.driftItem(driftItemOf(c))
	}
	t.b.WriteString(wrapText(driftNote, 80) + "\n\n")
}

// driftItem writes one node that changed outside reconcile: a headline,
// then its body (driftLines), as plans and drift reports show it.
func (t *textWriter) driftItem(it report.DriftItem) {
	name := untrusted.Name(it.Addr)
	t.b.WriteString(t.paint(ansiBold, "  # "+name+" ("+untrusted.Text(it.Type)+") "+driftHeadline(it)) + "\n")
	lines := driftLines(it)
	if len(lines) == 0 {
		t.b.WriteString("\n")
		return
	}
	sym, color := "~", ansiYellow
	if it.Status == report.DriftDeleted {
		sym, color = "-", ansiRed
	}
	t.b.WriteString("  " + t.paint(color, sym) + " " + name + " {\n")
	for _, l := range lines {
		t.line(l, 6)
	}
	t.b.WriteString("    }\n\n")
}

// unbreakable quotes a name for text that wrapText breaks into lines, its
// spaces escaped too, so that no part of it can begin a line.
func unbreakable(name string) string {
	return strings.ReplaceAll(value.Quote(name), " ", `\u0020`)
}

// wrapText breaks s into lines of at most width characters, at spaces.
func wrapText(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		switch {
		case n == 0:
		case n+1+textWidth(w) > width:
			b.WriteString("\n")
			n = 0
		default:
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += textWidth(w)
	}
	return b.String()
}

// header writes the opening line and a legend of the symbols used.
func (t *textWriter) header(p *plan.Plan, changes []*plan.Change) {
	if p.RefreshOnly {
		t.b.WriteString("reconcile will accept the cloud's values into state for these objects, changed\noutside reconcile since the last apply. Nothing in the cloud changes.\n")
	} else {
		t.b.WriteString("reconcile will take these actions to make the cloud match the specs.\n")
	}
	labels := map[string][]string{} // by symbol, in Action order
	colors := map[string]string{}
	for a := plan.NoOp + 1; int(a) < plan.NumActions; a++ {
		for _, c := range changes {
			sym, what := blockSymbol(c), actionLabel(c)
			if c.Action == plan.Read {
				what = "read"
			}
			if c.Action == a && !slices.Contains(labels[sym], what) {
				labels[sym] = append(labels[sym], what)
				colors[sym] = actionColor(a)
			}
		}
	}
	var legend []string
	for _, sym := range []string{"+", "~", "-/+", "+/-", "-", "<="} {
		if len(labels[sym]) > 0 {
			legend = append(legend, t.paint(colors[sym], sym)+" "+strings.Join(labels[sym], " or "))
		}
	}
	t.b.WriteString("Symbols: " + strings.Join(legend, ", ") + "\n\n")
}

// change writes one change: its comment lines and its block.
func (t *textWriter) change(c *plan.Change) {
	addr := untrusted.Name(c.Addr)
	t.write(ansiBold, "  # "+addr+" ("+untrusted.Text(c.Type)+") "+verbPhrase(c))
	t.b.WriteByte('\n')
	if why := c.ReasonText(); why != "" {
		t.b.WriteString("  # (" + untrusted.Text(oneLine(why)) + ")\n")
	}
	for _, id := range c.Deposed {
		t.b.WriteString("  " + t.paint(actionColor(plan.Delete), "-") + " deposed object " + value.Quote(id) + " (left by an earlier replacement) will be destroyed\n")
	}
	if c.Action == plan.NoOp {
		t.b.WriteByte('\n')
		return
	}
	sym := blockSymbol(c)
	spaces(&t.b, 3-len(sym))
	t.write(actionColor(c.Action), sym)
	t.b.WriteByte(' ')
	t.b.WriteString(addr)
	lines := changeLines(c, t.lines)
	t.lines = lines
	if len(lines) == 0 {
		t.b.WriteString(" {}\n\n")
		return
	}
	t.b.WriteString(" {\n")
	for _, l := range lines {
		t.line(l, 6)
	}
	t.b.WriteString("    }\n\n")
}

// outputs writes the stack outputs, if there are any.
func (t *textWriter) outputs(outputs map[string]any) {
	if len(outputs) == 0 {
		return
	}
	t.b.WriteString("\n" + t.paint(ansiBold, "Outputs:") + "\n")
	var b body
	b.entries(0, signNone, outputs)
	for _, l := range b.lines {
		t.line(l, 0)
	}
}

// line writes one body line whose depth-0 sign is in column base.
func (t *textWriter) line(l line, base int) {
	spaces(&t.b, base+4*l.depth)
	switch l.kind {
	case lineClose, lineHidden:
		t.b.WriteString("  ")
		t.b.WriteString(l.text)
		t.b.WriteByte('\n')
		return
	}
	t.write(signColor(l.sign), signText(l.sign))
	t.b.WriteByte(' ')
	writeLineContent(&t.b, l)
	if l.note != "" {
		t.b.WriteByte(' ')
		t.write(ansiRed, "# "+l.note)
	}
	t.b.WriteByte('\n')
}

// lineContent is a value or open line without its sign and note:
// "key = old -> new", "key = {", or a bare list element.
func lineContent(l line) string {
	var s strings.Builder
	writeLineContent(&s, l)
	return s.String()
}

// writeLineContent writes lineContent(l).
func writeLineContent(w io.StringWriter, l line) {
	if l.kind == lineMember {
		w.WriteString(l.key)
		spaces(w, l.pad-textWidth(l.key)+2)
		w.WriteString(l.text)
		return
	}
	if l.key != "" {
		w.WriteString(l.key)
		spaces(w, l.pad-textWidth(l.key))
		w.WriteString(" = ")
	}
	if l.old != "" {
		w.WriteString(l.old)
		w.WriteString(" -> ")
	}
	w.WriteString(l.text)
}

// scalarText renders a normalized value that is not a map or a list.
func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case string:
		return value.Quote(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case value.Unknown:
		return value.UnknownText
	case value.Secret:
		return value.SensitiveText
	}
	return value.Quote(fmt.Sprintf("(unsupported value of type %T)", v))
}

// Value helpers. norm, which brings values into JSON shape, is in
// render_json.go.

func isSecret(v any) bool {
	_, ok := v.(value.Secret)
	return ok
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// keyText renders a map key: bare when it is a plain name, quoted
// otherwise.
func keyText(k string) string {
	if k == "" || strings.IndexByte("0123456789-", k[0]) >= 0 {
		return value.Quote(k)
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return value.Quote(k)
		}
	}
	return k
}

// textWidth is the number of characters in s, for alignment.
func textWidth(s string) int { return utf8.RuneCountInString(s) }
