package aiproject_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage/ailanguagetest"
	"github.com/reconcile-dev/reconcile/resources/aiproject"
)

// TestCheckPlan: a project's defined tags are checked against the
// tenancy's tag namespaces.
func TestCheckPlan(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	d := aiproject.New(env.Config)
	if err := d.CheckPlan(t.Context(), resources.Attrs{"definedTags": map[string]any{"Operations.Owner": "nlp"}}, nil); err != nil {
		t.Errorf("CheckPlan with a known tag = %v", err)
	}
	err := d.CheckPlan(t.Context(), resources.Attrs{"definedTags": map[string]any{"Ops.Owner": "nlp"}}, nil)
	var ae *resources.AttrError
	if !errors.As(err, &ae) || strings.Join(ae.Path, ".") != "definedTags.Ops.Owner" || !strings.Contains(err.Error(), `no tag namespace "Ops"`) {
		t.Errorf("CheckPlan with an unknown namespace = %v, want an *AttrError at its key", err)
	}
}
