package main

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

// iamPolicyResult is what gcp:organizations:getIAMPolicy gives for bindings
// (JSON-shaped, as arguments are): its policyData and id.
func iamPolicyResult(t *testing.T, bindings ...map[string]any) (policyData, id string) {
	t.Helper()
	list := make([]any, len(bindings))
	for i, b := range bindings {
		list[i] = b
	}
	res, err := gcpiam.NewGetIAMPolicy().Invoke(context.Background(), resources.Attrs{"bindings": list})
	if err != nil {
		t.Fatal(err)
	}
	return res["policyData"].(string), res["id"].(string)
}

// secretLookupCase is one way a secret reaches a lookup or a get.
type secretLookupCase struct {
	files map[string]string // the project's files: specs and stack settings
	args  []string          // given to every command: --config, --stack
	env   []string          // the binary's environment
	nodes []string          // the lookups and gets whose records are secret
	// secrets are the clear texts that must appear nowhere: the secret,
	// and what the lookup or get made of it, known once the apply ran.
	secrets func(t *testing.T, e *emu, w *ws) map[string]string
	// revealed names those of secrets that output --show-secrets shows,
	// computing again an output made of secret config alone.
	revealed []string
}

// TestE2ESecretsThroughLookups passes a secret, in each way one can be
// made, to a lookup (read during plan or during apply) or a get, and runs
// every command on it: plans in every format, a plan file and its show and
// apply, apply as a stream, drift, output, state (every version). Neither
// the secret nor anything the lookup or get gave (the policy data holding
// a secret member and its checksum id, an etag read with a secret service
// name) appears in anything reconcile printed or wrote.
func TestE2ESecretsThroughLookups(t *testing.T) {
	needBinary(t)
	t.Parallel()
	const orders = "services/" + gcp.SeedService
	member := "user:m-" + randHex(t, 8) + "@acme.example"
	viewer := func(m string) map[string]any { return map[string]any{"role": "roles/viewer", "members": []any{m}} }
	policyOf := func(t *testing.T, m string) map[string]string {
		data, id := iamPolicyResult(t, viewer(m))
		return map[string]string{"secret member": m, "policy data": data, "policy id": id}
	}
	const accessSpec = `variables:
  access:
    fn::invoke:
      function: gcp:organizations:getIAMPolicy
      arguments:
        bindings:
          - role: roles/viewer
            members: ["%s"]
resources:
  ordersPolicy:
    type: gcp:endpoints:ServiceIamPolicy
    properties:
      serviceName: ` + gcp.SeedService + `
      policyData: ${access.policyData}
outputs:
  data: ${access.policyData}
  accessId: ${access.id}
  bindings: ${access["bindings"]}
`
	salt, enc := pulumiEncrypted(t, "lookup passphrase", member)
	for name, tc := range map[string]secretLookupCase{
		"secret config to getIAMPolicy": {
			files: map[string]string{"main.yaml": "config:\n  member:\n    type: string\n    secret: true\n" + fmt.Sprintf(accessSpec, "${member}")},
			args:  []string{"--config", "member=" + member},
			nodes: []string{"access"},
			secrets: func(t *testing.T, e *emu, w *ws) map[string]string {
				return policyOf(t, member)
			},
		},
		"secure stack value to getIAMPolicy": {
			files: map[string]string{
				"Pulumi.yaml":     "name: lookups\nruntime: yaml\n",
				"Pulumi.dev.yaml": fmt.Sprintf("encryptionsalt: %s\nconfig:\n  lookups:member:\n    secure: %s\n", salt, enc[0]),
				"main.yaml":       "config:\n  member:\n    type: string\n" + fmt.Sprintf(accessSpec, "${member}"),
			},
			args:  []string{"--stack", "dev"},
			env:   []string{"PULUMI_CONFIG_PASSPHRASE=lookup passphrase"},
			nodes: []string{"access"},
			secrets: func(t *testing.T, e *emu, w *ws) map[string]string {
				return policyOf(t, member)
			},
		},
		"built-in functions to getIAMPolicy": {
			files: map[string]string{"main.yaml": `config:
  tok:
    type: string
    secret: true
variables:
  encoded:
    fn::toBase64: "user:${tok}@acme.example,other"
  decoded:
    fn::fromBase64: ${encoded}
  picked:
    fn::select: [0, {fn::split: [",", "${decoded}"]}]
  joined:
    fn::join: ["", ["${picked}"]]
  asJSON:
    fn::toJSON: {member: "${joined}"}
  digest:
    fn::sha1: ${asJSON}
` + strings.TrimPrefix(fmt.Sprintf(accessSpec, "${joined}"), "variables:\n") + `  encodedOut: ${encoded}
  jsonOut: ${asJSON}
  digestOut: ${digest}
`},
			args:     []string{"--config", "tok=" + strings.TrimSuffix(strings.TrimPrefix(member, "user:"), "@acme.example")},
			nodes:    []string{"access"},
			revealed: []string{"secret member", "base64", "sha1"},
			secrets: func(t *testing.T, e *emu, w *ws) map[string]string {
				out := policyOf(t, member)
				js := `{"member":"` + member + `"}`
				sum := sha1.Sum([]byte(js))
				out["base64"] = base64.StdEncoding.EncodeToString([]byte(member + ",other"))
				out["sha1"] = hex.EncodeToString(sum[:])
				return out
			},
		},
		"secret config to a lookup read during apply": {
			files: map[string]string{"main.yaml": `config:
  member:
    type: string
    secret: true
variables:
  access:
    fn::invoke:
      function: gcp:organizations:getIAMPolicy
      arguments:
        bindings:
          - role: roles/viewer
            members: ["${member}"]
            condition:
              title: while the dashboard is restricted
              expression: request.time < timestamp("2040-01-01T00:00:00Z")
              description: granted with ${dash.id}
resources:
  dash:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:secret-lookups-deferred
      bindings:
        - relation: editor
          principals: ["` + role1 + `"]
  ordersPolicy:
    type: gcp:endpoints:ServiceIamPolicy
    properties:
      serviceName: ` + gcp.SeedService + `
      policyData: ${access.policyData}
outputs:
  data: ${access.policyData}
  accessId: ${access.id}
`},
			args:  []string{"--config", "member=" + member},
			nodes: []string{"access"},
			secrets: func(t *testing.T, e *emu, w *ws) map[string]string {
				b := viewer(member)
				b["condition"] = map[string]any{"title": "while the dashboard is restricted",
					"expression":  `request.time < timestamp("2040-01-01T00:00:00Z")`,
					"description": "granted with dashboard:secret-lookups-deferred"}
				data, id := iamPolicyResult(t, b)
				return map[string]string{"secret member": member, "policy data": data, "policy id": id}
			},
		},
		"fn::secret service name to getServiceIamPolicy": {
			files: map[string]string{"main.yaml": `variables:
  svc:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName:
          fn::secret: ` + gcp.SeedService + `
outputs:
  etag: ${svc.etag}
  data: ${svc.policyData}
`},
			nodes: []string{"svc"},
			secrets: func(t *testing.T, e *emu, w *ws) map[string]string {
				return map[string]string{"service name": gcp.SeedService, "etag": e.serviceEtag(gcp.SeedService)}
			},
		},
		"secret config as a get's id": {
			files: map[string]string{"main.yaml": `config:
  current:
    type: string
    secret: true
resources:
  ordersNow:
    type: gcp:endpoints:ServiceIamPolicy
    get:
      id: ${current}
outputs:
  etag: ${ordersNow.etag}
  data: ${ordersNow.policyData}
`},
			args:  []string{"--config", "current=" + orders},
			nodes: []string{"ordersNow"},
			secrets: func(t *testing.T, e *emu, w *ws) map[string]string {
				return map[string]string{"get's id": orders, "etag": e.serviceEtag(gcp.SeedService)}
			},
		},
		"a resource's secret output to getIAMPolicy": {
			files: map[string]string{"main.yaml": `variables:
  access:
    fn::invoke:
      function: gcp:organizations:getIAMPolicy
      arguments:
        bindings:
          - role: roles/viewer
            members: ["group:auditors@acme.example"]
            condition:
              title: pinned
              expression: "true"
              description: etag ${ordersPolicy.etag}
resources:
  ordersPolicy:
    type: gcp:endpoints:ServiceIamPolicy
    properties:
      serviceName: ` + gcp.SeedService + `
      policyData: '{"bindings":[{"role":"roles/viewer","members":["group:readers@acme.example"]}]}'
    options:
      additionalSecretOutputs: [etag]
outputs:
  data: ${access.policyData}
  accessId: ${access.id}
`},
			nodes: []string{"access"},
			secrets: func(t *testing.T, e *emu, w *ws) map[string]string {
				etag := e.serviceEtag(gcp.SeedService)
				b := map[string]any{"role": "roles/viewer", "members": []any{"group:auditors@acme.example"},
					"condition": map[string]any{"title": "pinned", "expression": "true", "description": "etag " + etag}}
				data, id := iamPolicyResult(t, b)
				return map[string]string{"etag": etag, "policy data": data, "policy id": id}
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := startEmulator(t)
			w := newWS(t, e)
			w.extraEnv = tc.env
			for f, text := range tc.files {
				w.write(f, text)
			}
			cmd := func(want int, args ...string) result {
				t.Helper()
				return w.must(want, append(args, tc.args...)...)
			}
			cmd(0, "validate")
			cmd(0, "plan")
			cmd(0, "plan", "--output", "json")
			cmd(0, "plan", "--output", "markdown")
			cmd(0, "plan", "--output", "jsonl")
			cmd(0, "plan", "--out", "p.plan")
			for _, format := range []string{"text", "json", "markdown"} {
				w.must(0, "show", "p.plan", "--output", format)
			}
			cmd(0, "apply", "p.plan", "--output", "jsonl")
			r := cmd(0, "apply", "--auto-approve")
			wantStdout(t, r, "No changes")
			cmd(0, "apply", "--auto-approve", "--output", "json")
			cmd(0, "plan", "--refresh=false")
			cmd(0, "plan", "--out", "p2.plan", "--output", "markdown")
			w.must(0, "show", "p2.plan", "--output", "markdown")
			cmd(0, "drift")
			cmd(0, "drift", "--output", "json")
			cmd(0, "drift", "--output", "markdown")
			cmd(0, "plan", "--refresh-only", "--output", "json")
			cmd(0, "apply", "--refresh-only", "--auto-approve")
			cmd(0, "output")
			cmd(0, "output", "--output", "json")
			cmd(0, "output", "--show-secrets")
			cmd(0, "output", "--show-secrets", "--output", "json")
			cmd(0, "state", "list", "--output", "json")
			cmd(0, "state", "history", "--output", "json")
			for _, n := range tc.nodes {
				r := cmd(0, "state", "show", n, "--output", "json")
				var node stateNode
				if err := json.Unmarshal([]byte(r.stdout), &node); err != nil {
					t.Fatalf("state show %s --output json: %v\n%s", n, err, r)
				}
				if node.ID != "" {
					t.Errorf("state show %s: id %q, want none recorded", n, node.ID)
				}
				for k, v := range node.Outputs {
					if v != nil {
						t.Errorf("state show %s: output %s = %v, want it secret (null)", n, k, v)
					}
				}
				cmd(0, "state", "show", n)
				for serial := int64(1); serial <= node.Serial; serial++ {
					w.rc(append([]string{"state", "show", n, "--serial", fmt.Sprint(serial), "--output", "json"}, tc.args...)...)
				}
			}
			r = cmd(0, "output", "--output", "json")
			var doc outputsJSONDoc
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("output --output json: %v\n%s", err, r)
			}
			for name, o := range doc.Outputs {
				if !o.Sensitive || o.Value != nil {
					t.Errorf("output %s = %+v, want a secret, not shown: it is made of a secret lookup's results", name, o)
				}
			}
			// What --show-secrets reveals is an output made of secret config
			// alone; never one made of what a secret lookup or get gave.
			texts := tc.secrets(t, e, w)
			r = cmd(0, "output", "--show-secrets", "--output", "json")
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("output --show-secrets --output json: %v\n%s", err, r)
			}
			for name, o := range doc.Outputs {
				if o.Value != nil && !strings.HasSuffix(name, "Out") {
					t.Errorf("output --show-secrets shows %s = %v: it is made of a secret lookup's results, which state keeps only sealed", name, o.Value)
				}
			}
			searchEverything(t, w, texts, tc.revealed)
		})
	}
}

// searchEverything fails t if any form of the named texts appears in
// anything w's runs of reconcile printed (but those named revealed, in
// what output --show-secrets printed), or in a file of w's directory other
// than its specs and stack settings.
func searchEverything(t *testing.T, w *ws, texts map[string]string, revealed []string) {
	t.Helper()
	w.mu.Lock()
	runs := append([]result(nil), w.runs...)
	w.mu.Unlock()
	for _, r := range runs {
		for name, s := range texts {
			if slices.Contains(r.args, "--show-secrets") && slices.Contains(revealed, name) {
				continue // asked for, and computed again from secret config
			}
			for _, form := range encodings(s) {
				if strings.Contains(r.stdout, form) || strings.Contains(r.stderr, form) {
					t.Errorf("the output of reconcile %s shows the %s in clear, as %q", strings.Join(r.args, " "), name, form)
				}
			}
		}
	}
	files := 0
	filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(p); (ext == ".yaml" || ext == ".yml") && filepath.Dir(p) == w.dir {
			return nil // the user's own specs and stack settings
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			return nil
		}
		for name, s := range texts {
			for _, form := range encodings(s) {
				if bytes.Contains(b, []byte(form)) {
					t.Errorf("%s holds the %s in clear, as %q", p, name, form)
				}
			}
		}
		return nil
	})
	if files < 2 {
		t.Errorf("searched %d files, want at least the state and a plan file", files)
	}
	t.Logf("%d runs of reconcile and %d files searched for %d texts", len(runs), files, len(texts))
}

// TestE2ESecretGetErrors: a get of a secret id that does not exist fails
// naming neither the id nor what it was made from.
func TestE2ESecretGetErrors(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	tok := "svc" + randHex(t, 6)
	w.write("main.yaml", `config:
  tok:
    type: string
    secret: true
variables:
  name:
    fn::join: ["", ["services/", {fn::toBase64: "${tok}"}, ".endpoints.acme-prod.cloud.goog"]]
resources:
  missing:
    type: gcp:endpoints:ServiceIamPolicy
    get:
      id: ${name}
`)
	derived := base64.StdEncoding.EncodeToString([]byte(tok))
	for _, format := range []string{"text", "json", "jsonl", "markdown"} {
		r := w.must(1, "plan", "--config", "tok="+tok, "--output", format)
		wantContains(t, r, "(sensitive value)")
		if slices.ContainsFunc(encodings(derived), func(f string) bool { return strings.Contains(r.stdout+r.stderr, f) }) {
			t.Errorf("plan --output %s shows the secret get's id:\n%s", format, r)
		}
	}
}

// TestE2EIndexIntoSecrets runs Pulumi's l1-proxy-index program, in which
// each object or list is marked secret whole and every output reads into
// one: every output is secret, shown as "(sensitive value)" (not mangled
// by the redaction of the secret "value"), and --show-secrets gives the
// values Pulumi expects. Beside it, an object that holds a secret in one
// field only: the others read from it stay plain, in every output.
func TestE2EIndexIntoSecrets(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	w.write("Pulumi.yaml", "name: l1-proxy-index\nruntime: yaml\n")
	w.write("Pulumi.dev.yaml", "config:\n  l1-proxy-index:anObject:\n    property: config\n  l1-proxy-index:anyObject:\n    property: dynamic\n")
	w.write("Main.yaml", `config:
  anObject:
    type: object
  anyObject:
    type: object
  tok:
    type: string
    secret: true
    default: tok-partial-5ecret
variables:
  l:
    fn::secret:
      - 1
  m:
    fn::secret:
      key: true
  c:
    fn::secret: ${anObject}
  o:
    fn::secret:
      property: value
  a:
    fn::secret: ${anyObject}
  partial:
    plain: visible-text
    token: ${tok}
    list: [visible-item, "${tok}"]
outputs:
  l: ${l[0]}
  m: ${m.key}
  c: ${c.property}
  o: ${o.property}
  a: ${a.property}
  pPlain: ${partial.plain}
  pIndex: ${partial["plain"]}
  pItem: ${partial.list[0]}
  pSecret: ${partial.token}
  pSecretItem: ${partial.list[1]}
`)
	secret := []string{"l", "m", "c", "o", "a", "pSecret", "pSecretItem"}
	plain := map[string]string{"pPlain": "visible-text", "pIndex": "visible-text", "pItem": "visible-item"}
	for _, args := range [][]string{{"plan"}, {"apply", "--auto-approve"}, {"output"}} {
		r := w.must(0, append(args, "--stack", "dev")...)
		if strings.Contains(r.stdout, "(sensitive (sensitive") {
			t.Errorf("reconcile %s mangles the text of secrets:\n%s", strings.Join(args, " "), r)
		}
		for _, name := range secret {
			if !regexpLine(r.stdout, name, "(sensitive value)") {
				t.Errorf("reconcile %s: output %s is not shown as (sensitive value):\n%s", strings.Join(args, " "), name, r)
			}
		}
		for name, v := range plain {
			if !regexpLine(r.stdout, name, fmt.Sprintf("%q", v)) {
				t.Errorf("reconcile %s: output %s is not shown as %q:\n%s", strings.Join(args, " "), name, v, r)
			}
		}
	}
	r := w.must(0, "output", "--stack", "dev", "--output", "json")
	var doc outputsJSONDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("output --output json: %v\n%s", err, r)
	}
	for _, name := range secret {
		if o := doc.Outputs[name]; !o.Sensitive || o.Value != nil {
			t.Errorf("output %s = %+v, want secret", name, o)
		}
	}
	for name, v := range plain {
		if o := doc.Outputs[name]; o.Sensitive || o.Value != v {
			t.Errorf("output %s = %+v, want %q, not secret", name, o, v)
		}
	}
	r = w.must(0, "output", "--stack", "dev", "--show-secrets", "--output", "json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("output --show-secrets --output json: %v\n%s", err, r)
	}
	for name, want := range map[string]any{"l": 1.0, "m": true, "c": "config", "o": "value", "a": "dynamic", "pSecret": "tok-partial-5ecret"} {
		if o := doc.Outputs[name]; o.Value != want || !o.Sensitive {
			t.Errorf("output %s --show-secrets = %+v, want %v, sensitive", name, o, want)
		}
	}
}

// regexpLine reports whether text has a line "  NAME = VALUE" or "NAME =
// VALUE", however aligned.
func regexpLine(text, name, value string) bool {
	for _, l := range strings.Split(text, "\n") {
		if n, v, ok := strings.Cut(l, " = "); ok && strings.TrimSpace(n) == name && v == value {
			return true
		}
	}
	return false
}
