package aimodel

import (
	"context"
	"time"

	oci "github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage"
)

// Token is the type token of the resources Driver manages.
const Token = "oci:AiLanguage:Model"

// DefaultTimeout bounds a create (training included), update or delete
// when the context carries no deadline: the default of
// options.customTimeouts, as in the Terraform provider.
const DefaultTimeout = 60 * time.Minute

// Driver manages oci:AiLanguage:Model resources. It connects on first use
// and is safe for concurrent use.
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
	d.obj = &ailanguage.Object{Client: d.c, Kind: "model", Timeout: DefaultTimeout, Normalize: d.Normalize,
		Get: d.get,
		Move: func(ctx context.Context, id, comp string, ifMatch *string) error {
			c, _ := d.c.SDK()
			_, err := c.ChangeModelCompartment(ailanguage.Ctx(ctx), oci.ChangeModelCompartmentRequest{ModelId: &id, IfMatch: ifMatch,
				ChangeModelCompartmentDetails: oci.ChangeModelCompartmentDetails{CompartmentId: &comp}})
			return err
		},
		Update: func(ctx context.Context, id string, u ailanguage.Updatable, ifMatch *string) (string, error) {
			c, _ := d.c.SDK()
			resp, err := c.UpdateModel(ailanguage.Ctx(ctx), oci.UpdateModelRequest{ModelId: &id, IfMatch: ifMatch,
				UpdateModelDetails: oci.UpdateModelDetails{DisplayName: u.DisplayName, Description: u.Description, FreeformTags: u.FreeformTags, DefinedTags: u.DefinedTags}})
			return ailanguage.Deref(resp.OpcWorkRequestId), err
		},
		Delete: func(ctx context.Context, id string) (string, error) {
			c, _ := d.c.SDK()
			resp, err := c.DeleteModel(ailanguage.Ctx(ctx), oci.DeleteModelRequest{ModelId: &id})
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
	resp, err := c.GetModel(ailanguage.Ctx(ctx), oci.GetModelRequest{ModelId: &id})
	if err != nil {
		return ailanguage.Live{}, ailanguage.ObjectErr(err)
	}
	return ailanguage.Live{Attrs: toAttrs(resp.Model), Etag: ailanguage.Deref(resp.Etag), State: string(resp.LifecycleState),
		Details: ailanguage.Deref(resp.LifecycleDetails)}, nil
}

// Normalize drops empty tag maps and an empty description, fills the
// defaults the service fills (modelDetails.languageCode "en", a text
// classifier's MULTI_CLASS classificationMode) and puts values in their
// canonical JSON shape.
func (d *Driver) Normalize(want resources.Attrs) resources.Attrs {
	return ailanguage.Normalize(want, fillDefaults)
}

// VendorKey reports whether key of field is a tag OCI adds by itself (a
// defined tag of the Oracle-Tags namespace).
func (d *Driver) VendorKey(field, key string) bool { return ailanguage.IsVendorTag(field, key) }

// Read returns the model's inputs and outputs, or an error matching
// resources.ErrNotFound when it does not exist or is DELETED.
func (d *Driver) Read(ctx context.Context, id string) (resources.Attrs, error) {
	return d.obj.Read(ctx, id)
}

// Create creates the model, which trains it, and waits through its work
// request until it is ACTIVE, reporting the state and the work request's
// percentage as progress. The context's idempotency token is sent as
// opc-retry-token. Bad inputs, a bad configuration and a refused
// CreateModel match resources.ErrRefused: nothing was made. A training
// that fails leaves a FAILED model: Create returns its id with an error
// matching resources.ErrUnusable that holds the service's
// lifecycleDetails. A wait that times out (customTimeouts.create), is
// cancelled or cannot reach the API returns the id with an error matching
// neither: how the training ends is unknown.
func (d *Driver) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	details, err := createDetails(d.Normalize(want))
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
	resp, err := c.CreateModel(ailanguage.Ctx(ctx), oci.CreateModelRequest{CreateModelDetails: details,
		OpcRetryToken: ailanguage.RetryTokenPtr(resources.IdempotencyToken(ctx))})
	if err != nil {
		return "", nil, ailanguage.Refusal(ailanguage.APIErr(err))
	}
	return d.obj.Created(ctx, ailanguage.Deref(resp.Id), ailanguage.Deref(resp.OpcWorkRequestId), start)
}

// Recover finds the model an interrupted Create with req.Token made by
// replaying the create with the same body and opc-retry-token, to which
// OCI answers with the first model, and waits for its training as Create
// does; if the first create never reached OCI, the replay makes (and
// trains) it now. See aiendpoint.Driver.Recover, which it follows in every
// case.
func (d *Driver) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	if err := ailanguage.CanReplay("model", req); err != nil {
		return "", nil, err
	}
	id, got, err := d.Create(resources.WithIdempotencyToken(ctx, req.Token), req.Want)
	return ailanguage.Replayed(id, got, err)
}

// Update changes displayName, description, the tags and compartmentId in
// place (see ailanguage.Object.UpdateObject); the other inputs force a
// replacement, which the plan makes instead.
func (d *Driver) Update(ctx context.Context, id string, prior, want resources.Attrs) (resources.Attrs, error) {
	return d.obj.UpdateObject(ctx, id, prior, want)
}

// Delete deletes the model and waits until it is DELETED or gone; one
// already gone is not an error.
func (d *Driver) Delete(ctx context.Context, id string) error {
	return d.obj.DeleteObject(ctx, id)
}
