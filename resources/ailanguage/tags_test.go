package ailanguage_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage"
	"github.com/reconcile-dev/reconcile/resources/ailanguage/ailanguagetest"
)

// TestCheckDefinedTags: defined tags naming a tag namespace or key the
// tenancy lacks are found by reading the tenancy's tag namespaces, each at
// its key, with the names it has; names compare without regard to case;
// tags the apply would not send are not checked.
func TestCheckDefinedTags(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	c := ailanguage.NewClient(env.Config)
	for name, tc := range map[string]struct {
		want, prior resources.Attrs
		wantPaths   []string
		wantMsg     []string
	}{
		"known tags": {want: resources.Attrs{"definedTags": map[string]any{"Operations.CostCenter": "42", "finance.budget": "x"}}},
		"no tags":    {want: resources.Attrs{"displayName": "x"}},
		"unknown namespace and key": {
			want:      resources.Attrs{"definedTags": map[string]any{"Opertions.CostCenter": "42", "Operations.Team": "nlp", "Finance.Budget": "1"}},
			wantPaths: []string{"definedTags.Operations.Team", "definedTags.Opertions.CostCenter"},
			wantMsg: []string{`the tenancy has no tag namespace "Opertions"`, `(did you mean "Operations"?)`,
				`tag namespace "Operations" has no key "Team"`, "its keys: CostCenter, Environment, Owner", "RelatedResourceNotAuthorizedOrNotFound"},
		},
		"unknown but unchanged": {
			want:  resources.Attrs{"definedTags": map[string]any{"Gone.Key": "v"}},
			prior: resources.Attrs{"definedTags": map[string]any{"Gone.Key": "v"}},
		},
		"unknown and changed": {
			want:      resources.Attrs{"definedTags": map[string]any{"Gone.Key": "v2"}},
			prior:     resources.Attrs{"definedTags": map[string]any{"Gone.Key": "v"}},
			wantPaths: []string{"definedTags.Gone.Key"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := c.CheckDefinedTags(t.Context(), tc.want, tc.prior)
			got, rest := resources.AttrErrors(err)
			if rest != nil {
				t.Fatalf("CheckDefinedTags(%v) = %v, with errors other than *AttrError", tc.want, err)
			}
			var paths []string
			for _, ae := range got {
				paths = append(paths, strings.Join(ae.Path, "."))
			}
			if !slices.Equal(paths, tc.wantPaths) {
				t.Fatalf("CheckDefinedTags(%v) = %v, want errors at %q", tc.want, err, tc.wantPaths)
			}
			for _, sub := range tc.wantMsg {
				if !strings.Contains(err.Error(), sub) {
					t.Errorf("CheckDefinedTags(%v) = %q, want it to say %q", tc.want, err, sub)
				}
			}
		})
	}
}

// TestCheckDefinedTagsReadFails: a tenancy that cannot be read is an error
// of its own, not a refusal of the tags.
func TestCheckDefinedTagsReadFails(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	// A host that knows nothing of Identity: 404 to every call, not retried.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"code":"NotAuthorizedOrNotFound","message":"Authorization failed or requested resource not found."}`))
	}))
	t.Cleanup(srv.Close)
	cfg := env.Config
	cfg.Host = srv.URL
	err := ailanguage.NewClient(cfg).CheckDefinedTags(t.Context(), resources.Attrs{"definedTags": map[string]any{"Operations.Owner": "x"}}, nil)
	var ae *resources.AttrError
	if err == nil || errors.As(err, &ae) || !strings.Contains(err.Error(), "list the tenancy's tag namespaces: oci API: 404 NotAuthorizedOrNotFound") {
		t.Errorf("CheckDefinedTags with the API out of reach = %v, want the failed read", err)
	}
}
