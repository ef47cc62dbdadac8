package specs

import (
	"strings"
	"testing"
)

// LoadOptions.Checked skips validating the literals of specs with exactly
// that Hash, and of no others.
func TestLoadChecked(t *testing.T) {
	t.Parallel()
	const valid = `resources:
  p:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:abc-def-ghi
      bindings:
        - relation: viewer
          principals: ["role:00000000-0000-0000-0000-000000000001"]
`
	invalid := strings.Replace(valid, "relation: viewer", "relation: 7", 1)
	load := func(src, checked string) (*Spec, bool) {
		s, ds := LoadWith(t.TempDir(), []Source{{Name: "main.yaml", Data: []byte(src)}}, nil, LoadOptions{Checked: checked})
		return s, ds.HasErrors()
	}
	s, bad := load(valid, "")
	if bad {
		t.Fatal("the valid spec does not load")
	}
	if _, bad := load(invalid, ""); !bad {
		t.Fatal("the invalid spec loads: the test proves nothing")
	}
	// Another spec's hash does not skip anything.
	if _, bad := load(invalid, s.Hash); !bad {
		t.Error("an invalid spec loads when Checked is the hash of another")
	}
	c, bad := load(valid, s.Hash)
	if bad {
		t.Fatal("the valid spec does not load with its own hash as Checked")
	}
	if got := c.Resources["p"].Properties.validated; got == nil || got != c.Resources["p"].Schema {
		t.Errorf("with Checked, the literals are not marked valid (validated = %v)", got)
	}
}
