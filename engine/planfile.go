package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"reconcile/resources"
	"reconcile/state"
)

// PlanFileVersion is the format version of saved plans.
const PlanFileVersion = 2

// maxPlanFile bounds what ReadPlanFile accepts.
const maxPlanFile = 256 << 20

const unknownKey = "$unknown"

// PlanFile is a saved plan: the plan plus what is needed to apply exactly it
// later and to refuse it when the world moved on.
type PlanFile struct {
	Plan *Plan
	// SpecPath is the -f path the plan was made from, absolute.
	SpecPath string
	// Config holds the --config values given to plan, except those of
	// secret config entries, which must be given again to apply.
	Config map[string]string
	// StatePath is the state file the plan was made against.
	StatePath string
}

type planFileJSON struct {
	Version   int               `json:"version"`
	Reconcile string            `json:"reconcile"`
	SpecPath  string            `json:"specPath"`
	StatePath string            `json:"statePath"`
	Config    map[string]string `json:"config,omitempty"`
	Lineage   string            `json:"lineage"`
	Serial    int64             `json:"serial"`
	SpecHash  string            `json:"specHash"`
	Destroy   bool              `json:"destroy,omitempty"`
	// RefreshOnly marks a plan made with --refresh-only.
	RefreshOnly bool         `json:"refreshOnly,omitempty"`
	Changes     []changeJSON `json:"changes"`
}

type changeJSON struct {
	Addr                string         `json:"addr"`
	Type                string         `json:"type"`
	Kind                string         `json:"kind"`
	Action              string         `json:"action"`
	Reason              string         `json:"reason,omitempty"`
	ReasonDetail        string         `json:"reasonDetail,omitempty"`
	ReasonFields        []string       `json:"reasonFields,omitempty"`
	ID                  string         `json:"id,omitempty"`
	ImportID            string         `json:"importId,omitempty"`
	Before              map[string]any `json:"before,omitempty"`
	After               map[string]any `json:"after,omitempty"`
	ReplacePaths        []string       `json:"replacePaths,omitempty"`
	DeleteBeforeReplace bool           `json:"deleteBeforeReplace,omitempty"`
	Deferred            bool           `json:"deferred,omitempty"`
	Deposed             []string       `json:"deposed,omitempty"`
	Options             []OptionChange `json:"options,omitempty"`
	Pos                 Pos            `json:"pos"`
}

// WritePlanFile encodes pf. Secrets are sealed (a salted digest, never the
// value) and unknown values marked.
func WritePlanFile(w io.Writer, pf PlanFile, version string) error {
	out := planFileJSON{Version: PlanFileVersion, Reconcile: version, SpecPath: pf.SpecPath, StatePath: pf.StatePath, Config: pf.Config,
		Lineage: pf.Plan.Lineage, Serial: pf.Plan.Serial, SpecHash: pf.Plan.SpecHash, Destroy: pf.Plan.Destroy, RefreshOnly: pf.Plan.RefreshOnly}
	for _, c := range pf.Plan.Changes {
		out.Changes = append(out.Changes, changeJSON{Addr: c.Addr, Type: c.Type, Kind: c.Kind, Action: c.Action.String(), Reason: c.Reason.String(),
			ReasonDetail: c.ReasonDetail, ReasonFields: c.ReasonFields,
			ID: c.ID, ImportID: c.ImportID, Before: encodeValues(c.Before, c.Addr), After: encodeValues(c.After, c.Addr),
			ReplacePaths: c.ReplacePaths, DeleteBeforeReplace: c.DeleteBeforeReplace, Deferred: c.Deferred, Deposed: c.Deposed, Options: c.Options, Pos: c.Pos})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(out)
}

func encodeValues(m map[string]any, salt string) map[string]any {
	if m == nil {
		return nil
	}
	return encodeValue(seal(m, salt)).(map[string]any)
}

func encodeValue(v any) any {
	return rewrite(v, func(v any) (any, bool) {
		if _, ok := v.(Unknown); ok {
			return map[string]any{unknownKey: true}, true
		}
		return nil, false
	})
}

func decodeValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		// Integral numbers come back as int64 however they were written
		// ("1", "1.0", "1e0"), as the state decoder does, so that a value
		// reads back the same after a round trip.
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
			return int64(f)
		}
		return f
	case []any:
		for i, e := range x {
			x[i] = decodeValue(e)
		}
		return x
	case map[string]any:
		if len(x) == 1 && x[unknownKey] == true {
			return Unknown{}
		}
		for k, e := range x {
			x[k] = decodeValue(e)
		}
		return x
	}
	return resources.Canon(v)
}

// ErrNotPlanFile is returned by ReadPlanFile for input that is not a plan.
var ErrNotPlanFile = errors.New("not a reconcile plan file")

// ReadPlanFile decodes a plan saved by WritePlanFile.
func ReadPlanFile(r io.Reader) (PlanFile, error) {
	dec := json.NewDecoder(io.LimitReader(r, maxPlanFile))
	dec.UseNumber()
	var in planFileJSON
	if err := dec.Decode(&in); err != nil {
		return PlanFile{}, fmt.Errorf("%w: %v", ErrNotPlanFile, err)
	}
	if in.Version == 0 || in.SpecHash == "" {
		return PlanFile{}, fmt.Errorf("%w: no version or spec hash", ErrNotPlanFile)
	}
	if in.Version < PlanFileVersion {
		return PlanFile{}, fmt.Errorf("plan file format %d was written by an older reconcile, which this one (format %d) does not apply: make a new plan", in.Version, PlanFileVersion)
	}
	if in.Version > PlanFileVersion {
		return PlanFile{}, fmt.Errorf("plan file format %d is newer than this reconcile understands (%d): upgrade reconcile", in.Version, PlanFileVersion)
	}
	p := &Plan{Lineage: in.Lineage, Serial: in.Serial, SpecHash: in.SpecHash, Destroy: in.Destroy, RefreshOnly: in.RefreshOnly}
	for i, c := range in.Changes {
		act, ok := parseAction(c.Action)
		if !ok {
			return PlanFile{}, fmt.Errorf("%w: change %d has unknown action %q", ErrNotPlanFile, i, c.Action)
		}
		if c.Addr == "" {
			return PlanFile{}, fmt.Errorf("%w: change %d has no address", ErrNotPlanFile, i)
		}
		reason, ok := parseReason(c.Reason)
		if !ok {
			return PlanFile{}, fmt.Errorf("%w: change %d has unknown reason %q", ErrNotPlanFile, i, c.Reason)
		}
		ch := Change{Addr: c.Addr, Type: c.Type, Kind: c.Kind, Action: act, Reason: reason, ReasonDetail: c.ReasonDetail, ReasonFields: c.ReasonFields, ID: c.ID, ImportID: c.ImportID,
			ReplacePaths: c.ReplacePaths, DeleteBeforeReplace: c.DeleteBeforeReplace, Deferred: c.Deferred, Deposed: c.Deposed, Options: c.Options, Pos: c.Pos}
		if err := checkNumbers(c.Before); err != nil {
			return PlanFile{}, fmt.Errorf("%w: change %d (%s): %v", ErrNotPlanFile, i, c.Addr, err)
		}
		if err := checkNumbers(c.After); err != nil {
			return PlanFile{}, fmt.Errorf("%w: change %d (%s): %v", ErrNotPlanFile, i, c.Addr, err)
		}
		if c.Before != nil {
			ch.Before = decodeValue(c.Before).(map[string]any)
		}
		if c.After != nil {
			ch.After = decodeValue(c.After).(map[string]any)
		} else if act == Refresh {
			ch.DeletedOutside, ch.DeletedID = true, ch.ID // the object is gone: it leaves state
		}
		p.Changes = append(p.Changes, ch)
	}
	return PlanFile{Plan: p, SpecPath: in.SpecPath, StatePath: in.StatePath, Config: in.Config}, nil
}

// checkNumbers refuses a number beyond float64's range anywhere in v, as
// decoded with UseNumber: WritePlanFile never writes one, and it would
// decode to an infinity that no value can hold.
func checkNumbers(v any) error {
	switch x := v.(type) {
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return nil
		}
		if f, err := x.Float64(); err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("number %.40s is out of range", string(x))
		}
	case map[string]any:
		for _, e := range x {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func parseAction(s string) (Action, bool) {
	for i, n := range actionNames {
		if n == s {
			return Action(i), true
		}
	}
	return 0, false
}

// ErrStalePlan is matched (with errors.Is) by the error CheckPlan returns
// when a saved plan no longer fits the state or the specs.
var ErrStalePlan = errors.New("stale plan")

// stalePlanError is a CheckPlan failure: its text says what moved on and
// what to do; it matches ErrStalePlan.
type stalePlanError struct{ msg string }

func (e *stalePlanError) Error() string        { return e.msg }
func (e *stalePlanError) Is(target error) bool { return target == ErrStalePlan }

// CheckPlan reports whether the saved plan pf may be applied to the state
// described by meta with the specs in spec. It returns an error matching
// ErrStalePlan when the plan was made for another state (lineage), when the
// state changed since (serial), or when the specs or config values changed
// (spec hash). A plan made before the state existed has no lineage and
// fits a new state of serial 0.
func CheckPlan(pf *PlanFile, meta state.Meta, spec *Spec) error {
	p := pf.Plan
	switch {
	case p.Lineage != "" && meta.Lineage != p.Lineage:
		return &stalePlanError{fmt.Sprintf("the plan file was made for another state (lineage %s, this state has %s); make a new plan", p.Lineage, meta.Lineage)}
	case meta.Serial != p.Serial:
		return &stalePlanError{fmt.Sprintf("the state changed since the plan was made (serial %d then, %d now); make a new plan with 'reconcile plan --out FILE'", p.Serial, meta.Serial)}
	case spec.Hash != p.SpecHash:
		return &stalePlanError{"the specs or config values changed since the plan was made; make a new plan with 'reconcile plan --out FILE' (secret config values must be passed again with --config)"}
	}
	return nil
}
