package gcpiam

import (
	"context"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"

	"github.com/reconcile-dev/reconcile/resources"
)

// GetIAMPolicyToken is the lookup GetIAMPolicy serves.
const GetIAMPolicyToken = "gcp:organizations:getIAMPolicy"

// GetIAMPolicy is the gcp:organizations:getIAMPolicy lookup: it builds a
// policy document from its arguments, without reading anything.
type GetIAMPolicy struct{}

var _ resources.Function = (*GetIAMPolicy)(nil)

// NewGetIAMPolicy returns the gcp:organizations:getIAMPolicy lookup.
func NewGetIAMPolicy() *GetIAMPolicy { return &GetIAMPolicy{} }

// Invoke computes policyData from the arguments bindings and auditConfigs
// (both optional), as the package documentation says. The result holds
// id, policyData, and the arguments as given. Bad arguments are
// *resources.AttrError values; nothing else can fail.
func (*GetIAMPolicy) Invoke(_ context.Context, args resources.Attrs) (resources.Attrs, error) {
	text, err := Document(args["bindings"], args["auditConfigs"])
	if err != nil {
		return nil, err
	}
	out := resources.Attrs{
		"id":         strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(text))), 10),
		"policyData": text,
	}
	for _, k := range []string{"bindings", "auditConfigs"} {
		if v, ok := args[k]; ok && v != nil {
			out[k] = v
		}
	}
	return out, nil
}

// Document returns the policyData text of the bindings and audit configs
// given as attribute values (lists of objects, nil for none), as the
// data source google_iam_policy computes it: the members of each binding
// a set, bindings of one role and condition merged (their members
// concatenated, then sorted), bindings sorted by Compare, audit configs
// sorted. Errors are *resources.AttrError values.
func Document(bindings, auditConfigs any) (string, error) {
	var p Policy
	bs, err := list(bindings, "bindings")
	if err != nil {
		return "", err
	}
	index := map[Key]int{}
	blocks := map[string]bool{}
	for i, v := range bs {
		b, err := parseBinding(v, []string{"bindings", strconv.Itoa(i)})
		if err != nil {
			return "", err
		}
		k := KeyOf(b)
		// The blocks are a set: one written twice is one.
		block := fmt.Sprintf("%q %q", k, slices.Sorted(slices.Values(b.Members)))
		if blocks[block] {
			continue
		}
		blocks[block] = true
		if j, ok := index[k]; ok {
			p.Bindings[j].Members = append(p.Bindings[j].Members, b.Members...)
			continue
		}
		index[k] = len(p.Bindings)
		p.Bindings = append(p.Bindings, b)
	}
	for i := range p.Bindings {
		slices.Sort(p.Bindings[i].Members)
	}
	slices.SortStableFunc(p.Bindings, Compare)
	as, err := list(auditConfigs, "auditConfigs")
	if err != nil {
		return "", err
	}
	for i, v := range as {
		a, err := parseAuditConfig(v, []string{"auditConfigs", strconv.Itoa(i)})
		if err != nil {
			return "", err
		}
		p.AuditConfigs = append(p.AuditConfigs, a)
	}
	p.AuditConfigs = sortedAudit(p.AuditConfigs)
	return p.JSON(), nil
}

func attrErr(path []string, format string, a ...any) error {
	return &resources.AttrError{Path: slices.Clone(path), Err: fmt.Errorf(format, a...)}
}

// list reads an optional list attribute.
func list(v any, path ...string) ([]any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return x, nil
	}
	return nil, attrErr(path, "must be a list, not %T", v)
}

// object reads an object attribute.
func object(v any, path []string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, attrErr(path, "must be an object, not %T", v)
	}
	return m, nil
}

// str reads a string field of m; required ones must not be empty.
func str(m map[string]any, key string, required bool, path []string) (string, error) {
	p := append(slices.Clone(path), key)
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			return "", attrErr(p, "required")
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", attrErr(p, "must be a string, not %T", v)
	}
	if required && s == "" {
		return "", attrErr(p, "must not be empty")
	}
	return s, nil
}

// strings reads a list of strings field of m as a set: repeats are
// dropped, the order kept.
func stringSet(m map[string]any, key string, path []string) ([]string, error) {
	p := append(slices.Clone(path), key)
	l, err := list(m[key], p...)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, v := range l {
		s, ok := v.(string)
		if !ok {
			return nil, attrErr(append(p, strconv.Itoa(i)), "must be a string, not %T", v)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

func parseBinding(v any, path []string) (Binding, error) {
	m, err := object(v, path)
	if err != nil {
		return Binding{}, err
	}
	var b Binding
	if b.Role, err = str(m, "role", true, path); err != nil {
		return Binding{}, err
	}
	if _, ok := m["members"]; !ok {
		return Binding{}, attrErr(append(path, "members"), "required")
	}
	if b.Members, err = stringSet(m, "members", path); err != nil {
		return Binding{}, err
	}
	for i, member := range b.Members {
		if err := CheckMember(member); err != nil {
			return Binding{}, &resources.AttrError{Path: append(slices.Clone(path), "members", strconv.Itoa(i)), Err: err}
		}
	}
	if b.Condition, err = ParseCondition(m["condition"], append(slices.Clone(path), "condition")); err != nil {
		return Binding{}, err
	}
	return b, nil
}

// ParseCondition reads a condition attribute, an object of title and
// expression (both required) and description; nil means no condition.
// Errors are *resources.AttrError values under path.
func ParseCondition(v any, path []string) (*Expr, error) {
	if v == nil {
		return nil, nil
	}
	m, err := object(v, path)
	if err != nil {
		return nil, err
	}
	var c Expr
	if c.Title, err = str(m, "title", true, path); err != nil {
		return nil, err
	}
	if c.Expression, err = str(m, "expression", true, path); err != nil {
		return nil, err
	}
	if c.Description, err = str(m, "description", false, path); err != nil {
		return nil, err
	}
	return &c, nil
}

func parseAuditConfig(v any, path []string) (AuditConfig, error) {
	m, err := object(v, path)
	if err != nil {
		return AuditConfig{}, err
	}
	var a AuditConfig
	if a.Service, err = str(m, "service", true, path); err != nil {
		return AuditConfig{}, err
	}
	logsPath := append(slices.Clone(path), "auditLogConfigs")
	if _, ok := m["auditLogConfigs"]; !ok {
		return AuditConfig{}, attrErr(logsPath, "required")
	}
	logs, err := list(m["auditLogConfigs"], logsPath...)
	if err != nil {
		return AuditConfig{}, err
	}
	seen := map[string]bool{}
	for i, v := range logs {
		lp := append(slices.Clone(logsPath), strconv.Itoa(i))
		lm, err := object(v, lp)
		if err != nil {
			return AuditConfig{}, err
		}
		var l AuditLogConfig
		if l.LogType, err = str(lm, "logType", true, lp); err != nil {
			return AuditConfig{}, err
		}
		if l.ExemptedMembers, err = stringSet(lm, "exemptedMembers", lp); err != nil {
			return AuditConfig{}, err
		}
		key := l.LogType + "\x00" + strings.Join(slices.Sorted(slices.Values(l.ExemptedMembers)), "\x00")
		if seen[key] {
			continue // a set: the same block twice is one
		}
		seen[key] = true
		a.AuditLogConfigs = append(a.AuditLogConfigs, l)
	}
	return a, nil
}
