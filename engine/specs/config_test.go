package specs_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
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

// A stack's setting that no config entry reads and nothing refers to is a
// typo whose value would be lost, the default used instead: an error at
// the setting, with the entry it was meant for. A setting the specs refer
// to without declaring it declares it, as in Pulumi YAML.
func TestStackSettingUnknown(t *testing.T) {
	t.Parallel()
	src := "config:\n  team:\n    type: string\n    default: core\n  replicas: 1\noutputs:\n  t: ${team}\n  r: ${replicas}\n  e: ${extra}\n  p: ${acme:plain}\n"
	at := func(line int) diag.Pos { return diag.At("Pulumi.dev.yaml", line, 3) }
	for name, tc := range map[string]struct {
		stack map[string]specs.StackValue
		want  []string
	}{
		"namespaced typo": {
			stack: map[string]specs.StackValue{"teem": {Value: "nlp", Key: "acme:teem", Pos: at(2)}},
			want:  []string{`Pulumi.dev.yaml:2:3: error: unknown config key "acme:teem" (did you mean "acme:team"?)`},
		},
		"plain typo": {
			stack: map[string]specs.StackValue{"replica": {Value: int64(3), Pos: at(4)}},
			want:  []string{`Pulumi.dev.yaml:4:3: error: unknown config key "replica" (did you mean "replicas"?)`},
		},
		"nothing close": {
			stack: map[string]specs.StackValue{"region": {Value: "eu", Key: "acme:region", Pos: at(5)}},
			want:  []string{`Pulumi.dev.yaml:5:3: error: unknown config key "acme:region"`},
		},
		"declared, or referred to": {
			stack: map[string]specs.StackValue{"team": {Value: "nlp", Key: "acme:team"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			stack := map[string]specs.StackValue{"extra": {Value: int64(1)}, "plain": {Value: "p", Key: "acme:plain"}}
			maps.Copy(stack, tc.stack)
			_, diags := specs.LoadWith(t.TempDir(), []specs.Source{{Name: "main.yaml", Data: []byte(src)}}, nil,
				specs.LoadOptions{Project: "acme", Stack: "dev", StackConfig: stack})
			var got []string
			for _, d := range diags {
				if d.Severity == diag.Error {
					got = append(got, d.Pos.String()+": error: "+d.Summary)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for _, d := range diags {
				if !strings.Contains(d.Detail, "declare it under config:") {
					t.Errorf("%s: the detail does not say how to declare it: %q", d.Pos, d.Detail)
				}
			}
		})
	}
}
