package render

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

// Progress writes apply events as lines, as they come from the apply's
// parallel workers.
type Progress struct {
	mu sync.Mutex
	w  io.Writer
}

// NewProgress returns a Progress writing to w.
func NewProgress(w io.Writer) *Progress { return &Progress{w: w} }

var verbs = map[plan.Action][3]string{
	plan.Create:  {"Creating", "creating", "Creation"},
	plan.Update:  {"Modifying", "modifying", "Modifications"},
	plan.Delete:  {"Destroying", "destroying", "Destruction"},
	plan.Read:    {"Reading", "reading", "Read"},
	plan.Import:  {"Importing", "importing", "Import"},
	plan.Replace: {"Replacing", "replacing", "Replacement"},
	plan.Refresh: {"Accepting the cloud's values into state", "accepting", "Refresh"},
}

// Event writes the line of one event; events of actions that do nothing
// have none.
func (p *Progress) Event(e report.Event) {
	line, ok := progressLine(e)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, line)
}

// progressLine is the line, without its newline, that Progress writes of
// e; false when e has none.
func progressLine(e report.Event) (string, bool) {
	v, ok := verbs[e.Action]
	if !ok {
		return "", false
	}
	// The line begins with the name: untrusted.Name quotes one that is
	// not plain, so that no spec can begin a line of the log.
	name := untrusted.Name(e.Addr)
	switch e.Phase {
	case report.Started:
		return fmt.Sprintf("%s: %s...%s", name, v[0], idSuffix(e.ID)), true
	case report.Running:
		return fmt.Sprintf("%s: Still %s... [%s elapsed]%s", name, v[1], elapsed(e.Elapsed), messageSuffix(e.Message)), true
	case report.Done:
		return fmt.Sprintf("%s: %s complete after %s%s", name, v[2], elapsed(e.Elapsed), idSuffix(e.ID)), true
	case report.Failed:
		return fmt.Sprintf("%s: %s failed after %s", name, v[2], elapsed(e.Elapsed)), true
	case report.Skipped:
		return fmt.Sprintf("%s: skipped, a dependency failed", name), true
	}
	return "", false
}

// IntentProgress writes the line of a resolution of an interrupted create
// that is still running.
func IntentProgress(w io.Writer, e report.Event) {
	if e.Phase == report.Running {
		fmt.Fprintf(w, "  %s: still resolving... [%s elapsed]%s\n", untrusted.Name(e.Addr), e.Elapsed.Round(100*time.Millisecond), messageSuffix(e.Message))
	}
}

func elapsed(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

func idSuffix(id string) string {
	if id == "" {
		return ""
	}
	return " [id=" + untrusted.Text(id) + "]"
}

func messageSuffix(msg string) string {
	if msg == "" {
		return ""
	}
	return " (" + untrusted.Text(msg) + ")"
}
