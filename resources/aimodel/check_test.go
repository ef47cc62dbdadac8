package aimodel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage/ailanguagetest"
	"github.com/reconcile-dev/reconcile/resources/aimodel"
)

// TestCheckPlan: a model to be made in a project that does not exist is
// refused at projectId; in the seeded ACTIVE project it passes.
func TestCheckPlan(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	d := aimodel.New(env.Config)
	if err := d.CheckPlan(t.Context(), resources.Attrs{"projectId": env.Project}, nil); err != nil {
		t.Errorf("CheckPlan in the seeded project = %v", err)
	}
	const gone = "ocid1.ailanguageproject.oc1.iad.gone"
	err := d.CheckPlan(t.Context(), resources.Attrs{"projectId": gone}, nil)
	var ae *resources.AttrError
	if !errors.As(err, &ae) || strings.Join(ae.Path, ".") != "projectId" || !strings.Contains(err.Error(), "project "+gone+" does not exist") {
		t.Errorf("CheckPlan in a project that does not exist = %v, want an *AttrError at projectId", err)
	}
}
