package restrictionpolicy

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/resources"
)

var _ resources.AccessReviewer = (*Driver)(nil)

// ReviewAccess compares the policy a create or an update writes with the
// live one (none for a create, which writes only where there is none; for
// an update, the one the plan read, or read now), reads the user the
// application key belongs to (its roles, and its teams when they can be
// read), and returns the principals each relation gains and loses.
// Bindings that would lower that user's own access to the resource are
// refused, as Datadog refuses them at apply (reconcile never passes
// allow_self_lockout): the error matches resources.ErrRefused and gives
// the API's reason, "users cannot decrease their own level of access
// (from editor to viewer)", and what to do. The flag --allow-self-lockout
// does not lift it, since the API would refuse all the same. A delete
// lifts the restriction, which takes nobody's access away: its review is
// empty.
//
// Levels of access are ordered by relation, as relationsOf lists them:
// viewer first, editor (or manager) last, and a relation between where the
// type has one (runner, resolver, overrider, processors_editor,
// contributor, responder); a resource without a policy gives everyone the
// highest. The user's level is the highest relation a binding gives one
// of its principals: user:ID, role:ID of each of its roles, team:ID of
// each of its teams, org:ORG_ID. When its teams cannot be read (a key
// without the teams_read permission), a team principal is taken to be one
// of its own, so that no write is refused for a team it may be in.
// Bindings the API refuses for what they are (a relation the type lacks,
// a principal that is not TYPE:UUID) are not judged: the API refuses them
// for that first, at apply.
func (d *Driver) ReviewAccess(ctx context.Context, w resources.AccessWrite) (resources.AccessReview, error) {
	if w.Op == resources.WriteDelete {
		return resources.AccessReview{}, nil
	}
	rid, bindings, err := parseInputs(w.Want)
	if err != nil {
		return resources.AccessReview{}, err
	}
	var cur []Binding
	switch live, liveErr := parseBindings(w.Live["bindings"]); {
	case w.Op == resources.WriteCreate:
		// No policy: Create writes only where there is none (it refuses,
		// writing nothing, where there is one).
	case w.Live != nil && liveErr == nil && w.Live["resourceId"] == rid:
		cur = live // read by the plan just now
	default:
		p, err := d.c.GetRestrictionPolicy(ctx, rid)
		if err != nil {
			return resources.AccessReview{}, fmt.Errorf("read the current policy: %w", err)
		}
		cur = p.Bindings
	}
	out := resources.AccessReview{Changes: bindingChanges(rid, cur, bindings)}
	if len(out.Changes) == 0 {
		return out, nil
	}
	typ, _, _ := strings.Cut(rid, ":")
	rels := relationsOf(typ)
	if !judgeable(rels, cur) || !judgeable(rels, bindings) {
		// The API refuses such bindings for what they are, before it
		// looks at who loses access: that refusal is left to it.
		return out, nil
	}
	u, err := d.c.GetCurrentUser(ctx)
	if err != nil {
		return resources.AccessReview{}, fmt.Errorf("read the current user, whose own access Datadog does not let a write lower: %w", err)
	}
	mine := principalsOf(u)
	teams, err := d.c.CurrentUserTeams(ctx)
	teamsKnown := err == nil
	for _, t := range teams {
		mine["team:"+strings.ToLower(t)] = true
	}
	from := accessLevel(rels, cur, func(p string) bool { return mine[strings.ToLower(p)] })
	to := accessLevel(rels, bindings, func(p string) bool {
		p = strings.ToLower(p)
		return mine[p] || !teamsKnown && strings.HasPrefix(p, "team:")
	})
	if to.rank >= from.rank {
		return out, nil
	}
	return out, resources.Refused(fmt.Errorf("Datadog would refuse these bindings at apply: users cannot decrease their own level of access (from %s to %s). "+
		"The user whose application key (DD_APP_KEY) makes the call is user:%s, of org org:%s; name it, one of its roles or teams, or its org among the principals of %s "+
		"(datadog:getCurrentUser gives id and orgId)", from.name(), to.name(), u.ID, u.OrgID, from.relation))
}

// principalsOf are the principals that give u access, but for its teams,
// in lower case.
func principalsOf(u User) map[string]bool {
	out := map[string]bool{"user:" + strings.ToLower(u.ID): true}
	if u.OrgID != "" {
		out["org:"+strings.ToLower(u.OrgID)] = true
	}
	for _, r := range u.RoleIDs {
		out["role:"+strings.ToLower(r)] = true
	}
	return out
}

// level is a level of access to a resource: the relation that gives it
// and its rank, 1 for the first of the type's relations (see
// relationsOf); rank 0, no relation, is no access.
type level struct {
	relation string
	rank     int
}

func (l level) name() string {
	if l.rank == 0 {
		return "no access"
	}
	return l.relation
}

// accessLevel is the highest level bindings give a principal for which
// mine reports true, rels being the relations of the resource's type. No
// bindings is no policy: the highest level there is.
func accessLevel(rels []string, bindings []Binding, mine func(string) bool) level {
	if len(bindings) == 0 {
		return level{relation: rels[len(rels)-1], rank: len(rels)}
	}
	var best level
	for _, b := range bindings {
		r := slices.Index(rels, b.Relation) + 1
		if r <= best.rank {
			continue
		}
		for _, p := range b.Principals {
			if mine(p) {
				best = level{relation: b.Relation, rank: r}
				break
			}
		}
	}
	return best
}

// relationsOf lists the relations of a resource type, least access
// first: those Relations lists, or viewer and editor, what most types
// have, for a type it does not know.
func relationsOf(typ string) []string {
	if rels, ok := Relations[typ]; ok {
		return rels
	}
	return []string{"viewer", "editor"}
}

// judgeable reports whether the API would look at who loses access with
// bindings: every relation is one of rels, every principal "TYPE:UUID" of
// a principal type. Bindings it refuses for what they are (a relation the
// type lacks, a malformed principal) it refuses before.
func judgeable(rels []string, bindings []Binding) bool {
	for _, b := range bindings {
		if !slices.Contains(rels, b.Relation) {
			return false
		}
		for _, p := range b.Principals {
			typ, id, _ := strings.Cut(p, ":")
			if !slices.Contains([]string{"org", "role", "team", "user"}, typ) || !uuidRE.MatchString(id) {
				return false
			}
		}
	}
	return true
}

// uuidRE matches the ids of principals.
var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// bindingChanges lists the principals each relation of after has that
// before has not, and the other way round.
func bindingChanges(rid string, before, after []Binding) []resources.AccessChange {
	set := func(bs []Binding) map[[2]string]bool {
		out := map[[2]string]bool{}
		for _, b := range bs {
			for _, p := range b.Principals {
				out[[2]string{b.Relation, p}] = true
			}
		}
		return out
	}
	b, a := set(before), set(after)
	var out []resources.AccessChange
	for k := range b {
		if !a[k] {
			out = append(out, resources.AccessChange{Resource: rid, Role: k[0], Member: k[1]})
		}
	}
	for k := range a {
		if !b[k] {
			out = append(out, resources.AccessChange{Resource: rid, Role: k[0], Member: k[1], Added: true})
		}
	}
	resources.SortAccessChanges(out)
	return out
}
