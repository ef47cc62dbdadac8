package restrictionpolicy_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/datadog"
	"github.com/reconcile-dev/reconcile/resources/restrictionpolicy"
)

// The current user of newTeamEnv: its id, org, role and team.
const (
	meID   = "aaaaaaaa-0000-4000-8000-000000000001"
	myOrg  = "aaaaaaaa-0000-4000-8000-000000000002"
	myRole = "aaaaaaaa-0000-4000-8000-000000000003"
	myTeam = "aaaaaaaa-0000-4000-8000-000000000004"
)

// newTeamEnv starts an emulator whose current user is meID, of org myOrg,
// in role myRole and team myTeam; the handler counts the memberships
// calls in teamCalls, and answers them 403 when forbidTeams is set.
func newTeamEnv(t *testing.T, forbidTeams bool, teamCalls *atomic.Int32) *env {
	t.Helper()
	store, err := emulator.OpenStore(filepath.Join(t.TempDir(), "emulator.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	em := datadog.New(store, creds)
	if err := store.Update(func(tx emulator.Tx) error {
		_, _, err := em.SeedFrom(tx, datadog.SeedData{User: &datadog.UserSeed{ID: meID, OrgID: myOrg, RoleID: myRole, TeamIDs: []string{myTeam}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := em.Seed(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/memberships") {
			teamCalls.Add(1)
			if forbidTeams {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				w.Write([]byte(`{"errors":["Forbidden"]}`))
				return
			}
		}
		em.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, creds: creds, em: em}
}

// TestGetCurrentUserRolesAndTeams: the current user comes with the ids
// of its roles (current_user's relationships) and of its teams (its
// memberships), each read once.
func TestGetCurrentUserRolesAndTeams(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	e := newTeamEnv(t, false, &calls)
	c := restrictionpolicy.NewClient(e.config())
	u, err := c.GetCurrentUser(t.Context())
	if err != nil || u.ID != meID || u.OrgID != myOrg || !reflect.DeepEqual(u.RoleIDs, []string{myRole}) {
		t.Fatalf("GetCurrentUser() = %+v, %v; want user %s of org %s in role %s", u, err, meID, myOrg, myRole)
	}
	for range 2 {
		teams, err := c.CurrentUserTeams(t.Context())
		if err != nil || !reflect.DeepEqual(teams, []string{myTeam}) {
			t.Fatalf("CurrentUserTeams() = %v, %v; want [%s]", teams, err, myTeam)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the memberships were read %d times, want once", n)
	}
}
