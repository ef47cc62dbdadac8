package ailanguage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reconcile-dev/reconcile/resources"
)

// Live is an object as Object.Get reads it.
type Live struct {
	Attrs   resources.Attrs // inputs and outputs, as the driver's Read returns them
	Etag    string
	State   string
	Details string // lifecycleDetails
}

// Object is one kind of AI Language object whose updatable fields are the
// common ones (a project, a model): the calls its driver makes, from which
// Object implements the driver's Read, Update and Delete, the same way for
// each kind.
type Object struct {
	Client *Client
	Kind   string // the object's name in messages: "project"
	// Timeout is the default of options.customTimeouts.
	Timeout time.Duration
	// Normalize is the driver's Normalize.
	Normalize func(resources.Attrs) resources.Attrs
	// Get reads the object; an error matches resources.ErrNotFound when it
	// does not exist.
	Get func(ctx context.Context, id string) (Live, error)
	// Move changes the object's compartment (no work request).
	Move func(ctx context.Context, id, compartment string, ifMatch *string) error
	// Update sends a partial update and returns its work request.
	Update func(ctx context.Context, id string, u Updatable, ifMatch *string) (string, error)
	// Delete deletes the object and returns its work request.
	Delete func(ctx context.Context, id string) (string, error)
}

// Read returns the object's inputs and outputs. It returns an error
// matching resources.ErrNotFound when the object does not exist or is
// DELETED.
func (o *Object) Read(ctx context.Context, id string) (resources.Attrs, error) {
	live, err := o.Get(ctx, id)
	if err == nil && live.State == StateDeleted {
		err = fmt.Errorf("%s is DELETED: %w", o.Kind, resources.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return live.Attrs, nil
}

// WaitFor waits (Client.Wait) for the object to reach target, and returns
// it as last read.
func (o *Object) WaitFor(ctx context.Context, id, target, workRequest string, start time.Time) (Live, error) {
	var last Live
	err := o.Client.Wait(ctx, Wait{Kind: o.Kind, Target: target, WorkRequest: workRequest,
		Get: func(ctx context.Context) (string, string, error) {
			live, err := o.Get(ctx, id)
			if err != nil {
				return "", "", err
			}
			last = live
			return live.State, live.Details, nil
		}}, start)
	return last, err
}

// Created waits for the object a create answered with id and workRequest
// to become ACTIVE, and returns what Create returns: the id, the
// attributes, and an error that says what was made (see
// resources.Driver.Create): one matching resources.ErrUnusable for an
// object that ended FAILED, another (with the id) when the wait did not
// end.
func (o *Object) Created(ctx context.Context, id, workRequest string, start time.Time) (string, resources.Attrs, error) {
	live, err := o.WaitFor(ctx, id, StateActive, workRequest, start)
	if err != nil {
		return id, live.Attrs, err
	}
	return id, live.Attrs, nil
}

// UpdateObject changes the object in place: a new compartmentId through
// Move, the common fields through one partial Update guarded by the
// current etag (re-read once on 412), and waits until the object is ACTIVE
// again. A field is sent when want differs from prior or from the live
// object, so drift is repaired too. It returns an error matching
// resources.ErrNotFound when the object is gone.
func (o *Object) UpdateObject(ctx context.Context, id string, prior, want resources.Attrs) (resources.Attrs, error) {
	want, prior = o.Normalize(want), o.Normalize(prior)
	if _, _, err := CreateCommon(want); err != nil {
		return nil, err
	}
	if _, err := o.Client.SDK(); err != nil {
		return nil, err
	}
	ctx, cancel := WithDefaultTimeout(ctx, o.Timeout)
	defer cancel()
	live, err := o.update(ctx, id, prior, want)
	if err != nil {
		return nil, err
	}
	return live.Attrs, nil
}

func (o *Object) update(ctx context.Context, id string, prior, want resources.Attrs) (Live, error) {
	start := time.Now()
	live, err := o.settled(ctx, id, start)
	if err != nil {
		return live, err
	}
	// Tags OCI added by itself (Oracle-Tags) are not a reason to send
	// definedTags; when definedTags are sent anyway, OCI keeps them.
	cur := o.Normalize(WithoutVendorTags(live.Attrs, want))
	changed := func(k string) bool {
		return !resources.Equal(want[k], prior[k]) || !resources.Equal(want[k], cur[k])
	}
	freshEtag := func() (string, error) {
		l, err := o.Get(ctx, id)
		return l.Etag, err
	}
	if comp, _ := want[AttrCompartmentID].(string); comp != live.Attrs[AttrCompartmentID] {
		err := WithIfMatch(live.Etag, freshEtag, func(ifMatch *string) error { return o.Move(ctx, id, comp, ifMatch) })
		if err != nil {
			return live, fmt.Errorf("change compartment to %q: %w", comp, err)
		}
		if live, err = o.WaitFor(ctx, id, StateActive, "", start); err != nil {
			return live, fmt.Errorf("change compartment to %q: %w", comp, err)
		}
	}
	u, some, err := UpdateCommon(want, changed)
	if err != nil || !some {
		return live, err
	}
	var wr string
	err = WithIfMatch(live.Etag, freshEtag, func(ifMatch *string) error {
		var err error
		wr, err = o.Update(ctx, id, u, ifMatch)
		return err
	})
	if err != nil {
		return live, err
	}
	return o.WaitFor(ctx, id, StateActive, wr, start)
}

// settled reads the object, first waiting out a create or update in
// progress.
func (o *Object) settled(ctx context.Context, id string, start time.Time) (Live, error) {
	live, err := o.Get(ctx, id)
	if err != nil {
		return live, err
	}
	switch live.State {
	case StateDeleted, StateDeleting:
		return live, fmt.Errorf("%s is %s: %w", o.Kind, live.State, resources.ErrNotFound)
	case StateCreating, StateUpdating:
		return o.WaitFor(ctx, id, StateActive, "", start)
	}
	return live, nil
}

// DeleteObject deletes the object and waits until it is DELETED or gone.
// An object that is already gone is not an error.
func (o *Object) DeleteObject(ctx context.Context, id string) error {
	if _, err := o.Client.SDK(); err != nil {
		return err
	}
	ctx, cancel := WithDefaultTimeout(ctx, o.Timeout)
	defer cancel()
	start := time.Now()
	wr, err := o.Delete(ctx, id)
	if err = ObjectErr(err); errors.Is(err, resources.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := o.WaitFor(ctx, id, StateDeleted, wr, start); err != nil {
		return err
	}
	return nil
}

// Normalize is the Normalize of an object with no input but the common
// ones and fields whose defaults fill adds: canonical JSON shapes, empty
// tag maps and description dropped.
func Normalize(want resources.Attrs, fill func(resources.Attrs)) resources.Attrs {
	out := resources.CanonAttrs(want)
	if out == nil {
		out = resources.Attrs{}
	}
	NormalizeCommon(out)
	if fill != nil {
		fill(out)
	}
	return out
}
