package endpointsiam_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
)

// TestCheckInputs: members IAM refuses are found offline, each at its
// path, by the policy, binding and member drivers alike; what is not
// known yet is left alone.
func TestCheckInputs(t *testing.T) {
	t.Parallel()
	cl := endpointsiam.NewClient(endpointsiam.Config{}) // the checks make no request
	for name, tc := range map[string]struct {
		d         resources.InputChecker
		want      resources.Attrs
		wantPaths []string
		wantMsg   string
	}{
		"binding members": {d: endpointsiam.NewServiceBinding(cl),
			want:      resources.Attrs{"role": consumerRole, "members": []any{"user:alex@example.com", "users:bo@example.com", nil, "domain:example"}},
			wantPaths: []string{"members.1", "members.3"}, wantMsg: `IAM knows no principal type "users" (did you mean "user"?)`},
		"binding members fine": {d: endpointsiam.NewConsumersBinding(cl),
			want: resources.Attrs{"members": []any{"group:ops@example.com", "allUsers"}}},
		"member": {d: endpointsiam.NewServiceMember(cl),
			want: resources.Attrs{"member": "serviceAccount:orders-esp"}, wantPaths: []string{"member"}, wantMsg: "serviceAccount: takes an email address"},
		"member not known": {d: endpointsiam.NewConsumersMember(cl), want: resources.Attrs{"role": consumerRole}},
		"policy": {d: endpointsiam.NewServicePolicy(cl),
			want:      resources.Attrs{"policyData": `{"bindings":[{"role":"roles/viewer","members":["user:alex@example.com","user alex@example.com"]}]}`},
			wantPaths: []string{"policyData"}, wantMsg: "binding of roles/viewer:"},
		"policy that does not parse": {d: endpointsiam.NewConsumersPolicy(cl),
			want: resources.Attrs{"policyData": `{"bindings":`}, wantPaths: []string{"policyData"}},
		"policy not known": {d: endpointsiam.NewServicePolicy(cl), want: resources.Attrs{}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := tc.d.CheckInputs(tc.want)
			got, rest := resources.AttrErrors(err)
			if rest != nil {
				t.Fatalf("CheckInputs(%v) = %v, with errors other than *AttrError", tc.want, err)
			}
			var paths []string
			for _, ae := range got {
				paths = append(paths, strings.Join(ae.Path, "."))
			}
			if !slices.Equal(paths, tc.wantPaths) {
				t.Fatalf("CheckInputs(%v) = %v, want errors at %q", tc.want, err, tc.wantPaths)
			}
			if tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("CheckInputs(%v) = %q, want it to say %q", tc.want, err, tc.wantMsg)
			}
		})
	}
}
