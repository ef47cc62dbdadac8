package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
)

// EventsVersion is the format version of the event stream (--output
// jsonl), documented in docs/events-jsonl.md; every line carries it. As
// for the JSON documents, an additive change (a new event type, a new key)
// bumps the minor number, anything that can break a reader the major one.
const EventsVersion = "1.1"

// EventType names the kind of one event of the stream.
type EventType string

// Event types, in the order a run writes them.
const (
	EventVersion       EventType = "version"        // the first line: format, reconcile version, command
	EventDiagnostic    EventType = "diagnostic"     // an error or warning, with its place in the specs when known
	EventResourceDrift EventType = "resource_drift" // a node that changed outside reconcile since the last apply
	EventPlannedChange EventType = "planned_change" // a change the plan makes
	EventOpStart       EventType = "op_start"       // an operation started
	EventOpProgress    EventType = "op_progress"    // an operation still running
	EventRetry         EventType = "retry"          // a cloud call failed and is retried
	EventOpComplete    EventType = "op_complete"    // an operation succeeded
	EventOpErrored     EventType = "op_errored"     // an operation failed
	EventOpSkipped     EventType = "op_skipped"     // an operation not run because a dependency failed
	EventOutputs       EventType = "outputs"        // the stack outputs: planned, or after the apply
	EventSummary       EventType = "summary"        // what the plan or apply came to; the last event of a run that got that far
)

// EventStream writes a run's events, one JSON object a line, in the format
// of docs/events-jsonl.md. It is safe for concurrent use: each event is one
// Write of one whole line, so that lines of parallel operations never mix.
// Values are written as in the JSON documents: unknown and secret values as
// null, secrets flagged as sensitive. A write error ends the stream; Err
// returns it.
type EventStream struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
	err error
}

// NewEventStream returns a stream writing to w, each event stamped with
// now() (time.Now when nil).
func NewEventStream(w io.Writer, now func() time.Time) *EventStream {
	if now == nil {
		now = time.Now
	}
	return &EventStream{w: w, now: now}
}

// Err returns the first error writing the stream met, or nil.
func (s *EventStream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// eventHeader is what every line starts with.
type eventHeader struct {
	FormatVersion string    `json:"format_version"`
	Type          EventType `json:"type"`
	Timestamp     string    `json:"timestamp"`
	// Message says the same for people, on one line.
	Message string `json:"message"`
}

// timestampFormat is RFC 3339 in UTC with milliseconds, a fixed width.
const timestampFormat = "2006-01-02T15:04:05.000Z07:00"

// write encodes the event build makes of its header as one line. The time
// is taken under the lock, so that timestamps never go back down the
// stream.
func (s *EventStream) write(typ EventType, msg string, build func(h eventHeader) any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if strings.ContainsAny(msg, "\r\n") { // a vendor's message of several lines
		msg = oneLine(msg)
	}
	h := eventHeader{FormatVersion: EventsVersion, Type: typ, Timestamp: s.now().UTC().Format(timestampFormat), Message: msg}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // one line: no indent, a final newline
	enc.SetEscapeHTML(false)
	if err := enc.Encode(build(h)); err != nil {
		// A value JSON cannot hold (a NaN): the event says so instead,
		// still one line of JSON.
		buf.Reset()
		h.Type, h.Message = EventDiagnostic, fmt.Sprintf("the %s event could not be encoded: %v", typ, err)
		_ = enc.Encode(diagnosticEvent{eventHeader: h, Severity: "error", Summary: h.Message})
	}
	_, s.err = s.w.Write(buf.Bytes())
}

type versionEvent struct {
	eventHeader
	ReconcileVersion string `json:"reconcile_version"`
	Command          string `json:"command"`
}

// Start writes the version event, the stream's first: the format version,
// reconcile's, and the command (plan, apply or destroy).
func (s *EventStream) Start(reconcileVersion, command string) {
	s.write(EventVersion, fmt.Sprintf("reconcile %s %s", reconcileVersion, command), func(h eventHeader) any {
		return versionEvent{eventHeader: h, ReconcileVersion: reconcileVersion, Command: command}
	})
}

type diagnosticEvent struct {
	eventHeader
	Severity   string `json:"severity"`
	Summary    string `json:"summary"`
	Detail     string `json:"detail"`
	Suggestion string `json:"suggestion"`
	Position   string `json:"position"`
	File       string `json:"file"`
	Line       int    `json:"line"`
	Column     int    `json:"column"`
}

// Diagnostic writes one problem: in the specs, at its FILE:LINE:COL, or
// (without a position) any error that stops the command.
func (s *EventStream) Diagnostic(d diag.Diagnostic) {
	msg := d.Severity.String() + ": " + oneLine(d.Summary)
	if d.Pos.IsValid() {
		msg = d.Pos.String() + ": " + msg
	}
	s.write(EventDiagnostic, msg, func(h eventHeader) any {
		return diagnosticEvent{eventHeader: h, Severity: d.Severity.String(), Summary: d.Summary, Detail: d.Detail, Suggestion: d.Suggestion,
			Position: d.Pos.String(), File: d.Pos.File, Line: int(d.Pos.Line), Column: int(d.Pos.Col)}
	})
}

type driftEvent struct {
	eventHeader
	Address       string             `json:"address"`
	ResourceType  string             `json:"resource_type"`
	Kind          kind.Kind          `json:"kind"`
	ID            string             `json:"id"`
	Status        report.DriftStatus `json:"status"`
	Fields        []driftFieldJSON   `json:"fields"`
	Details       []string           `json:"details"`
	AccessChanges []jsonAccessChange `json:"access_changes"`
}

type plannedChangeEvent struct {
	eventHeader
	Address      string     `json:"address"`
	ResourceType string     `json:"resource_type"`
	Kind         kind.Kind  `json:"kind"`
	Action       string     `json:"action"`
	ActionReason string     `json:"action_reason"`
	Position     string     `json:"position,omitempty"`
	Change       jsonChange `json:"change"`
}

// Plan writes what a plan found and will do: a resource_drift event for
// each node the refresh found changed outside reconcile (but in a
// refresh-only plan, whose changes are that drift), then a planned_change
// event for each change a text plan shows (no no-ops, no reads of what
// state holds already), in plan order. Apply writes them too, for the
// plan it carries out.
func (s *EventStream) Plan(p *plan.Plan) {
	if !p.RefreshOnly {
		for _, c := range driftedChanges(p) {
			it := driftItemOf(c)
			j := driftItemJSONOf(it)
			s.write(EventResourceDrift, c.Addr+" "+driftHeadline(it), func(h eventHeader) any {
				return driftEvent{eventHeader: h, Address: j.Address, ResourceType: j.Type, Kind: j.Kind, ID: j.ID, Status: j.Status, Fields: j.Fields, Details: j.Details, AccessChanges: j.AccessChanges}
			})
		}
	}
	for _, c := range visibleChanges(p) {
		jc := jsonChangeOf(c)
		s.write(EventPlannedChange, c.Addr+" "+verbPhrase(c), func(h eventHeader) any {
			return plannedChangeEvent{eventHeader: h, Address: c.Addr, ResourceType: c.Type, Kind: c.Kind, Action: c.Action.String(),
				ActionReason: jc.ActionReason, Position: jc.Position, Change: jc}
		})
	}
}

// opFields are what every event of an operation says.
type opFields struct {
	Address      string `json:"address"`
	ResourceType string `json:"resource_type"`
	Action       string `json:"action"`
	ID           string `json:"id"`
	ElapsedMS    int64  `json:"elapsed_ms"`
}

type opEvent struct { // op_complete, op_skipped
	eventHeader
	opFields
}

type opStartEvent struct {
	eventHeader
	opFields
	Position string `json:"position,omitempty"`
}

type opProgressEvent struct {
	eventHeader
	opFields
	Detail string `json:"detail"` // what the operation waits for, as the driver last said
}

type opErroredEvent struct {
	eventHeader
	opFields
	Error string `json:"error"`
}

type retryEvent struct {
	eventHeader
	opFields
	Retry retry `json:"retry"`
}

type retry struct {
	Method  string `json:"method"`
	Path    string `json:"path"`
	Cause   string `json:"cause"`
	Attempt int    `json:"attempt"`
	WaitMS  int64  `json:"wait_ms"`
}

// Op writes the event of one operation's progress (what Progress writes as
// a line): op_start, op_progress, retry (a Running event with a Retry),
// op_complete, op_errored or op_skipped. Events of actions that change
// nothing (a no-op) are not written.
func (s *EventStream) Op(e report.Event) {
	line, ok := progressLine(e)
	if !ok {
		return
	}
	op := opFields{Address: e.Addr, ResourceType: e.Type, Action: e.Action.String(), ID: e.ID, ElapsedMS: e.Elapsed.Milliseconds()}
	switch e.Phase {
	case report.Started:
		s.write(EventOpStart, line, func(h eventHeader) any { return opStartEvent{eventHeader: h, opFields: op, Position: e.Pos.String()} })
	case report.Running:
		if e.Retry != nil {
			s.write(EventRetry, e.Addr+": "+e.Message, func(h eventHeader) any { return retryEvent{eventHeader: h, opFields: op, Retry: retryOf(*e.Retry)} })
			return
		}
		s.write(EventOpProgress, line, func(h eventHeader) any { return opProgressEvent{eventHeader: h, opFields: op, Detail: e.Message} })
	case report.Done:
		s.write(EventOpComplete, line, func(h eventHeader) any { return opEvent{eventHeader: h, opFields: op} })
	case report.Failed:
		if e.Message != "" {
			line += ": " + oneLine(e.Message)
		}
		s.write(EventOpErrored, line, func(h eventHeader) any { return opErroredEvent{eventHeader: h, opFields: op, Error: e.Message} })
	case report.Skipped:
		s.write(EventOpSkipped, line, func(h eventHeader) any { return opEvent{eventHeader: h, opFields: op} })
	}
}

// Retry writes a retry of a cloud call made outside an operation: the
// reads of a plan's refresh, its lookups and gets. addr is the node the
// call was for, "" when not one node's (a list of many objects); the
// action is "".
func (s *EventStream) Retry(addr string, r report.Retry) {
	msg := fmt.Sprintf("%s %s: %s; retrying in %s (attempt %d)", r.Method, r.Path, r.Cause, r.Wait.Round(time.Millisecond), r.Attempt)
	if addr != "" {
		msg = addr + ": " + msg
	}
	s.write(EventRetry, msg, func(h eventHeader) any {
		return retryEvent{eventHeader: h, opFields: opFields{Address: addr}, Retry: retryOf(r)}
	})
}

func retryOf(r report.Retry) retry {
	return retry{Method: r.Method, Path: r.Path, Cause: r.Cause, Attempt: r.Attempt, WaitMS: r.Wait.Milliseconds()}
}

type outputsEvent struct {
	eventHeader
	Outputs map[string]jsonOutput `json:"outputs"`
}

// outputs writes the outputs event.
func (s *EventStream) outputs(outputs map[string]any) {
	out := make(map[string]jsonOutput, len(outputs))
	for k, v := range outputs {
		out[k] = jsonOutputOf(value.UnsealForDisplay(v))
	}
	s.write(EventOutputs, plural(len(out), "output"), func(h eventHeader) any {
		return outputsEvent{eventHeader: h, Outputs: out}
	})
}

type planSummaryEvent struct {
	eventHeader
	Operation   string         `json:"operation"`
	RefreshOnly bool           `json:"refresh_only"`
	Destroy     bool           `json:"destroy"`
	Targets     []string       `json:"targets"`
	Counts      map[string]int `json:"counts"`
	HasChanges  bool           `json:"has_changes"`
}

// PlanSummary ends the stream of a plan: the outputs it plans (unknown
// ones flagged), then the summary: the count of changes per action, as
// plan JSON's summary, and whether applying the plan changes anything
// (what --detailed-exitcode reports as 2).
func (s *EventStream) PlanSummary(p *plan.Plan) {
	s.outputs(p.Outputs)
	n := countActions(p)
	counts := map[string]int{}
	for a := plan.NoOp; int(a) < plan.NumActions; a++ {
		counts[a.String()] = n[a]
	}
	s.write(EventSummary, summaryText(p, countShown(p)), func(h eventHeader) any {
		return planSummaryEvent{eventHeader: h, Operation: "plan", RefreshOnly: p.RefreshOnly, Destroy: p.Destroy,
			Targets: append([]string{}, p.Targets...), Counts: counts, HasChanges: p.HasChanges()}
	})
}

type applySummaryEvent struct {
	eventHeader
	Operation string `json:"operation"`
	applyResultJSON
}

// ApplySummary ends the stream of an apply, destroy or refresh-only
// apply: the outputs after it ({} for a refresh-only run, or one that
// recorded none), then the summary, with the fields of apply JSON
// (docs/apply-json.md).
func (s *EventStream) ApplySummary(res *report.Apply, run Run) {
	var outputs map[string]any
	if run != RunRefreshOnly {
		outputs = res.Outputs
	}
	s.outputs(outputs)
	result := applyResult(res)
	s.write(EventSummary, applyHeadline(res, run), func(h eventHeader) any {
		return applySummaryEvent{eventHeader: h, Operation: run.name(), applyResultJSON: result}
	})
}
