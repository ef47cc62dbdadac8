package oci

import (
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// lifecycle is what the store holds of a project or model besides its
// view: the transition in progress and when the delete finished. Its keys
// start with "_" so that they never clash with the view's, beside which
// they are stored (a record written by Seed, a bare view, has neither).
type lifecycle struct {
	Pending   *pendingOp `json:"_pending,omitempty"`
	DeletedAt *time.Time `json:"_deletedAt,omitempty"`
}

// object is a project or model record: its lifecycle, and pointers to the
// fields of its view that lifecycles change.
type object interface {
	life() *lifecycle
	fields() fields
}

// fields points into the view of an object.
type fields struct {
	id, compartment, state, updated *string
	details                         **string
	definedTags                     *map[string]map[string]any
}

// kind describes one type of object with a lifecycle (projects, models)
// to the code they share.
type kind[R any, PR interface {
	*R
	object
}] struct {
	bucket string
	entity string // entityProject or entityModel
	// finish, optional, completes a create that is done: the object is
	// ACTIVE, or FAILED with failure as its lifecycleDetails.
	finish func(rec PR, failure string)
}

// load reads and settles the object id; a missing or purged one is 404
// NotAuthorizedOrNotFound.
func (k kind[R, PR]) load(tx emulator.Tx, id string, now time.Time) (PR, error) {
	rec := PR(new(R))
	found, err := tx.Get(k.bucket, id, rec)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errNotFound()
	}
	gone, err := k.settle(tx, rec, now)
	if err != nil {
		return nil, err
	}
	if gone {
		return nil, errNotFound()
	}
	return rec, nil
}

// settle applies the object's pending transition if it is due, finishing
// its work request, and purges an object deleted more than
// deletedRetention ago (reporting it gone). It writes what it changes.
func (k kind[R, PR]) settle(tx emulator.Tx, rec PR, now time.Time) (gone bool, err error) {
	l, c := rec.life(), rec.fields()
	if p := l.Pending; p != nil && !now.Before(p.Done) {
		switch p.Op {
		case opCreate:
			*c.state, *c.details = stateActive, nil
			if p.Failure != "" {
				failure := p.Failure
				*c.state, *c.details = stateFailed, &failure
			}
			if k.finish != nil {
				k.finish(rec, p.Failure)
			}
		case opUpdate, opMove:
			*c.state = stateActive
		case opDelete:
			*c.state = stateDeleted
			done := p.Done
			l.DeletedAt = &done
		}
		*c.updated = fmtTime(p.Done)
		l.Pending = nil
		if p.WorkRequestID != "" {
			if err := finishWorkRequest(tx, p.WorkRequestID, p.Done, p.Failure); err != nil {
				return false, err
			}
		}
		if err := tx.Put(k.bucket, *c.id, rec); err != nil {
			return false, err
		}
	}
	if l.DeletedAt != nil && now.Sub(*l.DeletedAt) > deletedRetention {
		return true, tx.Delete(k.bucket, *c.id)
	}
	return false, nil
}

// each settles every object and calls fn with those still visible.
func (k kind[R, PR]) each(tx emulator.Tx, now time.Time, fn func(PR)) error {
	var recs []PR
	if err := tx.List(k.bucket, func(_ string, raw []byte) error {
		rec := PR(new(R))
		if err := json.Unmarshal(raw, rec); err != nil {
			return err
		}
		recs = append(recs, rec)
		return nil
	}); err != nil {
		return err
	}
	for _, rec := range recs {
		gone, err := k.settle(tx, rec, now)
		if err != nil {
			return err
		}
		if !gone {
			fn(rec)
		}
	}
	return nil
}

// mutable loads an object for a mutation and applies the checks every
// mutation shares: existence, if-match against the etag of its view.
func (k kind[R, PR]) mutable(tx emulator.Tx, r *http.Request, id string, now time.Time, view func(PR) any) (PR, error) {
	rec, err := k.load(tx, id, now)
	if err != nil {
		return nil, err
	}
	if *rec.fields().state == stateDeleted {
		return nil, errNotFound()
	}
	if m := r.Header.Get("if-match"); m != "" && m != "*" && m != etagOf(view(rec)) {
		return nil, errorf(http.StatusPreconditionFailed, "NoEtagMatch", "the if-match value %q does not match the current etag of %s %s", m, k.entity, id)
	}
	return rec, nil
}

// busy refuses a mutation of an object in a transition (409
// IncorrectState, which clients retry) or FAILED (409 Conflict).
func (k kind[R, PR]) busy(rec PR) error {
	c := rec.fields()
	switch s := *c.state; s {
	case stateCreating, stateUpdating, stateDeleting:
		return errorf(http.StatusConflict, "IncorrectState", "%s %s is in state %s; retry when the operation in progress has finished", k.entity, *c.id, s)
	case stateFailed:
		return errorf(http.StatusConflict, "Conflict", "%s %s is in state FAILED; a failed %s can only be deleted", k.entity, *c.id, k.entity)
	}
	return nil
}

// start puts rec in state (CREATING, UPDATING, DELETING) for the pending
// operation op, done after delay, with a new work request of operation
// type opType unless opType is "" (a change of compartment has none). It
// writes the record and returns the work request's id.
func (e *Emulator) start(tx emulator.Tx, bucket, entity string, rec object, state, op, opType string, now time.Time, delay time.Duration, failure string) (string, error) {
	c := rec.fields()
	*c.state, *c.updated = state, fmtTime(now)
	if state != stateDeleting {
		*c.details = nil
	}
	p := &pendingOp{Op: op, Done: now.Add(delay), Failure: failure}
	if opType != "" {
		p.WorkRequestID = e.newOCID("ailanguageworkrequest")
		if err := startWorkRequest(tx, p.WorkRequestID, opType, entity, *c.id, *c.compartment, now, delay); err != nil {
			return "", err
		}
	}
	rec.life().Pending = p
	return p.WorkRequestID, tx.Put(bucket, *c.id, rec)
}

// listObjects checks a list's compartmentId and lifecycleState, settles
// the objects of k and returns those keep keeps, as it shapes them.
func listObjects[R any, PR interface {
	*R
	object
}, V any](e *Emulator, q url.Values, k kind[R, PR], keep func(PR) (V, bool)) ([]V, error) {
	compartment := q.Get("compartmentId")
	if compartment == "" {
		return nil, errorf(http.StatusBadRequest, "MissingParameter", "compartmentId is required")
	}
	if s := q.Get("lifecycleState"); s != "" && !validState(s) {
		return nil, errorf(http.StatusBadRequest, "InvalidParameter", "invalid lifecycleState %q", s)
	}
	now := e.now().UTC()
	var items []V
	err := e.store.Update(func(tx emulator.Tx) error {
		if ok, err := compartmentExists(tx, compartment); err != nil || !ok {
			if err == nil {
				err = errNotFound()
			}
			return err
		}
		return k.each(tx, now, func(rec PR) {
			if *rec.fields().compartment != compartment || !matchParam(q, "lifecycleState", *rec.fields().state) {
				return
			}
			if v, ok := keep(rec); ok {
				items = append(items, v)
			}
		})
	})
	return items, err
}

// settleAll settles every project and model, for the lists of work
// requests; endpoints are settled by eachEndpoint.
func (e *Emulator) settleAll(tx emulator.Tx, now time.Time) error {
	if err := e.eachEndpoint(tx, now, func(*endpointRecord) {}); err != nil {
		return err
	}
	if err := projectKind.each(tx, now, func(*projectRecord) {}); err != nil {
		return err
	}
	return modelKind.each(tx, now, func(*modelRecord) {})
}
