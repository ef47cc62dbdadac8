package gcpiam

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Policy is an IAM policy as policyData holds it: its audit configs and
// bindings. The field order of these types is the key order of the JSON
// text; it follows the generated types of cloudresourcemanager/v1.
type Policy struct {
	AuditConfigs []AuditConfig `json:"auditConfigs,omitempty"`
	Bindings     []Binding     `json:"bindings,omitempty"`
}

// Binding grants a role to members, under a condition when there is one.
type Binding struct {
	Condition *Expr    `json:"condition,omitempty"`
	Members   []string `json:"members,omitempty"`
	Role      string   `json:"role,omitempty"`
}

// Expr is a binding's condition, a google.type.Expr.
type Expr struct {
	Description string `json:"description,omitempty"`
	Expression  string `json:"expression,omitempty"`
	Location    string `json:"location,omitempty"`
	Title       string `json:"title,omitempty"`
}

// AuditConfig is the audit logging of one service.
type AuditConfig struct {
	AuditLogConfigs []AuditLogConfig `json:"auditLogConfigs,omitempty"`
	Service         string           `json:"service,omitempty"`
}

// AuditLogConfig enables one log type, except for some members.
type AuditLogConfig struct {
	ExemptedMembers []string `json:"exemptedMembers,omitempty"`
	LogType         string   `json:"logType,omitempty"`
}

// Parse reads policyData text. Fields other than auditConfigs and bindings
// (an etag, a version) are ignored, as the provider ignores them; text that
// is not a JSON object of that shape is an error.
func Parse(text string) (Policy, error) {
	var p Policy
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("not an IAM policy document: %w", err)
	}
	if dec.More() {
		return Policy{}, fmt.Errorf("not an IAM policy document: text after the JSON object")
	}
	return p, nil
}

// JSON returns the policy's text, as the provider marshals it.
func (p Policy) JSON() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if err := enc.Encode(p); err != nil {
		panic(err) // strings and slices of them always encode
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Key identifies a binding within a policy: its role and condition. The
// provider's IAM resources count two bindings with the same key as one.
type Key struct {
	Role                                     string
	Title, Description, Expression, Location string
}

// KeyOf returns b's key.
func KeyOf(b Binding) Key {
	k := Key{Role: b.Role}
	if c := b.Condition; c != nil {
		k.Title, k.Description, k.Expression, k.Location = c.Title, c.Description, c.Expression, c.Location
	}
	return k
}

// Conditional reports whether the key names a conditional binding.
func (k Key) Conditional() bool {
	return k.Title != "" || k.Description != "" || k.Expression != "" || k.Location != ""
}

// Condition returns the condition the key names, or nil.
func (k Key) Condition() *Expr {
	if !k.Conditional() {
		return nil
	}
	return &Expr{Title: k.Title, Description: k.Description, Expression: k.Expression, Location: k.Location}
}

// Canonical returns the policy in canonical form: bindings of one role and
// condition merged into one, members deduplicated and sorted, bindings
// without members dropped (IAM drops them), bindings sorted as the
// provider's data source sorts them (see Less), and audit configs sorted by
// service, their log configs by log type and exempted members by name. Two
// policies that grant the same have the same canonical form.
func (p Policy) Canonical() Policy {
	var out Policy
	index := map[Key]int{}
	for _, b := range p.Bindings {
		k := KeyOf(b)
		i, ok := index[k]
		if !ok {
			i = len(out.Bindings)
			index[k] = i
			out.Bindings = append(out.Bindings, Binding{Role: b.Role, Condition: k.Condition()})
		}
		out.Bindings[i].Members = append(out.Bindings[i].Members, b.Members...)
	}
	kept := out.Bindings[:0]
	for _, b := range out.Bindings {
		b.Members = slices.Compact(slices.Sorted(slices.Values(b.Members)))
		if len(b.Members) > 0 {
			kept = append(kept, b)
		}
	}
	out.Bindings = kept
	slices.SortStableFunc(out.Bindings, Compare)
	if len(out.Bindings) == 0 {
		out.Bindings = nil
	}
	out.AuditConfigs = sortedAudit(p.AuditConfigs)
	return out
}

// Compare orders bindings as the provider's google_iam_policy data source
// does: by role; then a binding without a condition first; then by the
// condition's expression, title and description.
func Compare(a, b Binding) int {
	if c := strings.Compare(a.Role, b.Role); c != 0 {
		return c
	}
	switch {
	case a.Condition == nil && b.Condition == nil:
		return 0
	case a.Condition == nil:
		return -1
	case b.Condition == nil:
		return 1
	}
	if c := strings.Compare(a.Condition.Expression, b.Condition.Expression); c != 0 {
		return c
	}
	if c := strings.Compare(a.Condition.Title, b.Condition.Title); c != 0 {
		return c
	}
	return strings.Compare(a.Condition.Description, b.Condition.Description)
}

// sortedAudit returns audit configs sorted by service, each one's log
// configs by log type and their exempted members by name (nil for none).
func sortedAudit(in []AuditConfig) []AuditConfig {
	if len(in) == 0 {
		return nil
	}
	out := make([]AuditConfig, len(in))
	for i, a := range in {
		logs := make([]AuditLogConfig, len(a.AuditLogConfigs))
		for j, l := range a.AuditLogConfigs {
			logs[j] = AuditLogConfig{LogType: l.LogType}
			if len(l.ExemptedMembers) > 0 {
				logs[j].ExemptedMembers = slices.Sorted(slices.Values(l.ExemptedMembers))
			}
		}
		slices.SortStableFunc(logs, func(x, y AuditLogConfig) int {
			if c := strings.Compare(x.LogType, y.LogType); c != 0 {
				return c
			}
			return slices.Compare(x.ExemptedMembers, y.ExemptedMembers)
		})
		if len(logs) == 0 {
			logs = nil
		}
		out[i] = AuditConfig{Service: a.Service, AuditLogConfigs: logs}
	}
	slices.SortStableFunc(out, func(x, y AuditConfig) int { return strings.Compare(x.Service, y.Service) })
	return out
}

// Members returns the members of each binding key of the policy.
func (p Policy) Members() map[Key][]string {
	out := map[Key][]string{}
	for _, b := range p.Canonical().Bindings {
		out[KeyOf(b)] = b.Members
	}
	return out
}
