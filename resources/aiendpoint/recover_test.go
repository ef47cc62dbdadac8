package aiendpoint

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources"
)

// TestRecover replays interrupted creates by their retry token.
func TestRecover(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	count := func(name string) int {
		t.Helper()
		list, err := env.client().ListEndpoints(t.Context(), ailanguage.ListEndpointsRequest{CompartmentId: &env.compartment, DisplayName: common.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ep := range list.Items {
			if ep.LifecycleState != ailanguage.EndpointLifecycleStateDeleted && ep.LifecycleState != ailanguage.EndpointLifecycleStateDeleting {
				n++
			}
		}
		return n
	}

	t.Run("create made the endpoint", func(t *testing.T) {
		want := env.inputs("recover-made")
		id, _, err := env.driver.Create(resources.WithIdempotencyToken(t.Context(), "tok-made"), want)
		if err != nil {
			t.Fatal(err)
		}
		got, attrs, err := env.driver.Recover(t.Context(), resources.RecoverRequest{Token: "tok-made", Want: want, Time: time.Now()})
		if err != nil || got != id || attrs["state"] != "ACTIVE" {
			t.Errorf("Recover = %q, state %v, %v; want %q ACTIVE", got, attrs["state"], err, id)
		}
		if n := count("recover-made"); n != 1 {
			t.Errorf("%d endpoints named recover-made after Recover, want 1", n)
		}
	})
	t.Run("create never reached OCI", func(t *testing.T) {
		want := env.inputs("recover-never")
		got, _, err := env.driver.Recover(t.Context(), resources.RecoverRequest{Token: "tok-never", Want: want, Time: time.Now()})
		if err != nil || got == "" {
			t.Fatalf("Recover = %q, %v; want the endpoint the replay made", got, err)
		}
		again, _, err := env.driver.Recover(t.Context(), resources.RecoverRequest{Token: "tok-never", Want: want, Time: time.Now()})
		if err != nil || again != got {
			t.Errorf("second Recover = %q, %v; want %q again", again, err, got)
		}
		if n := count("recover-never"); n != 1 {
			t.Errorf("%d endpoints named recover-never, want 1", n)
		}
	})
	t.Run("endpoint deleted since", func(t *testing.T) {
		want := env.inputs("recover-deleted")
		ctx := resources.WithIdempotencyToken(t.Context(), "tok-deleted")
		id, _, err := env.driver.Create(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.driver.Delete(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		got, _, err := env.driver.Recover(t.Context(), resources.RecoverRequest{Token: "tok-deleted", Want: want, Time: time.Now()})
		if got != "" || err != nil {
			t.Errorf("Recover of a deleted endpoint = %q, %v; want nothing", got, err)
		}
		if n := count("recover-deleted"); n != 0 {
			t.Errorf("%d endpoints named recover-deleted, want 0", n)
		}
	})
	t.Run("refused create made nothing", func(t *testing.T) {
		want := env.inputs("recover-refused")
		want["modelId"] = "ocid1.ailanguagemodel.oc1.iad.nosuchmodel"
		got, _, err := env.driver.Recover(t.Context(), resources.RecoverRequest{Token: "tok-refused", Want: want, Time: time.Now()})
		if got != "" || err != nil {
			t.Errorf("Recover of a refused create = %q, %v; want nothing", got, err)
		}
	})
	t.Run("endpoint ended FAILED", func(t *testing.T) {
		want := env.inputs("recover-failed")
		want["modelId"] = env.failedModel
		got, attrs, err := env.driver.Recover(t.Context(), resources.RecoverRequest{Token: "tok-failed", Want: want, Time: time.Now()})
		if got == "" || !errors.Is(err, resources.ErrUnusable) || attrs["state"] != "FAILED" {
			t.Errorf("Recover of a create ending FAILED = %q, state %v, %v; want the id and an error matching ErrUnusable", got, attrs["state"], err)
		}
	})
	t.Run("secret inputs", func(t *testing.T) {
		want := env.inputs("recover-secret")
		got, _, err := env.driver.Recover(t.Context(), resources.RecoverRequest{Token: "tok-secret", Want: want, Hidden: []string{"description"}, Time: time.Now()})
		if got != "" || err == nil || !strings.Contains(err.Error(), "description") {
			t.Errorf("Recover with a hidden input = %q, %v; want an error naming it", got, err)
		}
		if n := count("recover-secret"); n != 0 {
			t.Errorf("Recover with a hidden input made %d endpoints", n)
		}
	})
	t.Run("expired token", func(t *testing.T) {
		want := env.inputs("recover-old")
		got, _, err := env.driver.Recover(t.Context(), resources.RecoverRequest{Token: "tok-old", Want: want, Time: time.Now().Add(-25 * time.Hour)})
		if got != "" || err == nil || !strings.Contains(err.Error(), "24h") {
			t.Errorf("Recover of a day-old create = %q, %v; want an error about the token's lifetime", got, err)
		}
		if n := count("recover-old"); n != 0 {
			t.Errorf("Recover of a day-old create made %d endpoints", n)
		}
	})
}
