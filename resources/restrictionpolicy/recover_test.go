package restrictionpolicy_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/restrictionpolicy"
)

// TestRecover finds an interrupted create's policy by its natural id, and
// adopts only a policy the create would have written.
func TestRecover(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	d := restrictionpolicy.New(e.config())
	recoverOf := func(want attrs) (string, attrs, error) {
		return d.Recover(t.Context(), resources.RecoverRequest{Token: "t", Want: want, Time: time.Now()})
	}

	t.Run("create wrote the policy", func(t *testing.T) {
		want := attrs{"resourceId": "dashboard:recover-made", "bindings": []any{binding("viewer", teamA), binding("editor", roleB, roleA)}}
		if _, _, err := d.Create(t.Context(), want); err != nil {
			t.Fatal(err)
		}
		// The same bindings in another order are the same set.
		again := attrs{"resourceId": "dashboard:recover-made", "bindings": []any{binding("editor", roleA, roleB), binding("viewer", teamA)}}
		id, got, err := recoverOf(again)
		if err != nil || id != "dashboard:recover-made" || len(got["bindings"].([]any)) != 2 {
			t.Errorf("Recover of a written policy = %q, %v, %v; want it adopted", id, got, err)
		}
	})
	t.Run("create wrote nothing", func(t *testing.T) {
		none := attrs{"resourceId": "dashboard:recover-none", "bindings": []any{binding("editor", roleA)}}
		if id, got, err := recoverOf(none); id != "" || got != nil || err != nil {
			t.Errorf("Recover of a policy never written = %q, %v, %v; want nothing", id, got, err)
		}
	})
	t.Run("someone else's policy", func(t *testing.T) {
		const rid = "dashboard:recover-theirs"
		e.writeOutside(t, rid, restrictionpolicy.Binding{Relation: "editor", Principals: []string{userA}})
		id, got, err := recoverOf(attrs{"resourceId": rid, "bindings": []any{binding("editor", roleA)}})
		if id != "" || got != nil || err == nil || !strings.Contains(err.Error(), "cannot tell whether the create made it") {
			t.Errorf("Recover over another policy = %q, %v, %v; want an error saying it cannot tell, and nothing adopted", id, got, err)
		}
		if errors.Is(err, resources.ErrRefused) {
			t.Errorf("Recover error %v matches ErrRefused", err)
		}
	})
	t.Run("secret resourceId", func(t *testing.T) {
		if id, _, err := d.Recover(t.Context(), resources.RecoverRequest{Token: "t", Want: attrs{}, Hidden: []string{"resourceId"}}); id != "" || err == nil {
			t.Errorf("Recover with a secret resourceId = %q, %v; want an error", id, err)
		}
	})
}
