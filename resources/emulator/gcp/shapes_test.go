package gcp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
)

// TestEmulatorGeneratedClientShapes sends getIamPolicy and setIamPolicy
// as Google's generated REST clients (cloud.google.com/go) do, in the
// shapes recorded from Google: the whole request message as the body,
// resource included next to policy or options, $alt=json;enum-encoding=int
// in the query, and enums as numbers, which the answer has too.
func TestEmulatorGeneratedClientShapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.creds.GoogleAccessToken
	const intEnums = "?%24alt=json%3Benum-encoding%3Dint"
	svc := "services/" + inventory
	for _, step := range []struct {
		name, path, body string
		wantStatus       int
		wantBody         string // substring
	}{
		{"get with resource", "/v1/" + svc + ":getIamPolicy" + intEnums,
			`{"resource":"` + svc + `","options":{"requestedPolicyVersion":3}}`, 200, `"etag": "ACAB"`},
		{"set with resource and a numeric enum", "/v1/" + svc + ":setIamPolicy" + intEnums,
			`{"policy":{"bindings":[{"members":["user:jane@acme.example"],"role":"roles/viewer"}],"auditConfigs":[{"service":"allServices","auditLogConfigs":[{"logType":1}]}],"version":3},` +
				`"resource":"` + svc + `","updateMask":"bindings,etag,auditConfigs"}`, 200, `"logType": 1`},
		{"get answers numbers when asked", "/v1/" + svc + ":getIamPolicy" + intEnums, `{"resource":"` + svc + `"}`, 200, `"logType": 1`},
		{"get answers names otherwise", "/v1/" + svc + ":getIamPolicy?alt=json&prettyPrint=false", `{}`, 200, `"logType":"ADMIN_READ"`},
		{"a consumer's", "/v1/" + svc + "/consumers/acme-other:getIamPolicy" + intEnums, `{"resource":"` + svc + `/consumers/acme-other","options":{}}`, 200, `"etag": "ACAB"`},
		{"an enum number out of range", "/v1/" + svc + ":setIamPolicy" + intEnums,
			`{"policy":{"auditConfigs":[{"service":"allServices","auditLogConfigs":[{"logType":9}]}]},"resource":"` + svc + `","updateMask":"auditConfigs"}`, 400, `Invalid value for log_type: \"9\".`},
		{"an unknown field", "/v1/" + svc + ":getIamPolicy?alt=json", `{"resourc":"x"}`, 400, `Invalid JSON payload received. Unknown name \"resourc\": Cannot find field.`},
		{"another $alt", "/v1/" + svc + ":getIamPolicy?%24alt=proto", `{}`, 400, `"status": "INVALID_ARGUMENT"`},
	} {
		status, body := e.call(t, http.MethodPost, step.path, tok, step.body)
		if status != step.wantStatus || !strings.Contains(body, step.wantBody) {
			t.Fatalf("%s: POST %s %s = %d %s\nwant %d containing %s", step.name, step.path, step.body, status, body, step.wantStatus, step.wantBody)
		}
	}
}

// TestEmulatorTokenInfo: both of Google's tokeninfo endpoints name the
// emulator's caller for its token, each in its own shape, and answer 400
// invalid_token for any other.
func TestEmulatorTokenInfo(t *testing.T) {
	t.Parallel()
	store, err := emulator.OpenStore(filepath.Join(t.TempDir(), "emulator.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	em := gcp.New(store, creds)
	mux := http.NewServeMux()
	mux.HandleFunc("/tokeninfo", em.TokenInfo)
	mux.HandleFunc("/oauth2/v2/tokeninfo", em.TokenInfoV2)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	q := "?access_token=" + url.QueryEscape(creds.GoogleAccessToken)
	for _, tc := range []struct {
		method, path, form string
		status             int
		want               map[string]any
	}{
		{"GET", "/tokeninfo" + q, "", 200, map[string]any{"email": gcp.Caller, "email_verified": "true", "expires_in": "3599"}},
		{"POST", "/tokeninfo", "access_token=" + url.QueryEscape(creds.GoogleAccessToken), 200, map[string]any{"email": gcp.Caller}},
		{"POST", "/oauth2/v2/tokeninfo" + q + "&alt=json&prettyPrint=false", "", 200, map[string]any{"email": gcp.Caller, "verified_email": true, "expires_in": 3599.0}},
		{"GET", "/tokeninfo?access_token=ya29.other", "", 400, map[string]any{"error": "invalid_token"}},
		{"POST", "/oauth2/v2/tokeninfo?access_token=ya29.other", "", 400, map[string]any{"error": "invalid_token"}},
		{"DELETE", "/tokeninfo" + q, "", 405, map[string]any{"error": "invalid_request"}},
	} {
		req, err := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, strings.NewReader(tc.form))
		if err != nil {
			t.Fatal(err)
		}
		if tc.form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || resp.StatusCode != tc.status {
			t.Fatalf("%s %s: %d %v (%v), want %d", tc.method, tc.path, resp.StatusCode, got, err, tc.status)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s %s: %s = %#v, want %#v (all: %v)", tc.method, tc.path, k, got[k], v, got)
			}
		}
	}
}
