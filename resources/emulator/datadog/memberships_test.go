package datadog_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/datadog"
)

// TestEmulatorUserMemberships: GET /api/v2/users/{id}/memberships lists
// the seeded user's teams as team_memberships in the shape of Datadog's
// UserTeamsResponse, nothing for another user, 404 for an id that is no
// UUID; it needs the keys.
func TestEmulatorUserMemberships(t *testing.T) {
	t.Parallel()
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	store, em := seedStore(t, creds)
	const team = "dddddddd-4444-4444-8444-dddddddddddd"
	if err := store.Update(func(tx emulator.Tx) error {
		_, _, err := em.SeedFrom(tx, datadog.SeedData{User: &datadog.UserSeed{ID: sfUser, TeamIDs: []string{team}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(em)
	t.Cleanup(srv.Close)
	e := &env{url: srv.URL, creds: creds, em: em}
	me := strings.ToLower(sfUser)
	for _, tc := range []struct {
		path, api, app string
		status         int
		body           string
	}{
		{"/api/v2/users/" + me + "/memberships", creds.DatadogAPIKey, creds.DatadogAppKey, 200,
			`{"data":[{"id":"TeamMembership-` + team + `-`},
		{"/api/v2/users/" + me + "/memberships", creds.DatadogAPIKey, creds.DatadogAppKey, 200,
			`"type":"team_memberships","attributes":{"provisioned_by":null,"provisioned_by_id":null,"role":null},"relationships":{"team":{"data":{"type":"team","id":"` + team + `"}},"user":{"data":{"type":"users","id":"` + me + `"}}}}]}`},
		{"/api/v2/users/00000000-0000-4000-8000-000000000009/memberships", creds.DatadogAPIKey, creds.DatadogAppKey, 200, `{"data":[]}`},
		{"/api/v2/users/nobody/memberships", creds.DatadogAPIKey, creds.DatadogAppKey, 404, `{"errors":["User not found"]}`},
		{"/api/v2/users/" + me + "/memberships", creds.DatadogAPIKey, "", 403, `{"errors":["Forbidden"]}`},
	} {
		resp, body := e.call(t, "GET", tc.path, tc.api, tc.app, "")
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("GET %s = %d %s, want %d containing %s", tc.path, resp.StatusCode, body, tc.status, tc.body)
		}
	}
}
