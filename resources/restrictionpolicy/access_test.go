package restrictionpolicy_test

import (
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/restrictionpolicy"
)

// TestReviewAccessPredictsTheAPI reviews bindings that keep or lower the
// caller's own access through each principal type it has (user, role,
// team, org), then writes them: the review refuses exactly what the API
// refuses, giving its reason, and lists the principals each relation
// gains and loses.
func TestReviewAccessPredictsTheAPI(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	e := newTeamEnv(t, false, &calls)
	const other = "role:00000000-0000-0000-0000-0000000000ff"
	mine := map[string]string{"user": "user:" + meID, "role": "role:" + myRole, "team": "team:" + myTeam, "org": "org:" + myOrg}
	for typ, p := range mine {
		for name, tc := range map[string]struct {
			before, after []any
			refusal       string // "" when the API takes it
			changes       []string
		}{
			"editor kept":       {[]any{binding("editor", p)}, []any{binding("editor", p, other)}, "", []string{"+editor " + other}},
			"editor to viewer":  {[]any{binding("editor", p)}, []any{binding("viewer", p), binding("editor", other)}, "(from editor to viewer)", []string{"-editor " + p, "+editor " + other, "+viewer " + p}},
			"editor to nothing": {[]any{binding("editor", p)}, []any{binding("editor", other)}, "(from editor to no access)", []string{"-editor " + p, "+editor " + other}},
			"viewer to editor":  {[]any{binding("viewer", p), binding("editor", other)}, []any{binding("editor", p)}, "", []string{"-editor " + other, "+editor " + p, "-viewer " + p}},
			"no access before":  {[]any{binding("editor", other)}, []any{binding("viewer", other)}, "", []string{"-editor " + other, "+viewer " + other}},
		} {
			t.Run(typ+"/"+name, func(t *testing.T) {
				t.Parallel()
				rid := "dashboard:" + typ + "-" + strings.ReplaceAll(name, " ", "-")
				var before []restrictionpolicy.Binding
				for _, b := range tc.before {
					m := b.(map[string]any)
					var ps []string
					for _, x := range m["principals"].([]any) {
						ps = append(ps, x.(string))
					}
					before = append(before, restrictionpolicy.Binding{Relation: m["relation"].(string), Principals: ps})
				}
				e.writeOutside(t, rid, before...)
				d := restrictionpolicy.New(e.config())
				want := d.Normalize(attrs{"resourceId": rid, "bindings": tc.after})
				got, reviewErr := d.ReviewAccess(t.Context(), resources.AccessWrite{Op: resources.WriteUpdate, ID: rid, Want: want})
				_, writeErr := d.Update(t.Context(), rid, nil, want)
				var ae *resources.APIError
				switch {
				case tc.refusal == "":
					if reviewErr != nil || writeErr != nil {
						t.Fatalf("review %v, write %v; want both to pass", reviewErr, writeErr)
					}
				case !errors.Is(reviewErr, resources.ErrRefused) || !strings.Contains(reviewErr.Error(), "users cannot decrease their own level of access "+tc.refusal):
					t.Fatalf("review = %v, want the API's refusal %s", reviewErr, tc.refusal)
				case !errors.As(writeErr, &ae) || !strings.Contains(ae.Message, tc.refusal):
					t.Fatalf("the API took the write the review refused (%v)", writeErr)
				}
				var changes []string
				for _, c := range got.Changes {
					sign := "-"
					if c.Added {
						sign = "+"
					}
					if c.Resource != rid {
						t.Errorf("change %+v: want resource %s", c, rid)
					}
					changes = append(changes, sign+c.Role+" "+c.Member)
				}
				if reviewErr == nil && !reflect.DeepEqual(changes, tc.changes) {
					t.Errorf("changes = %q, want %q", changes, tc.changes)
				}
			})
		}
	}
}

// TestReviewAccessCreate: a create writes where there is no policy,
// which gives everyone the highest access: bindings that do not give the
// caller editor are refused, and nothing is read but the user.
func TestReviewAccessCreate(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	e := newTeamEnv(t, false, &calls)
	d := restrictionpolicy.New(e.config())
	for name, tc := range map[string]struct {
		bindings []any
		refusal  string
	}{
		"through the team":   {[]any{binding("editor", "team:"+myTeam)}, ""},
		"viewer only":        {[]any{binding("viewer", "org:"+myOrg), binding("editor", roleB)}, "(from editor to viewer)"},
		"manager type":       {[]any{binding("contributor", "org:"+myOrg), binding("manager", roleB)}, "(from manager to contributor)"},
		"another user's org": {[]any{binding("editor", "org:00000000-0000-4000-8000-00000000dead")}, "(from editor to no access)"},
		// Bindings the API refuses for what they are: that comes first.
		"a relation the type lacks": {[]any{binding("runner", roleB)}, ""},
		"a malformed principal":     {[]any{binding("editor", "role:nope")}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rid := "case-management-project:" + strings.ReplaceAll(name, " ", "-")
			if !strings.Contains(name, "manager") {
				rid = "dashboard:" + strings.ReplaceAll(name, " ", "-")
			}
			want := d.Normalize(attrs{"resourceId": rid, "bindings": tc.bindings})
			got, err := d.ReviewAccess(t.Context(), resources.AccessWrite{Op: resources.WriteCreate, Want: want})
			switch {
			case tc.refusal == "" && err != nil:
				t.Fatalf("ReviewAccess = %v, want it to pass", err)
			case tc.refusal != "" && (!errors.Is(err, resources.ErrRefused) || !strings.Contains(err.Error(), tc.refusal) || !strings.Contains(err.Error(), "user:"+meID)):
				t.Fatalf("ReviewAccess = %v, want a refusal %s naming user:%s", err, tc.refusal, meID)
			case tc.refusal == "" && len(got.Changes) != 1:
				t.Errorf("changes = %+v, want the one principal added", got.Changes)
			}
		})
	}
}

// TestReviewAccessTeamsUnknown: a key that may not read the user's teams
// takes any team for one of its own rather than refuse a write for it;
// its user, roles and org still count.
func TestReviewAccessTeamsUnknown(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	e := newTeamEnv(t, true, &calls)
	d := restrictionpolicy.New(e.config())
	for bindings, refused := range map[string]bool{
		"team": false, "role": true,
	} {
		p := "team:00000000-0000-4000-8000-0000000000aa"
		if bindings == "role" {
			p = roleB
		}
		want := d.Normalize(attrs{"resourceId": "dashboard:unknown-" + bindings, "bindings": []any{binding("editor", p)}})
		_, err := d.ReviewAccess(t.Context(), resources.AccessWrite{Op: resources.WriteCreate, Want: want})
		if refused != (err != nil) {
			t.Errorf("editor to %s only, teams unknown: ReviewAccess = %v, want refused %v", p, err, refused)
		}
	}
	if calls.Load() == 0 {
		t.Errorf("the memberships were never asked for")
	}
}

// TestReviewAccessDelete: a delete lifts the restriction; nobody loses
// access, and nothing is read.
func TestReviewAccessDelete(t *testing.T) {
	t.Parallel()
	d := restrictionpolicy.New(restrictionpolicy.Config{BaseURL: "http://127.0.0.1:1", APIKey: "a", AppKey: "b"})
	got, err := d.ReviewAccess(t.Context(), resources.AccessWrite{Op: resources.WriteDelete, ID: "dashboard:x"})
	if err != nil || len(got.Changes) != 0 || len(got.Lockouts) != 0 {
		t.Errorf("ReviewAccess(delete) = %+v, %v; want nothing", got, err)
	}
}
