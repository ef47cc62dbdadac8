package specs

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/schemas"
)

// pairwiseConflicts is the rule of iamConflicts said plainly: each claim,
// in the order of the specs, against every claim before it.
func pairwiseConflicts(claims []iamClaim) map[string]string {
	fights := func(a, b iamClaim) bool {
		switch {
		case a.object != b.object:
			return false
		case a.grant.Grants == "policy" || b.grant.Grants == "policy":
			return true
		case a.role != b.role:
			return false
		case a.grant.Grants == "binding" && b.grant.Grants == "binding":
			return a.cond == b.cond
		case a.grant.Grants == "member" && b.grant.Grants == "member":
			return a.member == b.member && a.cond == b.cond
		}
		return true // a binding and a member of its role
	}
	out := map[string]string{}
	for i, later := range claims {
		for _, earlier := range claims[:i] {
			if fights(earlier, later) {
				out[later.r.Name] = earlier.r.Name
				break
			}
		}
	}
	return out
}

// TestIAMConflictsAgree: on random claims over a few objects, roles,
// members and conditions, the indexed check finds, for each resource, the
// same first resource it fights with as the plain pairwise rule.
func TestIAMConflictsAgree(t *testing.T) {
	t.Parallel()
	grants := []string{"policy", "binding", "member", "member", "binding", "member"}
	rng := rand.New(rand.NewPCG(1, 2))
	found := 0
	for trial := range 2000 {
		n := 1 + rng.IntN(8)
		claims := make([]iamClaim, n)
		for i := range claims {
			g := grants[rng.IntN(len(grants))]
			claims[i] = iamClaim{
				r:      &Resource{Name: fmt.Sprintf("r%d", i), Pos: diag.At("main.yaml", i+1, 3)},
				grant:  schemas.IAMGrant{Object: "svc", Grants: g},
				object: fmt.Sprintf("svc\x00s%d", rng.IntN(2)),
			}
			if g != "policy" {
				claims[i].role = fmt.Sprintf("roles/r%d", rng.IntN(2))
				claims[i].cond = fmt.Sprintf("c%d", rng.IntN(2))
			}
			if g == "member" {
				claims[i].member = fmt.Sprintf("user:u%d", rng.IntN(2))
			}
		}
		// Declared in another order than listed: the check orders them.
		rng.Shuffle(n, func(i, j int) { claims[i], claims[j] = claims[j], claims[i] })
		got := map[string]string{}
		for _, d := range iamConflicts(claims) {
			var later, earlier string
			if _, err := fmt.Sscanf(d.Summary, "resource %q", &later); err != nil {
				t.Fatalf("diagnostic %q: %v", d.Summary, err)
			}
			fmt.Sscanf(d.Detail, "%s is declared", &earlier)
			got[later] = earlier
		}
		sorted := append([]iamClaim(nil), claims...)
		for i := range sorted {
			for j := i + 1; j < len(sorted); j++ {
				if comparePos(sorted[j].r.Pos, sorted[i].r.Pos) < 0 {
					sorted[i], sorted[j] = sorted[j], sorted[i]
				}
			}
		}
		want := pairwiseConflicts(sorted)
		found += len(want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d: conflicts %v, want %v", trial, got, want)
		}
	}
	if found < 1000 {
		t.Errorf("only %d conflicts in all trials: the random claims do not exercise the check", found)
	}
}

// TestIAMConflictsManyMembers: twenty thousand members of one role of one
// policy, each distinct, fight with nothing, and the check does not
// compare each with every other.
func TestIAMConflictsManyMembers(t *testing.T) {
	t.Parallel()
	claims := make([]iamClaim, 20000)
	for i := range claims {
		claims[i] = iamClaim{
			r:     &Resource{Name: fmt.Sprintf("m%d", i), Pos: diag.At("main.yaml", i+1, 3)},
			grant: schemas.IAMGrant{Object: "svc", Grants: "member"}, object: "svc\x00orders",
			role: "roles/viewer", member: fmt.Sprintf("user:u%d@acme.example", i), cond: "null",
		}
	}
	claims = append(claims, iamClaim{
		r:     &Resource{Name: "again", Pos: diag.At("main.yaml", 30000, 3)},
		grant: schemas.IAMGrant{Object: "svc", Grants: "member"}, object: "svc\x00orders",
		role: "roles/viewer", member: "user:u7@acme.example", cond: "null",
	})
	ds := iamConflicts(claims)
	if len(ds) != 1 || ds[0].Pos.Line != 30000 {
		t.Fatalf("conflicts = %v, want one, at the member granted twice", ds)
	}
}
