package render

import (
	"fmt"
	"io"
	"sync"
	"time"

	"reconcile/engine/plan"
	"reconcile/engine/report"
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
	v, ok := verbs[e.Action]
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Phase {
	case report.Started:
		fmt.Fprintf(p.w, "%s: %s...%s\n", e.Addr, v[0], idSuffix(e.ID))
	case report.Running:
		fmt.Fprintf(p.w, "%s: Still %s... [%s elapsed]%s\n", e.Addr, v[1], elapsed(e.Elapsed), messageSuffix(e.Message))
	case report.Done:
		fmt.Fprintf(p.w, "%s: %s complete after %s%s\n", e.Addr, v[2], elapsed(e.Elapsed), idSuffix(e.ID))
	case report.Failed:
		fmt.Fprintf(p.w, "%s: %s failed after %s\n", e.Addr, v[2], elapsed(e.Elapsed))
	case report.Skipped:
		fmt.Fprintf(p.w, "%s: skipped, a dependency failed\n", e.Addr)
	}
}

// IntentProgress writes the line of a resolution of an interrupted create
// that is still running.
func IntentProgress(w io.Writer, e report.Event) {
	if e.Phase == report.Running {
		fmt.Fprintf(w, "  %s: still resolving... [%s elapsed]%s\n", e.Addr, e.Elapsed.Round(100*time.Millisecond), messageSuffix(e.Message))
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
	return " [id=" + id + "]"
}

func messageSuffix(msg string) string {
	if msg == "" {
		return ""
	}
	return " (" + msg + ")"
}
