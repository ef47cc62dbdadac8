package aimodel

import (
	"context"
	"errors"

	oci "github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage"
)

var _ resources.PlanChecker = (*Driver)(nil)

// CheckPlan reads, for a plan, what OCI would refuse of the model the
// apply would write:
//   - its project (projectId), for a create: a model can be made only in
//     an ACTIVE project (OCI answers 409 IncorrectState otherwise, and 400
//     RelatedResourceNotAuthorizedOrNotFound for an unknown one). A
//     projectId not known until apply (a project made by the same apply)
//     is not checked.
//   - its defined tags, when sent: every tag namespace and key must exist
//     in the tenancy (ailanguage.Client.CheckDefinedTags).
//
// What a plan cannot know: whether the training data (trainingDataset)
// can be read and trains, which only the training tells; a model ends
// FAILED then, and is replaced by the next apply.
func (d *Driver) CheckPlan(ctx context.Context, want, prior resources.Attrs) error {
	project := ailanguage.CheckRelated(ctx, want, prior, attrProjectID, "project", "OCI makes models only in an ACTIVE project",
		func(ctx context.Context, id string) (string, error) {
			c, err := d.c.SDK()
			if err != nil {
				return "", err
			}
			resp, err := c.GetProject(ailanguage.Ctx(ctx), oci.GetProjectRequest{ProjectId: &id})
			if err != nil {
				return "", ailanguage.ObjectErr(err)
			}
			return string(resp.LifecycleState), nil
		})
	return errors.Join(project, d.c.CheckDefinedTags(ctx, want, prior))
}
