package restrictionpolicy_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/restrictionpolicy"
)

// TestCheckInputs: a relation the resource type does not support is found
// offline, at its path, naming the supported ones; what is not known, or
// of a type the table lacks, is left alone.
func TestCheckInputs(t *testing.T) {
	t.Parallel()
	d := restrictionpolicy.New(restrictionpolicy.Config{}) // CheckInputs makes no request
	for name, tc := range map[string]struct {
		want      attrs
		wantPaths []string // joined by "."
		wantMsg   []string
	}{
		"supported relations": {want: attrs{"resourceId": "dashboard:x", "bindings": []any{binding("viewer", roleA), binding("editor", roleB)}}},
		"owner on a dashboard": {
			want:      attrs{"resourceId": "dashboard:x", "bindings": []any{binding("editor", roleA), binding("owner", roleB)}},
			wantPaths: []string{"bindings.1.relation"},
			wantMsg:   []string{`resource type "dashboard" has no relation "owner"`, `"viewer" or "editor"`},
		},
		"runner is a workflow's, not a dashboard's": {
			want:      attrs{"resourceId": "dashboard:x", "bindings": []any{binding("runner", roleA), binding("manager", roleB)}},
			wantPaths: []string{"bindings.0.relation", "bindings.1.relation"},
		},
		"runner on a workflow":      {want: attrs{"resourceId": "workflow:x", "bindings": []any{binding("runner", roleA)}}},
		"manager on a case project": {want: attrs{"resourceId": "case-management-project:x", "bindings": []any{binding("manager", roleA)}}},
		"editor on a case project": {
			want:      attrs{"resourceId": "case-management-project:x", "bindings": []any{binding("editor", roleA)}},
			wantPaths: []string{"bindings.0.relation"},
			wantMsg:   []string{`"viewer", "contributor" or "manager"`},
		},
		"type the table lacks":      {want: attrs{"resourceId": "gizmo:x", "bindings": []any{binding("owner", roleA)}}},
		"resource id not known":     {want: attrs{"bindings": []any{binding("owner", roleA)}}},
		"binding not known":         {want: attrs{"resourceId": "dashboard:x", "bindings": []any{nil, binding("viewer", roleA)}}},
		"relation not known":        {want: attrs{"resourceId": "dashboard:x", "bindings": []any{map[string]any{"principals": []any{roleA}}}}},
		"bindings of another shape": {want: attrs{"resourceId": "dashboard:x", "bindings": "editor"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := d.CheckInputs(tc.want)
			attrErrs, rest := resources.AttrErrors(err)
			if rest != nil {
				t.Fatalf("CheckInputs(%v) = %v, with errors other than *AttrError", tc.want, err)
			}
			var paths []string
			for _, ae := range attrErrs {
				paths = append(paths, strings.Join(ae.Path, "."))
			}
			if !slices.Equal(paths, tc.wantPaths) {
				t.Fatalf("CheckInputs(%v) = %v, want errors at %q", tc.want, err, tc.wantPaths)
			}
			for _, sub := range tc.wantMsg {
				if !strings.Contains(err.Error(), sub) {
					t.Errorf("CheckInputs(%v) = %q, want it to say %q", tc.want, err, sub)
				}
			}
			if err != nil && !errors.Is(err, resources.ErrRefused) {
				t.Errorf("CheckInputs(%v) = %v, which does not match ErrRefused", tc.want, err)
			}
		})
	}
}

// TestCreateRefusesUnsupportedRelation: a relation known only at apply is
// refused by Create before anything is sent.
func TestCreateRefusesUnsupportedRelation(t *testing.T) {
	t.Parallel()
	var rec recorder
	e := newEnv(t, "", nil, rec.wrap)
	_, _, err := restrictionpolicy.New(e.config()).Create(t.Context(), attrs{"resourceId": "dashboard:rel", "bindings": []any{binding("owner", roleA)}})
	var ae *resources.AttrError
	if !errors.As(err, &ae) || !errors.Is(err, resources.ErrRefused) || strings.Join(ae.Path, ".") != "bindings.0.relation" {
		t.Fatalf("Create with relation owner on a dashboard = %v, want an *AttrError at bindings.0.relation", err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("Create sent %q, want nothing", got)
	}
}

// TestCheckPlan: a resource type the table lacks is asked of the API
// (Datadog refuses the types without restriction policies, even to GET),
// and its refusal reported at resourceId with a suggestion; a known type,
// or a policy made already, costs no request.
func TestCheckPlan(t *testing.T) {
	t.Parallel()
	var rec recorder
	e := newEnv(t, "", nil, rec.wrap)
	d := restrictionpolicy.New(e.config())
	want := attrs{"resourceId": "dashbaord:x", "bindings": []any{binding("editor", roleA)}}
	err := d.CheckPlan(t.Context(), want, nil)
	var ae *resources.AttrError
	if !errors.As(err, &ae) || strings.Join(ae.Path, ".") != "resourceId" {
		t.Fatalf("CheckPlan(%v) = %v, want an *AttrError at resourceId", want, err)
	}
	for _, sub := range []string{"Invalid resource type: 'dashbaord' does not support restriction policies", `did you mean "dashboard"?`} {
		if !strings.Contains(err.Error(), sub) {
			t.Errorf("CheckPlan(%v) = %q, want it to say %q", want, err, sub)
		}
	}
	if got := rec.take(); len(got) != 1 || !strings.HasPrefix(got[0], "GET ") {
		t.Errorf("CheckPlan asked %q, want one GET", got)
	}

	if err := d.CheckPlan(t.Context(), attrs{"resourceId": "dashboard:x"}, nil); err != nil {
		t.Errorf("CheckPlan of a dashboard = %v", err)
	}
	if err := d.CheckPlan(t.Context(), want, attrs{"resourceId": "dashbaord:x"}); err != nil {
		t.Errorf("CheckPlan of a policy made already = %v", err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("CheckPlan of a known type, or of a policy made already, asked %q", got)
	}
}
