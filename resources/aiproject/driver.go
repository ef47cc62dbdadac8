package aiproject

import (
	"context"
	"time"

	oci "github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage"
)

// Token is the type token of the resources Driver manages.
const Token = "oci:AiLanguage:Project"

// DefaultTimeout bounds a create, update or delete when the context
// carries no deadline: the default of options.customTimeouts, as in the
// Terraform provider.
const DefaultTimeout = 60 * time.Minute

// Driver manages oci:AiLanguage:Project resources. It connects on first
// use and is safe for concurrent use.
type Driver struct {
	c   *ailanguage.Client
	obj *ailanguage.Object
}

var (
	_ resources.Driver     = (*Driver)(nil)
	_ resources.Normalizer = (*Driver)(nil)
	_ resources.VendorKeys = (*Driver)(nil)
	_ resources.Recoverer  = (*Driver)(nil)
)

// New returns a driver for cfg. It reads no file and makes no request until
// the first call.
func New(cfg ailanguage.Config) *Driver {
	d := &Driver{c: ailanguage.NewClient(cfg)}
	d.obj = &ailanguage.Object{Client: d.c, Kind: "project", Timeout: DefaultTimeout, Normalize: d.Normalize,
		Get: d.get,
		Move: func(ctx context.Context, id, comp string, ifMatch *string) error {
			c, _ := d.c.SDK()
			_, err := c.ChangeProjectCompartment(ailanguage.Ctx(ctx), oci.ChangeProjectCompartmentRequest{ProjectId: &id, IfMatch: ifMatch,
				ChangeProjectCompartmentDetails: oci.ChangeProjectCompartmentDetails{CompartmentId: &comp}})
			return err
		},
		Update: func(ctx context.Context, id string, u ailanguage.Updatable, ifMatch *string) (string, error) {
			c, _ := d.c.SDK()
			resp, err := c.UpdateProject(ailanguage.Ctx(ctx), oci.UpdateProjectRequest{ProjectId: &id, IfMatch: ifMatch,
				UpdateProjectDetails: oci.UpdateProjectDetails{DisplayName: u.DisplayName, Description: u.Description, FreeformTags: u.FreeformTags, DefinedTags: u.DefinedTags}})
			return ailanguage.Deref(resp.OpcWorkRequestId), err
		},
		Delete: func(ctx context.Context, id string) (string, error) {
			c, _ := d.c.SDK()
			resp, err := c.DeleteProject(ailanguage.Ctx(ctx), oci.DeleteProjectRequest{ProjectId: &id})
			return ailanguage.Deref(resp.OpcWorkRequestId), err
		},
	}
	return d
}

func (d *Driver) get(ctx context.Context, id string) (ailanguage.Live, error) {
	c, err := d.c.SDK()
	if err != nil {
		return ailanguage.Live{}, err
	}
	resp, err := c.GetProject(ailanguage.Ctx(ctx), oci.GetProjectRequest{ProjectId: &id})
	if err != nil {
		return ailanguage.Live{}, ailanguage.ObjectErr(err)
	}
	return ailanguage.Live{Attrs: toAttrs(resp.Project), Etag: ailanguage.Deref(resp.Etag), State: string(resp.LifecycleState),
		Details: ailanguage.Deref(resp.LifecycleDetails)}, nil
}

func toAttrs(p oci.Project) resources.Attrs {
	return ailanguage.Common{
		ID: p.Id, CompartmentID: p.CompartmentId, DisplayName: p.DisplayName,
		Description: p.Description, LifecycleDetails: p.LifecycleDetails, State: string(p.LifecycleState),
		TimeCreated: p.TimeCreated, TimeUpdated: p.TimeUpdated,
		FreeformTags: p.FreeformTags, DefinedTags: p.DefinedTags, SystemTags: p.SystemTags,
	}.Attrs()
}

// Normalize drops empty tag maps and an empty description (the API treats
// empty and absent alike) and puts values in their canonical JSON shape.
func (d *Driver) Normalize(want resources.Attrs) resources.Attrs {
	return ailanguage.Normalize(want, nil)
}

// VendorKey reports whether key of field is a tag OCI adds by itself (a
// defined tag of the Oracle-Tags namespace).
func (d *Driver) VendorKey(field, key string) bool { return ailanguage.IsVendorTag(field, key) }

// Read returns the project's inputs and outputs, or an error matching
// resources.ErrNotFound when it does not exist or is DELETED.
func (d *Driver) Read(ctx context.Context, id string) (resources.Attrs, error) {
	return d.obj.Read(ctx, id)
}

// Create creates the project and waits, through its work request, until
// it is ACTIVE. The context's idempotency token is sent as
// opc-retry-token. Bad inputs, a bad configuration and a refused
// CreateProject match resources.ErrRefused; a project that ends FAILED
// comes back with its id and an error matching resources.ErrUnusable; a
// wait that does not end, with its id and an error matching neither.
func (d *Driver) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	comp, u, err := ailanguage.CreateCommon(d.Normalize(want))
	if err != nil {
		return "", nil, err
	}
	c, err := d.c.SDK()
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := ailanguage.WithDefaultTimeout(ctx, DefaultTimeout)
	defer cancel()
	start := time.Now()
	resp, err := c.CreateProject(ailanguage.Ctx(ctx), oci.CreateProjectRequest{
		CreateProjectDetails: oci.CreateProjectDetails{CompartmentId: comp, DisplayName: u.DisplayName, Description: u.Description,
			FreeformTags: u.FreeformTags, DefinedTags: u.DefinedTags},
		OpcRetryToken: ailanguage.RetryTokenPtr(resources.IdempotencyToken(ctx)),
	})
	if err != nil {
		return "", nil, ailanguage.Refusal(ailanguage.APIErr(err))
	}
	return d.obj.Created(ctx, ailanguage.Deref(resp.Id), ailanguage.Deref(resp.OpcWorkRequestId), start)
}

// Recover finds the project an interrupted Create with req.Token made by
// replaying the create with the same body and opc-retry-token, to which
// OCI answers with the first project; if the first create never reached
// OCI, the replay makes it now. See aiendpoint.Driver.Recover, which it
// follows in every case.
func (d *Driver) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	if err := ailanguage.CanReplay("project", req); err != nil {
		return "", nil, err
	}
	id, got, err := d.Create(resources.WithIdempotencyToken(ctx, req.Token), req.Want)
	return ailanguage.Replayed(id, got, err)
}

// Update changes the project in place (see ailanguage.Object.UpdateObject).
func (d *Driver) Update(ctx context.Context, id string, prior, want resources.Attrs) (resources.Attrs, error) {
	return d.obj.UpdateObject(ctx, id, prior, want)
}

// Delete deletes the project and waits until it is DELETED or gone; one
// already gone is not an error.
func (d *Driver) Delete(ctx context.Context, id string) error {
	return d.obj.DeleteObject(ctx, id)
}
