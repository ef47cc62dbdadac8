package gcpiam_test

import (
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

// TestCheckMember: the principal identifiers of Google's IAM
// documentation pass; what IAM refuses is refused, saying why.
func TestCheckMember(t *testing.T) {
	t.Parallel()
	for _, m := range []string{
		"user:alex@example.com",
		"group:my-group@example.com",
		"serviceAccount:my-service-account@my-project.iam.gserviceaccount.com",
		"serviceAccount:my-project.svc.id.goog[my-namespace/my-kubernetes-sa]",
		"domain:example.com",
		"allUsers",
		"allAuthenticatedUsers",
		"principal://iam.googleapis.com/locations/global/workforcePools/altostrat-contractors/subject/raha@altostrat.com",
		"principalSet://iam.googleapis.com/locations/global/workforcePools/altostrat-contractors/group/administrators-group@altostrat.com",
		"principalSet://cloudresourcemanager.googleapis.com/projects/123456789012/type/ServiceAccount",
		"principal://goog/subject/alex@example.com",
		"projectOwner:my-project",
		"projectReaders",
	} {
		if err := gcpiam.CheckMember(m); err != nil {
			t.Errorf("CheckMember(%q) = %v, want nil", m, err)
		}
	}
	for m, want := range map[string]string{
		"users:alex@example.com":                      `IAM knows no principal type "users" (did you mean "user"?)`,
		"serviceaccount:sa@p.iam.gserviceaccount.com": `(did you mean "serviceAccount"?)`,
		"user:alex":                             "user: takes an email address",
		"group:ops":                             "group: takes an email address",
		"serviceAccount:my-sa":                  "PROJECT.svc.id.goog[NAMESPACE/NAME]",
		"domain:alex@example.com":               "domain: takes a domain name",
		"domain:example":                        "domain: takes a domain name",
		"principal:iam.googleapis.com/x/y":      "principal: takes a URI",
		"principalSet://everyone":               "principalSet: takes a URI",
		"user: alex@example.com":                "holds blanks",
		"user:alex@example.com ":                "holds blanks",
		"alice@example.com":                     "want TYPE:ID",
		"allusers":                              `(did you mean "allUsers"?)`,
		"deleted:user:alex@example.com?uid=123": "cannot be granted roles",
	} {
		err := gcpiam.CheckMember(m)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckMember(%q) = %v, want an error saying %q", m, err, want)
		}
	}
}
