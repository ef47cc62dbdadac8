package render_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/internal/golden"
	"github.com/reconcile-dev/reconcile/kind"
)

// obj and list shorten the literals of hand-built plans.
type (
	obj  = map[string]any
	list = []any
)

// secretValue is wrapped in every Secret of the test plans; no output may
// contain it.
const secretValue = "hunter2-SECRET"

const (
	endpointType = "oci:AiLanguage:Endpoint"
	policyType   = "datadog:RestrictionPolicy"
	iamType      = "gcp:endpoints:getServiceIamPolicy"
)

// renderers are the three formats, by golden-file extension.
var renderers = map[string]func(io.Writer, *plan.Plan, render.Options) error{
	"txt":  render.PlanText,
	"json": render.PlanJSON,
	"md":   render.PlanMarkdown,
}

// renderCases are the hand-built plans of the golden tests, by folder name
// under testdata.
func renderCases() map[string]*plan.Plan {
	return map[string]*plan.Plan{
		"create":               {Changes: []plan.Change{createEndpoint(), createPolicy()}, Outputs: obj{"endpointId": value.Unknown{}}},
		"update":               {Changes: []plan.Change{updateEndpoint()}},
		"replace_create_first": {Changes: []plan.Change{replacePolicy()}},
		"replace_delete_first": {Changes: []plan.Change{replaceEndpoint()}},
		"delete_forget":        {Changes: []plan.Change{deleteEndpoint(), forgetEndpoint()}},
		"reads":                {Changes: []plan.Change{readDirect(), readDeferred(), {Addr: "quiet", Type: endpointType, Kind: kind.Resource}}},
		"import":               {Changes: []plan.Change{importNew(), importWithDiff()}},
		"no_changes":           noChangesPlan(),
		"all_actions":          allActionsPlan(),
		"escaping":             escapingPlan(),
		"drift":                driftPlan(),
		"refresh_only":         refreshOnlyPlan(),
		"targeted":             targetedPlan(),
		"targeted_destroy":     targetedDestroyPlan(),
		"iam_access":           iamAccessPlan(),
	}
}

// iamAccessPlan writes IAM policies and a restriction policy: a policy
// created over a live one (removing two members of two roles), a
// binding under a condition updated, a member deleted, a restriction
// policy updated, and a binding changed outside reconcile; the plan was
// made with --allow-self-lockout, and one write removes the caller's own
// role.
func iamAccessPlan() *plan.Plan {
	const svc = "services/orders.endpoints.acme-prod.cloud.goog"
	policyData := `{"bindings":[{"members":["group:orders-clients@acme.example"],"role":"roles/servicemanagement.serviceConsumer"}]}`
	return &plan.Plan{AllowSelfLockout: true, Changes: []plan.Change{
		{Addr: "ordersPolicy", Type: "gcp:endpoints:ServiceIamPolicy", Kind: kind.Resource, Action: plan.Create, Pos: diag.Pos{File: "iam.yaml", Line: 9, Col: 3},
			After: obj{"serviceName": svc, "policyData": policyData, "etag": value.Unknown{}, "id": value.Unknown{}},
			Access: []plan.AccessChange{
				{Resource: svc, Role: "roles/servicemanagement.serviceConsumer", Member: "user:alice@acme.example"},
				{Resource: svc, Role: "roles/servicemanagement.serviceController", Member: "serviceAccount:orders-esp@acme-prod.iam.gserviceaccount.com"},
			}},
		{Addr: "auditors", Type: "gcp:endpoints:ServiceIamBinding", Kind: kind.Resource, Action: plan.Update, ID: svc + " roles/viewer until 2030",
			Before: obj{"serviceName": svc, "role": "roles/viewer", "members": list{"user:audit@acme.example", "user:reconcile@acme.example"}},
			After:  obj{"serviceName": svc, "role": "roles/viewer", "members": list{"user:audit2@acme.example"}},
			Access: []plan.AccessChange{
				{Resource: svc, Role: "roles/viewer", Condition: "until 2030", Member: "user:audit@acme.example"},
				{Resource: svc, Role: "roles/viewer", Condition: "until 2030", Member: "user:reconcile@acme.example"},
				{Resource: svc, Role: "roles/viewer", Condition: "until 2030", Member: "user:audit2@acme.example", Added: true},
			},
			Lockouts: []plan.Lockout{{Resource: svc, Role: "roles/viewer", Caller: "reconcile@acme.example", Member: "user:reconcile@acme.example"}}},
		{Addr: "partner", Type: "gcp:endpoints:ConsumersIamMember", Kind: kind.Resource, Action: plan.Delete, Reason: plan.ReasonNotDeclared, ID: svc + "/consumers/acme-partner roles/servicemanagement.serviceConsumer group:partner-devs@partner.example",
			Before: obj{"serviceName": "orders.endpoints.acme-prod.cloud.goog", "member": "group:partner-devs@partner.example"},
			Access: []plan.AccessChange{{Resource: svc + "/consumers/acme-partner", Role: "roles/servicemanagement.serviceConsumer", Member: "group:partner-devs@partner.example"}}},
		{Addr: "dashboardPolicy", Type: policyType, Kind: kind.Resource, Action: plan.Update, ID: "dashboard:abc",
			Before: obj{"resourceId": "dashboard:abc", "bindings": list{obj{"relation": "editor", "principals": list{"org:1", "role:2"}}}},
			After:  obj{"resourceId": "dashboard:abc", "bindings": list{obj{"relation": "editor", "principals": list{"org:1"}}}},
			Access: []plan.AccessChange{{Resource: "dashboard:abc", Role: "editor", Member: "role:2"}}},
		{Addr: "consumers", Type: "gcp:endpoints:ServiceIamBinding", Kind: kind.Resource, Action: plan.Update, ID: svc + " roles/servicemanagement.serviceConsumer",
			Before:       obj{"serviceName": svc, "role": "roles/servicemanagement.serviceConsumer", "members": list{"user:jane@acme.example", "user:mallory@evil.example"}},
			After:        obj{"serviceName": svc, "role": "roles/servicemanagement.serviceConsumer", "members": list{"user:jane@acme.example"}},
			Drift:        []plan.FieldDrift{{Path: "members", Applied: list{"user:jane@acme.example"}, Live: list{"user:jane@acme.example", "user:mallory@evil.example"}}},
			DriftDetails: []string{"binding roles/servicemanagement.serviceConsumer: +user:mallory@evil.example"},
			DriftAccess:  []plan.AccessChange{{Resource: svc, Role: "roles/servicemanagement.serviceConsumer", Member: "user:mallory@evil.example", Added: true}},
			Access:       []plan.AccessChange{{Resource: svc, Role: "roles/servicemanagement.serviceConsumer", Member: "user:mallory@evil.example"}}},
	}}
}

// targetedPlan is a plan made with --target for two names, one of them
// hostile, that replaces one resource on request (--replace) and one
// marked tainted with 'reconcile state taint'.
func targetedPlan() *plan.Plan {
	requested := replacePolicy()
	requested.Reason, requested.ReplacePaths = plan.ReasonReplaceRequested, nil
	requested.After["resourceId"] = requested.Before["resourceId"]
	tainted := replaceEndpoint()
	tainted.Reason, tainted.ReasonDetail, tainted.ReplacePaths = plan.ReasonTainted, plan.TaintRequested, nil
	return &plan.Plan{Targets: []string{"dashboardPolicy", "sentiment", "we\"ird|<b>name`"}, Changes: []plan.Change{requested, tainted}}
}

// targetedDestroyPlan is plan --destroy --target: a resource and the one
// that depends on it.
func targetedDestroyPlan() *plan.Plan {
	first, second := deleteEndpoint(), deleteEndpoint()
	first.Reason, second.Reason = plan.ReasonDestroy, plan.ReasonDestroy
	second.Addr = "dependent"
	return &plan.Plan{Destroy: true, Targets: []string{first.Addr}, Changes: []plan.Change{second, first}}
}

// driftPlan is a refreshed plan after changes outside reconcile: an
// endpoint renamed and re-tagged (updated back to the specs), one with a
// secret changed, a policy deleted (created again), an IAM policy lookup
// with a new member, and an unchanged node.
func driftPlan() *plan.Plan {
	return &plan.Plan{
		Changes: []plan.Change{
			{Addr: "same", Type: endpointType, Kind: kind.Resource, ID: "ocid1.same", Before: obj{"a": "b"}, After: obj{"a": "b"}},
			{Addr: "svcPolicy", Type: iamType, Kind: kind.Lookup, Action: plan.Read,
				Before: obj{"serviceName": "s", "etag": "e1", "policyData": `{"bindings":[{"members":["user:a@x"],"role":"roles/viewer"}]}`},
				After:  obj{"serviceName": "s", "etag": "e2", "policyData": `{"bindings":[{"members":["user:a@x","user:b@x"],"role":"roles/viewer"}]}`},
				Drift: []plan.FieldDrift{
					{Path: "etag", Applied: "e1", Live: "e2"},
					{Path: "policyData", Applied: `{"bindings":[{"members":["user:a@x"],"role":"roles/viewer"}]}`, Live: `{"bindings":[{"members":["user:a@x","user:b@x"],"role":"roles/viewer"}]}`},
				},
				DriftDetails: []string{"binding roles/viewer: +user:b@x"}},
			{Addr: "sentiment", Type: endpointType, Kind: kind.Resource, Action: plan.Update, ID: "ocid1.sentiment",
				Pos:    diag.Pos{File: "site.yaml", Line: 12, Col: 3},
				Before: obj{"displayName": "renamed-by-hand", "freeformTags": obj{"team": "nlp", "owner": "bob"}, "inferenceUnits": int64(2), "id": "ocid1.sentiment"},
				After:  obj{"displayName": "sentiment-prod", "freeformTags": obj{"team": "nlp"}, "inferenceUnits": int64(2), "id": "ocid1.sentiment"},
				Drift: []plan.FieldDrift{
					{Path: "displayName", Applied: "sentiment-prod", Live: "renamed-by-hand"},
					{Path: "freeformTags", Applied: obj{"team": "nlp"}, Live: obj{"team": "nlp", "owner": "bob"}},
				}},
			{Addr: "keyed", Type: endpointType, Kind: kind.Resource, Action: plan.Update, ID: "ocid1.keyed",
				Before: obj{"apiKey": value.Secret{}}, After: obj{"apiKey": value.Secret{Value: secretValue}},
				Drift: []plan.FieldDrift{{Path: "apiKey", Applied: value.Secret{}, Live: value.Secret{}}}},
			{Addr: "dashboardPolicy", Type: policyType, Kind: kind.Resource, Action: plan.Create,
				Reason: plan.ReasonDeletedOutside, DeletedOutside: true, DeletedID: "dashboard:abc",
				After: obj{"resourceId": "dashboard:abc", "bindings": list{obj{"relation": "editor", "principals": list{"org:1"}}}, "id": value.Unknown{}}},
		},
	}
}

// refreshOnlyPlan is what plan --refresh-only makes of the same drift.
func refreshOnlyPlan() *plan.Plan {
	return &plan.Plan{
		RefreshOnly: true, Lineage: "6f1c2d3e-0000-4000-8000-000000000001", Serial: 17,
		Changes: []plan.Change{
			{Addr: "dashboardPolicy", Type: policyType, Kind: kind.Resource, Action: plan.Refresh, ID: "dashboard:abc",
				DeletedOutside: true, DeletedID: "dashboard:abc",
				Before: obj{"resourceId": "dashboard:abc", "bindings": list{obj{"relation": "editor", "principals": list{"org:1"}}}, "id": "dashboard:abc"}},
			{Addr: "same", Type: endpointType, Kind: kind.Resource, ID: "ocid1.same", Before: obj{"a": "b"}, After: obj{"a": "b"}},
			{Addr: "sentiment", Type: endpointType, Kind: kind.Resource, Action: plan.Refresh, ID: "ocid1.sentiment",
				Pos:    diag.Pos{File: "site.yaml", Line: 12, Col: 3},
				Before: obj{"displayName": "sentiment-prod", "inferenceUnits": int64(2), "state": "ACTIVE", "id": "ocid1.sentiment"},
				After:  obj{"displayName": "renamed-by-hand", "inferenceUnits": int64(2), "state": "ACTIVE", "id": "ocid1.sentiment"},
				Drift:  []plan.FieldDrift{{Path: "displayName", Applied: "sentiment-prod", Live: "renamed-by-hand"}}},
			{Addr: "svcPolicy", Type: iamType, Kind: kind.Lookup, Action: plan.Refresh, ID: "services/s",
				Before:       obj{"serviceName": "s", "etag": "e1", "id": "services/s"},
				After:        obj{"serviceName": "s", "etag": "e2", "id": "services/s"},
				Drift:        []plan.FieldDrift{{Path: "etag", Applied: "e1", Live: "e2"}},
				DriftDetails: []string{"binding roles/viewer: +user:b@x"}},
		},
	}
}

func createEndpoint() plan.Change {
	return plan.Change{
		Addr: "sentiment", Type: endpointType, Kind: kind.Resource, Action: plan.Create,
		Pos: diag.Pos{File: "site.yaml", Line: 12, Col: 3},
		After: obj{
			"compartmentId":  "ocid1.compartment.oc1..example",
			"modelId":        "ocid1.ailanguagemodel.oc1.iad.example",
			"displayName":    "sentiment-prod",
			"inferenceUnits": int64(2),
			"id":             value.Unknown{},
			"freeformTags":   obj{"env": "prod", "cost center": "ml"},
			"definedTags":    obj{},
			"aliases":        list{"a", "b"},
			"apiKey":         value.Secret{Value: secretValue},
			"config": obj{
				"enabled": true,
				"nothing": nil,
				"ratio":   0.25,
				"routes":  list{obj{"name": "x", "weight": int64(3)}, obj{"name": "y", "token": value.Secret{Value: secretValue}}},
				"pending": list{value.Unknown{}},
			},
		},
	}
}

func createPolicy() plan.Change {
	return plan.Change{
		Addr: "dashboardPolicy", Type: policyType, Kind: kind.Resource, Action: plan.Create,
		After: obj{
			"resourceId": value.Unknown{},
			"bindings": list{
				obj{"relation": "editor", "principals": list{"role:00000000-0000-0000-0000-000000000001"}},
				obj{"relation": "viewer", "principals": list{}},
			},
		},
	}
}

func updateEndpoint() plan.Change {
	return plan.Change{
		Addr: "sentiment", Type: endpointType, Kind: kind.Resource, Action: plan.Update,
		ID: "ocid1.ailanguageendpoint.oc1.iad.sentiment",
		Before: obj{
			"compartmentId":  "ocid1.compartment.oc1..example",
			"displayName":    "sentiment-dev",
			"description":    "to be removed",
			"inferenceUnits": int64(1),
			"weight":         int64(1),
			"lifecycleState": "ACTIVE",
			"freeformTags":   obj{"env": "dev", "owner": "ml", "keep": "x"},
			"bindings": list{
				obj{"relation": "editor", "principals": list{"role:1", "role:2"}},
				obj{"relation": "viewer", "principals": list{"role:3"}},
			},
			"aliases":   list{"a", "b", "c", "d"},
			"labels":    list{"x"},
			"apiKey":    value.Secret{Value: "old-" + secretValue},
			"token":     value.Secret{Value: secretValue},
			"plainOnce": secretValue,
		},
		After: obj{
			"compartmentId":  "ocid1.compartment.oc1..example",
			"displayName":    "sentiment-prod",
			"inferenceUnits": int64(2),
			"weight":         1.0,
			"lifecycleState": value.Unknown{},
			"freeformTags":   obj{"env": "prod", "keep": "x", "team": "ai"},
			"bindings": list{
				obj{"relation": "editor", "principals": list{"role:1", "role:2", "role:4"}},
				obj{"relation": "viewer", "principals": list{"role:3"}},
			},
			"aliases":   list{"a", "c", "d", "e"},
			"labels":    obj{"x": true},
			"apiKey":    value.Secret{Value: secretValue},
			"token":     value.Secret{Value: secretValue},
			"plainOnce": value.Secret{Value: secretValue},
			"newField":  "added",
		},
	}
}

func replacePolicy() plan.Change {
	bindings := list{obj{"relation": "editor", "principals": list{"role:1"}}}
	return plan.Change{
		Addr: "dashboardPolicy", Type: policyType, Kind: kind.Resource, Action: plan.Replace,
		ID:           "dashboard:abc-def-ghi",
		Reason:       plan.ReasonCannotUpdate,
		ReplacePaths: []string{"resourceId"},
		Before:       obj{"resourceId": "dashboard:abc-def-ghi", "bindings": bindings, "id": "dashboard:abc-def-ghi"},
		After:        obj{"resourceId": "dashboard:xyz", "bindings": bindings, "id": value.Unknown{}},
	}
}

func replaceEndpoint() plan.Change {
	return plan.Change{
		Addr: "sentiment", Type: endpointType, Kind: kind.Resource, Action: plan.Replace,
		ID:                  "ocid1.ailanguageendpoint.oc1.iad.sentiment",
		Reason:              plan.ReasonReplaceOnChanges,
		ReplacePaths:        []string{"modelId", "placement"},
		DeleteBeforeReplace: true,
		Before: obj{
			"modelId":     "ocid1.ailanguagemodel.oc1.iad.old",
			"displayName": "sentiment-prod",
			"placement":   obj{"region": "us-ashburn-1", "zones": list{"AD-1"}},
		},
		After: obj{
			"modelId":     "ocid1.ailanguagemodel.oc1.iad.new",
			"displayName": "sentiment-prod",
			"placement":   obj{"region": "us-ashburn-1", "zones": list{"AD-1", "AD-2"}},
		},
	}
}

func deleteEndpoint() plan.Change {
	return plan.Change{
		Addr: "old", Type: endpointType, Kind: kind.Resource, Action: plan.Delete,
		ID:     "ocid1.ailanguageendpoint.oc1.iad.old",
		Reason: plan.ReasonNotDeclared,
		Before: obj{
			"displayName": "old",
			"apiKey":      value.Secret{Value: secretValue},
			"tags":        obj{"env": "prod", "nested": obj{"deep": list{int64(1), int64(2)}}},
		},
	}
}

func forgetEndpoint() plan.Change {
	return plan.Change{
		Addr: "kept", Type: endpointType, Kind: kind.Resource, Action: plan.Forget,
		ID:     "ocid1.ailanguageendpoint.oc1.iad.kept",
		Before: obj{"displayName": "kept"},
	}
}

func readDirect() plan.Change {
	return plan.Change{
		Addr: "svcPolicy", Type: iamType, Kind: kind.Lookup, Action: plan.Read,
		After: obj{
			"serviceName": "orders.endpoints.acme.cloud.goog",
			"etag":        "BwW1",
			"bindings":    list{obj{"role": "roles/viewer", "members": list{"user:a@example.com"}}},
		},
	}
}

func readDeferred() plan.Change {
	return plan.Change{
		Addr: "consumerPolicy", Type: "gcp:endpoints:getServiceConsumersIamPolicy", Kind: kind.Lookup,
		Action: plan.Read, Deferred: true,
		Reason: plan.ReasonReadDeferred,
		After:  obj{"serviceName": "orders.endpoints.acme.cloud.goog", "consumerId": value.Unknown{}, "etag": value.Unknown{}},
	}
}

func importNew() plan.Change {
	return plan.Change{
		Addr: "legacy", Type: endpointType, Kind: kind.Resource, Action: plan.Import,
		ImportID: "ocid1.ailanguageendpoint.oc1.iad.legacy",
		After:    obj{"displayName": "legacy", "inferenceUnits": int64(1)},
	}
}

func importWithDiff() plan.Change {
	return plan.Change{
		Addr: "adopted", Type: policyType, Kind: kind.Resource, Action: plan.Import,
		ImportID: "dashboard:adopted",
		Reason:   plan.ReasonImportThenUpdate, ReasonFields: []string{"bindings"},
		Before: obj{"resourceId": "dashboard:adopted", "bindings": list{}},
		After:  obj{"resourceId": "dashboard:adopted", "bindings": list{obj{"relation": "editor", "principals": list{"role:1"}}}},
	}
}

func noChangesPlan() *plan.Plan {
	return &plan.Plan{
		Lineage: "6f1c2d3e", Serial: 4, SpecHash: "sha256:abc",
		Changes: []plan.Change{
			{Addr: "sentiment", Type: endpointType, Kind: kind.Resource, ID: "ocid1.x", Before: obj{"a": int64(1)}, After: obj{"a": int64(1)}},
		},
		Outputs: obj{
			"endpointId": "ocid1.x",
			"apiKey":     value.Secret{Value: secretValue},
			"pending":    value.Unknown{},
			"meta":       obj{"units": int64(2), "zones": list{"AD-1"}, "key": value.Secret{Value: secretValue}},
		},
	}
}

func allActionsPlan() *plan.Plan {
	return &plan.Plan{
		Lineage: "6f1c2d3e-0000-4000-8000-000000000001", Serial: 17, SpecHash: "sha256:0123abcd",
		Changes: []plan.Change{
			{Addr: "same", Type: endpointType, Kind: kind.Resource, Before: obj{"a": "b"}, After: obj{"a": "b"}},
			{Addr: "svcPolicy", Type: iamType, Kind: kind.Lookup, Action: plan.Read, After: obj{"serviceName": "s", "etag": "e"}},
			{Addr: "later", Type: iamType, Kind: kind.Lookup, Action: plan.Read, Deferred: true, After: obj{"serviceName": value.Unknown{}}},
			{Addr: "new", Type: endpointType, Kind: kind.Resource, Action: plan.Create, After: obj{"displayName": "new"},
				Pos: diag.Pos{File: "site.yaml", Line: 3, Col: 3}},
			{Addr: "changed", Type: endpointType, Kind: kind.Resource, Action: plan.Update, ID: "ocid1.changed",
				Before: obj{"inferenceUnits": int64(1)}, After: obj{"inferenceUnits": int64(2)}},
			{Addr: "moved", Type: policyType, Kind: kind.Resource, Action: plan.Replace, ID: "dashboard:a",
				ReplacePaths: []string{"resourceId"}, Before: obj{"resourceId": "dashboard:a"}, After: obj{"resourceId": "dashboard:b"}},
			{Addr: "adopted", Type: endpointType, Kind: kind.Resource, Action: plan.Import, ImportID: "ocid1.adopted",
				After: obj{"displayName": "adopted"}},
			{Addr: "kept", Type: endpointType, Kind: kind.Resource, Action: plan.Forget, ID: "ocid1.kept"},
			{Addr: "gone", Type: endpointType, Kind: kind.Resource, Action: plan.Delete, ID: "ocid1.gone",
				Before: obj{"displayName": "gone"}},
		},
		Outputs: obj{"endpointId": value.Unknown{}, "etag": "e", "apiKey": value.Secret{Value: secretValue}},
	}
}

// escapingPlan holds text meant to break each format's markup or a
// terminal.
func escapingPlan() *plan.Plan {
	return &plan.Plan{
		Changes: []plan.Change{{
			Addr: "web|<img src=x onerror=alert(1)>", Type: "x:`y`:Z", Kind: kind.Resource, Action: plan.Delete,
			Reason: plan.ReasonTainted, ReasonDetail: "a *bold* [link](https://example.com) & <script>alert(1)</script>\nsecond line \x1b[31mred",
			Before: obj{
				"fence":        "```\n</details><script>alert(1)</script>",
				"escape":       "\x1b[2J\u202eevil\u0085",
				"key with | ":  "v",
				"invalid utf8": "\xff",
			},
		}},
	}
}

func renderPlan(t *testing.T, format string, p *plan.Plan, opts render.Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := renderers[format](&buf, p, opts); err != nil {
		t.Fatalf("render %s: %v", format, err)
	}
	return buf.String()
}

func TestRenderGolden(t *testing.T) {
	for name, p := range renderCases() {
		for format := range renderers {
			t.Run(name+"/"+format, func(t *testing.T) {
				got := renderPlan(t, format, p, render.Options{Version: "0.1.0-test"})
				golden.Check(t, "./engine/render", filepath.Join("testdata", name, "want."+format), []byte(got))
			})
		}
	}
}

func TestRenderTextColor(t *testing.T) {
	for name, p := range renderCases() {
		t.Run(name, func(t *testing.T) {
			if got := renderPlan(t, "txt", p, render.Options{}); strings.Contains(got, "\x1b") {
				t.Errorf("PlanText without Color wrote an escape sequence:\n%s", got)
			}
			if got := renderPlan(t, "txt", p, render.Options{Color: true}); !strings.Contains(got, "\x1b[1m") {
				t.Errorf("PlanText with Color wrote no bold header:\n%s", got)
			}
		})
	}
}

func TestRenderSecretsHidden(t *testing.T) {
	type attrs map[string]any // a named map type, as resources.Attrs is
	cases := renderCases()
	cases["odd shapes"] = &plan.Plan{
		Changes: []plan.Change{{
			Addr: "x", Type: endpointType, Kind: kind.Resource, Action: plan.Update,
			Before: obj{"p": &value.Secret{Value: secretValue}, "n": attrs{"s": value.Secret{Value: secretValue}}},
			After: obj{
				"p": attrs{"deep": []attrs{{"s": &value.Secret{Value: secretValue}}}},
				"n": attrs{"s": value.Secret{Value: value.Secret{Value: secretValue}}},
				"l": []any{value.Secret{Value: list{secretValue}}},
			},
		}},
		Outputs: obj{"o": attrs{"s": &value.Secret{Value: secretValue}}},
	}
	for name, p := range cases {
		for format := range renderers {
			for _, color := range []bool{false, true} {
				got := renderPlan(t, format, p, render.Options{Color: color})
				if strings.Contains(got, secretValue) {
					t.Errorf("%s (case %q, color %v) shows the secret:\n%s", format, name, color, got)
				}
			}
		}
	}
}

func TestRenderJSONDecodes(t *testing.T) {
	got := renderPlan(t, "json", allActionsPlan(), render.Options{Version: "1.2.3"})
	var doc struct {
		FormatVersion    string `json:"format_version"`
		ReconcileVersion string `json:"reconcile_version"`
		HasChanges       bool   `json:"has_changes"`
		Summary          map[string]int
		Changes          []struct {
			Address, Action string
			Position        string
		}
		Outputs map[string]struct {
			Value              any
			Unknown, Sensitive bool
		}
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("PlanJSON wrote invalid JSON: %v\n%s", err, got)
	}
	if doc.FormatVersion != "1.4" || doc.ReconcileVersion != "1.2.3" || !doc.HasChanges {
		t.Errorf("format_version %q, reconcile_version %q, has_changes %v; want %q, %q, true",
			doc.FormatVersion, doc.ReconcileVersion, doc.HasChanges, "1.4", "1.2.3")
	}
	wantSummary := map[string]int{"no-op": 1, "create": 1, "update": 1, "replace": 1, "delete": 1, "read": 2, "import": 1, "forget": 1, "refresh": 0}
	if fmt.Sprint(doc.Summary) != fmt.Sprint(wantSummary) {
		t.Errorf("summary = %v, want %v", doc.Summary, wantSummary)
	}
	if len(doc.Changes) != 9 || doc.Changes[3].Address != "new" || doc.Changes[3].Position != "site.yaml:3:3" {
		t.Errorf("changes = %+v, want all 9 in plan order, the 4th \"new\" at site.yaml:3:3", doc.Changes)
	}
	if o := doc.Outputs["endpointId"]; o.Value != nil || !o.Unknown || o.Sensitive {
		t.Errorf("outputs.endpointId = %+v, want null, unknown", o)
	}
	if o := doc.Outputs["apiKey"]; o.Value != nil || o.Unknown || !o.Sensitive {
		t.Errorf("outputs.apiKey = %+v, want null, sensitive", o)
	}
}

func TestRenderJSONPaths(t *testing.T) {
	got := renderPlan(t, "json", &plan.Plan{Changes: []plan.Change{updateEndpoint(), createEndpoint()}}, render.Options{})
	var doc struct {
		Changes []struct {
			BeforeSensitive []string `json:"before_sensitive"`
			AfterUnknown    []string `json:"after_unknown"`
			AfterSensitive  []string `json:"after_sensitive"`
		}
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct{ beforeSensitive, afterUnknown, afterSensitive []string }{
		{[]string{"/apiKey", "/plainOnce", "/token"}, []string{"/lifecycleState"}, []string{"/apiKey", "/plainOnce", "/token"}},
		{[]string{}, []string{"/config/pending/0", "/id"}, []string{"/apiKey", "/config/routes/1/token"}},
	} {
		c := doc.Changes[i]
		if !slices.Equal(c.BeforeSensitive, want.beforeSensitive) || !slices.Equal(c.AfterUnknown, want.afterUnknown) || !slices.Equal(c.AfterSensitive, want.afterSensitive) {
			t.Errorf("change %d: before_sensitive %q, after_unknown %q, after_sensitive %q; want %q, %q, %q",
				i, c.BeforeSensitive, c.AfterUnknown, c.AfterSensitive, want.beforeSensitive, want.afterUnknown, want.afterSensitive)
		}
	}
}

// manyChanges returns a plan of n changes where every destructiveEvery-th
// one deletes or replaces, alternately.
func manyChanges(n, destructiveEvery int) (*plan.Plan, []string) {
	p := &plan.Plan{}
	var destructive []string
	for i := range n {
		c := plan.Change{
			Addr: fmt.Sprintf("endpoint%04d", i), Type: endpointType, Kind: kind.Resource, Action: plan.Create,
			After: obj{"displayName": fmt.Sprintf("endpoint %d", i), "inferenceUnits": int64(i % 7), "tags": obj{"n": int64(i)}},
		}
		if i%destructiveEvery == 0 {
			c.Action, c.Before, c.After = plan.Delete, c.After, nil
			if i%(2*destructiveEvery) == 0 {
				c.Action, c.After = plan.Replace, obj{"displayName": "new"}
				c.ReplacePaths = []string{"displayName"}
			}
			destructive = append(destructive, c.Addr)
		}
		p.Changes = append(p.Changes, c)
	}
	return p, destructive
}

// warningSection returns the lines of the Markdown warning alert.
func warningSection(t *testing.T, md string) string {
	t.Helper()
	start := strings.Index(md, "> [!WARNING]")
	if start < 0 {
		t.Fatalf("no warning section in:\n%.2000s", md)
	}
	end := strings.Index(md[start:], "\n\n")
	return md[start : start+end]
}

func TestRenderMarkdownSize(t *testing.T) {
	for name, tc := range map[string]struct {
		changes, destructiveEvery int
		listed                    bool // every destructive address is in the warning
	}{
		"some destructive":  {changes: 5000, destructiveEvery: 10, listed: true},
		"all destructive":   {changes: 5000, destructiveEvery: 1},
		"fits, not omitted": {changes: 20, destructiveEvery: 4, listed: true},
	} {
		t.Run(name, func(t *testing.T) {
			p, destructive := manyChanges(tc.changes, tc.destructiveEvery)
			md := renderPlan(t, "md", p, render.Options{})
			if len(md) >= 65535 {
				t.Fatalf("PlanMarkdown of %d changes wrote %d bytes, want under 65535", tc.changes, len(md))
			}
			warning := warningSection(t, md)
			if tc.listed {
				for _, addr := range destructive {
					if !strings.Contains(warning, "<code>"+addr+"</code>") {
						t.Fatalf("warning section does not name %q:\n%s", addr, warning)
					}
				}
			} else if want := fmt.Sprintf("%d objects", len(destructive)); !strings.Contains(warning, want) {
				t.Errorf("warning section does not say %q:\n%s", want, warning)
			}
			omitted := strings.Contains(md, "Run `reconcile plan` for the full text.")
			if omitted != (tc.changes > 100) {
				t.Errorf("note about omitted details present: %v, want %v", omitted, tc.changes > 100)
			}
		})
	}
}

func TestRenderMarkdownEscapes(t *testing.T) {
	md := renderPlan(t, "md", escapingPlan(), render.Options{})
	outside := regexp.MustCompile("(?s)\n(`{3,})[a-z]*\n.*?\n`{3,}\n").ReplaceAllString(md, "\n")
	for _, bad := range []string{"<img", "<script", "[link]", "*bold*", "\x1b", "\n`", "web|"} {
		if strings.Contains(outside, bad) {
			t.Errorf("markdown outside code blocks contains %q:\n%s", bad, outside)
		}
	}
	for _, l := range strings.Split(outside, "\n") {
		if strings.HasPrefix(l, "| ") && strings.Count(l, "|") != 4 {
			t.Errorf("table row %q does not have 3 cells", l)
		}
	}
	if strings.Count(outside, "<details>") != strings.Count(outside, "</details>") {
		t.Errorf("unbalanced <details> in:\n%s", md)
	}
}

// TestRenderJSONDocExample keeps the example in docs/plan-json.md true: it
// renders the plan the example describes and compares.
func TestRenderJSONDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "plan-json.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, example, ok := strings.Cut(string(doc), "## Example\n")
	_, example, ok2 := strings.Cut(example, "```json\n")
	example, _, ok3 := strings.Cut(example, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/plan-json.md has no ```json block under ## Example")
	}
	principal := list{"role:00000000-0000-0000-0000-000000000001"}
	bindings := list{obj{"relation": "editor", "principals": principal}}
	live := list{obj{"relation": "editor", "principals": principal},
		obj{"relation": "viewer", "principals": list{"role:00000000-0000-0000-0000-000000000002"}}}
	p := &plan.Plan{
		Lineage: "6f1c2d3e-0000-4000-8000-000000000001", Serial: 17, SpecHash: "sha256:0123abcd",
		Changes: []plan.Change{{
			Addr: "dashboardPolicy", Type: policyType, Kind: kind.Resource, Action: plan.Replace,
			Reason: plan.ReasonCannotUpdate,
			ID:     "dashboard:abc-def-ghi", ReplacePaths: []string{"resourceId"},
			Pos:         diag.Pos{File: "site.yaml", Line: 14, Col: 3},
			Before:      obj{"resourceId": "dashboard:abc-def-ghi", "bindings": live, "id": "dashboard:abc-def-ghi"},
			After:       obj{"resourceId": "dashboard:xyz", "bindings": bindings, "id": value.Unknown{}},
			Drift:       []plan.FieldDrift{{Path: "bindings", Applied: bindings, Live: live}},
			DriftAccess: []plan.AccessChange{{Resource: "dashboard:abc-def-ghi", Role: "viewer", Member: "role:00000000-0000-0000-0000-000000000002", Added: true}},
			Access:      []plan.AccessChange{{Resource: "dashboard:xyz", Role: "editor", Member: "role:00000000-0000-0000-0000-000000000001", Added: true}},
		}},
		Outputs: obj{"policyId": value.Unknown{}, "apiKey": value.Secret{Value: secretValue}},
	}
	if got := renderPlan(t, "json", p, render.Options{Version: "0.1.0"}); got != example {
		t.Errorf("the example in docs/plan-json.md is not what PlanJSON writes; PlanJSON wrote:\n%s", got)
	}
}
