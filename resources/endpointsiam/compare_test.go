package endpointsiam_test

import (
	"context"
	"slices"
	"testing"

	servicemanagement "google.golang.org/api/servicemanagement/v1"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
)

// comparers returns both lookups as the engine finds their capability: by a
// type assertion on the resources.Function the constructors return.
func comparers(t *testing.T, cfg endpointsiam.Config) map[string]resources.ResultComparer {
	t.Helper()
	out := map[string]resources.ResultComparer{}
	for name, fn := range map[string]resources.Function{
		endpointsiam.ServiceIamPolicyToken:   endpointsiam.NewServiceIamPolicy(cfg),
		endpointsiam.ConsumersIamPolicyToken: endpointsiam.NewConsumersIamPolicy(cfg),
	} {
		c, ok := fn.(resources.ResultComparer)
		if !ok {
			t.Fatalf("%s: %T is not a resources.ResultComparer", name, fn)
		}
		out[name] = c
	}
	return out
}

const viewerA = `{"bindings":[{"members":["user:a@x"],"role":"roles/viewer"}]}`

func TestEqualResultField(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		field string
		a, b  any
		want  bool
	}{
		"same text":            {"policyData", viewerA, viewerA, true},
		"member repeated":      {"policyData", viewerA, `{"bindings":[{"members":["user:a@x","user:a@x"],"role":"roles/viewer"}]}`, true},
		"other layout":         {"policyData", viewerA, `{ "bindings": [ { "role": "roles/viewer", "members": ["user:a@x"] } ] }`, true},
		"members in any order": {"policyData", `{"bindings":[{"members":["user:a@x","user:b@x"],"role":"roles/viewer"}]}`, `{"bindings":[{"members":["user:b@x","user:a@x"],"role":"roles/viewer"}]}`, true},
		"bindings in any order": {"policyData",
			`{"bindings":[{"members":["user:a@x"],"role":"roles/editor"},{"members":["user:b@x"],"role":"roles/viewer"}]}`,
			`{"bindings":[{"members":["user:b@x"],"role":"roles/viewer"},{"members":["user:a@x"],"role":"roles/editor"}]}`, true},
		"binding without members": {"policyData", `{"bindings":[{"members":[],"role":"roles/viewer"}]}`, `{}`, true},
		"audit configs in any order": {"policyData",
			`{"auditConfigs":[{"service":"allServices"},{"service":"a.example"}]}`,
			`{"auditConfigs":[{"service":"a.example"},{"service":"allServices"}]}`, true},
		"member added":         {"policyData", viewerA, `{"bindings":[{"members":["user:a@x","user:b@x"],"role":"roles/viewer"}]}`, false},
		"member moved to role": {"policyData", viewerA, `{"bindings":[{"members":["user:a@x"],"role":"roles/editor"}]}`, false},
		"condition added": {"policyData", viewerA,
			`{"bindings":[{"condition":{"expression":"true","title":"t"},"members":["user:a@x"],"role":"roles/viewer"}]}`, false},
		"audit config changed":           {"policyData", `{"auditConfigs":[{"service":"allServices"}]}`, `{"auditConfigs":[{"service":"a.example"}]}`, false},
		"same text not JSON":             {"policyData", "not json", "not json", true},
		"not JSON, as text":              {"policyData", "not json", "{}", false},
		"JSON of another shape, as text": {"policyData", `{"bindings":{}}`, `{"bindings": {}}`, false},
		"not text":                       {"policyData", nil, "{}", false},
		"neither text":                   {"policyData", nil, nil, true},
		"etag changed":                   {"etag", "BwX1", "BwX2", false},
		"etag the same":                  {"etag", "BwX1", "BwX1", true},
		"numbers by value":               {"other", int64(1), float64(1), true},
	} {
		for token, c := range comparers(t, endpointsiam.Config{}) {
			if got := c.EqualResultField(tc.field, tc.a, tc.b); got != tc.want {
				t.Errorf("%s: %s EqualResultField(%q, %#v, %#v) = %v, want %v", name, token, tc.field, tc.a, tc.b, got, tc.want)
			}
			if got := c.EqualResultField(tc.field, tc.b, tc.a); got != tc.want {
				t.Errorf("%s: %s EqualResultField(%q, %#v, %#v) (swapped) = %v, want %v", name, token, tc.field, tc.b, tc.a, got, tc.want)
			}
		}
	}
}

func TestDescribeResultChange(t *testing.T) {
	t.Parallel()
	const consumerRole = "roles/servicemanagement.serviceConsumer"
	for name, tc := range map[string]struct {
		before, after any // policyData; a missing one when nil
		want          []string
	}{
		"members added": {viewerA, `{"bindings":[{"members":["user:b@x","user:a@x","user:c@x"],"role":"roles/viewer"}]}`,
			[]string{"binding roles/viewer: +user:b@x +user:c@x"}},
		"one removed, one added": {
			`{"bindings":[{"members":["group:orders-clients@acme.example","user:alice@acme.example"],"role":"` + consumerRole + `"}]}`,
			`{"bindings":[{"members":["group:orders-clients@acme.example","user:mallory@evil.example"],"role":"` + consumerRole + `"}]}`,
			[]string{"binding " + consumerRole + ": -user:alice@acme.example +user:mallory@evil.example"}},
		"removed members first, each sorted": {
			`{"bindings":[{"members":["user:d@x","user:c@x","user:a@x"],"role":"roles/viewer"}]}`,
			`{"bindings":[{"members":["user:z@x","user:a@x","user:b@x"],"role":"roles/viewer"}]}`,
			[]string{"binding roles/viewer: -user:c@x -user:d@x +user:b@x +user:z@x"}},
		"one line per role, roles sorted": {
			`{"bindings":[{"members":["user:a@x"],"role":"roles/viewer"},{"members":["user:a@x"],"role":"roles/browser"}]}`,
			`{"bindings":[{"members":["user:a@x"],"role":"roles/editor"},{"members":["user:a@x"],"role":"roles/browser"}]}`,
			[]string{"binding roles/editor: +user:a@x", "binding roles/viewer: -user:a@x"}},
		"from an empty policy": {"{}", viewerA, []string{"binding roles/viewer: +user:a@x"}},
		"to an empty policy":   {viewerA, "{}", []string{"binding roles/viewer: -user:a@x"}},
		"equal by meaning":     {viewerA, `{"bindings":[{"members":["user:a@x","user:a@x"],"role":"roles/viewer"}]}`, nil},
		"conditions alone": {viewerA,
			`{"bindings":[{"condition":{"expression":"true","title":"t"},"members":["user:a@x"],"role":"roles/viewer"}]}`, nil},
		"audit configs alone": {viewerA, `{"auditConfigs":[{"service":"allServices"}],"bindings":[{"members":["user:a@x"],"role":"roles/viewer"}]}`, nil},
		"before not JSON":     {"not json", viewerA, []string{"binding roles/viewer: +user:a@x"}},
		"policyData missing":  {nil, viewerA, nil},
		"policyData not text": {int64(1), viewerA, nil},
	} {
		before := resources.Attrs{"id": "services/s", "etag": "BwX1"}
		after := resources.Attrs{"id": "services/s", "etag": "BwX2"}
		if tc.before != nil {
			before["policyData"] = tc.before
		}
		if tc.after != nil {
			after["policyData"] = tc.after
		}
		for token, c := range comparers(t, endpointsiam.Config{}) {
			// Maps iterate in another order every time: the lines must not.
			for range 5 {
				if got := c.DescribeResultChange(before, after); !slices.Equal(got, tc.want) {
					t.Errorf("%s: %s DescribeResultChange = %q, want %q", name, token, got, tc.want)
					break
				}
			}
		}
	}
}

// TestCompareLiveResults reads each lookup's result from the emulator over
// HTTP, rewrites the policy as another user of the API would, reads it
// again and compares: the same bindings in another order are no change
// of policyData (its etag changes all the same); a member swapped is, and
// DescribeResultChange names it.
func TestCompareLiveResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := t.Context()
	svc := e.sdk(t)
	const consumerRole = "roles/servicemanagement.serviceConsumer"
	cmp := comparers(t, e.config())
	for token, tc := range map[string]struct {
		fn   resources.Function
		args resources.Attrs
		set  func(context.Context, *servicemanagement.SetIamPolicyRequest) error
		// base is the policy first set, reordered the same in another
		// order, swapped base with one member of consumerRole replaced,
		// from by to.
		base, reordered, swapped []*servicemanagement.Binding
		from, to                 string
	}{
		endpointsiam.ServiceIamPolicyToken: {
			fn:   endpointsiam.NewServiceIamPolicy(e.config()),
			args: resources.Attrs{"serviceName": orders},
			set: func(ctx context.Context, r *servicemanagement.SetIamPolicyRequest) error {
				_, err := svc.Services.SetIamPolicy("services/"+orders, r).Context(ctx).Do()
				return err
			},
			base: []*servicemanagement.Binding{
				{Role: consumerRole, Members: []string{"group:orders-clients@acme.example", "user:alice@acme.example"}},
				{Role: "roles/servicemanagement.serviceController", Members: []string{"serviceAccount:orders-esp@acme-prod.iam.gserviceaccount.com"}},
			},
			reordered: []*servicemanagement.Binding{
				{Role: "roles/servicemanagement.serviceController", Members: []string{"serviceAccount:orders-esp@acme-prod.iam.gserviceaccount.com"}},
				{Role: consumerRole, Members: []string{"user:alice@acme.example", "group:orders-clients@acme.example"}},
			},
			swapped: []*servicemanagement.Binding{
				{Role: consumerRole, Members: []string{"group:orders-clients@acme.example", "user:mallory@evil.example"}},
				{Role: "roles/servicemanagement.serviceController", Members: []string{"serviceAccount:orders-esp@acme-prod.iam.gserviceaccount.com"}},
			},
			from: "user:alice@acme.example", to: "user:mallory@evil.example",
		},
		endpointsiam.ConsumersIamPolicyToken: {
			fn:   endpointsiam.NewConsumersIamPolicy(e.config()),
			args: resources.Attrs{"serviceName": orders, "consumerProject": consumer},
			set: func(ctx context.Context, r *servicemanagement.SetIamPolicyRequest) error {
				_, err := svc.Services.Consumers.SetIamPolicy("services/"+orders+"/consumers/"+consumer, r).Context(ctx).Do()
				return err
			},
			base: []*servicemanagement.Binding{
				{Role: consumerRole, Members: []string{"serviceAccount:checkout@acme-consumer.iam.gserviceaccount.com", "user:carol@acme.example"}},
			},
			reordered: []*servicemanagement.Binding{
				{Role: consumerRole, Members: []string{"user:carol@acme.example", "serviceAccount:checkout@acme-consumer.iam.gserviceaccount.com"}},
			},
			swapped: []*servicemanagement.Binding{
				{Role: consumerRole, Members: []string{"serviceAccount:billing@acme-consumer.iam.gserviceaccount.com", "user:carol@acme.example"}},
			},
			from: "serviceAccount:checkout@acme-consumer.iam.gserviceaccount.com", to: "serviceAccount:billing@acme-consumer.iam.gserviceaccount.com",
		},
	} {
		c := cmp[token]
		read := func() resources.Attrs {
			t.Helper()
			got, err := tc.fn.Invoke(ctx, tc.args)
			if err != nil {
				t.Fatalf("%s: Invoke(%v): %v", token, tc.args, err)
			}
			return resources.CanonAttrs(got)
		}
		set := func(bindings []*servicemanagement.Binding) {
			t.Helper()
			if err := tc.set(ctx, &servicemanagement.SetIamPolicyRequest{Policy: &servicemanagement.Policy{Bindings: bindings}}); err != nil {
				t.Fatalf("%s: setIamPolicy: %v", token, err)
			}
		}
		set(tc.base)
		before := read()
		set(tc.reordered)
		same := read()
		if before["policyData"] == same["policyData"] {
			t.Fatalf("%s: the reordered policy reads back as the same text %v", token, same["policyData"])
		}
		if c.EqualResultField("etag", before["etag"], same["etag"]) {
			t.Errorf("%s: the etag %v did not change", token, same["etag"])
		}
		if !c.EqualResultField("policyData", before["policyData"], same["policyData"]) {
			t.Errorf("%s: policyData\n%v\nand\n%v\ncompare different, want equal", token, before["policyData"], same["policyData"])
		}
		if lines := c.DescribeResultChange(before, same); lines != nil {
			t.Errorf("%s: DescribeResultChange of a reordered policy = %q, want none", token, lines)
		}

		set(tc.swapped)
		changed := read()
		if c.EqualResultField("policyData", before["policyData"], changed["policyData"]) {
			t.Errorf("%s: policyData\n%v\nand\n%v\ncompare equal, want different", token, before["policyData"], changed["policyData"])
		}
		want := []string{"binding " + consumerRole + ": -" + tc.from + " +" + tc.to}
		if got := c.DescribeResultChange(before, changed); !slices.Equal(got, want) {
			t.Errorf("%s: DescribeResultChange = %q, want %q", token, got, want)
		}
		back := []string{"binding " + consumerRole + ": -" + tc.to + " +" + tc.from}
		if got := c.DescribeResultChange(changed, before); !slices.Equal(got, back) {
			t.Errorf("%s: DescribeResultChange back = %q, want %q", token, got, back)
		}
	}
}
