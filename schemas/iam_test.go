package schemas

import "testing"

// TestIAMAnnotations checks the x-iam annotation of every schema that has
// one, and that the GCP IAM resources have it.
func TestIAMAnnotations(t *testing.T) {
	t.Parallel()
	annotated := map[string]string{}
	for _, tok := range Tokens() {
		s := mustLookup(t, tok)
		if r := s.iam(); r.err != nil {
			t.Errorf("%s: %v", tok, r.err)
		}
		if g, ok := s.IAM(); ok {
			annotated[tok] = g.Object + " " + g.Grants
		}
	}
	want := map[string]string{
		"gcp:endpoints:ServiceIamPolicy":    "gcp:endpoints:service policy",
		"gcp:endpoints:ServiceIamBinding":   "gcp:endpoints:service binding",
		"gcp:endpoints:ServiceIamMember":    "gcp:endpoints:service member",
		"gcp:endpoints:ConsumersIamPolicy":  "gcp:endpoints:consumer policy",
		"gcp:endpoints:ConsumersIamBinding": "gcp:endpoints:consumer binding",
		"gcp:endpoints:ConsumersIamMember":  "gcp:endpoints:consumer member",
	}
	if len(annotated) != len(want) {
		t.Errorf("annotated types = %v, want %v", annotated, want)
	}
	for tok, w := range want {
		if annotated[tok] != w {
			t.Errorf("%s: x-iam %q, want %q", tok, annotated[tok], w)
		}
	}
	g, _ := mustLookup(t, "gcp:endpoints:ConsumersIamMember").IAM()
	for i, tc := range []struct{ field, in, want string }{
		{"serviceName", "orders.example", "orders.example"},
		{"serviceName", "services/orders.example", "orders.example"},
		{"consumerProject", "acme", "acme"},
		{"consumerProject", "orders.example/acme", "acme"},
		{"consumerProject", "services/orders.example/consumers/acme", "acme"},
	} {
		for _, k := range g.Keys {
			if k.Field == tc.field {
				if got := k.Canonical(tc.in); got != tc.want {
					t.Errorf("%d: %s key of %q = %q, want %q", i, tc.field, tc.in, got, tc.want)
				}
			}
		}
	}
}

func TestParseIAMErrors(t *testing.T) {
	t.Parallel()
	props := map[string]any{"serviceName": map[string]any{}, "role": map[string]any{}}
	for name, x := range map[string]any{
		"not an object":  "policy",
		"no object":      map[string]any{"grants": "policy", "keys": map[string]any{"serviceName": "^(.*)$"}},
		"bad grants":     map[string]any{"object": "o", "grants": "owner", "keys": map[string]any{"serviceName": "^(.*)$"}},
		"no keys":        map[string]any{"object": "o", "grants": "policy"},
		"no group":       map[string]any{"object": "o", "grants": "policy", "keys": map[string]any{"serviceName": "^.*$"}},
		"bad pattern":    map[string]any{"object": "o", "grants": "policy", "keys": map[string]any{"serviceName": "^(.*$"}},
		"unknown key":    map[string]any{"object": "o", "grants": "policy", "keys": map[string]any{"service": "^(.*)$"}},
		"member no role": map[string]any{"object": "o", "grants": "member", "keys": map[string]any{"serviceName": "^(.*)$"}},
	} {
		if _, err := parseIAM(map[string]any{"x-iam": x, "properties": props}); err == nil {
			t.Errorf("%s: parseIAM succeeded, want an error", name)
		}
	}
}
