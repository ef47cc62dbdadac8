package aiendpoint

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	oci "github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage"
)

// DefaultTimeout bounds a create, update or delete, including the wait for
// the endpoint to settle, when the context carries no deadline. It is the
// default of options.customTimeouts, as in the Terraform provider; the
// engine passes a custom timeout as the context's deadline.
const DefaultTimeout = 20 * time.Minute

// Config says where the driver finds its credentials and the API.
type Config = ailanguage.Config

// Token is the type token of the resources Driver manages, as the schemas
// name it.
const Token = "oci:AiLanguage:Endpoint"

// Driver manages oci:AiLanguage:Endpoint resources through the official OCI
// Go SDK. It connects on first use, so that a program that never touches an
// OCI resource needs no OCI configuration. It is safe for concurrent use.
type Driver struct {
	c *ailanguage.Client
	// pageLimit is how many endpoints a ListEndpoints page of ReadMany
	// asks for; 0 means listPageLimit. Tests lower it.
	pageLimit int
	// activeModels are the models CheckPlan found ACTIVE (id → true), so
	// that it reads each once per run.
	activeModels sync.Map
}

var (
	_ resources.Driver     = (*Driver)(nil)
	_ resources.Normalizer = (*Driver)(nil)
	_ resources.VendorKeys = (*Driver)(nil)
	_ resources.Recoverer  = (*Driver)(nil)
)

// New returns a driver for cfg. It reads no file and makes no request until
// the first call.
func New(cfg Config) *Driver { return &Driver{c: ailanguage.NewClient(cfg)} }

func (d *Driver) sdk() (sdkClient, error) { return d.c.SDK() }

// sdkClient is the official SDK's client.
type sdkClient = oci.AIServiceLanguageClient

var (
	sdkCtx    = ailanguage.Ctx
	apiErr    = ailanguage.APIErr
	objectErr = ailanguage.ObjectErr
)

// Read returns the endpoint's inputs and outputs. It returns an error
// matching resources.ErrNotFound when the endpoint does not exist or is
// DELETED.
func (d *Driver) Read(ctx context.Context, id string) (resources.Attrs, error) {
	c, err := d.sdk()
	if err != nil {
		return nil, err
	}
	ep, _, err := get(ctx, c, id)
	if err == nil && ep.LifecycleState == oci.EndpointLifecycleStateDeleted {
		err = fmt.Errorf("endpoint is DELETED: %w", resources.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return toAttrs(ep), nil
}

// get returns the endpoint and its etag.
func get(ctx context.Context, c sdkClient, id string) (oci.Endpoint, string, error) {
	resp, err := c.GetEndpoint(sdkCtx(ctx), oci.GetEndpointRequest{EndpointId: &id})
	if err != nil {
		return oci.Endpoint{}, "", objectErr(err)
	}
	return resp.Endpoint, deref(resp.Etag), nil
}

// Create creates the endpoint, deploying its model, and waits until it is
// ACTIVE, reporting progress. The context's idempotency token, when set, is
// sent as opc-retry-token so that a repeated create returns the first
// endpoint.
//
// Its errors say what it made. Bad inputs (*resources.AttrError), a bad
// OCI configuration, and a CreateEndpoint the API refused (4xx but 408,
// 409 and 429) match resources.ErrRefused: nothing was made. An endpoint
// that ends FAILED (its lifecycleDetails in the error), whose work request
// fails, or that is deleted during the wait, comes back with its id and an
// error matching resources.ErrUnusable. A wait that times out, is cancelled
// or cannot reach the API returns the id with an error matching neither:
// how the create ends is unknown.
func (d *Driver) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	details, err := createDetails(d.Normalize(want))
	if err != nil {
		return "", nil, err
	}
	c, err := d.sdk()
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := ailanguage.WithDefaultTimeout(ctx, DefaultTimeout)
	defer cancel()
	start := time.Now()
	req := oci.CreateEndpointRequest{CreateEndpointDetails: details, OpcRetryToken: ailanguage.RetryTokenPtr(resources.IdempotencyToken(ctx))}
	resp, err := c.CreateEndpoint(sdkCtx(ctx), req)
	if err != nil {
		return "", nil, ailanguage.Refusal(apiErr(err))
	}
	id := deref(resp.Id)
	ep, err := d.waitFor(ctx, c, id, ailanguage.StateActive, deref(resp.OpcWorkRequestId), start)
	if err != nil {
		var got resources.Attrs
		if ep.Id != nil {
			got = toAttrs(ep)
		}
		return id, got, err
	}
	return id, toAttrs(ep), nil
}

// RetryTokenLifetime is how long OCI remembers an opc-retry-token. Recover
// does not replay a create older than this, less a margin: the replay would
// make a second endpoint instead of returning the first.
const RetryTokenLifetime = ailanguage.RetryTokenLifetime

// Recover finds the endpoint that an interrupted Create with req.Token made,
// by replaying the create: the same CreateEndpoint body with the same
// opc-retry-token, to which OCI answers with its first answer (the same
// endpoint id) rather than creating another. Recover then waits for the
// endpoint to become ACTIVE, as Create does, and returns it; an endpoint
// that ends FAILED comes back with its id and an error matching
// resources.ErrUnusable; a wait that does not end comes back with the id
// and an error matching neither, as from Create.
//
// If the first create never reached OCI, the replay creates the endpoint
// now. That is what the interrupted apply was asked to do, and the endpoint
// is adopted into state either way: nothing is left that nobody manages.
// When OCI refuses the replay (400, 404) the first create, which had the
// same body, made nothing either, and neither did the replay: Recover
// returns no id and no error. The same goes for a token whose endpoint was
// deleted since (409 InvalidatedRetryToken). Other refusals of the replay
// (401, 403: the credentials or permissions changed since) say nothing of
// the first create: Recover returns them as errors, it cannot tell.
//
// Recover cannot replay a create whose inputs held a secret (state keeps
// only a digest of it) nor one older than RetryTokenLifetime; it says so.
func (d *Driver) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	if err := ailanguage.CanReplay("endpoint", req); err != nil {
		return "", nil, err
	}
	id, got, err := d.Create(resources.WithIdempotencyToken(ctx, req.Token), req.Want)
	return ailanguage.Replayed(id, got, err)
}

// Update changes the endpoint in place: a new compartmentId through
// ChangeEndpointCompartment, the other inputs through one partial
// UpdateEndpoint guarded by the current etag (re-read once on 412), and
// waits until the endpoint is ACTIVE again. A field is sent when want
// differs from prior or from the live endpoint, so drift is repaired too.
// It returns an error matching resources.ErrNotFound when the endpoint is
// gone.
func (d *Driver) Update(ctx context.Context, id string, prior, want resources.Attrs) (resources.Attrs, error) {
	want, prior = d.Normalize(want), d.Normalize(prior)
	if _, err := createDetails(want); err != nil {
		return nil, err
	}
	c, err := d.sdk()
	if err != nil {
		return nil, err
	}
	ctx, cancel := ailanguage.WithDefaultTimeout(ctx, DefaultTimeout)
	defer cancel()
	ep, err := d.update(ctx, c, id, prior, want)
	if err != nil {
		return nil, err
	}
	return toAttrs(ep), nil
}

func (d *Driver) update(ctx context.Context, c sdkClient, id string, prior, want resources.Attrs) (oci.Endpoint, error) {
	start := time.Now()
	ep, etag, err := d.settled(ctx, c, id, start)
	if err != nil {
		return ep, err
	}
	// Tags OCI added by itself (Oracle-Tags) are not a reason to send
	// definedTags; when definedTags are sent anyway, OCI keeps them.
	live := d.Normalize(ailanguage.WithoutVendorTags(toAttrs(ep), want))
	changed := func(k string) bool {
		return !resources.Equal(want[k], prior[k]) || !resources.Equal(want[k], live[k])
	}
	freshEtag := func() (string, error) {
		_, e, err := get(ctx, c, id)
		return e, err
	}

	if comp, _ := want[attrCompartmentID].(string); comp != deref(ep.CompartmentId) {
		err := ailanguage.WithIfMatch(etag, freshEtag, func(ifMatch *string) error {
			_, err := c.ChangeEndpointCompartment(sdkCtx(ctx), oci.ChangeEndpointCompartmentRequest{
				EndpointId:                       &id,
				ChangeEndpointCompartmentDetails: oci.ChangeEndpointCompartmentDetails{CompartmentId: &comp},
				IfMatch:                          ifMatch,
			})
			return err
		})
		if err != nil {
			return ep, fmt.Errorf("change compartment to %q: %w", comp, err)
		}
		// No work request: the endpoint's lifecycle shows the progress.
		if ep, err = d.waitFor(ctx, c, id, ailanguage.StateActive, "", start); err != nil {
			return ep, fmt.Errorf("change compartment to %q: %w", comp, err)
		}
		if ep, etag, err = get(ctx, c, id); err != nil {
			return ep, err
		}
	}

	details, some, err := updateDetails(want, changed)
	if err != nil || !some {
		return ep, err
	}
	var wr string
	err = ailanguage.WithIfMatch(etag, freshEtag, func(ifMatch *string) error {
		resp, err := c.UpdateEndpoint(sdkCtx(ctx), oci.UpdateEndpointRequest{EndpointId: &id, UpdateEndpointDetails: details, IfMatch: ifMatch})
		wr = deref(resp.OpcWorkRequestId)
		return err
	})
	if err != nil {
		return ep, err
	}
	return d.waitFor(ctx, c, id, ailanguage.StateActive, wr, start)
}

// settled reads the endpoint, first waiting out a create or update in
// progress, and returns it with its etag.
func (d *Driver) settled(ctx context.Context, c sdkClient, id string, start time.Time) (oci.Endpoint, string, error) {
	ep, etag, err := get(ctx, c, id)
	if err != nil {
		return ep, etag, err
	}
	switch ep.LifecycleState {
	case oci.EndpointLifecycleStateDeleted, oci.EndpointLifecycleStateDeleting:
		return ep, etag, fmt.Errorf("endpoint is %s: %w", ep.LifecycleState, resources.ErrNotFound)
	case oci.EndpointLifecycleStateCreating, oci.EndpointLifecycleStateUpdating:
		if ep, err = d.waitFor(ctx, c, id, ailanguage.StateActive, "", start); err != nil {
			return ep, "", err
		}
		return get(ctx, c, id)
	}
	return ep, etag, nil
}

// Delete deletes the endpoint and waits until it is DELETED or gone. An
// endpoint that is already gone is not an error.
func (d *Driver) Delete(ctx context.Context, id string) error {
	c, err := d.sdk()
	if err != nil {
		return err
	}
	ctx, cancel := ailanguage.WithDefaultTimeout(ctx, DefaultTimeout)
	defer cancel()
	start := time.Now()
	resp, err := c.DeleteEndpoint(sdkCtx(ctx), oci.DeleteEndpointRequest{EndpointId: &id})
	if err = objectErr(err); errors.Is(err, resources.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := d.waitFor(ctx, c, id, ailanguage.StateDeleted, deref(resp.OpcWorkRequestId), start); err != nil {
		return err
	}
	return nil
}

// waitFor waits with ailanguage.Client.Wait for the endpoint to reach
// target, and returns the last endpoint seen.
func (d *Driver) waitFor(ctx context.Context, c sdkClient, id, target, workRequest string, start time.Time) (oci.Endpoint, error) {
	var last oci.Endpoint
	err := d.c.Wait(ctx, ailanguage.Wait{Kind: "endpoint", Target: target, WorkRequest: workRequest,
		Get: func(ctx context.Context) (string, string, error) {
			ep, _, err := get(ctx, c, id)
			if err != nil {
				return "", "", err
			}
			last = ep
			return string(ep.LifecycleState), deref(ep.LifecycleDetails), nil
		}}, start)
	return last, err
}
