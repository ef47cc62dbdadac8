package endpointsiam

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/resources"
)

// policyResults implements resources.ResultComparer for both lookups: their
// results differ only in the arguments they echo, and policyData is the
// one field compared by meaning.
type policyResults struct{}

// EqualResultField compares policyData, when both values are JSON text,
// as a set of role bindings and a set of audit configs: the order of
// bindings, of their members and of audit configs does not count, nor do
// repeated members or bindings without members. Text that does not parse,
// and every other field, compare with resources.Equal.
func (policyResults) EqualResultField(field string, a, b any) bool {
	if field == "policyData" {
		as, aok := a.(string)
		bs, bok := b.(string)
		if aok && bok {
			return policyEqual(as, bs)
		}
	}
	return resources.Equal(a, b)
}

// DescribeResultChange describes a changed policyData, one line per role
// whose members changed, roles sorted:
//
//	binding ROLE: -REMOVED... +ADDED...
//
// members removed first, then members added, each sorted. Members of
// bindings of one role under different conditions count together, and a
// change of conditions or audit configs alone gives no line (the field
// shows it). Text that is not JSON counts as a policy without bindings.
func (policyResults) DescribeResultChange(before, after resources.Attrs) []string {
	a, aok := before["policyData"].(string)
	b, bok := after["policyData"].(string)
	if !aok || !bok || policyEqual(a, b) {
		return nil
	}
	return memberChanges(a, b)
}

// iamPolicy is the part of policyData the comparison reads.
type iamPolicy struct {
	Bindings []struct {
		Role      string   `json:"role"`
		Members   []string `json:"members"`
		Condition any      `json:"condition"`
	} `json:"bindings"`
	AuditConfigs []any `json:"auditConfigs"`
}

// policyEqual reports whether two policies (policyData text) hold the same
// role bindings and audit configs, whatever their order. Text that does
// not parse compares as text.
func policyEqual(a, b string) bool {
	if a == b {
		return true
	}
	ca, okA := policyCanon(a)
	cb, okB := policyCanon(b)
	return okA && okB && ca == cb
}

// policyCanon is the canonical text of a policy: members sorted and
// deduplicated within each binding, bindings without members dropped,
// bindings sorted, audit configs sorted. It reports false for text that
// does not parse.
func policyCanon(text string) (string, bool) {
	var p iamPolicy
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		return "", false
	}
	var bindings []string
	for _, b := range p.Bindings {
		members := memberSet(b.Members)
		if len(members) == 0 {
			continue
		}
		bindings = append(bindings, resources.Key(map[string]any{
			"role": b.Role, "members": slices.Sorted(maps.Keys(members)), "condition": b.Condition}))
	}
	slices.Sort(bindings)
	var audits []string
	for _, a := range p.AuditConfigs {
		audits = append(audits, resources.Key(a))
	}
	slices.Sort(audits)
	return resources.Key(map[string]any{"bindings": bindings, "auditConfigs": audits}), true
}

// memberChanges lists, one line per role, the members the policy after
// has and the policy before has not, and the other way round.
func memberChanges(before, after string) []string {
	a, b := membersByRole(before), membersByRole(after)
	var lines []string
	for _, role := range slices.Sorted(maps.Keys(union(a, b))) {
		var removed, added []string
		for m := range a[role] {
			if !b[role][m] {
				removed = append(removed, "-"+m)
			}
		}
		for m := range b[role] {
			if !a[role][m] {
				added = append(added, "+"+m)
			}
		}
		if len(removed)+len(added) == 0 {
			continue
		}
		slices.Sort(removed)
		slices.Sort(added)
		lines = append(lines, fmt.Sprintf("binding %s: %s", role, strings.Join(append(removed, added...), " ")))
	}
	return lines
}

// membersByRole returns the members of each role of a policy, whatever
// their conditions: nothing for text that is not JSON, and what decodes
// for JSON of another shape.
func membersByRole(text string) map[string]map[string]bool {
	var p iamPolicy
	_ = json.Unmarshal([]byte(text), &p) // an error leaves out what did not decode
	out := map[string]map[string]bool{}
	for _, b := range p.Bindings {
		if out[b.Role] == nil {
			out[b.Role] = map[string]bool{}
		}
		maps.Copy(out[b.Role], memberSet(b.Members))
	}
	return out
}

func memberSet(members []string) map[string]bool {
	set := make(map[string]bool, len(members))
	for _, m := range members {
		set[m] = true
	}
	return set
}

func union(a, b map[string]map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
