package datadog

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"reconcile/resources/emulator"
)

// Seed creates the current user (UUID id, email, handle, name) in an org
// (UUID) with one role, unless they exist; it is safe on every start. The
// ids are the same in every fresh emulator.
func (e *Emulator) Seed() error {
	_, err := e.account()
	return err
}

// SeedData is the "datadog" section of an emulator seed file: the current
// user and restriction policies. Both are optional.
type SeedData struct {
	User     *UserSeed    `json:"user,omitempty"`
	Policies []PolicySeed `json:"policies,omitempty"`
}

// UserSeed is the current user of a seed file, with its org and role. Empty
// fields take Seed's values; a handle defaults to the email.
type UserSeed struct {
	ID       string `json:"id,omitempty"` // a UUID
	Email    string `json:"email,omitempty"`
	Handle   string `json:"handle,omitempty"`
	Name     string `json:"name,omitempty"`
	OrgID    string `json:"orgId,omitempty"` // a UUID
	OrgName  string `json:"orgName,omitempty"`
	RoleID   string `json:"roleId,omitempty"` // a UUID
	RoleName string `json:"roleName,omitempty"`
}

// PolicySeed is the restriction policy of one resource in a seed file.
type PolicySeed struct {
	ResourceID string        `json:"resourceId"` // "<type>:<id>"
	Bindings   []BindingSeed `json:"bindings"`
}

// BindingSeed grants a relation (viewer, editor, ...) on the resource to
// principals ("role:UUID", "team:UUID", "user:UUID" or "org:UUID"), as a
// binding of the API does.
type BindingSeed struct {
	Relation   string   `json:"relation"`
	Principals []string `json:"principals"`
}

// bucketSeeded records the resource ids SeedFrom wrote, so that a policy
// deleted since is not made again by the next start with the same file.
const bucketSeeded = "dd.seeded"

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// SeedFrom checks d and writes it inside the caller's transaction tx, before
// Seed. The user becomes the current user if the data has none yet (a
// fresh data directory); otherwise the stored one is left as it is. Each
// policy is written unless its resource already has one, or an earlier
// SeedFrom wrote it (and it was deleted since): nothing is reset by seeding
// again with the same data. It reports how many objects it added and how
// many it left. Policies are checked as a POST of them would be; the first
// problem is returned naming the entry, as in `policies[1] "dashboard:x":
// ...`, and nothing should then be committed.
func (e *Emulator) SeedFrom(tx emulator.Tx, d SeedData) (added, kept int, err error) {
	if u := d.User; u != nil {
		at := func(err error) error { return fmt.Errorf("user: %w", err) }
		for _, f := range []struct{ name, val string }{{"id", u.ID}, {"orgId", u.OrgID}, {"roleId", u.RoleID}} {
			if f.val != "" && !uuidRE.MatchString(f.val) {
				return 0, 0, at(fmt.Errorf("%s %q is not a UUID", f.name, f.val))
			}
		}
		if u.Email != "" && (!strings.Contains(u.Email, "@") || strings.ContainsAny(u.Email, " \t\r\n")) {
			return 0, 0, at(fmt.Errorf("email %q is not an email address", u.Email))
		}
		var a account
		found, err := tx.Get(bucketAccount, accountKey, &a)
		if err != nil {
			return 0, 0, at(err)
		}
		if found {
			kept++
		} else {
			a = defaultAccount()
			a.Handle = ""
			for _, f := range []struct {
				dst *string
				val string
			}{
				{&a.UserID, strings.ToLower(u.ID)}, {&a.Email, u.Email}, {&a.Handle, u.Handle}, {&a.Name, u.Name},
				{&a.OrgID, strings.ToLower(u.OrgID)}, {&a.OrgName, u.OrgName}, {&a.RoleID, strings.ToLower(u.RoleID)}, {&a.RoleName, u.RoleName},
			} {
				if f.val != "" {
					*f.dst = f.val
				}
			}
			if a.Handle == "" {
				a.Handle = a.Email
			}
			if err := tx.Put(bucketAccount, accountKey, a); err != nil {
				return 0, 0, at(err)
			}
			added++
		}
	}
	seen := map[string]int{}
	for i, p := range d.Policies {
		rid := p.ResourceID
		at := func(err error) error { return fmt.Errorf("policies[%d] %q: %w", i, rid, err) }
		if errs := checkResourceID(rid); errs != nil {
			return 0, 0, at(errors.New(errs[0]))
		}
		if strings.ContainsAny(rid, "/?#") {
			return 0, 0, at(errors.New("a resource id cannot hold '/', '?' or '#'"))
		}
		if j, dup := seen[rid]; dup {
			return 0, 0, at(fmt.Errorf("the same resourceId as policies[%d]", j))
		}
		seen[rid] = i
		if len(p.Bindings) == 0 {
			return 0, 0, at(errors.New("bindings: a policy needs at least one binding (a resource without one has no policy)"))
		}
		typ, _, _ := strings.Cut(rid, ":")
		allowed := relations[typ]
		bindings := make([]binding, len(p.Bindings))
		for j, b := range p.Bindings {
			switch {
			case b.Relation == "":
				return 0, 0, at(fmt.Errorf("bindings[%d].relation is required", j))
			case !slices.Contains(allowed, b.Relation):
				return 0, 0, at(fmt.Errorf("bindings[%d]: Invalid relation: '%s' is not a supported relation for resource type '%s' (supported: %s)",
					j, b.Relation, typ, strings.Join(allowed, ", ")))
			case b.Principals == nil:
				return 0, 0, at(fmt.Errorf("bindings[%d].principals is required", j))
			}
			for _, pr := range b.Principals {
				if !principalRE.MatchString(pr) {
					return 0, 0, at(fmt.Errorf("bindings[%d]: Invalid principal: '%s' is not in a valid format (role:, team:, user: or org: and a UUID)", j, pr))
				}
			}
			bindings[j] = binding{Relation: b.Relation, Principals: slices.Clone(b.Principals)}
		}
		var cur storedPolicy
		found, err := tx.Get(bucketPolicies, rid, &cur)
		if err != nil {
			return 0, 0, at(err)
		}
		var seeded bool
		if !found {
			if found, err = tx.Get(bucketSeeded, rid, &seeded); err != nil {
				return 0, 0, at(err)
			}
		}
		if found {
			kept++
		} else {
			if err := tx.Put(bucketPolicies, rid, storedPolicy{Bindings: bindings}); err != nil {
				return 0, 0, at(err)
			}
			added++
		}
		if err := tx.Put(bucketSeeded, rid, true); err != nil {
			return 0, 0, at(err)
		}
	}
	return added, kept, nil
}
