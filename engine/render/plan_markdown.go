package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
	"github.com/reconcile-dev/reconcile/kind"
)

// mdLimit is the size, in bytes, PlanMarkdown keeps its output under.
// GitHub refuses comments over 65,535 characters; the margin leaves room
// for whatever a caller wraps around the plan.
const mdLimit = 60000

// mdNoteRoom is kept free for the closing note about omitted details.
const mdNoteRoom = 600

// PlanMarkdown writes p for a pull-request comment: a title with the
// summary counts (and the members the changes remove from access
// policies); a caution listing the caller's own access the apply removes,
// which --allow-self-lockout let through; a warning listing every
// replacement and destruction with
// its type, reason and forcing fields; a table of all changes that are not
// no-ops; the outputs; then, per change, a collapsed <details> section with
// a diff block of its fields (+ added, - removed, a changed value as a -
// line and a + line, ! for a change shown as one line, such as a secret).
//
// The output stays under mdLimit bytes. When the whole would not fit, the
// per-change sections are dropped from the end, then table rows, and a note
// says how many were left out; a warning too long to list in full shortens
// to the addresses alone, then to a count. Text from the plan outside code
// blocks is escaped, so that no address, type or reason can open HTML or
// break the table; values only ever appear inside code blocks.
func PlanMarkdown(w io.Writer, p *plan.Plan, opts Options) error {
	var b strings.Builder
	changes := visibleChanges(p)
	b.WriteString(mdTitle(p, countShown(p)))
	if title, note := targetNote(p, mdCode); title != "" {
		// The names are escaped by mdCode; the rest is fixed text.
		b.WriteString("> **" + title + "** " + note + "\n\n")
	}
	if !p.RefreshOnly {
		b.WriteString(mdDrift(driftedChanges(p), mdLimit/4))
	}
	b.WriteString(mdLockouts(changes, mdLimit/8))
	b.WriteString(mdWarnings(changes, mdLimit/2))
	table, listed := mdTable(changes, mdLimit-mdNoteRoom-b.Len())
	b.WriteString(table)
	if out := mdOutputs(p.Outputs); b.Len()+len(out) <= mdLimit-mdNoteRoom {
		b.WriteString(out)
	}
	detailed := 0
	for _, c := range changes {
		d := mdDetails(c)
		if b.Len()+len(d) > mdLimit-mdNoteRoom {
			break
		}
		b.WriteString(d)
		detailed++
	}
	b.WriteString(mdOmitted(len(changes), listed, detailed))
	_, err := io.WriteString(w, b.String())
	return err
}

// mdTitle is the heading: the summary counts, or that nothing changes.
func mdTitle(p *plan.Plan, n actionCounts) string {
	if p.RefreshOnly {
		if !p.HasChanges() {
			return "## " + noDrift + "\n\n"
		}
		return fmt.Sprintf("## Refresh only: %d to accept into state\n\nNothing in the cloud changes: the values below, changed outside reconcile since the last apply, are accepted into state.\n\n", n[plan.Refresh])
	}
	if !p.HasChanges() {
		return "## " + noChanges + "\n\n"
	}
	return "## Plan: " + n.phrase(countRemoved(p)) + "\n\n"
}

// mdDrift is the note on the objects changed outside reconcile since the
// last apply, with their fields (applied, then live) in a collapsed diff
// block, at most limit bytes long; "" when there are none. When the fields
// do not fit, the note lists the addresses alone, then only a count.
func mdDrift(drifted []*plan.Change, limit int) string {
	if len(drifted) == 0 {
		return ""
	}
	var names []string
	for _, c := range drifted {
		what := "changed"
		if c.DeletedOutside {
			what = "deleted"
		} else if c.Kind != kind.Resource {
			what = "new result"
		}
		names = append(names, mdCode(c.Addr)+" ("+what+")")
	}
	tail := ". The plan below undoes these changes where the specs say otherwise; `reconcile apply --refresh-only` accepts them into state instead.\n\n"
	head := fmt.Sprintf("> [!NOTE]\n> %s changed outside reconcile since the last apply: ", plural(len(drifted), "object"))
	note := head + strings.Join(names, ", ") + tail
	if len(note) > limit/2 {
		note = fmt.Sprintf("> [!NOTE]\n> %s changed outside reconcile since the last apply", plural(len(drifted), "object")) + tail
	}
	var code strings.Builder
	for _, c := range drifted {
		it := driftItemOf(c)
		code.WriteString("# " + untrusted.Name(it.Addr) + " (" + untrusted.Text(it.Type) + ") " + driftHeadline(it) + "\n")
		for _, l := range driftLines(it) {
			mdLine(&code, l)
		}
	}
	details := fmt.Sprintf("<details><summary>Changes outside reconcile (%d)</summary>\n\n%s\n</details>\n\n", len(drifted), mdFence("diff", code.String()))
	if len(note)+len(details) > limit {
		return note
	}
	return note + details
}

// mdLockouts is the alert listing the caller's own access that the apply
// removes, which --allow-self-lockout let through, at most limit bytes
// long (then a count alone); "" when there is none.
func mdLockouts(changes []*plan.Change, limit int) string {
	var items []string
	for _, c := range changes {
		for _, l := range c.Lockouts {
			items = append(items, "> - "+mdCode(c.Addr)+": "+mdEscape(lockoutText(l)))
		}
	}
	if len(items) == 0 {
		return ""
	}
	head := "> [!CAUTION]\n> This plan was made with `--allow-self-lockout`, and its apply removes the caller's own access"
	if full := head + ":\n" + strings.Join(items, "\n") + "\n\n"; len(full) <= limit {
		return full
	}
	return head + fmt.Sprintf(" (%s; see the details below).\n\n", plural(len(items), "role"))
}

// mdWarnings is the alert listing the replacements and destructions, at
// most limit bytes long; "" when there are none.
func mdWarnings(changes []*plan.Change, limit int) string {
	var destructive []*plan.Change
	for _, c := range changes {
		if isDestructive(c) {
			destructive = append(destructive, c)
		}
	}
	if len(destructive) == 0 {
		return ""
	}
	head := fmt.Sprintf("> [!WARNING]\n> %s will be destroyed or replaced:\n", plural(len(destructive), "object"))
	var full, short strings.Builder
	full.WriteString(head)
	short.WriteString(head + "> ")
	for i, c := range destructive {
		full.WriteString("> - " + mdWarning(c) + "\n")
		if i > 0 {
			short.WriteString(", ")
		}
		short.WriteString(mdCode(c.Addr))
	}
	full.WriteString("\n")
	short.WriteString("\n\n")
	switch {
	case full.Len() <= limit:
		return full.String()
	case short.Len() <= limit:
		return short.String()
	}
	return fmt.Sprintf("> [!WARNING]\n> %s will be destroyed or replaced, too many to list here. Run `reconcile plan` to see them all.\n\n",
		plural(len(destructive), "object"))
}

// mdWarning is one item of the warning list.
func mdWarning(c *plan.Change) string {
	s := "**" + actionLabel(c) + "** " + mdCode(c.Addr) + " (" + mdCode(c.Type) + ")"
	if len(c.ReplacePaths) > 0 {
		forced := make([]string, len(c.ReplacePaths))
		for i, p := range c.ReplacePaths {
			forced[i] = mdCode(p)
		}
		s += ", forced by " + strings.Join(forced, ", ")
	}
	if why := c.ReasonText(); why != "" {
		s += ": " + mdEscape(why)
	}
	if n := len(c.Deposed); n > 0 {
		s += "; " + plural(n, "object") + " left by an earlier replacement will be destroyed"
	}
	return s
}

// isDestructive reports whether c destroys a remote object.
func isDestructive(c *plan.Change) bool {
	return c.Action == plan.Replace || c.Action == plan.Delete || len(c.Deposed) > 0
}

// mdTable is the table of changes, at most limit bytes long, and how many
// changes it lists.
func mdTable(changes []*plan.Change, limit int) (string, int) {
	if len(changes) == 0 {
		return "", 0
	}
	const moreRoom = 80 // for the row saying how many are not listed
	var b strings.Builder
	b.WriteString("| Action | Address | Type |\n| --- | --- | --- |\n")
	listed := 0
	for i, c := range changes {
		row := "| `" + blockSymbol(c) + "` " + actionLabel(c) + " | " + mdCode(c.Addr) + " | " + mdCode(c.Type) + " |\n"
		room := limit - 1
		if i < len(changes)-1 {
			room -= moreRoom
		}
		if b.Len()+len(row) > room {
			break
		}
		b.WriteString(row)
		listed++
	}
	if listed < len(changes) {
		fmt.Fprintf(&b, "| … | _%s not listed_ | |\n", plural(len(changes)-listed, "more change"))
	}
	b.WriteString("\n")
	return b.String(), listed
}

// mdOutputs is a collapsed section with the stack outputs; "" when there
// are none.
func mdOutputs(outputs map[string]any) string {
	if len(outputs) == 0 {
		return ""
	}
	var bd body
	bd.entries(0, signNone, outputs)
	var code strings.Builder
	for _, l := range bd.lines {
		mdLine(&code, l)
	}
	return fmt.Sprintf("<details><summary>Outputs (%d)</summary>\n\n%s\n</details>\n\n",
		len(outputs), mdFence("", code.String()))
}

// mdDetails is the collapsed section of one change.
func mdDetails(c *plan.Change) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary><code>%s</code> %s %s (%s)</summary>\n\n",
		mdEscape(blockSymbol(c)), actionLabel(c), mdCode(c.Addr), mdCode(c.Type))
	if why := c.ReasonText(); why != "" {
		b.WriteString("Reason: " + mdEscape(why) + "\n\n")
	}
	if c.Action == plan.Import && c.ImportID != "" {
		b.WriteString("Import id: " + mdCode(c.ImportID) + "\n\n")
	}
	var code strings.Builder
	for _, l := range changeLines(c, nil) {
		mdLine(&code, l)
	}
	if code.Len() > 0 {
		b.WriteString(mdFence("diff", code.String()))
		b.WriteString("\n")
	}
	b.WriteString("</details>\n\n")
	return b.String()
}

// mdOmitted is the closing note when some changes are not shown in full.
func mdOmitted(total, listed, detailed int) string {
	if detailed == total {
		return ""
	}
	s := fmt.Sprintf("> [!NOTE]\n> The details of %d of %s are omitted", total-detailed, plural(total, "change"))
	if listed < total {
		s += fmt.Sprintf(", and %s not in the table,", Count(total-listed, "is", "are"))
	}
	return s + " to keep this comment under GitHub's size limit. Run `reconcile plan` for the full text.\n"
}

// mdLine writes one body line of a diff block: the sign in the first
// column, where GitHub looks for it, then the line indented by depth.
func mdLine(b *strings.Builder, l line) {
	indent := strings.Repeat(" ", 4*l.depth)
	switch {
	case l.kind == lineClose || l.kind == lineHidden:
		b.WriteString("  " + indent + l.text + "\n")
	case l.sign == signChange && l.old != "":
		// Split "old -> new" so that both halves are coloured.
		b.WriteString("- " + indent + lineContent(line{key: l.key, pad: l.pad, text: l.old}) + mdNote(l) + "\n")
		b.WriteString("+ " + indent + lineContent(line{key: l.key, pad: l.pad, text: l.text}) + mdNote(l) + "\n")
	default:
		sym := [...]string{" ", "+", "-", "!"}[l.sign]
		b.WriteString(sym + " " + indent + lineContent(l) + mdNote(l) + "\n")
	}
}

func mdNote(l line) string {
	if l.note == "" {
		return ""
	}
	return " # " + l.note
}

// mdFence wraps code in a fenced block with the given info string, using a
// fence longer than any run of backticks in code, so values cannot close it.
func mdFence(info, code string) string {
	longest, run := 0, 0
	for i := range len(code) {
		if code[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + info + "\n" + code + fence + "\n"
}

// mdEscaper turns every character that could open HTML, split a table
// cell, start a code span, emphasis or a link, into an entity. Entities
// read the same in Markdown text, in table cells and inside HTML tags.
var mdEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;",
	"|", "&#124;", "`", "&#96;", `\`, "&#92;", "*", "&#42;", "_", "&#95;",
	"[", "&#91;", "]", "&#93;", "~", "&#126;",
)

// mdEscape makes s safe as one line of Markdown or HTML text.
func mdEscape(s string) string {
	return mdEscaper.Replace(untrusted.Text(oneLine(s)))
}

// mdCode shows s as inline code. It uses an HTML tag rather than backticks,
// which a backtick in s would close.
func mdCode(s string) string {
	return "<code>" + mdEscape(s) + "</code>"
}

// plural is "1 change" or "n changes": Count for a noun whose plural
// takes an s.
func plural(n int, noun string) string { return Count(n, noun, noun+"s") }

// Count is n followed by one when n is 1 and by many otherwise: "1
// resource", "0 resources", "2 history entries". Every count printed for
// people goes through it.
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
