package report

import (
	"fmt"
	"time"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/kind"
)

// Phase of an Event.
type Phase int

// Phases.
const (
	Started Phase = iota
	Running       // still running: Elapsed and the driver's last message
	Done
	Failed
	Skipped
)

// Event reports the progress of one node.
type Event struct {
	Addr    string
	Type    string
	Action  plan.Action
	Phase   Phase
	Elapsed time.Duration
	ID      string
	Message string // the driver's last progress message, or the error
	Pos     diag.Pos
	// Retry is set on a Running event that reports a cloud call failed
	// and retried (Message then says so too); nil otherwise.
	Retry *Retry
}

// Retry describes a cloud call that failed and is retried.
type Retry struct {
	Method, Path string        // the request, e.g. "POST", "/20221001/endpoints"
	Cause        string        // why: "503 Service Unavailable", "connection error: ..."
	Attempt      int           // the number of the attempt about to be made: 2 for the first retry
	Wait         time.Duration // the pause before it
}

// NodeError is a node that failed during apply.
type NodeError struct {
	Addr string
	Pos  diag.Pos
	Err  error
}

// Apply summarises an apply.
type Apply struct {
	Counts  map[plan.Action]int // actions completed
	Failed  []NodeError
	Skipped []string // not run because a dependency failed, sorted
	Outputs map[string]any

	// Stopped, when not empty, says why the apply was stopped before
	// everything was done (the apply.StopControl's reason, "stopped" or
	// "cancelled"); NotStarted and Interrupted then say what was left undone.
	Stopped string
	// NotStarted lists the nodes with a planned change that did not start
	// because the apply was stopped, sorted.
	NotStarted []string
	// Interrupted lists the nodes whose operation was running when the
	// context was cancelled (a forced stop, or the end of the grace period
	// of a graceful one). A create among them is resolved by the next
	// apply (see apply.ResolveIntents).
	Interrupted []NodeError
	// Deposed lists the resources whose replaced objects were not deleted
	// (a resource that depended on them failed, or their delete did, or
	// it did not start): state keeps them as deposed, and the next apply
	// deletes them. By address, in schedule order.
	Deposed []Deposed
}

// Deposed is a resource whose replaced objects are still in the cloud,
// recorded in state as deposed.
type Deposed struct {
	Addr string
	Type string
	IDs  []string
}

// Err returns nil when every node succeeded.
func (r *Apply) Err() error {
	switch {
	case r.Stopped != "":
		return fmt.Errorf("the apply was %s: %s interrupted and %d not started", r.Stopped, count(len(r.Interrupted), "operation was", "operations were"), len(r.NotStarted))
	case len(r.Failed) > 0:
		return fmt.Errorf("%d of the planned operations failed", len(r.Failed))
	case len(r.Deposed) > 0:
		return fmt.Errorf("the replaced objects of %s not deleted", count(len(r.Deposed), "resource were", "resources were"))
	}
	return nil
}

// count is n followed by one when n is 1 and by many otherwise.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Complete reports whether every planned operation was carried out.
func (r *Apply) Complete() bool {
	return len(r.Failed) == 0 && len(r.Skipped) == 0 && len(r.NotStarted) == 0 && len(r.Interrupted) == 0 && len(r.Deposed) == 0
}

// DriftStatus says how a node moved away from what was last applied.
type DriftStatus string

// Drift statuses.
const (
	DriftChanged DriftStatus = "changed" // inputs differ from the last apply
	DriftDeleted DriftStatus = "deleted" // the object is gone from the cloud
	DriftResult  DriftStatus = "result"  // a lookup or get now returns something else
)

// DriftItem is one node that drifted.
type DriftItem struct {
	Addr    string
	Type    string
	Kind    kind.Kind
	ID      string
	Status  DriftStatus
	Fields  []plan.FieldDrift // sorted by path
	Details []string          // extra lines, such as IAM binding changes
	// Access lists the members of an access policy (an IAM policy, a
	// binding of one) added or removed, sorted (plan.SortAccess).
	Access []plan.AccessChange
}

// DriftError is a node that could not be read: its name and type, which
// the error (the driver's) does not repeat.
type DriftError struct {
	Addr string
	Type string
	Err  error
}

// Drift is the outcome of refresh.Drift.
type Drift struct {
	Lineage string
	Serial  int64
	Checked int
	Items   []DriftItem // sorted by address
	Errors  []DriftError
}

// HasDrift reports whether anything drifted.
func (r *Drift) HasDrift() bool { return len(r.Items) > 0 }

// IntentOutcome is what apply.ResolveIntents did with one intent.
type IntentOutcome int

// Outcomes of an intent resolved by apply.ResolveIntents.
const (
	// IntentAdopted: the interrupted create made an object, now recorded
	// in state (tainted when it did not become usable).
	IntentAdopted IntentOutcome = iota + 1
	// IntentRecorded: the object was already in state (the process died
	// between recording it and clearing the intent); its record is brought
	// up to date.
	IntentRecorded
	// IntentCleared: the create made nothing; the next plan creates it.
	IntentCleared
	// IntentSuperseded: the node was recorded in state after the create
	// started, with an object the intent does not name (by the create
	// itself just before the process died, or by an import since): the
	// intent is stale.
	IntentSuperseded
	// IntentKept: it could not be told what the create made; the intent
	// stays, and no new create of the node is made while it does.
	IntentKept
)

var outcomeNames = [...]string{IntentAdopted: "adopted", IntentRecorded: "recorded", IntentCleared: "cleared", IntentSuperseded: "superseded", IntentKept: "kept"}

// String is the outcome's name in output and history: "adopted",
// "recorded", "cleared", "superseded" or "kept".
func (o IntentOutcome) String() string {
	if o > 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// ResolvedIntent is what apply.ResolveIntents did with one intent.
type ResolvedIntent struct {
	Name    string
	Type    string
	Time    time.Time // when the interrupted create started
	Outcome IntentOutcome
	ID      string // the object adopted or recorded
	Tainted string // set when the object adopted is not usable: why
	Err     error  // why the intent was kept
}

// Intents lists what apply.ResolveIntents did, sorted by name.
type Intents struct {
	Intents []ResolvedIntent
}

// Count returns how many intents had the outcome.
func (r *Intents) Count(outcome IntentOutcome) int {
	n := 0
	for _, in := range r.Intents {
		if in.Outcome == outcome {
			n++
		}
	}
	return n
}
