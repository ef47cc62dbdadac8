package datadog

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"time"

	"reconcile/resources/emulator"
)

// account is the seeded identity: the current user, its org and its role.
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

func (e *Emulator) currentUser(w http.ResponseWriter) {
	a, err := e.account()
	if err != nil {
		writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	created := a.Created.Format(datadogTime)
	writeJSON(w, http.StatusOK, userResponse{
		Data: user{
			Attributes: userAttributes{
				CreatedAt: created, ModifiedAt: created,
				Email: a.Email, Handle: a.Handle, Name: a.Name,
				Status: "Active", Verified: true,
			},
			ID: a.UserID,
			Relationships: userRelationships{
				Org:   toOne{Data: ref{a.OrgID, "orgs"}},
				Roles: toMany{Data: []ref{{a.RoleID, "roles"}}},
			},
			Type: "users",
		},
		Included: []any{
			organization{
				Attributes: organizationAttributes{CreatedAt: created, ModifiedAt: created, Name: a.OrgName, PublicID: a.OrgPublic},
				ID:         a.OrgID,
				Type:       "orgs",
			},
			role{
				Attributes: roleAttributes{CreatedAt: created, ModifiedAt: created, Name: a.RoleName, UserCount: 1},
				ID:         a.RoleID,
				Type:       "roles",
			},
		},
	})
}
