package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

func randHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestE2ESecretsEverywhere runs every command with fn::secret values and a
// secret config value in play, in an OCI endpoint's description and tags and
// in a Datadog policy's principals, and searches everything reconcile wrote
// (stdout, stderr, the state file, plan files, every file it left) for the
// secrets' clear text; newWS searches the same for the emulator's
// credentials.
func TestE2ESecretsEverywhere(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	h := randHex(t, 16)
	// The secrets hold the characters JSON, Go and URLs escape, so that a
	// secret shown in any escaped form is found.
	secrets := map[string]string{
		"fn::secret description": "fn-secret-" + randHex(t, 12) + "&\"<x>\\\t",
		"secret config value":    "cfg-secret-" + randHex(t, 12) + "&<\"'>",
		"fn::secret principal":   fmt.Sprintf("role:%s-%s-%s-%s-%s", h[:8], h[8:12], h[12:16], h[16:20], h[20:32]),
	}
	cfg := "apiToken=" + secrets["secret config value"]
	specText := func(principal string) string {
		return fmt.Sprintf(`config:
  apiToken:
    type: string
    secret: true
  mode:
    type: string
    secret: true
variables:
  hidden:
    fn::secret: %q
  principal:
    fn::secret: %q
resources:
  ep:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: %s
      modelId: %s
      displayName: secrets-ep
      description: ${hidden}
      freeformTags:
        token: ${apiToken}
        mode: ${mode}
  pol:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:secrets
      bindings:
        - relation: editor
          principals: [%q]
        - relation: viewer
          principals: ["${principal}"]
outputs:
  description: ${ep.description}
  token: ${apiToken}
  endpoint: ${ep.id}
`, secrets["fn::secret description"], principal, server.Tenancy, model, role1)
	}
	if err := os.MkdirAll(w.path("specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.write("specs/main.yaml", specText(secrets["fn::secret principal"]))
	// A secret that is an ordinary word, which JSON output also holds as
	// a key ("value" of each output): redaction must leave the JSON valid.
	f := []string{"-f", "specs", "--config", cfg, "--config", "mode=value"}
	cmd := func(want int, args ...string) result {
		t.Helper()
		return w.must(want, append(args, f...)...)
	}

	cmd(0, "validate")
	cmd(0, "validate", "--output", "json")
	cmd(2, "plan", "--detailed-exitcode")
	cmd(0, "plan", "--output", "json")
	cmd(0, "plan", "--output", "markdown")
	cmd(0, "plan", "--output", "jsonl")
	cmd(0, "plan", "--out", "p.plan")
	w.must(0, "apply", "p.plan", "--config", cfg, "--config", "mode=value")
	r := cmd(0, "apply", "--auto-approve")
	wantStdout(t, r, "No changes")
	cmd(0, "apply", "--auto-approve", "--output", "json")
	cmd(0, "apply", "--auto-approve", "--output", "jsonl")
	cmd(0, "drift")
	cmd(0, "drift", "--output", "json")
	cmd(0, "drift", "--output", "markdown")

	// Another user changes the secret fields; drift and plan report them
	// without showing values, and apply puts the secrets back.
	ep := w.stateList()["ep"].ID
	if _, err := e.sdkClient(t).UpdateEndpoint(context.Background(), ailanguage.UpdateEndpointRequest{EndpointId: &ep,
		UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{Description: strPtr("changed by hand"), FreeformTags: map[string]string{"token": "changed"}}}); err != nil {
		t.Fatal(err)
	}
	e.setPolicy("dashboard:secrets", []binding{{Relation: "viewer", Principals: []string{role2}}})
	r = cmd(2, "drift")
	wantStdout(t, r, "(sensitive value)")
	cmd(2, "drift", "--output", "json")
	cmd(2, "drift", "--output", "markdown")
	cmd(2, "plan", "--detailed-exitcode")
	cmd(2, "plan", "--detailed-exitcode", "--output", "json")
	cmd(2, "plan", "--detailed-exitcode", "--output", "jsonl")
	cmd(0, "plan", "--out", "p2.plan", "--output", "markdown")
	w.must(0, "apply", "p2.plan", "--config", cfg, "--config", "mode=value")
	// The same changes again, applied from a plan file as a stream.
	ep2 := w.stateList()["ep"].ID
	if _, err := e.sdkClient(t).UpdateEndpoint(context.Background(), ailanguage.UpdateEndpointRequest{EndpointId: &ep2,
		UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{Description: strPtr("changed by hand again"), FreeformTags: map[string]string{"token": "changed"}}}); err != nil {
		t.Fatal(err)
	}
	cmd(0, "plan", "--out", "p3.plan")
	r = w.must(0, "apply", "p3.plan", "--config", cfg, "--config", "mode=value", "--output", "jsonl")
	wantStdout(t, r, `"type":"planned_change"`, `"type":"op_complete"`, `"after_sensitive":["/description"`)
	cmd(0, "plan", "--detailed-exitcode")

	w.must(0, "state", "list")
	w.must(0, "state", "list", "--output", "json")
	for _, node := range []string{"ep", "pol"} {
		n := w.stateShow(node)
		w.must(0, "state", "show", node)
		w.must(0, "state", "show", node, "--serial", fmt.Sprint(n.Serial-1))
		w.must(0, "state", "show", node, "--serial", fmt.Sprint(n.Serial-1), "--output", "json")
	}
	w.must(0, "state", "history")
	w.must(0, "state", "history", "--output", "json")
	// show, output, graph, and plans that are targeted, replace or
	// destroy, and a taint: none shows a secret either.
	for _, format := range []string{"text", "json", "markdown"} {
		w.must(0, "show", "p2.plan", "--output", format)
	}
	cmd(0, "output")
	cmd(0, "output", "--output", "json")
	cmd(0, "output", "token")
	cmd(0, "output", "token", "--output", "json")
	cmd(0, "graph")
	cmd(0, "graph", "--format", "mermaid")
	w.must(0, "graph", "p2.plan", "--config", cfg, "--config", "mode=value")
	cmd(0, "plan", "--target", "ep", "--replace", "ep", "--output", "json")
	cmd(0, "plan", "--destroy", "--output", "markdown")
	cmd(0, "plan", "--destroy", "--target", "pol")
	w.must(0, "state", "taint", "pol")
	cmd(2, "plan", "--detailed-exitcode")
	w.must(0, "state", "untaint", "pol")
	// import, of an object of the same kind that holds no secret.
	e.setPolicy("dashboard:other", []binding{{Relation: "viewer", Principals: []string{role1}}})
	w.must(0, "import", "other", "dashboard:other", "--type", "datadog:RestrictionPolicy")
	w.must(0, "state", "rm", "other")

	// A cloud API that echoes a refused secret in its error message.
	if err := os.MkdirAll(w.path("bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	badPrincipal := "role:not-a-uuid-" + randHex(t, 8) + "&\"<x>\\"
	secrets["fn::secret echoed by an API error"] = badPrincipal
	w.write("bad/main.yaml", strings.Replace(specText(badPrincipal), "dashboard:secrets", "dashboard:secrets-bad", 1))
	r = w.must(1, "apply", "--auto-approve", "-f", "bad", "--config", cfg, "--config", "mode=value", "--state", "bad.db")
	wantStderr(t, r, "Invalid principal", "(sensitive value)")
	r = w.must(1, "apply", "--auto-approve", "-f", "bad", "--config", cfg, "--config", "mode=value", "--state", "bad.db", "--output", "json")
	wantStdout(t, r, "Invalid principal", "(sensitive value)")
	r = w.must(1, "apply", "--auto-approve", "-f", "bad", "--config", cfg, "--config", "mode=value", "--state", "bad.db", "--output", "jsonl")
	wantStdout(t, r, `"type":"op_errored"`, "Invalid principal", "(sensitive value)")
	wantStderr(t, r, "Invalid principal", "(sensitive value)")
	w.must(0, "destroy", "--auto-approve", "-f", "bad", "--config", cfg, "--state", "bad.db")

	cmd(0, "plan", "--destroy", "--output", "jsonl")
	cmd(0, "destroy", "--auto-approve", "--output", "jsonl")

	// Search everything written.
	w.mu.Lock()
	runs := append([]result(nil), w.runs...)
	w.mu.Unlock()
	jsonl := 0
	for _, r := range runs {
		for name, s := range secrets {
			for _, form := range encodings(s) {
				if strings.Contains(r.stdout, form) || strings.Contains(r.stderr, form) {
					t.Errorf("the output of reconcile %s shows the %s in clear, as %q", strings.Join(r.args, " "), name, form)
				}
			}
		}
		if slices.Contains(r.args, "json") && r.stdout != "" && !json.Valid([]byte(r.stdout)) {
			t.Errorf("reconcile %s wrote JSON that does not parse:\n%s", strings.Join(r.args, " "), r.stdout)
		}
		if slices.Contains(r.args, "jsonl") {
			jsonl++
			if strings.Contains(r.stdout, "$secret") {
				t.Errorf("the stream of reconcile %s shows a secret's digest:\n%s", strings.Join(r.args, " "), r.stdout)
			}
			for i, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
				if !json.Valid([]byte(line)) {
					t.Errorf("line %d of the stream of reconcile %s does not parse:\n%s", i+1, strings.Join(r.args, " "), line)
				}
			}
		}
	}
	files := 0
	filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if rel, _ := filepath.Rel(w.dir, p); rel == filepath.Join("specs", "main.yaml") || rel == filepath.Join("bad", "main.yaml") {
			return nil // the user's own specs
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			return nil
		}
		for name, s := range secrets {
			for _, form := range encodings(s) {
				if bytes.Contains(b, []byte(form)) {
					t.Errorf("%s holds the %s in clear, as %q", p, name, form)
				}
			}
		}
		return nil
	})
	for _, want := range []string{".reconcile/state.db", "bad.db", "p.plan", "p2.plan", "p3.plan"} {
		if _, err := os.Stat(w.path(want)); err != nil {
			t.Errorf("%s was not written: %v", want, err)
		}
	}
	t.Logf("%d runs of reconcile (%d event streams) and %d files searched for %d secrets and %d credentials", len(runs), jsonl, files, len(secrets), len(e.secrets))
}

// encodings returns the forms in which s could appear in output or files:
// as is, JSON-escaped, Go-quoted, quoted as renderers quote, URL-escaped.
func encodings(s string) []string {
	forms := []string{s}
	j, _ := json.Marshal(s)
	for _, q := range []string{string(j), strconv.Quote(s), strconv.QuoteToASCII(s), value.Quote(s)} {
		forms = append(forms, q[1:len(q)-1])
	}
	return append(forms, url.PathEscape(s), url.QueryEscape(s))
}
