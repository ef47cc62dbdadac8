package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
)

const (
	consumerRole   = "roles/servicemanagement.serviceConsumer"
	controllerRole = "roles/servicemanagement.serviceController"
	// caller is the emulator's GCP caller as an IAM member.
	caller = "serviceAccount:" + gcp.Caller
)

// docsBlock returns the first fenced block of info string info under the
// heading of docs/NAME.md.
func docsBlock(t *testing.T, name, heading, info string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	_, block, ok2 := strings.Cut(section, "```"+info+"\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("docs/%s has no ```%s block under %q", name, info, heading)
	}
	return block
}

// accessDoc is what these tests read of 'plan --output json'.
type accessDoc struct {
	FormatVersion    string `json:"format_version"`
	AllowSelfLockout bool   `json:"allow_self_lockout"`
	Changes          []struct {
		Address       string `json:"address"`
		Action        string `json:"action"`
		AccessChanges []struct {
			Resource, Role, Condition, Member, Change string
		} `json:"access_changes"`
		SelfLockouts []struct {
			Resource, Role, Caller, Member string
		} `json:"self_lockouts"`
	} `json:"changes"`
}

func decodeAccess(t *testing.T, r result) accessDoc {
	t.Helper()
	var d accessDoc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("plan --output json: %v\n%s", err, r)
	}
	return d
}

// TestE2EIamExampleShowsRemovals plans the IAM example of docs/types.md
// (the one the README points to) on the emulator, whose orders service
// grants more than the example's policy: the plan, in text, Markdown and
// JSON, names each member the create takes away (alice, and the ESP
// service account's serviceController binding, which the API it serves
// needs) and counts them in its summary, as the guide shows.
func TestE2EIamExampleShowsRemovals(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	w.write("main.yaml", docsBlock(t, "types.md", "## GCP Cloud Endpoints IAM", "yaml"))
	const orders = "services/orders.endpoints.acme-prod.cloud.goog"
	r := w.must(2, "plan", "--detailed-exitcode")
	shown := docsBlock(t, "types.md", "## GCP Cloud Endpoints IAM", "text")
	for _, l := range strings.Split(strings.TrimSpace(shown), "\n") {
		if l = strings.TrimSpace(l); l != "" && l != "..." && !strings.Contains(r.stdout, l) {
			t.Errorf("docs/types.md shows %q, which the plan does not print:\n%s", l, r)
		}
	}
	wantStdout(t, r, "ordersPolicy (gcp:endpoints:ServiceIamPolicy) will be created",
		"# access to "+orders+" (its live policy, read now): the apply removes (-) and adds (+)",
		"- "+consumerRole+"    user:alice@acme.example",
		"- "+controllerRole+"  serviceAccount:orders-esp@acme-prod.iam.gserviceaccount.com",
		"+ "+consumerRole+"  group:partner-devs@partner.example",
		"Plan: 2 to create (removes 2 members), 0 to update, 0 to replace, 0 to destroy")

	md := w.must(0, "plan", "--output", "markdown")
	wantStdout(t, md, "## Plan: 2 to create (removes 2 members)", "- "+consumerRole+"    user:alice@acme.example")

	d := decodeAccess(t, w.must(0, "plan", "--output", "json"))
	if d.FormatVersion != "1.4" || d.AllowSelfLockout {
		t.Errorf("plan json: format %q, allow_self_lockout %v; want 1.4, false", d.FormatVersion, d.AllowSelfLockout)
	}
	var got []string
	for _, c := range d.Changes {
		for _, a := range c.AccessChanges {
			got = append(got, strings.Join([]string{c.Address, a.Resource, a.Role, a.Condition, a.Member, a.Change}, "|"))
		}
		if c.AccessChanges == nil || c.SelfLockouts == nil {
			t.Errorf("plan json change %s: access_changes %v, self_lockouts %v; want lists", c.Address, c.AccessChanges, c.SelfLockouts)
		}
	}
	want := []string{
		"ordersPolicy|" + orders + "|" + consumerRole + "||user:alice@acme.example|removed",
		"ordersPolicy|" + orders + "|" + controllerRole + "||serviceAccount:orders-esp@acme-prod.iam.gserviceaccount.com|removed",
		"partner|" + orders + "/consumers/acme-partner|" + consumerRole + "||group:partner-devs@partner.example|added",
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan json access_changes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// billingSeed is a seed file giving the emulator's own caller a role on a
// service: serviceController of billing, with ops.
const billingSeed = `{"gcp": {"services": [{"name": "billing.endpoints.acme-prod.cloud.goog", "producerProjectId": "acme-prod",
  "policy": {"bindings": [{"role": "` + controllerRole + `", "members": ["` + caller + `", "user:ops@acme.example"]}]}}]}}`

const billing = "services/billing.endpoints.acme-prod.cloud.goog"

// controllersSpec is a binding making ops, and members, billing's
// controllers.
func controllersSpec(members ...string) string {
	return fmt.Sprintf(`resources:
  controllers:
    type: gcp:endpoints:ServiceIamBinding
    properties:
      serviceName: billing.endpoints.acme-prod.cloud.goog
      role: %s
      members: [%s]
`, controllerRole, strings.Join(append([]string{"user:ops@acme.example"}, members...), ", "))
}

// TestE2EIamBindingRemovesCaller: a binding that drops the caller (the
// account the emulator's token belongs to, granted the role by the seed
// file) is refused by plan and apply, naming the caller, the role, the
// resource and --allow-self-lockout; nothing is written. With the flag,
// plan shows it and apply writes it; a plan file made with it records
// it, and applies.
func TestE2EIamBindingRemovesCaller(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startSeededEmulator(t, billingSeed)
	w := newWS(t, e)
	w.write("main.yaml", controllersSpec())
	wantRefusal := func(r result) {
		t.Helper()
		wantStderr(t, r, "main.yaml:2:3", "controllers: the apply would remove the caller's own access: "+gcp.Caller+" has "+controllerRole+" on "+billing+" through "+caller,
			"To keep it, grant "+controllerRole+" to "+caller, "--allow-self-lockout")
	}
	mark := e.mark()
	wantRefusal(w.must(1, "plan"))
	wantRefusal(w.must(1, "apply", "--auto-approve"))
	wantRefusal(w.must(1, "plan", "--out", "plan.bin"))
	if calls := e.callsSince(mark, ":setIamPolicy"); len(calls) != 0 {
		t.Errorf("refused plans wrote IAM policies: %v", calls)
	}
	if _, err := os.Stat(w.path("plan.bin")); err == nil {
		t.Errorf("a refused plan saved a plan file")
	}
	if got := e.iamPolicy(billing).members(controllerRole); !slices.Contains(got, caller) {
		t.Fatalf("members of %s after the refusals = %v, want the caller still", controllerRole, got)
	}

	// Allowed, the plan says what it takes, and a saved plan records it.
	r := w.must(0, "plan", "--allow-self-lockout", "--out", "plan.bin")
	wantStdout(t, r, "- "+controllerRole+"  "+caller,
		"# ! the apply removes the caller's own access: "+gcp.Caller+" loses "+controllerRole+" on "+billing+", which it has through "+caller+" (allowed by --allow-self-lockout)",
		"1 to create (removes 1 member)")
	d := decodeAccess(t, w.must(0, "show", "plan.bin", "--output", "json"))
	if !d.AllowSelfLockout || len(d.Changes) != 1 || len(d.Changes[0].SelfLockouts) != 1 || d.Changes[0].SelfLockouts[0].Caller != gcp.Caller ||
		d.Changes[0].SelfLockouts[0].Role != controllerRole || d.Changes[0].SelfLockouts[0].Resource != billing {
		t.Errorf("show plan.bin --output json = %+v, want the lockout allowed and recorded", d)
	}
	wantStdout(t, w.must(0, "show", "plan.bin", "--output", "markdown"), "> [!CAUTION]", "--allow-self-lockout")
	r = w.must(1, "apply", "plan.bin", "--allow-self-lockout")
	wantStderr(t, r, "the plan file records whether it was made with --allow-self-lockout")
	w.must(0, "apply", "plan.bin")
	if got := e.iamPolicy(billing).members(controllerRole); !slices.Equal(got, []string{"user:ops@acme.example"}) {
		t.Errorf("members of %s after applying the plan = %v, want ops alone", controllerRole, got)
	}
	w.must(0, "plan", "--detailed-exitcode")
}

// TestE2EIamLockoutAtApply: a plan file made when the binding took
// nothing of the caller's, applied after someone granted the caller the
// role, is refused as it writes, since the plan did not allow it; nothing
// is written. One made with --allow-self-lockout applies all the same.
func TestE2EIamLockoutAtApply(t *testing.T) {
	needBinary(t)
	t.Parallel()
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow=%v", allow), func(t *testing.T) {
			t.Parallel()
			e := startSeededEmulator(t, `{"gcp": {"services": [{"name": "billing.endpoints.acme-prod.cloud.goog", "producerProjectId": "acme-prod",
  "policy": {"bindings": [{"role": "`+controllerRole+`", "members": ["user:ops@acme.example", "user:eve@acme.example"]}]}}]}}`)
			w := newWS(t, e)
			w.write("main.yaml", controllersSpec())
			args := []string{"plan", "--out", "plan.bin"}
			if allow {
				args = append(args, "--allow-self-lockout")
			}
			w.must(0, args...)
			e.grant(billing, controllerRole, caller) // after the plan
			r := w.run("apply", "plan.bin")
			got := e.iamPolicy(billing).members(controllerRole)
			if allow {
				if r.code != 0 || !slices.Equal(got, []string{"user:ops@acme.example"}) {
					t.Errorf("apply of a plan allowing self-lockout: exit %d, members %v; want 0 and ops alone\n%s", r.code, got, r)
				}
				return
			}
			if r.code != 1 || !slices.Contains(got, caller) || !slices.Contains(got, "user:eve@acme.example") {
				t.Errorf("apply of a plan not allowing self-lockout: exit %d, members %v; want 1 and nothing written\n%s", r.code, got, r)
			}
			wantStderr(t, r, "the write would remove the caller's own access to \""+billing+"\"", gcp.Caller+" has "+controllerRole+" through "+caller,
				"nothing was written", "--allow-self-lockout")
		})
	}
}

// TestE2EIamPolicyKeepsCallerThroughGroup: a whole policy that drops the
// caller as a member but names a group in its role keeps the caller, as
// far as the policy tells: the plan lists the change and passes, and the
// apply writes it.
func TestE2EIamPolicyKeepsCallerThroughGroup(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startSeededEmulator(t, billingSeed)
	w := newWS(t, e)
	w.write("main.yaml", `variables:
  access:
    fn::invoke:
      function: gcp:organizations:getIAMPolicy
      arguments:
        bindings:
          - role: `+controllerRole+`
            members: [group:deployers@acme.example, user:ops@acme.example]
resources:
  billingPolicy:
    type: gcp:endpoints:ServiceIamPolicy
    properties:
      serviceName: billing.endpoints.acme-prod.cloud.goog
      policyData: ${access.policyData}
`)
	r := w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "- "+controllerRole+"  "+caller, "+ "+controllerRole+"  group:deployers@acme.example", "1 to create (removes 1 member)")
	if strings.Contains(r.stdout+r.stderr, "caller's own access") {
		t.Errorf("the plan warns of a lockout the group may prevent:\n%s", r)
	}
	w.must(0, "apply", "--auto-approve")
	if got := e.iamPolicy(billing).members(controllerRole); !slices.Equal(got, []string{"group:deployers@acme.example", "user:ops@acme.example"}) {
		t.Errorf("members of %s after apply = %v", controllerRole, got)
	}
}

// TestE2EDatadogSelfLockoutEachPrincipal: the caller of the Datadog API
// (a user of the seed file, in a role, a team and an org) holds editor on
// a policy through each kind of principal in turn; bindings that lower it
// to viewer are refused at plan, with the reason the API would give, and
// bindings keeping it through another of its principals pass.
func TestE2EDatadogSelfLockoutEachPrincipal(t *testing.T) {
	needBinary(t)
	t.Parallel()
	const (
		user  = "aaaaaaaa-0000-4000-8000-000000000001"
		org   = "aaaaaaaa-0000-4000-8000-000000000002"
		role  = "aaaaaaaa-0000-4000-8000-000000000003"
		team  = "aaaaaaaa-0000-4000-8000-000000000004"
		other = "role:00000000-0000-0000-0000-000000000002"
	)
	seed := fmt.Sprintf(`{"datadog": {"user": {"id": %q, "orgId": %q, "roleId": %q, "teamIds": [%q]}}}`, user, org, role, team)
	principals := map[string]string{"user": "user:" + user, "role": "role:" + role, "team": "team:" + team, "org": "org:" + org}
	for typ, p := range principals {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			e := startSeededEmulator(t, seed)
			w := newWS(t, e)
			id := rid(t, "")
			policy := func(bindings string) string {
				return fmt.Sprintf("resources:\n  pol:\n    type: datadog:RestrictionPolicy\n    properties:\n      resourceId: %s\n      bindings:\n%s", id, bindings)
			}
			w.write("main.yaml", policy(fmt.Sprintf("        - relation: editor\n          principals: [%q]\n", p)))
			w.must(0, "apply", "--auto-approve")

			w.write("main.yaml", policy(fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n        - relation: editor\n          principals: [%q]\n", p, other)))
			r := w.must(1, "plan")
			wantStderr(t, r, "main.yaml:2:3", "pol: Datadog would refuse these bindings at apply: users cannot decrease their own level of access (from editor to viewer)",
				"user:"+user, "org:"+org)

			// Another of the caller's principals keeps editor.
			keep := principals["org"]
			if typ == "org" {
				keep = principals["team"]
			}
			w.write("main.yaml", policy(fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n        - relation: editor\n          principals: [%q, %q]\n", p, other, keep)))
			r = w.must(2, "plan", "--detailed-exitcode")
			wantStdout(t, r, "- editor  "+p, "+ editor  "+keep, "+ viewer  "+p, "1 to update (removes 1 member)")
			w.must(0, "apply", "--auto-approve")
		})
	}
}

// TestE2EEmulateHelpNamesCaller: 'emulate -h' says whose the GCP token is,
// where tokeninfo is, and how a seed file grants that account a role.
func TestE2EEmulateHelpNamesCaller(t *testing.T) {
	needBinary(t)
	t.Parallel()
	w := newWS(t, startEmulator(t))
	r := w.rc("emulate", "-h")
	for _, want := range []string{gcp.Caller, "/tokeninfo", "/oauth2/v2/tokeninfo", `"serviceAccount:` + gcp.Caller + `"`} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("emulate -h does not say %q:\n%s", want, r)
		}
	}
}
