package datadog

import (
	"crypto/md5"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// account is the seeded identity: the current user, its org, its role and
// its teams.
type account struct {
	UserID    string    `json:"userId"`
	Email     string    `json:"email"`
	Handle    string    `json:"handle"`
	Name      string    `json:"name"`
	OrgID     string    `json:"orgId"`
	OrgName   string    `json:"orgName"`
	OrgPublic string    `json:"orgPublicId"`
	RoleID    string    `json:"roleId"`
	RoleName  string    `json:"roleName"`
	Teams     []string  `json:"teamIds,omitempty"` // UUIDs, lower case
	Created   time.Time `json:"created"`
}

// account returns the seeded identity, creating it on first use.
func (e *Emulator) account() (account, error) {
	var a account
	var found bool
	if err := e.store.View(func(tx emulator.Tx) error {
		var err error
		found, err = tx.Get(bucketAccount, accountKey, &a)
		return err
	}); err != nil || found {
		return a, err
	}
	err := e.store.Update(func(tx emulator.Tx) error {
		ok, err := tx.Get(bucketAccount, accountKey, &a)
		if err != nil || ok {
			return err
		}
		a = defaultAccount()
		return tx.Put(bucketAccount, accountKey, a)
	})
	return a, err
}

// defaultAccount is the current user the emulator makes when no seed file
// names one: fixed ids, so that outputs are the same on every machine.
func defaultAccount() account {
	return account{
		UserID:    seedUUID("user"),
		Email:     "ops@acme.example",
		Handle:    "ops@acme.example",
		Name:      "Acme Ops",
		OrgID:     seedUUID("org"),
		OrgName:   "Acme",
		OrgPublic: strings.ReplaceAll(seedUUID("org public id"), "-", "")[:12],
		RoleID:    seedUUID("role"),
		RoleName:  "Datadog Admin Role",
		Created:   time.Now().UTC().Truncate(time.Millisecond),
	}
}

// CurrentUser returns the ids of the seeded user and its org, or empty
// strings before Seed.
func (e *Emulator) CurrentUser() (userID, orgID string) {
	var a account
	if err := e.store.View(func(tx emulator.Tx) error {
		_, err := tx.Get(bucketAccount, accountKey, &a)
		return err
	}); err != nil {
		return "", ""
	}
	return a.UserID, a.OrgID
}

// seedUUID returns a version-4-shaped UUID derived from label, so that
// every fresh emulator seeds the same ids and output that shows them (plans,
// goldens) is reproducible.
func seedUUID(label string) string {
	sum := sha256.Sum256([]byte("reconcile emulator datadog " + label))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// datadogTime is how Datadog writes times in user, org and role
// attributes: microseconds and an explicit +00:00 offset.
const datadogTime = "2006-01-02T15:04:05.000000+00:00"

// adminPermissions are the permissions the emulator lists for the
// current user's role: a few of the several hundred of Datadog's Admin
// role, with their real ids, among them user_access_manage, which
// allow_self_lockout needs. Their descriptions are Datadog's.
var adminPermissions = []permission{
	perm("d90f6830-d3d8-11e9-a77a-b3404e5e9ee2", "dashboards_read", "Dashboards Read", "View dashboards.", "2019-09-10T14:39:51.955175+00:00", "Dashboards", "read", true),
	perm("d90f6831-d3d8-11e9-a77a-4fd230ddbc6a", "dashboards_write", "Dashboards Write", "Create and change dashboards.", "2019-09-10T14:39:51.962944+00:00", "Dashboards", "write", false),
	perm("4441648c-d8b1-11e9-a77a-1b899a04b304", "monitors_read", "Monitors Read", "View monitors.", "2019-09-16T18:39:07.744297+00:00", "Monitors", "read", true),
	perm("48ef71ea-d8b1-11e9-a77a-93f408470ad0", "monitors_write", "Monitors Write", "Edit, delete, and resolve individual monitors.", "2019-09-16T18:39:15.597109+00:00", "Monitors", "write", false),
	perm("9de604d8-e707-11ea-aa2d-93f1a783b3a3", "user_access_manage", "User Access Manage", "Disable users, manage user roles, manage SAML-to-role mappings, and configure logs restriction queries.", "2020-08-25T19:17:28.810412+00:00", "Access Management", "write", false),
	perm("b6bf9ac6-9a59-11ec-8480-da7ad0900002", "notebooks_read", "Notebooks Read", "View notebooks.", "2022-03-02T18:51:05.040950+00:00", "Notebooks", "read", true),
	perm("b6bf9ac7-9a59-11ec-8480-da7ad0900002", "notebooks_write", "Notebooks Write", "Create and change notebooks.", "2022-03-02T18:51:05.044683+00:00", "Notebooks", "write", false),
	perm("f8e941cf-e746-11ec-b22d-da7ad0900002", "slos_read", "SLOs Read", "View SLOs and status corrections.", "2022-06-08T16:20:55.142591+00:00", "Service Level Objectives", "read", true),
	perm("f8e941d0-e746-11ec-b22d-da7ad0900002", "slos_write", "SLOs Write", "Create, edit, and delete SLOs.", "2022-06-08T16:20:55.143869+00:00", "Service Level Objectives", "write", false),
}

func perm(id, name, display, desc, created, group, typ string, restricted bool) permission {
	return permission{Type: "permissions", ID: id, Attributes: permissionAttributes{
		Name: name, DisplayName: display, Description: desc, Created: created, GroupName: group, DisplayType: typ, Restricted: restricted}}
}

// managedRoles are the roles Datadog makes and maintains in every org.
var managedRoles = map[string]bool{"Datadog Admin Role": true, "Datadog Standard Role": true, "Datadog Read Only Role": true}

// gravatar is the icon Datadog gives a user: the Gravatar of its email.
func gravatar(email string) string {
	return fmt.Sprintf("https://secure.gravatar.com/avatar/%x?s=48&d=retro", md5.Sum([]byte(strings.ToLower(strings.TrimSpace(email)))))
}

func (e *Emulator) currentUser(w http.ResponseWriter) {
	a, err := e.account()
	if err != nil {
		writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	created := a.Created.Format(datadogTime)
	var name *string
	if a.Name != "" {
		name = &a.Name
	}
	permRefs := make([]ref, len(adminPermissions))
	included := []any{role{
		Type: "roles", ID: a.RoleID,
		Attributes:    roleAttributes{Name: a.RoleName, Managed: managedRoles[a.RoleName], CreatedAt: created, ModifiedAt: created},
		Relationships: roleRelationships{Permissions: toMany{Data: permRefs}},
	}}
	for i, p := range adminPermissions {
		permRefs[i] = ref{Type: p.Type, ID: p.ID}
		included = append(included, p)
	}
	included = append(included, organization{
		Type: "orgs", ID: a.OrgID,
		Attributes: organizationAttributes{PublicID: a.OrgPublic, Name: a.OrgName, Sharing: "all_private", CreatedAt: created, ModifiedAt: created},
	})
	writeJSON(w, http.StatusOK, userResponse{
		Data: user{
			Type: "users",
			ID:   a.UserID,
			Attributes: userAttributes{
				UUID: a.UserID, Name: name, Handle: a.Handle, CreatedAt: created, ModifiedAt: created,
				Email: a.Email, Icon: gravatar(a.Email), Verified: true, AllowedLoginMethods: []string{}, Status: "Active",
			},
			Relationships: userRelationships{
				Roles:     toMany{Data: []ref{{"roles", a.RoleID}}},
				Org:       toOne{Data: ref{"orgs", a.OrgID}},
				TeamRoles: toMany{Data: []ref{}},
			},
		},
		Included: included,
	})
}

// userMemberships answers GET /api/v2/users/{id}/memberships: one
// team_memberships item per team of the seeded user (a plain member, role
// null), nothing for any other user id. An id that is not a UUID is 404,
// as for a user that does not exist.
func (e *Emulator) userMemberships(w http.ResponseWriter, id string) {
	if !uuidRE.MatchString(id) {
		writeErrors(w, http.StatusNotFound, "User not found")
		return
	}
	a, err := e.account()
	if err != nil {
		writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	out := userTeamsResponse{Data: []userTeam{}}
	if strings.EqualFold(id, a.UserID) {
		for _, t := range a.Teams {
			out.Data = append(out.Data, userTeam{
				ID:            "TeamMembership-" + t + "-" + membershipNumber(t, a.UserID),
				Type:          "team_memberships",
				Relationships: userTeamRelationships{Team: toOne{Data: ref{"team", t}}, User: toOne{Data: ref{"users", a.UserID}}},
			})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// membershipNumber is the number that ends a membership's id, derived from
// the team and the user so that it is the same on every answer.
func membershipNumber(team, user string) string {
	sum := sha256.Sum256([]byte("membership " + team + " " + user))
	return fmt.Sprint(uint32(sum[0])<<24 | uint32(sum[1])<<16 | uint32(sum[2])<<8 | uint32(sum[3])>>1)
}
