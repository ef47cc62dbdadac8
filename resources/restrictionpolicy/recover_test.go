package restrictionpolicy_test

import (
	"testing"
	"time"

	"reconcile/resources"
	"reconcile/resources/restrictionpolicy"
)

// TestRecover finds an interrupted create's policy by its natural id.
func TestRecover(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	d := restrictionpolicy.New(e.config())
	want := attrs{"resourceId": "dashboard:recover-made", "bindings": []any{binding("editor", roleA)}}
	if _, _, err := d.Create(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	id, got, err := d.Recover(t.Context(), resources.RecoverRequest{Token: "t", Want: want, Time: time.Now()})
	if err != nil || id != "dashboard:recover-made" || len(got["bindings"].([]any)) != 1 {
		t.Errorf("Recover of a written policy = %q, %v, %v; want it", id, got, err)
	}
	none := attrs{"resourceId": "dashboard:recover-none", "bindings": []any{binding("editor", roleA)}}
	if id, _, err := d.Recover(t.Context(), resources.RecoverRequest{Token: "t", Want: none, Time: time.Now()}); id != "" || err != nil {
		t.Errorf("Recover of a policy never written = %q, %v; want nothing", id, err)
	}
	if id, _, err := d.Recover(t.Context(), resources.RecoverRequest{Token: "t", Want: attrs{}, Hidden: []string{"resourceId"}}); id != "" || err == nil {
		t.Errorf("Recover with a secret resourceId = %q, %v; want an error", id, err)
	}
}
