package datadog_test

import (
	"encoding/json"
	"testing"
)

func TestEmulatorWire(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	api, app := e.creds.DatadogAPIKey, e.creds.DatadogAppKey
	const rp = "/api/v2/restriction_policy/"
	body := func(bindings string) string {
		return `{"data":{"id":"x","type":"restriction_policy","attributes":{"bindings":` + bindings + `}}}`
	}
	for name, tc := range map[string]struct {
		method, path, api, app, body string
		wantStatus                   int
		wantBody                     string // exact
	}{
		"GET without policy": {"GET", rp + "dashboard:test-get", api, app, "", 200,
			`{"data":{"id":"dashboard:test-get","type":"restriction_policy","attributes":{"bindings":[]}}}`},
		"GET with %3A": {"GET", rp + "dashboard%3Atest-get", api, app, "", 200,
			`{"data":{"id":"dashboard:test-get","type":"restriction_policy","attributes":{"bindings":[]}}}`},
		"DELETE without policy": {"DELETE", rp + "dashboard:test-delete", api, app, "", 204, ""},
		"POST upsert": {"POST", rp + "notebook%3A77", api, app, body(`[{"relation":"editor","principals":["` + roleA + `"]}]`), 200,
			`{"data":{"id":"notebook:77","type":"restriction_policy","attributes":{"bindings":[{"relation":"editor","principals":["` + roleA + `"]}]}}}`},
		"POST null bindings": {"POST", rp + "slo:1", api, app, body(`null`), 200,
			`{"data":{"id":"slo:1","type":"restriction_policy","attributes":{"bindings":[]}}}`},
		"POST private location keeps its pl: prefix": {"POST", rp + "synthetics-private-location:pl:abc", api, app, body(`[]`), 200,
			`{"data":{"id":"synthetics-private-location:pl:abc","type":"restriction_policy","attributes":{"bindings":[]}}}`},
		"POST wrong type": {"POST", rp + "slo:1", api, app, `{"data":{"type":"policy","attributes":{"bindings":[]}}}`, 400,
			`{"errors":["Invalid type: 'policy', expected 'restriction_policy'"]}`},
		"POST relation of another type": {"POST", rp + "connection:1", api, app, body(`[{"relation":"runner","principals":[]}]`), 400,
			`{"errors":["Invalid relation: 'runner' is not a supported relation for resource type 'connection' (supported: viewer, resolver, editor)"]}`},
		"POST principal without uuid": {"POST", rp + "workflow:1", api, app, body(`[{"relation":"runner","principals":["team:ops"]}]`), 400,
			`{"errors":["Invalid principal: 'team:ops' is not in a valid format"]}`},
		"malformed id": {"GET", rp + "malformed", api, app, "", 400,
			`{"errors":["Invalid resource: 'malformed' is not in a valid format"]}`},
		"no keys":          {"GET", rp + "dashboard:1", "", "", "", 403, `{"errors":["Forbidden"]}`},
		"API key only":     {"GET", rp + "dashboard:1", api, "", "", 403, `{"errors":["Forbidden"]}`},
		"wrong app key":    {"DELETE", rp + "dashboard:1", api, "nope", "", 403, `{"errors":["Forbidden"]}`},
		"keys swapped":     {"GET", "/api/v2/current_user", app, api, "", 403, `{"errors":["Forbidden"]}`},
		"unknown route":    {"GET", "/api/v2/restriction_policies", api, app, "", 404, `{"errors":["Not found"]}`},
		"PUT not allowed":  {"PUT", rp + "dashboard:1", api, app, body(`[]`), 405, `{"errors":["Method Not Allowed"]}`},
		"bad self-lockout": {"POST", rp + "dashboard:1?allow_self_lockout=maybe", api, app, body(`[]`), 400, `{"errors":["Invalid value for allow_self_lockout: 'maybe'"]}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp, got := e.call(t, tc.method, tc.path, tc.api, tc.app, tc.body)
			if resp.StatusCode != tc.wantStatus || got != tc.wantBody {
				t.Errorf("%s %s = %d %s\nwant %d %s", tc.method, tc.path, resp.StatusCode, got, tc.wantStatus, tc.wantBody)
			}
			if tc.wantStatus != 403 && tc.wantStatus != 404 {
				for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Period", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Name"} {
					if resp.Header.Get(h) == "" {
						t.Errorf("%s %s: no %s header", tc.method, tc.path, h)
					}
				}
			}
		})
	}
}

func TestEmulatorCurrentUserShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, body := e.call(t, "GET", "/api/v2/current_user", e.creds.DatadogAPIKey, e.creds.DatadogAppKey, "")
	var doc struct {
		Data struct {
			ID            string
			Type          string
			Relationships struct {
				Org struct {
					Data struct{ ID, Type string }
				}
				Roles struct {
					Data []struct{ ID, Type string }
				}
			}
		}
		Included []struct{ ID, Type string }
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET current_user = %d %s (%v)", resp.StatusCode, body, err)
	}
	user, org := e.em.CurrentUser()
	d := doc.Data
	if d.ID != user || d.Type != "users" || d.Relationships.Org.Data.ID != org || d.Relationships.Org.Data.Type != "orgs" ||
		len(d.Relationships.Roles.Data) != 1 || len(doc.Included) != 2 || doc.Included[0].ID != org {
		t.Errorf("GET current_user = %s\nwant user %s in org %s with one role, org and role included", body, user, org)
	}
	if resp.Header.Get("X-RateLimit-Name") != "current_user" {
		t.Errorf("X-RateLimit-Name = %q, want current_user", resp.Header.Get("X-RateLimit-Name"))
	}
}
