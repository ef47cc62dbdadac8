package value_test

import (
	"testing"

	"github.com/reconcile-dev/reconcile/engine/value"
)

// TestRedactionLeavesPlaceholders: a secret that is a word of the texts
// standing in for values ("value", "apply", "sensitive") is replaced
// where it stands alone, and never inside "(sensitive value)" or "(known
// after apply)", which would otherwise read "(sensitive (sensitive
// value))".
func TestRedactionLeavesPlaceholders(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		secrets []string
		in      string
		want    string
	}{
		"value inside sensitive": {
			secrets: []string{"value"},
			in:      `o = (sensitive value), p = "value"`,
			want:    `o = (sensitive value), p = "(sensitive value)"`,
		},
		"apply inside unknown": {
			secrets: []string{"apply", "known"},
			in:      "id = (known after apply) apply",
			want:    "id = (known after apply) (sensitive value)",
		},
		"sensitive itself": {
			secrets: []string{"sensitive"},
			in:      "(sensitive value) sensitive",
			want:    "(sensitive value) (sensitive value)",
		},
		"a secret holding a placeholder": {
			secrets: []string{"pw(sensitive value)x"},
			in:      "got pw(sensitive value)x here",
			want:    "got (sensitive value) here",
		},
		"placeholder then secret": {
			secrets: []string{"hunter22"},
			in:      "(sensitive value)hunter22 (known after apply)",
			want:    "(sensitive value)(sensitive value) (known after apply)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := value.NewRedaction(tc.secrets).String(tc.in); got != tc.want {
				t.Errorf("redact %q of %q = %q, want %q", tc.secrets, tc.in, got, tc.want)
			}
		})
	}
}

// A message describes a string argument quoted and cut to 40 bytes
// (value.QuoteTrunc): a longer secret is found in that form too.
func TestRedactionFindsSecretsCutShort(t *testing.T) {
	t.Parallel()
	const secret = "tok-5ecret-0123456789-abcdefghij-klmnopqrstuvwxyz"
	msg := "fn::join takes [delimiter, list of values], got [string " + value.QuoteTrunc(secret) + ", array]"
	if got, want := value.NewRedaction([]string{secret}).String(msg), `fn::join takes [delimiter, list of values], got [string "(sensitive value)", array]`; got != want {
		t.Errorf("redacted = %q, want %q", got, want)
	}
}
