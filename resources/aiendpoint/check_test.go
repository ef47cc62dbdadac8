package aiendpoint

import (
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage/ailanguagetest"
)

// TestCheckPlan: an endpoint that would deploy a model that does not
// exist, or is not ACTIVE, is refused at modelId, as are defined tags the
// tenancy lacks; a model the apply would not send is not read.
func TestCheckPlan(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	d := New(env.Config)
	const unknown = "ocid1.ailanguagemodel.oc1.iad.nosuchmodel"
	for name, tc := range map[string]struct {
		want, prior resources.Attrs
		wantPaths   []string
		wantMsg     string
	}{
		"active model":  {want: resources.Attrs{"modelId": env.ActiveModel}},
		"failed model":  {want: resources.Attrs{"modelId": env.FailedModel}, wantPaths: []string{"modelId"}, wantMsg: "is FAILED, not ACTIVE: OCI deploys only an ACTIVE model"},
		"unknown model": {want: resources.Attrs{"modelId": unknown}, wantPaths: []string{"modelId"}, wantMsg: "model " + unknown + " does not exist"},
		"update to a failed model": {want: resources.Attrs{"modelId": env.FailedModel}, prior: resources.Attrs{"modelId": env.ActiveModel},
			wantPaths: []string{"modelId"}},
		"model unchanged": {want: resources.Attrs{"modelId": env.FailedModel}, prior: resources.Attrs{"modelId": env.FailedModel}},
		"model not known": {want: resources.Attrs{"displayName": "x"}},
		"model and tags": {want: resources.Attrs{"modelId": unknown, "definedTags": map[string]any{"Operations.Team": "x"}},
			wantPaths: []string{"modelId", "definedTags.Operations.Team"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := d.CheckPlan(t.Context(), tc.want, tc.prior)
			got, rest := resources.AttrErrors(err)
			if rest != nil {
				t.Fatalf("CheckPlan(%v) = %v, with errors other than *AttrError", tc.want, err)
			}
			var paths []string
			for _, ae := range got {
				paths = append(paths, strings.Join(ae.Path, "."))
			}
			if !slices.Equal(paths, tc.wantPaths) {
				t.Fatalf("CheckPlan(%v) = %v, want errors at %q", tc.want, err, tc.wantPaths)
			}
			if tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("CheckPlan(%v) = %q, want it to say %q", tc.want, err, tc.wantMsg)
			}
		})
	}
}
