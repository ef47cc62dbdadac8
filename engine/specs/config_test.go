package specs_test

import (
	"strings"
	"testing"

	"reconcile/engine/diag"
	"reconcile/engine/specs"
	"reconcile/engine/value"
)

const configNameSpec = `
config:
  password:
    name: database-password
    type: string
    secret: true
  region:
    name: acme:oci-region
    default: us-ashburn-1
  plain:
    type: string
    secret: false
variables:
  both: ${acme:region}-${region}
`

func loadConfig(t *testing.T, stack map[string]specs.StackValue, overrides map[string]string) (*specs.Spec, diag.Diagnostics) {
	t.Helper()
	return specs.LoadWith(t.TempDir(), []specs.Source{{Name: "main.yaml", Data: []byte(configNameSpec)}}, overrides,
		specs.LoadOptions{Project: "acme", Stack: "prod", StackConfig: stack})
}

// A config entry with name: reads that setting, from the stack's settings
// and --config; references still use the entry's own name, also in the
// project's namespace (${acme:region}).
func TestConfigName(t *testing.T) {
	s, diags := loadConfig(t, map[string]specs.StackValue{
		"database-password": {Value: "hunter2", Secret: true},
		"oci-region":        {Value: "eu-frankfurt-1"},
		"plain":             {Value: "p"},
	}, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if got := s.Values["password"]; got != (value.Secret{Value: "hunter2"}) {
		t.Errorf("password = %#v, want the secret setting database-password", got)
	}
	if got := s.Values["region"]; got != "eu-frankfurt-1" {
		t.Errorf("region = %#v, want the setting oci-region", got)
	}
	if _, declared := s.Config["database-password"]; declared {
		t.Errorf("the setting database-password declared a config entry of its own; it is password's")
	}
	if deps := s.Graph().Deps("both"); len(deps) != 1 || deps[0] != "region" {
		t.Errorf("both depends on %v, want region (${acme:region} is ${region})", deps)
	}

	s, diags = loadConfig(t, map[string]specs.StackValue{"plain": {Value: "p"}}, map[string]string{"database-password": "s3cret", "acme:oci-region": "ap-tokyo-1"})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if s.Values["password"] != (value.Secret{Value: "s3cret"}) || s.Values["region"] != "ap-tokyo-1" {
		t.Errorf("with --config: password %#v, region %#v", s.Values["password"], s.Values["region"])
	}

	_, diags = loadConfig(t, map[string]specs.StackValue{"plain": {Value: "p"}}, map[string]string{"password": "x", "database-password": "y"})
	if !diags.HasErrors() || !strings.Contains(diags.Err().Error(), `--config password: config "password" reads the setting "database-password" (its name:)`) {
		t.Errorf("--config password=x: %v, want an error naming the setting to pass", diags)
	}
}

// As in Pulumi, a value the stack's settings give encrypted cannot be
// declared secret: false.
func TestConfigSecretFalseOfSecureValue(t *testing.T) {
	_, diags := loadConfig(t, map[string]specs.StackValue{
		"database-password": {Value: "hunter2", Secret: true},
		"plain":             {Value: "p", Secret: true},
	}, nil)
	if !diags.HasErrors() || diags[0].Pos.Line != 12 || diags[0].Pos.Col != 13 || !strings.Contains(diags[0].Summary, `config "plain" is declared secret: false, but the stack's settings give it encrypted`) {
		t.Errorf("diagnostics %v, want an error at main.yaml:12:13 about secret: false", diags)
	}
	for _, d := range diags {
		if strings.Contains(d.String(), "hunter2") {
			t.Errorf("a diagnostic shows the secret: %s", d)
		}
	}
}

// The items of a config list set in the stack's settings or with --config
// are of the declared item type.
func TestConfigListItemsOfSettings(t *testing.T) {
	src := "config:\n  ports:\n    type: List<Integer>\n"
	for _, c := range []struct {
		stack    map[string]specs.StackValue
		override map[string]string
		want     string
	}{
		{stack: map[string]specs.StackValue{"ports": {Value: []any{int64(80), "http"}}}, want: `config "ports": item 1: expected integer, got string "http"`},
		{override: map[string]string{"ports": `[80, "http"]`}, want: `--config ports: item 1: expected integer, got string "http"`},
		{override: map[string]string{"ports": `[80, 443]`}},
	} {
		_, diags := specs.LoadWith(t.TempDir(), []specs.Source{{Name: "main.yaml", Data: []byte(src)}}, c.override, specs.LoadOptions{StackConfig: c.stack})
		if c.want == "" {
			if diags.HasErrors() {
				t.Errorf("%v: %v", c.override, diags)
			}
			continue
		}
		if !diags.HasErrors() || !strings.Contains(diags.Err().Error(), c.want) {
			t.Errorf("%v %v: %v, want %q", c.stack, c.override, diags, c.want)
		}
	}
}
