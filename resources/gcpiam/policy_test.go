package gcpiam_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/api/cloudresourcemanager/v1"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

type attrs = resources.Attrs

func binding(role string, members []any, cond map[string]any) map[string]any {
	b := map[string]any{"role": role, "members": members}
	if cond != nil {
		b["condition"] = cond
	}
	return b
}

// providerDocument is the Terraform data source google_iam_policy's read
// (dataSourceGoogleIamPolicyRead) on the provider's own types, for
// bindings without audit configs: the reference the lookup must match byte
// for byte.
func providerDocument(bindings []any) string {
	var policy cloudresourcemanager.Policy
	bindingMap := map[string]*cloudresourcemanager.Binding{}
	var order []string
	for _, v := range bindings {
		b := v.(map[string]any)
		var members []string
		seen := map[string]bool{}
		for _, m := range b["members"].([]any) {
			if !seen[m.(string)] {
				seen[m.(string)] = true
				members = append(members, m.(string))
			}
		}
		var cond *cloudresourcemanager.Expr
		if c, ok := b["condition"].(map[string]any); ok {
			desc, _ := c["description"].(string)
			cond = &cloudresourcemanager.Expr{Description: desc, Expression: c["expression"].(string), Title: c["title"].(string),
				ForceSendFields: []string{"Expression", "Title"}}
		}
		key := b["role"].(string)
		if cond != nil {
			key += fmt.Sprintf("-[%s]-[%s]-[%s]-[%s]", cond.Expression, cond.Title, cond.Description, cond.Location)
		}
		if val, ok := bindingMap[key]; ok {
			val.Members = append(val.Members, members...)
		} else {
			bindingMap[key] = &cloudresourcemanager.Binding{Role: b["role"].(string), Members: members, Condition: cond}
			order = append(order, key)
		}
	}
	policy.Bindings = []*cloudresourcemanager.Binding{}
	for _, k := range order {
		policy.Bindings = append(policy.Bindings, bindingMap[k])
	}
	sort.Slice(policy.Bindings, func(i, j int) bool {
		a, b := policy.Bindings[i], policy.Bindings[j]
		if a.Role != b.Role {
			return a.Role < b.Role
		}
		if a.Condition == nil || b.Condition == nil {
			return a.Condition == nil && b.Condition != nil
		}
		if a.Condition.Expression != b.Condition.Expression {
			return a.Condition.Expression < b.Condition.Expression
		}
		if a.Condition.Title != b.Condition.Title {
			return a.Condition.Title < b.Condition.Title
		}
		return a.Condition.Description < b.Condition.Description
	})
	for _, b := range policy.Bindings {
		sort.Strings(b.Members)
	}
	policy.AuditConfigs = []*cloudresourcemanager.AuditConfig{}
	out, err := json.Marshal(&policy)
	if err != nil {
		panic(err)
	}
	return string(out)
}

func TestDocumentMatchesProvider(t *testing.T) {
	t.Parallel()
	expiry := map[string]any{"title": "until 2030", "expression": `request.time < timestamp("2030-01-01T00:00:00Z")`}
	described := map[string]any{"title": "weekdays", "description": "Mon-Fri & not <holidays>", "expression": "request.time.getDayOfWeek() < 6"}
	for name, bindings := range map[string][]any{
		"none":  nil,
		"empty": {},
		"one":   {binding("roles/viewer", []any{"user:jane@example.com"}, nil)},
		"sorted members and roles": {
			binding("roles/viewer", []any{"user:zed@example.com", "group:ops@example.com", "user:amy@example.com"}, nil),
			binding("roles/editor", []any{"serviceAccount:ci@p.iam.gserviceaccount.com"}, nil),
		},
		"merged role": {
			binding("roles/viewer", []any{"user:b@example.com"}, nil),
			binding("roles/viewer", []any{"user:a@example.com", "user:c@example.com"}, nil),
		},
		"conditions": {
			binding("roles/viewer", []any{"user:b@example.com"}, described),
			binding("roles/viewer", []any{"user:a@example.com"}, expiry),
			binding("roles/viewer", []any{"user:c@example.com"}, nil),
			binding("roles/admin", []any{"allUsers"}, expiry),
		},
		"repeated member in a block": {binding("roles/viewer", []any{"user:a@example.com", "user:a@example.com"}, nil)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var arg any
			if bindings != nil {
				arg = bindings
			}
			got, err := gcpiam.Document(arg, nil)
			if err != nil {
				t.Fatalf("Document(%v) error: %v", bindings, err)
			}
			if want := providerDocument(bindings); got != want {
				t.Errorf("Document(%v) =\n%s\nthe provider's data source gives\n%s", bindings, got, want)
			}
		})
	}
}

func TestDocument(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		bindings, audits any
		want             string
	}{
		"nothing": {nil, nil, `{}`},
		"condition without description": {
			[]any{binding("roles/viewer", []any{"user:a@example.com"}, map[string]any{"title": "t", "expression": "a < b"})}, nil,
			`{"bindings":[{"condition":{"expression":"a \u003c b","title":"t"},"members":["user:a@example.com"],"role":"roles/viewer"}]}`},
		"audit configs sorted": {nil, []any{
			map[string]any{"service": "storage.googleapis.com", "auditLogConfigs": []any{
				map[string]any{"logType": "DATA_WRITE"},
				map[string]any{"logType": "DATA_READ", "exemptedMembers": []any{"user:z@example.com", "user:a@example.com"}},
			}},
			map[string]any{"service": "allServices", "auditLogConfigs": []any{map[string]any{"logType": "ADMIN_READ"}}},
		}, `{"auditConfigs":[{"auditLogConfigs":[{"logType":"ADMIN_READ"}],"service":"allServices"},` +
			`{"auditLogConfigs":[{"exemptedMembers":["user:a@example.com","user:z@example.com"],"logType":"DATA_READ"},{"logType":"DATA_WRITE"}],"service":"storage.googleapis.com"}]}`},
		"a block given twice is one": {[]any{
			binding("roles/viewer", []any{"user:a@example.com"}, nil),
			binding("roles/viewer", []any{"user:a@example.com"}, nil),
		}, nil, `{"bindings":[{"members":["user:a@example.com"],"role":"roles/viewer"}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := gcpiam.Document(tc.bindings, tc.audits)
			if err != nil || got != tc.want {
				t.Errorf("Document(%v, %v) = %s, %v\nwant %s", tc.bindings, tc.audits, got, err, tc.want)
			}
		})
	}
}

func TestGetIAMPolicyInvoke(t *testing.T) {
	t.Parallel()
	fn := gcpiam.NewGetIAMPolicy()
	args := attrs{"bindings": []any{
		binding("roles/viewer", []any{"user:b@example.com", "user:a@example.com"}, nil),
	}}
	got, err := fn.Invoke(t.Context(), args)
	if err != nil {
		t.Fatal(err)
	}
	data := `{"bindings":[{"members":["user:a@example.com","user:b@example.com"],"role":"roles/viewer"}]}`
	want := attrs{"id": strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(data))), 10), "policyData": data, "bindings": args["bindings"]}
	if !resources.Equal(got, want) {
		t.Errorf("Invoke(%v) = %v, want %v", args, got, want)
	}
	again, _ := fn.Invoke(t.Context(), args)
	if !resources.Equal(got, again) {
		t.Errorf("Invoke is not deterministic: %v then %v", got, again)
	}
	empty, err := fn.Invoke(t.Context(), attrs{})
	if err != nil || empty["policyData"] != "{}" || empty["id"] != strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte("{}"))), 10) {
		t.Errorf("Invoke() = %v, %v; want policyData {}", empty, err)
	}
}

func TestGetIAMPolicyBadArguments(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		args attrs
		path string
	}{
		"bindings not a list":     {attrs{"bindings": "roles/viewer"}, "bindings"},
		"binding without role":    {attrs{"bindings": []any{map[string]any{"members": []any{"user:a@b.c"}}}}, "bindings.0.role"},
		"binding without members": {attrs{"bindings": []any{map[string]any{"role": "roles/viewer"}}}, "bindings.0.members"},
		"deleted member": {attrs{"bindings": []any{binding("roles/viewer", []any{"user:a@b.c", "deleted:user:x@b.c?uid=1"}, nil)}},
			"bindings.0.members.1"},
		"member without type": {attrs{"bindings": []any{binding("roles/viewer", []any{"a@b.c"}, nil)}}, "bindings.0.members.0"},
		"condition without expression": {attrs{"bindings": []any{binding("roles/viewer", []any{"user:a@b.c"}, map[string]any{"title": "t"})}},
			"bindings.0.condition.expression"},
		"audit config without log configs": {attrs{"auditConfigs": []any{map[string]any{"service": "allServices"}}}, "auditConfigs.0.auditLogConfigs"},
		"log config without type": {attrs{"auditConfigs": []any{map[string]any{"service": "allServices",
			"auditLogConfigs": []any{map[string]any{}}}}}, "auditConfigs.0.auditLogConfigs.0.logType"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := gcpiam.NewGetIAMPolicy().Invoke(t.Context(), tc.args)
			var ae *resources.AttrError
			if !errors.As(err, &ae) || strings.Join(ae.Path, ".") != tc.path {
				t.Errorf("Invoke(%v) error = %v, want an AttrError at %s", tc.args, err, tc.path)
			}
		})
	}
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ in, want string }{
		"empty":                    {`{}`, `{}`},
		"etag and version ignored": {`{"version":3,"etag":"BwX=","bindings":[]}`, `{}`},
		"merged, deduplicated, sorted": {
			`{"bindings":[{"role":"roles/b","members":["user:z@x","user:a@x"]},{"role":"roles/a","members":["user:m@x"]},{"role":"roles/b","members":["user:a@x"]}]}`,
			`{"bindings":[{"members":["user:m@x"],"role":"roles/a"},{"members":["user:a@x","user:z@x"],"role":"roles/b"}]}`},
		"bindings without members dropped": {`{"bindings":[{"role":"roles/a"}]}`, `{}`},
		"conditional after unconditional": {
			`{"bindings":[{"role":"roles/a","members":["user:b@x"],"condition":{"title":"t","expression":"e"}},{"role":"roles/a","members":["user:a@x"]}]}`,
			`{"bindings":[{"members":["user:a@x"],"role":"roles/a"},{"condition":{"expression":"e","title":"t"},"members":["user:b@x"],"role":"roles/a"}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := gcpiam.Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Canonical().JSON(); got != tc.want {
				t.Errorf("Canonical(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `{"bindings":{}}`, `{} {}`} {
		if _, err := gcpiam.Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", bad)
		}
	}
}
