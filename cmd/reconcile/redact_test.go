package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/value"
)

// redactTo returns a redactor of secrets writing to b, as a command with
// --output json (structured) or text sets one up.
func redactTo(b *bytes.Buffer, structured bool, secrets ...string) *redactor {
	c := &cli{stdout: b, stderr: &bytes.Buffer{}}
	if structured {
		c.g.output = "json"
	}
	c.redactSecrets(secrets)
	return c.stdout.(*redactor)
}

func TestRedactorEncodings(t *testing.T) {
	t.Parallel()
	secret := "p&ss\"<w>\\rd\tx"
	jsonForm, _ := json.Marshal(secret)
	for name, text := range map[string]string{
		"as is":         "error: " + secret + " refused",
		"JSON-escaped":  `{"message": ` + string(jsonForm) + `}`,
		"Go-quoted":     fmt.Sprintf("invalid principal %q", secret),
		"ASCII-quoted":  "got " + strconv.QuoteToASCII(secret),
		"URL-escaped":   "POST /api/v2/restriction_policy/dashboard:p%26ss%22%3Cw%3E%5Crd%09x: 400",
		"query-escaped": "?token=p%26ss%22%3Cw%3E%5Crd%09x",
	} {
		var b bytes.Buffer
		r := redactTo(&b, false, secret)
		r.Write([]byte(text))
		r.flush()
		if !strings.Contains(b.String(), value.SensitiveText) {
			t.Errorf("%s: %q was written as %q, with no redaction", name, text, b.String())
		}
		for _, leak := range []string{"p&ss", `p\u0026ss`, "p%26ss"} {
			if strings.Contains(b.String(), leak) {
				t.Errorf("%s: %q leaks as %q", name, text, b.String())
			}
		}
	}
}

// In JSON output only string values are redacted: a secret that is an
// ordinary word leaves the keys, and so the document, intact.
func TestRedactorJSONKeepsKeys(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	r := redactTo(&b, true, "value", "tab\tand\"quote")
	doc := `{
  "value": "the value is value",
  "values": ["value", "valued", "tab\tand\"quote"],
  "nested": {"value": 1}
}
`
	// Written in pieces that cut tokens apart.
	for i := 0; i < len(doc); i += 7 {
		r.Write([]byte(doc[i:min(i+7, len(doc))]))
	}
	r.flush()
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("the redacted JSON does not parse: %v\n%s", err, b.String())
	}
	want := map[string]any{
		"value":  "the (sensitive value) is (sensitive value)",
		"values": []any{"(sensitive value)", "valued", "(sensitive value)"},
		"nested": map[string]any{"value": float64(1)},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("redacted JSON = %v, want %v", got, want)
	}
}

// A secret that is a word is not blanked out inside longer words of text.
func TestRedactorWordBoundaries(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	r := redactTo(&b, false, "value")
	r.Write([]byte("values of value, value-1 and xvalue\n"))
	if got, want := b.String(), "values of (sensitive value), (sensitive value)-1 and xvalue\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
