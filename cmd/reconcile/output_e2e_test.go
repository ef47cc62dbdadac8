package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

const (
	outputSecret      = "tok-s3cr3t-value"
	outputTeamSecret  = "role:00000000-0000-0000-0000-000000000009"
	outputSecretSpecs = `config:
  token:
    type: string
    secret: true
    default: ` + outputSecret + `
  team:
    type: string
    secret: true
    default: ` + outputTeamSecret + `
`
)

// outputSpec is a policy with a secret principal (kept in state only as a
// digest), and outputs: plain, from secret config, and from the policy's
// secret input.
func outputSpec(id string) string {
	s := spec(policySpec("pol", id, "        - relation: viewer\n          principals: [\"${team}\"]\n", ""))
	s = strings.Replace(s, "outputs:\n", "outputs:\n  token: ${token}\n  bearer: Bearer ${token}\n  bindings: ${pol.bindings}\n  policyId: ${pol.id}\n", 1)
	return outputSecretSpecs + s
}

type outputsJSONDoc struct {
	FormatVersion string `json:"format_version"`
	Recorded      bool   `json:"recorded"`
	Serial        int64  `json:"serial"`
	RecordedAt    string `json:"recorded_at"`
	Command       string `json:"command"`
	Outputs       map[string]struct {
		Value     any  `json:"value"`
		Sensitive bool `json:"sensitive"`
	} `json:"outputs"`
}

func TestE2EOutput(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", outputSpec(id))

	// No state: output fails, as every command that only reads one does.
	wantStderr(t, w.must(1, "output"), "does not exist; only plan, apply and import start a new state")
	w.must(2, "plan", "--detailed-exitcode")
	r := w.must(0, "output")
	wantStderr(t, r, "No outputs are recorded in the state at", "a complete 'reconcile apply' records them")
	wantStderr(t, w.must(1, "output", "token"), `none named "token"`)

	w.must(0, "apply", "--auto-approve")
	state, err := os.ReadFile(w.path(".reconcile/state.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{outputSecret, outputTeamSecret} {
		if strings.Contains(string(state), s) {
			t.Errorf("the state file holds the secret %q", s)
		}
	}

	mark := e.mark()
	r = w.must(0, "output")
	wantOutputLine := func(r result, name, value string) {
		t.Helper()
		for _, l := range strings.Split(r.stdout, "\n") {
			if n, v, ok := strings.Cut(l, " = "); ok && strings.TrimSpace(n) == name {
				if v != value {
					t.Errorf("output %s = %s, want %s\n%s", name, v, value, r)
				}
				return
			}
		}
		t.Errorf("no line for output %s in:\n%s", name, r)
	}
	wantOutputLine(r, "policyId", `"`+id+`"`)
	wantOutputLine(r, "orgPrincipal", `"org:`+e.orgID()+`"`)
	wantOutputLine(r, "token", "(sensitive value)")
	wantOutputLine(r, "bearer", "(sensitive value)")
	wantOutputLine(r, "bindings", "(sensitive value)")
	if r.stderr != "" {
		t.Errorf("output printed on stderr:\n%s", r)
	}

	r = w.must(0, "output", "--output", "json")
	var doc outputsJSONDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("output --output json: %v\n%s", err, r)
	}
	if doc.FormatVersion != "1.0" || !doc.Recorded || doc.Command != "apply" || doc.Serial == 0 || doc.RecordedAt == "" || len(doc.Outputs) != 6 {
		t.Errorf("output json = %+v", doc)
	}
	if o := doc.Outputs["token"]; o.Value != nil || !o.Sensitive {
		t.Errorf("token in json = %+v, want null and sensitive", o)
	}
	if o := doc.Outputs["policyId"]; o.Value != id || o.Sensitive {
		t.Errorf("policyId in json = %+v", o)
	}
	r = w.must(0, "output", "policyId", "--output", "json")
	if strings.TrimSpace(r.stdout) != `"`+id+`"` {
		t.Errorf("output policyId --output json = %q", r.stdout)
	}
	if r = w.must(0, "output", "token", "--output", "json"); strings.TrimSpace(r.stdout) != "null" {
		t.Errorf("output token --output json = %q, want null", r.stdout)
	}
	if r = w.must(0, "output", "policyId"); r.stdout != `"`+id+`"`+"\n" {
		t.Errorf("output policyId = %q", r.stdout)
	}
	wantStderr(t, w.must(1, "output", "tokn"), `no output named "tokn" was recorded by the last apply (did you mean "token"?)`, "recorded: bearer, bindings, orgPrincipal")

	// --show-secrets: what the specs and state compute again to the
	// recorded digest is shown; what comes from a secret input is not.
	r = w.must(0, "output", "--show-secrets")
	wantOutputLine(r, "token", `"`+outputSecret+`"`)
	wantOutputLine(r, "bearer", `"Bearer `+outputSecret+`"`)
	wantOutputLine(r, "bindings", "(sensitive value)")
	wantStderr(t, r, `Warning: output "bindings" is secret and cannot be shown`, "only as a digest")
	if r = w.must(0, "output", "token", "--show-secrets", "--output", "json"); strings.TrimSpace(r.stdout) != `"`+outputSecret+`"` {
		t.Errorf("output token --show-secrets --output json = %q", r.stdout)
	}
	r = w.must(0, "output", "--show-secrets", "--output", "json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Outputs["token"].Value != outputSecret || !doc.Outputs["token"].Sensitive {
		t.Errorf("output --show-secrets --output json: %v, token %+v", err, doc.Outputs["token"])
	}
	wantStderr(t, w.must(1, "output", "bindings", "--show-secrets"), `output "bindings" is secret and cannot be shown`, "only as a digest")
	// Other config values now: the recorded value is not what they make.
	r = w.must(1, "output", "token", "--show-secrets", "--config", "token=rotated-token-xyz")
	wantStderr(t, r, "another value than the one the last apply recorded")
	if strings.Contains(r.stdout+r.stderr, "rotated-token-xyz") || strings.Contains(r.stdout, outputSecret) {
		t.Errorf("a value that is not the recorded one was shown:\n%s", r)
	}
	if calls := e.callsSince(mark, ""); len(calls) != 0 {
		t.Errorf("output called the cloud: %v", calls)
	}

	// A destroy leaves none.
	w.must(0, "destroy", "--auto-approve")
	r = w.must(0, "output")
	wantStderr(t, r, "No outputs: the last destroy")
	if r.stdout != "" {
		t.Errorf("output after destroy printed:\n%s", r)
	}
}
