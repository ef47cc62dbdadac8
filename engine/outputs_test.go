package engine_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/outputs"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/state"
)

// outputsSpec has a secret config value, a resource with a secret input,
// and outputs of each: plain, from secret config, and from the secret
// input.
func outputsSpec(token string) string {
	return `
config:
  token:
    type: string
    secret: true
    default: ` + token + `
` + resourcesOf(endpoint("a", "first", "description: {fn::secret: "+secretDesc+"}")) + `
outputs:
  id: ${a.id}
  name: ${a.displayName}
  token: ${token}
  joined: prefix-${token}
  desc: ${a.description}
  both:
    id: ${a.id}
    token: ${token}
`
}

// recordedOutputs reads the outputs state holds.
func (h *harness) recordedOutputs() state.Outputs {
	h.t.Helper()
	var o state.Outputs
	var ok bool
	var err error
	h.reading(func(st *state.Store) { o, ok, err = st.Outputs() })
	if err != nil || !ok {
		h.t.Fatalf("state holds no outputs: %v", err)
	}
	return o
}

// TestApplyRecordsOutputs checks that a complete apply records the
// outputs, secrets sealed, and that only the values recomputed to the
// same digest are revealed.
func TestApplyRecordsOutputs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := outputsSpec(secretConfig)
	h.mustApply(src)
	o := h.recordedOutputs()
	a := h.record("a")
	if o.Values["id"] != a.ID || o.Values["name"] != "first" || o.Command != "apply" || o.Serial != h.meta().Serial {
		t.Errorf("recorded outputs = %+v (a is %s)", o, a.ID)
	}
	for _, name := range []string{"token", "joined", "desc"} {
		if v, ok := o.Values[name].(map[string]any); !ok || !strings.HasPrefix(v["$secret"].(string), "hmac-sha256:") {
			t.Errorf("recorded %s = %#v, want it sealed", name, o.Values[name])
		}
	}
	if both := o.Values["both"].(map[string]any); both["id"] != a.ID {
		t.Errorf("recorded both = %#v, want its id in clear and its token sealed", both)
	}
	data, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secretConfig, secretDesc} {
		if strings.Contains(string(data), s) {
			t.Errorf("the state file holds the secret %q", s)
		}
	}

	key := h.stateKey()
	reveal := func(src, name string) (any, error) {
		var v any
		var err error
		h.reading(func(st *state.Store) { v, err = outputs.Reveal(h.load(src), st, key, name, o.Values[name]) })
		return v, err
	}
	for name, want := range map[string]any{"token": secretConfig, "joined": "prefix-" + secretConfig} {
		if v, err := reveal(src, name); err != nil || v != want {
			t.Errorf("Reveal(%s) = %v, %v; want %q", name, v, err, want)
		}
	}
	if v, err := reveal(src, "both"); err != nil || v.(map[string]any)["token"] != secretConfig {
		t.Errorf("Reveal(both) = %v, %v", v, err)
	}
	if _, err := reveal(src, "desc"); !errors.Is(err, outputs.ErrNotShown) || !strings.Contains(err.Error(), "only as a digest") {
		t.Errorf("Reveal(desc) = %v, want that state keeps the secret input only as a digest", err)
	}
	if _, err := reveal(outputsSpec("another-token"), "token"); !errors.Is(err, outputs.ErrNotShown) || !strings.Contains(err.Error(), "another value") {
		t.Errorf("Reveal(token) with other config = %v, want that the specs make another value", err)
	}
}

// TestTargetedApplyKeepsOutputs checks that a targeted apply records the
// outputs of what it planned and keeps the others, and that a destroy
// records none.
func TestTargetedApplyKeepsOutputs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(threeEndpoints(""))
	before := h.recordedOutputs()
	h.applyWith(threeEndpoints("-2"), planner.Options{Refresh: true, Replace: []string{"b"}, Targets: []string{"b"}}, apply.Options{Command: "apply"})
	after := h.recordedOutputs()
	if after.Values["cId"] != before.Values["cId"] || after.Values["bId"] == before.Values["bId"] || after.Values["bId"] != h.record("b").ID {
		t.Errorf("outputs after apply --target b --replace b: %v, before %v", after.Values, before.Values)
	}
	// Nothing changed: nothing is written.
	h.mustApply(threeEndpoints("-2"))
	again := h.recordedOutputs()
	h.mustApply(threeEndpoints("-2"))
	if got := h.recordedOutputs(); got.Serial != again.Serial || !got.Time.Equal(again.Time) {
		t.Errorf("an apply that changed nothing recorded the outputs again: %+v, was %+v", got, again)
	}
	h.destroy(threeEndpoints("-2"))
	if got := h.recordedOutputs(); len(got.Values) != 0 || got.Command != "destroy" {
		t.Errorf("outputs after destroy = %+v, want none", got)
	}
}
