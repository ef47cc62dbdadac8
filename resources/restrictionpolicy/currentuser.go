package restrictionpolicy

import (
	"context"

	"github.com/reconcile-dev/reconcile/resources"
)

// CurrentUser is the datadog:getCurrentUser lookup: the user owning the
// application key, so that an "org:" principal can be written by reference.
type CurrentUser struct {
	c *Client
}

var _ resources.Function = (*CurrentUser)(nil)

// NewCurrentUser returns the datadog:getCurrentUser lookup.
func NewCurrentUser(cfg Config) resources.Function {
	return &CurrentUser{c: NewClient(cfg)}
}

// Invoke calls GET /api/v2/current_user; it takes no arguments. The result
// holds id (the user's UUID), email, handle, name and orgId (the org's UUID,
// data.relationships.org.data.id, as "org:" principals need). A failed call
// wraps a *resources.APIError (403 for bad keys).
func (f *CurrentUser) Invoke(ctx context.Context, _ resources.Attrs) (resources.Attrs, error) {
	u, err := f.c.GetCurrentUser(ctx)
	if err != nil {
		return nil, err // the engine names the function
	}
	return resources.Attrs{
		"id":     u.ID,
		"email":  u.Email,
		"handle": u.Handle,
		"name":   u.Name,
		"orgId":  u.OrgID,
	}, nil
}
