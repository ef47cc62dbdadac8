package aiproject_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage/ailanguagetest"
	"github.com/reconcile-dev/reconcile/resources/aiproject"
)

type attrs = resources.Attrs

// TestDriverContract: create (through its work request), read, update
// (tags, description, a move to another compartment), read, delete, then
// read reports ErrNotFound.
func TestDriverContract(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	env.Emu.SetDelays(50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond)
	d, ctx := aiproject.New(env.Config), t.Context()

	want := attrs{"compartmentId": env.Compartment, "displayName": "reviews", "freeformTags": map[string]any{"team": "nlp"},
		"definedTags": map[string]any{"Operations.CostCenter": "42"}}
	var msgs []string
	pctx := resources.WithProgress(ctx, func(ev resources.ProgressEvent) { msgs = append(msgs, ev.Message) })
	id, got, err := d.Create(resources.WithIdempotencyToken(pctx, "tok-contract"), want)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if !strings.HasPrefix(id, "ocid1.ailanguageproject.") || got["state"] != "ACTIVE" || got["displayName"] != "reviews" {
		t.Errorf("Create = %q, %v", id, got)
	}
	if tags, _ := got["systemTags"].(map[string]any); tags["orcl-cloud.free-tier-retained"] != "true" {
		t.Errorf("systemTags = %v, want the flattened free-tier tag", got["systemTags"])
	}
	if len(msgs) == 0 || !strings.Contains(msgs[0], "work request") {
		t.Errorf("progress = %q, want the state and the work request's percentage", msgs)
	}
	if !d.VendorKey("definedTags", "Oracle-Tags.CreatedBy") || d.VendorKey("definedTags", "Operations.CostCenter") {
		t.Errorf("VendorKey: the Oracle-Tags are the cloud's, the user's tags are not")
	}

	next := attrs{"compartmentId": env.OtherCompartment, "displayName": "reviews", "description": "customer reviews",
		"definedTags": map[string]any{"Operations.Owner": "ana"}}
	got, err = d.Update(ctx, id, want, next)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	read, err := d.Read(ctx, id)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	for _, a := range []attrs{got, read} {
		tags, _ := a["definedTags"].(map[string]any)
		if a["compartmentId"] != env.OtherCompartment || a["description"] != "customer reviews" || a["freeformTags"] != nil ||
			tags["Operations.Owner"] != "ana" || tags["Operations.CostCenter"] != nil || tags["Oracle-Tags.CreatedBy"] == nil {
			t.Errorf("after Update: %v", a)
		}
	}

	if err := d.Delete(ctx, id); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := d.Read(ctx, id); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Read after Delete: %v, want ErrNotFound", err)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Errorf("Delete again: %v, want nil", err)
	}
}

// TestDriverRefusals: what OCI refuses, and bad inputs, match ErrRefused
// and make nothing; the refusal of an unknown tag namespace says which.
func TestDriverRefusals(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	d, ctx := aiproject.New(env.Config), t.Context()
	for name, tc := range map[string]struct {
		want attrs
		text string
	}{
		"unknown tag namespace": {attrs{"compartmentId": env.Compartment, "definedTags": map[string]any{"Nope.k": "v"}}, "TagNamespace Nope does not exists"},
		"unknown compartment":   {attrs{"compartmentId": "ocid1.compartment.oc1..nope"}, "RelatedResourceNotAuthorizedOrNotFound"},
		"no compartment":        {attrs{"displayName": "x"}, "compartmentId: required"},
	} {
		id, _, err := d.Create(ctx, tc.want)
		if id != "" || !errors.Is(err, resources.ErrRefused) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: Create = %q, %v; want a refusal saying %q", name, id, err, tc.text)
		}
	}
}

// TestRecover replays an interrupted create with its token: the project the
// first create made comes back, and none is made twice; a create that
// never reached OCI is made by the replay.
func TestRecover(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	d, ctx := aiproject.New(env.Config), t.Context()
	want := attrs{"compartmentId": env.Compartment, "displayName": "recovered"}
	id, _, err := d.Create(resources.WithIdempotencyToken(ctx, "tok-1"), want)
	if err != nil {
		t.Fatal(err)
	}
	got, a, err := d.Recover(ctx, resources.RecoverRequest{Token: "tok-1", Want: want, Time: time.Now()})
	if err != nil || got != id || a["state"] != "ACTIVE" {
		t.Errorf("Recover = %q, %v, %v; want %q ACTIVE", got, a["state"], err, id)
	}
	if _, _, err := d.Recover(ctx, resources.RecoverRequest{Token: "tok-2", Want: want, Hidden: []string{"description"}}); err == nil || !strings.Contains(err.Error(), "secret") {
		t.Errorf("Recover with a secret input: %v, want it refused", err)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	got, _, err = d.Recover(ctx, resources.RecoverRequest{Token: "tok-1", Want: want, Time: time.Now()})
	if got != "" || err != nil {
		t.Errorf("Recover of a deleted project's token = %q, %v; want nothing made", got, err)
	}
}
