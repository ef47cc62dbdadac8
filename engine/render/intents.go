package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"reconcile/engine/report"
)

// IntentsHeading announces the resolution of the creates named, which an
// earlier run started but did not see to their end.
func IntentsHeading(w io.Writer, names []string) {
	fmt.Fprintf(w, "Resolving %d create(s) that an earlier run started but did not finish (%s), by their idempotency tokens:\n", len(names), strings.Join(names, ", "))
}

// IntentsText writes what resolving them did, one line per create to w; a
// create that could not be resolved yet is a warning, written to warn with
// what the user can do about it.
func IntentsText(w, warn io.Writer, rep *report.Intents) {
	for _, r := range rep.Intents {
		when := r.Time.UTC().Format(time.RFC3339)
		switch r.Outcome {
		case report.IntentAdopted:
			fmt.Fprintf(w, "  %s: adopted %s, made by the create started %s\n", r.Name, r.ID, when)
			if r.Tainted != "" {
				fmt.Fprintf(w, "  %s: it is not usable (%s): the plan replaces it\n", r.Name, r.Tainted)
			}
		case report.IntentRecorded:
			fmt.Fprintf(w, "  %s: %s was recorded already; its create has ended and its record is up to date\n", r.Name, r.ID)
		case report.IntentCleared:
			fmt.Fprintf(w, "  %s: the create started %s made nothing; the plan creates it\n", r.Name, when)
		case report.IntentSuperseded:
			fmt.Fprintf(w, "  %s: recorded since as %s; the create started %s is forgotten\n", r.Name, r.ID, when)
		case report.IntentKept:
			fmt.Fprintf(warn, "Warning: %s: could not tell yet what the create started %s made: %v.\n"+
				"  It stays recorded as interrupted. When apply creates %s with the same inputs (secrets included), it first looks again, with them, and adopts what it finds;\n"+
				"  with other inputs it refuses to create %s: look for the object the create made and adopt it with 'reconcile import %s ID --type %s', or if there is none, forget the create with 'reconcile state rm %s'.\n",
				r.Name, when, r.Err, r.Name, r.Name, r.Name, r.Type, r.Name)
		}
	}
}

// IntentsWarning tells a command that only reads state (cmd: plan, drift)
// about the creates named, which an earlier run left unresolved and which it
// cannot resolve.
func IntentsWarning(w io.Writer, names []string, cmd string) {
	fmt.Fprintf(w, "Warning: %d create(s) started by an earlier run did not finish (%s). The next apply or destroy resolves them before it plans, adopting what they made (found by their idempotency tokens); this %s is made without them.\n",
		len(names), strings.Join(names, ", "), cmd)
}
