package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// gcpPolicy is an IAM policy as the emulator answers it in version 3.
type gcpPolicy struct {
	Version  int `json:"version"`
	Bindings []struct {
		Role      string         `json:"role"`
		Members   []string       `json:"members"`
		Condition map[string]any `json:"condition"`
	} `json:"bindings"`
	Etag string `json:"etag"`
}

// iamPolicy reads the IAM policy of resource ("services/S[/consumers/C]")
// straight from the emulator, in version 3.
func (e *emu) iamPolicy(resource string) gcpPolicy {
	e.t.Helper()
	var p gcpPolicy
	e.do("POST", "/v1/"+resource+":getIamPolicy", map[string]any{"options": map[string]any{"requestedPolicyVersion": 3}},
		map[string]string{"Authorization": "Bearer " + e.secrets["GOOGLE_OAUTH_ACCESS_TOKEN"]}, &p)
	return p
}

// grant adds member to role in the IAM policy of resource, as someone
// working in the console would: read-modify-write with the etag.
func (e *emu) grant(resource, role, member string) {
	e.t.Helper()
	p := e.iamPolicy(resource)
	var bindings []map[string]any
	added := false
	for _, b := range p.Bindings {
		m := map[string]any{"role": b.Role, "members": b.Members}
		if b.Condition != nil {
			m["condition"] = b.Condition
		}
		if b.Role == role && b.Condition == nil && !added {
			m["members"] = append(slices.Clone(b.Members), member)
			added = true
		}
		bindings = append(bindings, m)
	}
	if !added {
		bindings = append(bindings, map[string]any{"role": role, "members": []string{member}})
	}
	e.do("POST", "/v1/"+resource+":setIamPolicy",
		map[string]any{"policy": map[string]any{"version": 3, "etag": p.Etag, "bindings": bindings}},
		map[string]string{"Authorization": "Bearer " + e.secrets["GOOGLE_OAUTH_ACCESS_TOKEN"]}, nil)
}

// members returns the members of role without condition.
func (p gcpPolicy) members(role string) []string {
	var out []string
	for _, b := range p.Bindings {
		if b.Role == role && b.Condition == nil {
			out = append(out, b.Members...)
		}
	}
	slices.Sort(out)
	return out
}

const iamSpec = `variables:
  ordersAccess:
    fn::invoke:
      function: gcp:organizations:getIAMPolicy
      arguments:
        bindings:
          - role: roles/servicemanagement.serviceConsumer
            members: [user:jane@acme.example, group:orders-clients@acme.example]
          - role: roles/viewer
            members: [user:audit@acme.example]
            condition:
              title: until 2030
              expression: request.time < timestamp("2030-01-01T00:00:00Z")
resources:
  ordersPolicy:
    type: gcp:endpoints:ServiceIamPolicy
    properties:
      serviceName: orders.endpoints.acme-prod.cloud.goog
      policyData: ${ordersAccess.policyData}
  checkoutController:
    type: gcp:endpoints:ConsumersIamMember
    properties:
      service_name: orders.endpoints.acme-prod.cloud.goog
      consumer_project: acme-consumer
      role: roles/servicemanagement.serviceController
      member: serviceAccount:checkout@acme-consumer.iam.gserviceaccount.com
outputs:
  policyEtag: ${ordersPolicy.etag}
`

// TestE2EIamPolicyAndMember applies a policy built by getIAMPolicy to a
// service and adds a member to a consumer's policy: the next plan is
// clean, a grant made outside reconcile is drift naming the member, the
// next apply takes it away, and destroy leaves nothing of reconcile's.
func TestE2EIamPolicyAndMember(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	w.write("main.yaml", iamSpec)
	const (
		orders   = "services/orders.endpoints.acme-prod.cloud.goog"
		consumer = orders + "/consumers/acme-consumer"
		useRole  = "roles/servicemanagement.serviceConsumer"
		ctlRole  = "roles/servicemanagement.serviceController"
		checkout = "serviceAccount:checkout@acme-consumer.iam.gserviceaccount.com"
	)
	seededConsumer := e.iamPolicy(consumer)

	w.must(0, "validate")
	r := w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "Apply complete! 2 created", "ordersPolicy: Creation complete", "checkoutController: Creation complete")
	p := e.iamPolicy(orders)
	if got := p.members(useRole); !slices.Equal(got, []string{"group:orders-clients@acme.example", "user:jane@acme.example"}) || len(p.Bindings) != 2 || p.Version != 3 {
		t.Errorf("policy of %s = %+v: want exactly the two bindings of the spec, in version 3", orders, p)
	}
	wantOutput(t, r, "policyEtag", p.Etag)
	c := e.iamPolicy(consumer)
	if got := c.members(ctlRole); !slices.Equal(got, []string{checkout}) || !slices.Equal(c.members(useRole), seededConsumer.members(useRole)) {
		t.Errorf("policy of %s = %+v: want the member added and the seeded binding kept", consumer, c)
	}
	n := w.stateShow("checkoutController")
	if n.ID != consumer+" "+ctlRole+" "+checkout || n.Inputs["consumerProject"] != consumer {
		t.Errorf("state show checkoutController: id %q inputs %v", n.ID, n.Inputs)
	}

	// Nothing to do, and nothing written to find that out.
	mark := e.mark()
	r = w.must(0, "plan", "--detailed-exitcode")
	wantStdout(t, r, "No changes")
	if calls := e.callsSince(mark, ":setIamPolicy"); len(calls) != 0 {
		t.Errorf("plan wrote IAM policies: %v", calls)
	}
	w.must(0, "drift")

	// Someone grants a role in the console.
	e.grant(orders, useRole, "user:mallory@evil.example")
	r = w.must(2, "drift")
	wantStdout(t, r, "ordersPolicy (gcp:endpoints:ServiceIamPolicy) was changed outside reconcile",
		"# access to "+orders+": removed (-) and added (+) outside reconcile since the last apply",
		"+ "+useRole+"  user:mallory@evil.example", "Drift: 1 changed")
	d := w.driftJSON(2)
	if len(d.Items) != 1 || d.Items[0].Address != "ordersPolicy" || !slices.Contains(d.Items[0].Details, "binding "+useRole+": +user:mallory@evil.example") ||
		len(d.Items[0].AccessChanges) != 1 || d.Items[0].AccessChanges[0].Member != "user:mallory@evil.example" || d.Items[0].AccessChanges[0].Change != "added" {
		t.Errorf("drift --output json = %+v, want ordersPolicy with the member named", d.Items)
	}
	// The plan shows the drift member by member, then that the update
	// takes the member away, and counts it.
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "+ "+useRole+"  user:mallory@evil.example", "ordersPolicy (gcp:endpoints:ServiceIamPolicy) will be updated in place",
		"# access to "+orders+" (its live policy, read now): the apply removes (-) and adds (+)",
		"- "+useRole+"  user:mallory@evil.example", "1 to update (removes 1 member)")
	w.must(0, "apply", "--auto-approve")
	if got := e.iamPolicy(orders).members(useRole); slices.Contains(got, "user:mallory@evil.example") {
		t.Errorf("members of %s after apply = %v: the grant made outside reconcile stays", useRole, got)
	}
	w.must(0, "drift")
	w.must(0, "plan", "--detailed-exitcode")

	// A member revoked outside reconcile is deleted outside; apply grants it again.
	e.do("POST", "/v1/"+consumer+":setIamPolicy",
		map[string]any{"policy": map[string]any{"bindings": []map[string]any{{"role": useRole, "members": seededConsumer.members(useRole)}}}},
		map[string]string{"Authorization": "Bearer " + e.secrets["GOOGLE_OAUTH_ACCESS_TOKEN"]}, nil)
	r = w.must(2, "drift")
	wantStdout(t, r, "checkoutController (gcp:endpoints:ConsumersIamMember) was deleted outside reconcile")
	w.must(0, "apply", "--auto-approve")
	if got := e.iamPolicy(consumer).members(ctlRole); !slices.Equal(got, []string{checkout}) {
		t.Errorf("members of %s after apply = %v, want %s again", ctlRole, got, checkout)
	}

	r = w.must(0, "destroy", "--auto-approve")
	wantStdout(t, r, "2 destroyed")
	if p := e.iamPolicy(orders); len(p.Bindings) != 0 {
		t.Errorf("policy of %s after destroy = %+v, want it cleared", orders, p)
	}
	c = e.iamPolicy(consumer)
	if len(c.Bindings) != 1 || !slices.Equal(c.members(useRole), seededConsumer.members(useRole)) {
		t.Errorf("policy of %s after destroy = %+v, want the seeded binding alone", consumer, c)
	}
	if st := w.stateList(); len(st) != 0 {
		t.Errorf("state after destroy: %v", st)
	}
}

// TestE2EIamConflictRefused checks that validate refuses a policy together
// with a member of the same service, at the member's position.
func TestE2EIamConflictRefused(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	head, tail, _ := strings.Cut(iamSpec, "outputs:")
	w.write("main.yaml", head+`  extra:
    type: gcp:endpoints:ServiceIamMember
    properties:
      serviceName: services/orders.endpoints.acme-prod.cloud.goog
      role: roles/viewer
      member: user:bob@acme.example
outputs:`+tail)
	line := strings.Count(head, "\n") + 1
	r := w.must(1, "validate")
	wantStderr(t, r, "main.yaml:"+strconv.Itoa(line)+":3: error: resource \"extra\" (gcp:endpoints:ServiceIamMember) and resource \"ordersPolicy\" (gcp:endpoints:ServiceIamPolicy) both write the IAM policy")
	r = w.must(1, "plan")
	wantStderr(t, r, "both write the IAM policy")
}

// TestE2EIamConflictKnownLater: a ServiceIamPolicy and a ServiceIamBinding
// of one service, whose names are not literals, are refused as soon as
// the names are known: at validate when they come from config (the usual
// case) or the stack's name, at plan when one comes from a lookup; either
// way before anything is written, so that no apply exits 0 with the two
// undoing each other.
func TestE2EIamConflictKnownLater(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	const binding = `  viewers:
    type: gcp:endpoints:ServiceIamBinding
    properties:
      serviceName: %s
      role: roles/viewer
      members: [user:bob@acme.example]
`
	const policy = `  whole:
    type: gcp:endpoints:ServiceIamPolicy
    properties:
      serviceName: %s
      policyData: '{"bindings":[{"role":"roles/owner","members":["user:alice@acme.example"]}]}'
`
	for name, tc := range map[string]struct {
		spec     string
		validate int // validate's exit status
	}{
		"config": {spec: `config:
  service:
    type: string
    default: orders.endpoints.acme-prod.cloud.goog
resources:
` + fmt.Sprintf(policy, "${service}") + fmt.Sprintf(binding, "services/${service}"), validate: 1},
		"stack name": {spec: "resources:\n" + fmt.Sprintf(policy, "${pulumi.stack}.endpoints.acme-prod.cloud.goog") +
			fmt.Sprintf(binding, "default.endpoints.acme-prod.cloud.goog"), validate: 1},
		"lookup": {spec: `variables:
  svc:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: orders.endpoints.acme-prod.cloud.goog
resources:
` + fmt.Sprintf(policy, "${svc.id}") + fmt.Sprintf(binding, "orders.endpoints.acme-prod.cloud.goog"), validate: 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWS(t, e)
			w.write("main.yaml", tc.spec)
			const want = `resource "viewers" (gcp:endpoints:ServiceIamBinding) and resource "whole" (gcp:endpoints:ServiceIamPolicy) both write the IAM policy`
			r := w.must(tc.validate, "validate")
			if tc.validate == 1 {
				wantStderr(t, r, want)
			}
			mark := e.mark()
			r = w.must(1, "apply", "--auto-approve")
			wantStderr(t, r, want)
			if calls := e.callsSince(mark, ":setIamPolicy"); len(calls) != 0 {
				t.Errorf("the refused apply wrote %v", calls)
			}
		})
	}
}

// TestE2EIamBindingDrift: a binding's members changed outside reconcile
// (one revoked, one granted) are drift naming both, in text and JSON, and
// the next apply puts the binding back as the specs say.
func TestE2EIamBindingDrift(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	const (
		consumer = "services/inventory.endpoints.acme-prod.cloud.goog/consumers/acme-consumer"
		role     = "roles/viewer"
	)
	w.write("main.yaml", `resources:
  viewers:
    type: gcp:endpoints:ConsumersIamBinding
    properties:
      serviceName: inventory.endpoints.acme-prod.cloud.goog
      consumerProject: acme-consumer
      role: roles/viewer
      members: [user:bob@acme.example, user:carol@acme.example]
`)
	w.must(0, "apply", "--auto-approve")
	w.must(0, "drift")

	// Someone revokes bob and grants eve in the console.
	p := e.iamPolicy(consumer)
	var bindings []map[string]any
	for _, b := range p.Bindings {
		members := b.Members
		if b.Role == role {
			members = []string{"user:carol@acme.example", "user:eve@acme.example"}
		}
		bindings = append(bindings, map[string]any{"role": b.Role, "members": members})
	}
	e.do("POST", "/v1/"+consumer+":setIamPolicy", map[string]any{"policy": map[string]any{"etag": p.Etag, "bindings": bindings}},
		map[string]string{"Authorization": "Bearer " + e.secrets["GOOGLE_OAUTH_ACCESS_TOKEN"]}, nil)

	const line = "binding " + role + ": -user:bob@acme.example +user:eve@acme.example"
	r := w.must(2, "drift")
	wantStdout(t, r, "viewers (gcp:endpoints:ConsumersIamBinding) was changed outside reconcile",
		"# access to "+consumer+": removed (-) and added (+) outside reconcile since the last apply",
		"- "+role+"  user:bob@acme.example", "+ "+role+"  user:eve@acme.example", "Drift: 1 changed")
	d := w.driftJSON(2)
	if len(d.Items) != 1 || d.Items[0].Address != "viewers" || !slices.Equal(d.Items[0].Details, []string{line}) || len(d.Items[0].AccessChanges) != 2 ||
		d.Items[0].AccessChanges[0].Change != "removed" || d.Items[0].AccessChanges[1].Member != "user:eve@acme.example" || d.Items[0].AccessChanges[1].Resource != consumer {
		t.Errorf("drift --output json = %+v, want viewers with details [%q] and the two members", d.Items, line)
	}
	w.must(0, "apply", "--auto-approve")
	if got := e.iamPolicy(consumer).members(role); !slices.Equal(got, []string{"user:bob@acme.example", "user:carol@acme.example"}) {
		t.Errorf("members of %s after apply = %v, want bob and carol again", role, got)
	}
	w.must(0, "drift")
}
