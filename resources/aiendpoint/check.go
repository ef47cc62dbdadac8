package aiendpoint

import (
	"context"
	"errors"

	oci "github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage"
)

var _ resources.PlanChecker = (*Driver)(nil)

// CheckPlan reads, for a plan, what OCI would refuse of the endpoint the
// apply would write:
//   - its model (modelId), when a create or an update would send it: a
//     model that does not exist, or is not ACTIVE (deleted, DELETING,
//     still training, FAILED), cannot be deployed. OCI refuses a create
//     naming an unknown model (400 RelatedResourceNotAuthorizedOrNotFound)
//     and lets one naming a model not ACTIVE start, to end FAILED; an
//     update to such a model it refuses (400 InvalidParameter).
//   - its defined tags, when sent: every tag namespace and key must exist
//     in the tenancy (ailanguage.Client.CheckDefinedTags).
//
// A modelId not known until apply (a model made by the same apply) is not
// checked. What a plan cannot know: a model deleted between the plan and
// the apply, capacity (inferenceUnits beyond the tenancy's limits) and
// permissions, which only the create tells.
func (d *Driver) CheckPlan(ctx context.Context, want, prior resources.Attrs) error {
	model := ailanguage.CheckRelated(ctx, want, prior, attrModelID, "model", "OCI deploys only an ACTIVE model", d.modelState)
	return errors.Join(model, d.c.CheckDefinedTags(ctx, want, prior))
}

// modelState reads the lifecycle state of the model id, once per driver
// for a model found ACTIVE: a plan of many endpoints deploying one model
// reads it once. Other answers are not kept, so that a model still
// training is read again.
func (d *Driver) modelState(ctx context.Context, id string) (string, error) {
	if _, ok := d.activeModels.Load(id); ok {
		return ailanguage.StateActive, nil
	}
	c, err := d.sdk()
	if err != nil {
		return "", err
	}
	resp, err := c.GetModel(sdkCtx(ctx), oci.GetModelRequest{ModelId: &id})
	if err != nil {
		return "", objectErr(err)
	}
	st := string(resp.LifecycleState)
	if st == ailanguage.StateActive {
		d.activeModels.Store(id, true)
	}
	return st, nil
}
