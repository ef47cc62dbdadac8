package aiproject

import (
	"context"

	"github.com/reconcile-dev/reconcile/resources"
)

var _ resources.PlanChecker = (*Driver)(nil)

// CheckPlan reads, for a plan, what OCI would refuse of the project the
// apply would write: defined tags naming a tag namespace or key the
// tenancy lacks (ailanguage.Client.CheckDefinedTags), checked when the
// apply would send them. What a plan cannot know: permissions and the
// tenancy's limits, which only the create tells.
func (d *Driver) CheckPlan(ctx context.Context, want, prior resources.Attrs) error {
	return d.c.CheckDefinedTags(ctx, want, prior)
}
