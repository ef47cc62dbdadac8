package gcp_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestEmulatorPolicyVersions checks the versions of IAM policies: the
// version an answer carries, conditional bindings read in version 1, and
// writes that would drop conditions.
func TestEmulatorPolicyVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.creds.GoogleAccessToken
	res := "/v1/services/" + orders + "/consumers/versions"
	get := func(body string) string {
		t.Helper()
		status, got := e.call(t, http.MethodPost, res+":getIamPolicy?prettyPrint=false", tok, body)
		if status != 200 {
			t.Fatalf("getIamPolicy %s = %d %s", body, status, got)
		}
		return got
	}
	set := func(body string) (int, string) {
		t.Helper()
		return e.call(t, http.MethodPost, res+":setIamPolicy?prettyPrint=false", tok, body)
	}
	etagOf := func(body string) string {
		_, rest, _ := strings.Cut(body, `"etag":"`)
		etag, _, _ := strings.Cut(rest, `"`)
		return etag
	}

	// Version 3 asked for a policy without conditions answers version 1.
	if status, body := set(`{"policy":{"version":3,"bindings":[{"role":"roles/viewer","members":["user:a@b.c"]}]}}`); status != 200 || !strings.Contains(body, `"version":1,`) {
		t.Fatalf("setIamPolicy without conditions in version 3 = %d %s, want version 1", status, body)
	}
	if got := get(`{"options":{"requestedPolicyVersion":3}}`); !strings.Contains(got, `"version":1,`) {
		t.Errorf("getIamPolicy v3 of a policy without conditions = %s, want version 1", got)
	}

	cond := `{"role":"roles/viewer","members":["user:b@b.c"],"condition":{"title":"t","expression":"true"}}`
	status, body := set(`{"policy":{"version":3,"etag":"` + etagOf(get("")) + `","bindings":[{"role":"roles/viewer","members":["user:a@b.c"]},` + cond + `]}}`)
	if status != 200 || !strings.Contains(body, `"version":3,`) {
		t.Fatalf("setIamPolicy with a condition in version 3 = %d %s", status, body)
	}
	etag := etagOf(body)
	for name, tc := range map[string]struct {
		body string
		want []string
		not  []string
	}{
		"version 3": {`{"options":{"requestedPolicyVersion":3}}`,
			[]string{`"version":3,`, `"role":"roles/viewer","members":["user:b@b.c"],"condition":{"expression":"true","title":"t"}`}, []string{"_withcond_"}},
		"no version": {``, []string{`"version":1,`, `"role":"roles/viewer_withcond_`}, []string{`"condition"`}},
		"version 1":  {`{"options":{"requestedPolicyVersion":1}}`, []string{`"version":1,`, `_withcond_`}, []string{`"condition"`}},
	} {
		got := get(tc.body)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("getIamPolicy %s = %s, want %s in it", name, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("getIamPolicy %s = %s, want no %s in it", name, got, n)
			}
		}
	}

	// A version 1 reader cannot write its mangled roles back, nor change a
	// conditional policy with its etag.
	mangled := get("")
	_, rest, _ := strings.Cut(mangled, `"role":"roles/viewer_withcond_`)
	digest, _, _ := strings.Cut(rest, `"`)
	for name, body := range map[string]string{
		"version 1 with etag": `{"policy":{"version":1,"etag":"` + etag + `","bindings":[{"role":"roles/viewer","members":["user:a@b.c"]}]}}`,
		"mangled role":        `{"policy":{"bindings":[{"role":"roles/viewer_withcond_` + digest + `","members":["user:b@b.c"]}]}}`,
	} {
		if status, got := set(body); status != 400 || !strings.Contains(got, `"status":"INVALID_ARGUMENT"`) {
			t.Errorf("setIamPolicy %s = %d %s, want 400 INVALID_ARGUMENT", name, status, got)
		}
	}
	// Without etag, version 1 overwrites and the conditions are lost, as IAM
	// documents.
	if status, got := set(`{"policy":{"bindings":[{"role":"roles/viewer","members":["user:a@b.c"]}]}}`); status != 200 || strings.Contains(got, "condition") || !strings.Contains(got, `"version":1,`) {
		t.Errorf("setIamPolicy version 1 without etag = %d %s, want the conditions dropped", status, got)
	}
}
