package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
)

// PlanJSONVersion is the version of the document PlanJSON writes,
// documented in docs/plan-json.md. Additive changes (a new field, a new
// action name) bump the minor number; anything that can break a reader
// (a field removed, renamed or given another meaning) bumps the major one.
const PlanJSONVersion = "1.4"

// jsonPlan is the top-level object of the JSON plan format. Field order is
// the order of the output.
type jsonPlan struct {
	FormatVersion    string                `json:"format_version"`
	ReconcileVersion string                `json:"reconcile_version"`
	Lineage          string                `json:"lineage"`
	Serial           int64                 `json:"serial"`
	SpecHash         string                `json:"spec_hash"`
	RefreshOnly      bool                  `json:"refresh_only"`
	Destroy          bool                  `json:"destroy"`
	Targets          []string              `json:"targets"`
	AllowSelfLockout bool                  `json:"allow_self_lockout"`
	ResourceDrift    []driftItemJSON       `json:"resource_drift"`
	Changes          []jsonChange          `json:"changes"`
	Outputs          map[string]jsonOutput `json:"outputs"`
	Summary          jsonSummary           `json:"summary"`
	HasChanges       bool                  `json:"has_changes"`
}

// jsonChange is one element of "changes".
type jsonChange struct {
	Address             string              `json:"address"`
	Type                string              `json:"type"`
	Kind                kind.Kind           `json:"kind"`
	Action              string              `json:"action"`
	ActionReason        string              `json:"action_reason"`
	Reason              string              `json:"reason"`
	ID                  string              `json:"id"`
	ImportID            string              `json:"import_id"`
	ReplacePaths        []string            `json:"replace_paths"`
	DeleteBeforeReplace bool                `json:"delete_before_replace"`
	Deferred            bool                `json:"deferred"`
	Deposed             []string            `json:"deposed"`
	OptionChanges       []plan.OptionChange `json:"option_changes"`
	AccessChanges       []jsonAccessChange  `json:"access_changes"`
	SelfLockouts        []plan.Lockout      `json:"self_lockouts"`
	Position            string              `json:"position,omitempty"`
	Before              any                 `json:"before"`
	BeforeSensitive     []string            `json:"before_sensitive"`
	After               any                 `json:"after"`
	AfterUnknown        []string            `json:"after_unknown"`
	AfterSensitive      []string            `json:"after_sensitive"`
}

// jsonAccessChange is one element of "access_changes": a member a write
// adds to or removes from a role of an access policy.
type jsonAccessChange struct {
	Resource  string `json:"resource"`
	Role      string `json:"role"`
	Condition string `json:"condition"`
	Member    string `json:"member"`
	Change    string `json:"change"` // "added" or "removed"
}

// jsonAccessChanges converts access changes; [] for none.
func jsonAccessChanges(in []plan.AccessChange) []jsonAccessChange {
	out := make([]jsonAccessChange, len(in))
	for i, a := range in {
		out[i] = jsonAccessChange{Resource: a.Resource, Role: a.Role, Condition: a.Condition, Member: a.Member, Change: "removed"}
		if a.Added {
			out[i].Change = "added"
		}
	}
	return out
}

// jsonOutput is one value of "outputs".
type jsonOutput struct {
	Value     any  `json:"value"`
	Unknown   bool `json:"unknown"`
	Sensitive bool `json:"sensitive"`
}

// jsonSummary counts the changes by action; every action is present.
type jsonSummary struct {
	NoOp    int `json:"no-op"`
	Create  int `json:"create"`
	Update  int `json:"update"`
	Replace int `json:"replace"`
	Delete  int `json:"delete"`
	Read    int `json:"read"`
	Import  int `json:"import"`
	Forget  int `json:"forget"`
	Refresh int `json:"refresh"`
}

// PlanJSON writes p as one indented JSON object in the format described
// by docs/plan-json.md, version PlanJSONVersion. Every change is listed,
// no-ops included. Unknown and secret values are written as null, and their
// places listed as JSON Pointers in after_unknown, after_sensitive and
// before_sensitive. Keys are in a fixed order and map keys sorted, so equal
// plans give equal bytes. It returns an error, and writes nothing, when a
// value cannot be encoded (a NaN, for one).
func PlanJSON(w io.Writer, p *plan.Plan, opts Options) error {
	n := countActions(p)
	doc := jsonPlan{
		FormatVersion:    PlanJSONVersion,
		ReconcileVersion: opts.Version,
		Lineage:          p.Lineage,
		Serial:           p.Serial,
		SpecHash:         p.SpecHash,
		RefreshOnly:      p.RefreshOnly,
		Destroy:          p.Destroy,
		Targets:          append([]string{}, p.Targets...),
		AllowSelfLockout: p.AllowSelfLockout,
		ResourceDrift:    []driftItemJSON{},
		Changes:          make([]jsonChange, 0, len(p.Changes)),
		Outputs:          make(map[string]jsonOutput, len(p.Outputs)),
		Summary: jsonSummary{
			NoOp: n[plan.NoOp], Create: n[plan.Create], Update: n[plan.Update], Replace: n[plan.Replace],
			Delete: n[plan.Delete], Read: n[plan.Read], Import: n[plan.Import], Forget: n[plan.Forget], Refresh: n[plan.Refresh],
		},
		HasChanges: p.HasChanges(),
	}
	for _, c := range driftedChanges(p) {
		doc.ResourceDrift = append(doc.ResourceDrift, driftItemJSONOf(driftItemOf(c)))
	}
	for i := range p.Changes {
		doc.Changes = append(doc.Changes, jsonChangeOf(&p.Changes[i]))
	}
	for k, v := range p.Outputs {
		doc.Outputs[k] = jsonOutputOf(v)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("render json plan: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// jsonChangeOf converts one change.
func jsonChangeOf(c *plan.Change) jsonChange {
	jc := jsonChange{
		Address:             c.Addr,
		Type:                c.Type,
		Kind:                c.Kind,
		Action:              c.Action.String(),
		ActionReason:        c.Reason.String(),
		Reason:              c.ReasonText(),
		ID:                  c.ID,
		ImportID:            c.ImportID,
		ReplacePaths:        append([]string{}, c.ReplacePaths...),
		DeleteBeforeReplace: c.DeleteBeforeReplace,
		Deferred:            c.Deferred,
		Deposed:             append([]string{}, c.Deposed...),
		OptionChanges:       append([]plan.OptionChange{}, c.Options...),
		AccessChanges:       jsonAccessChanges(c.Access),
		SelfLockouts:        append([]plan.Lockout{}, c.Lockouts...),
		Position:            c.Pos.String(),
		BeforeSensitive:     []string{},
		AfterUnknown:        []string{},
		AfterSensitive:      []string{},
	}
	var ignored []string             // Before holds applied values: nothing there is unknown
	before, after, err := c.Values() // decoded, when the planner packed them
	if err != nil {
		// A fault of this program, never a plan's: Pack's encoding
		// decodes (value.TestPackRoundTrip, FuzzUnpack).
		jc.After = map[string]any{"error": err.Error()}
	}
	if before != nil {
		jc.Before = jsonValue(before, "", &ignored, &jc.BeforeSensitive)
	}
	if after != nil {
		jc.After = jsonValue(after, "", &jc.AfterUnknown, &jc.AfterSensitive)
	}
	// A value secret in After is secret in Before too: state may hold it
	// from before it was marked.
	for _, ptr := range jc.AfterSensitive {
		if !slices.Contains(jc.BeforeSensitive, ptr) && nullAt(jc.Before, ptr) {
			jc.BeforeSensitive = append(jc.BeforeSensitive, ptr)
		}
	}
	slices.Sort(jc.BeforeSensitive)
	return jc
}

// nullAt replaces the value at the JSON Pointer ptr inside v, a value made
// by jsonValue, with null, and reports whether there was one.
func nullAt(v any, ptr string) bool {
	tokens := strings.Split(ptr, "/")[1:]
	for i, tok := range tokens {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		last := i == len(tokens)-1
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return false
			}
			if last {
				x[tok] = nil
				return true
			}
			v = next
		case []any:
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 || n >= len(x) {
				return false
			}
			if last {
				x[n] = nil
				return true
			}
			v = x[n]
		default:
			return false
		}
	}
	return false
}

// jsonOutputOf converts one output: its known, non-secret parts, and
// whether any part is unknown or secret.
func jsonOutputOf(v any) jsonOutput {
	var unknown, sensitive []string
	value := jsonValue(v, "", &unknown, &sensitive)
	return jsonOutput{Value: value, Unknown: len(unknown) > 0, Sensitive: len(sensitive) > 0}
}

// jsonValue returns v with every Unknown and Secret replaced by null, and
// appends the JSON Pointer (RFC 6901) of each, under ptr, to unknown and
// sensitive. A secret whose value is unknown is listed in both. Maps are
// walked in key order, so the lists are sorted the same way every time.
func jsonValue(v any, ptr string, unknown, sensitive *[]string) any {
	switch x := norm(v).(type) {
	case value.Unknown:
		*unknown = append(*unknown, ptr)
		return nil
	case value.Secret:
		*sensitive = append(*sensitive, ptr)
		if _, ok := norm(x.Value).(value.Unknown); ok {
			*unknown = append(*unknown, ptr)
		}
		return nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out[k] = jsonValue(x[k], ptr+"/"+pointerToken(k), unknown, sensitive)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e, ptr+"/"+strconv.Itoa(i), unknown, sensitive)
		}
		return out
	default:
		return x
	}
}

// pointerToken escapes a key for a JSON Pointer: "~" as "~0", "/" as "~1".
func pointerToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// Values in JSON shape.
//
// Plan values are JSON-shaped plus Unknown and Secret. norm brings the
// other shapes a caller may hand in (resources.Attrs, int, []string, ...)
// into that form one level at a time, so no renderer ever formats an
// arbitrary Go value, which could hold a Secret.

// norm returns v as nil, bool, string, int64, float64, map[string]any,
// []any, Unknown or Secret. Values of no JSON shape become a string naming
// their type.
func norm(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int64, float64, map[string]any, []any, value.Unknown, value.Secret:
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return normReflect(v)
}

// normReflect is norm for named and less common types.
func normReflect(v any) any {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		return norm(rv.Elem().Interface())
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		out := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			out[it.Key().String()] = it.Value().Interface()
		}
		return out
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = rv.Index(i).Interface()
		}
		return out
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int64(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	}
	return fmt.Sprintf("(unsupported value of type %T)", v)
}
