package datadog

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/resources/emulator"
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

// UserSeed is the current user of a seed file, with its org, role and
// teams. Empty fields take Seed's values (no teams); a handle defaults to
// the email.
type UserSeed struct {
	ID       string `json:"id,omitempty"` // a UUID
	Email    string `json:"email,omitempty"`
	Handle   string `json:"handle,omitempty"`
	Name     string `json:"name,omitempty"`
	OrgID    string `json:"orgId,omitempty"` // a UUID
	OrgName  string `json:"orgName,omitempty"`
	RoleID   string `json:"roleId,omitempty"` // a UUID
	RoleName string `json:"roleName,omitempty"`
	// TeamIDs are the UUIDs of the teams the user is in: "team:" principals
	// naming one give the user access, as its role and org do.
	TeamIDs []string `json:"teamIds,omitempty"`
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
	if d.User != nil {
		wrote, err := seedUser(tx, *d.User)
		if err != nil {
			return 0, 0, fmt.Errorf("user: %w", err)
		}
		tally(wrote, &added, &kept)
	}
	seen := map[string]int{}
	for i, p := range d.Policies {
		wrote, err := seedPolicy(tx, p, i, seen)
		if err != nil {
			return 0, 0, fmt.Errorf("policies[%d] %q: %w", i, p.ResourceID, err)
		}
		tally(wrote, &added, &kept)
	}
	return added, kept, nil
}

// tally adds one to added if an object was written, else to kept.
func tally(wrote bool, added, kept *int) {
	if wrote {
		*added++
	} else {
		*kept++
	}
}

// seedUser checks u and, unless the data has a current user already,
// writes the account it describes. It reports whether it wrote one.
func seedUser(tx emulator.Tx, u UserSeed) (wrote bool, err error) {
	if err := checkUser(u); err != nil {
		return false, err
	}
	var a account
	found, err := tx.Get(bucketAccount, accountKey, &a)
	if err != nil || found {
		return false, err
	}
	if err := tx.Put(bucketAccount, accountKey, accountFrom(u)); err != nil {
		return false, err
	}
	return true, nil
}

// checkUser checks the ids (UUIDs, teams' too) and the email of u, those
// it gives.
func checkUser(u UserSeed) error {
	for _, f := range []struct{ name, val string }{{"id", u.ID}, {"orgId", u.OrgID}, {"roleId", u.RoleID}} {
		if f.val != "" && !uuidRE.MatchString(f.val) {
			return fmt.Errorf("%s %q is not a UUID", f.name, f.val)
		}
	}
	for i, t := range u.TeamIDs {
		if !uuidRE.MatchString(t) {
			return fmt.Errorf("teamIds[%d] %q is not a UUID", i, t)
		}
	}
	if u.Email != "" && (!strings.Contains(u.Email, "@") || strings.ContainsAny(u.Email, " \t\r\n")) {
		return fmt.Errorf("email %q is not an email address", u.Email)
	}
	return nil
}

// accountFrom returns the account u describes: Seed's, with the fields u
// gives (ids in lower case), and the email as handle unless u gives one.
func accountFrom(u UserSeed) account {
	a := defaultAccount()
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
	for _, t := range u.TeamIDs {
		a.Teams = append(a.Teams, strings.ToLower(t))
	}
	return a
}

// seedPolicy checks p, entry i of the policies, against the entries before
// it (seen maps their resource ids to their index, and gets p's), and
// writes it unless its resource has a policy or had a seeded one. It marks
// the resource as seeded either way, and reports whether it wrote the
// policy.
func seedPolicy(tx emulator.Tx, p PolicySeed, i int, seen map[string]int) (wrote bool, err error) {
	rid := p.ResourceID
	if err := checkPolicyID(rid); err != nil {
		return false, err
	}
	if j, dup := seen[rid]; dup {
		return false, fmt.Errorf("the same resourceId as policies[%d]", j)
	}
	seen[rid] = i
	bindings, err := seedBindings(rid, p.Bindings)
	if err != nil {
		return false, err
	}
	found, err := hasPolicy(tx, rid)
	if err != nil {
		return false, err
	}
	if !found {
		if err := tx.Put(bucketPolicies, rid, storedPolicy{Bindings: bindings}); err != nil {
			return false, err
		}
	}
	if err := tx.Put(bucketSeeded, rid, true); err != nil {
		return false, err
	}
	return !found, nil
}

// checkPolicyID checks the resource id of a seeded policy: one the API
// takes, which can stand in a URL path.
func checkPolicyID(rid string) error {
	if msg := checkResourceID(rid); msg != "" {
		return errors.New(msg)
	}
	if strings.ContainsAny(rid, "/?#") {
		return errors.New("a resource id cannot hold '/', '?' or '#'")
	}
	return nil
}

// seedBindings checks the bindings of the policy of rid as a POST would
// (at least one is needed) and returns them as stored.
func seedBindings(rid string, bs []BindingSeed) ([]binding, error) {
	if len(bs) == 0 {
		return nil, errors.New("bindings: a policy needs at least one binding (a resource without one has no policy)")
	}
	typ, _, _ := strings.Cut(rid, ":")
	allowed := relations[typ]
	bindings := make([]binding, len(bs))
	for j, b := range bs {
		switch {
		case b.Relation == "":
			return nil, fmt.Errorf("bindings[%d].relation is required", j)
		case !slices.Contains(allowed, b.Relation):
			return nil, fmt.Errorf("bindings[%d]: Invalid relation: '%s' is not a supported relation for resource type '%s' (supported: %s)",
				j, b.Relation, typ, strings.Join(allowed, ", "))
		case b.Principals == nil:
			return nil, fmt.Errorf("bindings[%d].principals is required", j)
		}
		for _, pr := range b.Principals {
			if msg := checkPrincipal(pr, b.Relation); msg != "" {
				if strings.HasPrefix(msg, "Invalid principal") {
					msg += " (role:, team:, user: or org: and a UUID)"
				}
				return nil, fmt.Errorf("bindings[%d]: %s", j, msg)
			}
		}
		bindings[j] = binding{Relation: b.Relation, Principals: slices.Clone(b.Principals)}
	}
	return bindings, nil
}

// hasPolicy reports whether the resource rid has a policy, or had one
// written by an earlier SeedFrom.
func hasPolicy(tx emulator.Tx, rid string) (bool, error) {
	var cur storedPolicy
	found, err := tx.Get(bucketPolicies, rid, &cur)
	if err != nil || found {
		return found, err
	}
	var seeded bool
	return tx.Get(bucketSeeded, rid, &seeded)
}
