package restrictionpolicy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/reconcile-dev/reconcile/resources"
)

// Relations lists, by resource type (the part of a resource id before its
// first colon), the relations a restriction policy of that type may bind,
// least access first, as Datadog's API reference of UpdateRestrictionPolicy
// lists them ("Supported relations for resources"; the same table is the
// doc comment of RestrictionPoliciesApi.UpdateRestrictionPolicy in
// datadog-api-client-go, as of its commit 1f7e702 of August 2026, whose
// last change added feature-flag). A type missing here is either one
// Datadog added since, or one it refuses ("Invalid resource type: 'T' does
// not support restriction policies", as recorded in terraform-provider-
// datadog's TestAccRestrictionPolicyInvalidInput cassette): CheckPlan asks
// the API which.
//
// The table is data for the checks of inputs, not for the policies read:
// Read returns whatever relations the API answers.
var Relations = map[string][]string{
	"dashboard":                   {"viewer", "editor"},
	"integration-service":         {"viewer", "editor"},
	"integration-webhook":         {"viewer", "editor"},
	"notebook":                    {"viewer", "editor"},
	"powerpack":                   {"viewer", "editor"},
	"security-rule":               {"viewer", "editor"},
	"slo":                         {"viewer", "editor"},
	"synthetics-global-variable":  {"viewer", "editor"},
	"synthetics-test":             {"viewer", "editor"},
	"synthetics-private-location": {"viewer", "editor"},
	"monitor":                     {"viewer", "editor"},
	"reference-table":             {"viewer", "editor"},
	"workflow":                    {"viewer", "runner", "editor"},
	"app-builder-app":             {"viewer", "editor"},
	"connection":                  {"viewer", "resolver", "editor"},
	"connection-group":            {"viewer", "editor"},
	"rum-application":             {"viewer", "editor"},
	"cross-org-connection":        {"viewer", "editor"},
	"spreadsheet":                 {"viewer", "editor"},
	"on-call-schedule":            {"viewer", "overrider", "editor"},
	"on-call-escalation-policy":   {"viewer", "editor"},
	"on-call-team-routing-rules":  {"viewer", "editor"},
	"logs-pipeline":               {"viewer", "processors_editor", "editor"},
	"case-management-project":     {"viewer", "contributor", "manager"},
	"monitor-notification-rule":   {"viewer", "editor"},
	"status-page":                 {"viewer", "responder", "manager"},
	"feature-flag":                {"viewer", "contributor", "editor"},
}

var (
	_ resources.InputChecker = (*Driver)(nil)
	_ resources.PlanChecker  = (*Driver)(nil)
)

// CheckInputs refuses what Datadog's API would refuse and the inputs alone
// show: a relation that the resource type of resourceId does not support
// (for a type in Relations), at the relation, naming those it supports.
// Every such binding is reported. A resourceId, binding or relation not
// known yet is not checked.
func (d *Driver) CheckInputs(want resources.Attrs) error {
	rid, _ := want["resourceId"].(string)
	typ, _, ok := strings.Cut(rid, ":")
	if !ok {
		return nil
	}
	rels, known := Relations[typ]
	if !known {
		return nil
	}
	list, _ := want["bindings"].([]any)
	var errs []error
	for i, b := range list {
		m, _ := b.(map[string]any)
		rel, ok := m["relation"].(string)
		if !ok || slices.Contains(rels, rel) {
			continue
		}
		errs = append(errs, &resources.AttrError{Path: []string{"bindings", strconv.Itoa(i), "relation"}, Err: relationError(typ, rel, rels)})
	}
	return errors.Join(errs...)
}

// relationError says that resource type typ has no relation rel, and
// which it has.
func relationError(typ, rel string, rels []string) error {
	return fmt.Errorf("resource type %q has no relation %q: Datadog's restriction policies of %s resources bind %s", typ, rel, typ, quoteList(rels))
}

// quoteList writes "a", "b" or "c".
func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// CheckPlan asks Datadog about a resource type that Relations lacks, when
// the object is to be made on it (prior is nil, or has another
// resourceId): it reads the policy of resourceId, which the API refuses
// for a type without restriction policies (400 "Invalid resource type").
// That refusal is reported at resourceId, with the types Datadog
// documents. A type the API accepts is one Datadog added since Relations
// was written: its relations cannot be checked before the apply. A type in
// Relations makes no request.
func (d *Driver) CheckPlan(ctx context.Context, want, prior resources.Attrs) error {
	rid, _ := want["resourceId"].(string)
	typ, id, ok := strings.Cut(rid, ":")
	if !ok || typ == "" || id == "" {
		return nil
	}
	if _, known := Relations[typ]; known {
		return nil
	}
	if was, _ := prior["resourceId"].(string); was == rid {
		return nil // made already: the API took the type
	}
	_, err := d.c.GetRestrictionPolicy(ctx, rid)
	var ae *resources.APIError
	if errors.As(err, &ae) && ae.Status == 400 && strings.Contains(ae.Message, "does not support restriction policies") {
		return &resources.AttrError{Path: []string{"resourceId"}, Err: fmt.Errorf("Datadog refuses restriction policies on %q resources (%w); the types it documents are %s%s",
			typ, err, strings.Join(knownTypes(), ", "), didYouMean(typ))}
	}
	if err != nil {
		return fmt.Errorf("read the policy of %q: %w", rid, err)
	}
	return nil
}

// knownTypes lists the resource types of Relations, sorted.
func knownTypes() []string {
	out := make([]string, 0, len(Relations))
	for t := range Relations {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// didYouMean suggests the type of Relations closest to typ, when one is
// within a small edit distance.
func didYouMean(typ string) string {
	best, bestD := "", 3
	for _, t := range knownTypes() {
		if d := editDistance(typ, t); d < bestD {
			best, bestD = t, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
