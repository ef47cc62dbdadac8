//go:build conformance

package conformance_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/DataDog/datadog-api-client-go/v2/api/datadog"
	"github.com/DataDog/datadog-api-client-go/v2/api/datadogV2"
	"google.golang.org/api/googleapi"
	oauth2api "google.golang.org/api/oauth2/v2"
	"google.golang.org/api/option"

	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// TestGCPTokenInfo asks who the emulator's access token belongs to with
// Google's client library (google.golang.org/api/oauth2/v2, which calls
// the tokeninfo of www.googleapis.com/oauth2/v2): the emulator's service
// account, verified, for nearly an hour; a token it did not give is 400.
func TestGCPTokenInfo(t *testing.T) {
	srv, _ := startEmulator(t)
	ctx := testContext(t)
	svc, err := oauth2api.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithHTTPClient(http.DefaultClient))
	if err != nil {
		t.Fatal(err)
	}
	info, err := svc.Tokeninfo().AccessToken(srv.Creds.GoogleAccessToken).Context(ctx).Do()
	if err != nil {
		t.Fatalf("tokeninfo: %v", err)
	}
	if info.Email != gcp.Caller || !info.VerifiedEmail || info.ExpiresIn <= 0 || info.IssuedTo == "" || info.UserId == "" || info.Scope == "" {
		t.Errorf("tokeninfo = %+v, want %s, verified, with a lifetime, a client, a user id and a scope", info, gcp.Caller)
	}
	_, err = svc.Tokeninfo().AccessToken("ya29.not-the-emulator-token").Context(ctx).Do()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 400 {
		t.Errorf("tokeninfo of another token = %v, want a 400", err)
	}
}

// TestDatadogCurrentUserTeams reads the current user's roles
// (GetCurrentUser) and teams (GetUserMemberships) with Datadog's client,
// as the restriction policy driver reads them to tell its own access.
func TestDatadogCurrentUserTeams(t *testing.T) {
	dir := t.TempDir()
	const (
		user = "aaaaaaaa-0000-4000-8000-000000000001"
		role = "aaaaaaaa-0000-4000-8000-000000000003"
		team = "aaaaaaaa-0000-4000-8000-000000000004"
	)
	seed := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(seed, []byte(`{"datadog": {"user": {"id": "`+user+`", "roleId": "`+role+`", "teamIds": ["`+team+`"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(server.Options{Listen: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), SeedFile: seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx := datadogContext(testContext(t), srv, srv.Creds.DatadogAPIKey, srv.Creds.DatadogAppKey)
	client := datadog.NewAPIClient(datadog.NewConfiguration())
	me, _, err := datadogV2.NewUsersApi(client).GetCurrentUser(ctx)
	if err != nil || me.Data == nil || me.Data.Id == nil || *me.Data.Id != user {
		t.Fatalf("GetCurrentUser = %+v, %v; want user %s", me.Data, err, user)
	}
	var roles []string
	for _, r := range me.Data.Relationships.Roles.Data {
		roles = append(roles, r.GetId())
	}
	if !slices.Equal(roles, []string{role}) {
		t.Errorf("GetCurrentUser: roles %v, want [%s]", roles, role)
	}
	teams, resp, err := datadogV2.NewTeamsApi(client).GetUserMemberships(ctx, user)
	if err != nil || resp.StatusCode != 200 || teams.UnparsedObject != nil || len(teams.Data) != 1 {
		t.Fatalf("GetUserMemberships = %+v, %v", teams, err)
	}
	m := teams.Data[0]
	if m.UnparsedObject != nil || m.Type != datadogV2.USERTEAMTYPE_TEAM_MEMBERSHIPS || m.Relationships == nil || m.Relationships.Team == nil ||
		m.Relationships.Team.Data.Id != team || m.Relationships.Team.Data.Type != datadogV2.USERTEAMTEAMTYPE_TEAM || len(m.AdditionalProperties) > 0 {
		t.Errorf("GetUserMemberships: membership %+v (relationships %+v), want one of team %s, decoded whole", m, m.Relationships, team)
	}
	none, _, err := datadogV2.NewTeamsApi(client).GetUserMemberships(ctx, "00000000-0000-4000-8000-000000000009")
	if err != nil || none.Data == nil || len(none.Data) != 0 {
		t.Errorf("GetUserMemberships of another user = %+v, %v; want no membership", none, err)
	}
}
