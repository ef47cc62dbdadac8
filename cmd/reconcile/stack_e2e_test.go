package main

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"
)

// pulumiEncrypted returns the encryptionsalt of a stack whose passphrase is
// phrase and each value encrypted with it, as Pulumi's passphrase secrets
// provider writes them.
func pulumiEncrypted(t *testing.T, phrase string, values ...string) (string, []string) {
	t.Helper()
	salt := make([]byte, 8)
	rand.Read(salt)
	key, err := pbkdf2.Key(sha256.New, phrase, salt, 1000000, 32)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	enc := func(s string) string {
		nonce := make([]byte, 12)
		rand.Read(nonce)
		return "v1:" + base64.StdEncoding.EncodeToString(nonce) + ":" + base64.StdEncoding.EncodeToString(gcm.Seal(nil, nonce, []byte(s), nil))
	}
	var out []string
	for _, v := range values {
		out = append(out, enc(v))
	}
	return fmt.Sprintf("v1:%s:%s", base64.StdEncoding.EncodeToString(salt), enc("pulumi")), out
}

// Stacks as Pulumi YAML users know them: Pulumi.yaml names the project,
// Pulumi.<stack>.yaml gives each stack's config (namespaced, plain and
// secure), ${pulumi.stack} and ${pulumi.project} resolve, and each stack
// has its own state.
func TestE2EStacks(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	salt, enc := pulumiEncrypted(t, "stack passphrase", "role:00000000-0000-0000-0000-000000000002")
	w.write("Pulumi.yaml", "name: orders\nruntime: yaml\ndescription: the orders service\n")
	w.write("main.yaml", `config:
  team:
    type: string
  viewer:
    type: string
    secret: true
resources:
  pol:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:${pulumi.project}-${pulumi.stack}-${team}
      bindings:
        - relation: editor
          principals: ["`+role1+`"]
        - relation: viewer
          principals: ["${viewer}"]
outputs:
  stack: ${pulumi.stack}
  project: ${pulumi.project}
  extra: ${extra}
`)
	w.write("Pulumi.dev.yaml", fmt.Sprintf("encryptionsalt: %s\nconfig:\n  orders:team: nlp\n  extra: 42\n  aws:region: eu-west-1\n  orders:viewer:\n    secure: %s\n", salt, enc[0]))
	w.write("Pulumi.prod.yaml", "config:\n  team: core\n  extra: 7\n  viewer: role:00000000-0000-0000-0000-000000000002\n")

	// Without the passphrase, the dev stack's secure value cannot be read.
	r := w.run("plan", "--stack", "dev")
	if r.code != 1 || !strings.Contains(r.stderr, "PULUMI_CONFIG_PASSPHRASE") {
		t.Fatalf("plan of a stack with secure values and no passphrase: want exit 1 naming PULUMI_CONFIG_PASSPHRASE, got:\n%s", r)
	}
	w.extraEnv = []string{"PULUMI_CONFIG_PASSPHRASE=stack passphrase"}
	r = w.must(0, "apply", "--auto-approve", "--stack", "dev")
	wantOutput(t, r, "stack", "dev")
	wantOutput(t, r, "project", "orders")
	wantStdout(t, r, "extra   = 42")
	if got := e.policy("dashboard:orders-dev-nlp"); len(got) != 2 {
		t.Errorf("the dev stack's policy: %+v", got)
	}
	w.extraEnv = append(w.extraEnv, "RECONCILE_STACK=prod")
	r = w.must(0, "apply", "--auto-approve")
	wantOutput(t, r, "stack", "prod")
	if got := e.policy("dashboard:orders-prod-core"); len(got) != 2 {
		t.Errorf("the prod stack's policy: %+v", got)
	}
	for _, f := range []string{".reconcile/state.dev.db", ".reconcile/state.prod.db"} {
		if _, err := os.Stat(w.path(f)); err != nil {
			t.Errorf("the stack's state %s: %v", f, err)
		}
	}
	if _, err := os.Stat(w.path(".reconcile/state.db")); err == nil {
		t.Errorf("the default stack's state was written")
	}
	r = w.must(0, "stack", "ls")
	if r.stdout != "  dev\n* prod\n" {
		t.Errorf("stack ls = %q, want dev and prod, prod current", r.stdout)
	}
	r = w.must(0, "state", "list", "--stack", "dev")
	wantStdout(t, r, "dashboard:orders-dev-nlp")
	if strings.Contains(r.stdout, "orders-prod") {
		t.Errorf("the dev stack's state holds prod's object:\n%s", r.stdout)
	}
	// A plan saved for dev is applied to dev, and refused for prod.
	w.must(0, "plan", "--stack", "dev", "--out", "dev.plan")
	r = w.run("apply", "dev.plan", "--stack", "prod")
	if r.code != 1 || !strings.Contains(r.stderr, `it was made for stack "dev", not "prod"`) {
		t.Errorf("apply of dev's plan to prod: want exit 1 saying so, got:\n%s", r)
	}
	w.extraEnv = w.extraEnv[:1]
	w.must(0, "apply", "dev.plan")
}
