package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

// IntentsHeading announces the resolution of the creates named, which an
// earlier run started but did not see to their end.
func IntentsHeading(w io.Writer, names []string) {
	fmt.Fprintf(w, "Resolving %s that an earlier run started but did not finish (%s), by their idempotency tokens:\n", plural(len(names), "create"), joinNames(names))
}

// IntentsText writes what resolving them did, one line per create to w; a
// create that could not be resolved yet is a warning, written to warn with
// what the user can do about it.
func IntentsText(w, warn io.Writer, rep *report.Intents) {
	for _, r := range rep.Intents {
		when := r.Time.UTC().Format(time.RFC3339)
		// Names begin lines; ids and errors come from the cloud.
		name, id := untrusted.Name(r.Name), untrusted.Text(r.ID)
		switch r.Outcome {
		case report.IntentAdopted:
			fmt.Fprintf(w, "  %s: adopted %s, made by the create started %s\n", name, id, when)
			if r.Tainted != "" {
				fmt.Fprintf(w, "  %s: it is not usable (%s): the plan replaces it\n", name, untrusted.Text(r.Tainted))
			}
		case report.IntentRecorded:
			fmt.Fprintf(w, "  %s: %s was recorded already; its create has ended and its record is up to date\n", name, id)
		case report.IntentCleared:
			fmt.Fprintf(w, "  %s: the create started %s made nothing; the plan creates it\n", name, when)
		case report.IntentSuperseded:
			fmt.Fprintf(w, "  %s: recorded since as %s; the create started %s is forgotten\n", name, id, when)
		case report.IntentKept:
			fmt.Fprintf(warn, "Warning: %s (%s): could not tell yet what the create started %s made: %s.\n"+
				"  It stays recorded as interrupted. When apply creates %s with the same inputs (secrets included), it first looks again, with them, and adopts what it finds;\n"+
				"  with other inputs it refuses to create %s: look for the object the create made and adopt it with 'reconcile import %s ID --type %s', or if there is none, forget the create with 'reconcile state rm %s'.\n",
				name, untrusted.Text(r.Type), when, untrusted.Text(fmt.Sprint(r.Err)), name, name, name, untrusted.Text(r.Type), name)
		}
	}
}

// IntentsWarning tells a command that only reads state (cmd: plan, drift)
// about the creates named, which an earlier run left unresolved and which it
// cannot resolve.
func IntentsWarning(w io.Writer, names []string, cmd string) {
	fmt.Fprintf(w, "Warning: %s started by an earlier run did not finish (%s). The next apply or destroy resolves them before it plans, adopting what they made (found by their idempotency tokens); this %s is made without them.\n",
		plural(len(names), "create"), joinNames(names), cmd)
}

// joinNames joins names for a line of text, each as untrusted.Name shows it.
func joinNames(list []string) string {
	out := make([]string, len(list))
	for i, n := range list {
		out[i] = untrusted.Name(n)
	}
	return strings.Join(out, ", ")
}
