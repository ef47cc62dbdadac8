package oci

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// projectView is the Project and ProjectSummary JSON.
type projectView struct {
	ID               string                    `json:"id"`
	DisplayName      string                    `json:"displayName"`
	CompartmentID    string                    `json:"compartmentId"`
	TimeCreated      string                    `json:"timeCreated"`
	LifecycleState   string                    `json:"lifecycleState"`
	Description      *string                   `json:"description,omitempty"`
	TimeUpdated      string                    `json:"timeUpdated,omitempty"`
	LifecycleDetails *string                   `json:"lifecycleDetails,omitempty"`
	FreeformTags     map[string]string         `json:"freeformTags"`
	DefinedTags      map[string]map[string]any `json:"definedTags"`
	SystemTags       map[string]map[string]any `json:"systemTags"`
}

// projectRecord is what the store holds per project: the view as of the
// last settled transition, and the transition in progress.
type projectRecord struct {
	projectView
	lifecycle
}

func (r *projectRecord) life() *lifecycle { return &r.lifecycle }
func (r *projectRecord) fields() fields {
	v := &r.projectView
	return fields{id: &v.ID, compartment: &v.CompartmentID, state: &v.LifecycleState, updated: &v.TimeUpdated, details: &v.LifecycleDetails, definedTags: &v.DefinedTags}
}

var projectKind = kind[projectRecord, *projectRecord]{bucket: bucketProjects, entity: entityProject}

// loadProject reads and settles a project.
func (e *Emulator) loadProject(tx emulator.Tx, id string, now time.Time) (*projectRecord, error) {
	return projectKind.load(tx, id, now)
}

// commonDetails are the fields of the create and update bodies of projects
// and models (CreateProjectDetails and UpdateProjectDetails are no more).
type commonDetails struct {
	CompartmentID *string                   `json:"compartmentId"`
	DisplayName   *string                   `json:"displayName"`
	Description   *string                   `json:"description"`
	FreeformTags  map[string]string         `json:"freeformTags"`
	DefinedTags   map[string]map[string]any `json:"definedTags"`
}

// check refuses what the API refuses of the common fields: an empty or
// long displayName, a long description.
func (d *commonDetails) check() error {
	if d.DisplayName != nil && (*d.DisplayName == "" || len(*d.DisplayName) > 255) {
		return errorf(http.StatusBadRequest, "InvalidParameter", "displayName must be 1 to 255 characters long")
	}
	if d.Description != nil && len(*d.Description) > 400 {
		return errorf(http.StatusBadRequest, "InvalidParameter", "description must be at most 400 characters long")
	}
	return nil
}

// applyUpdate applies an update body's common fields to the object's view.
func (d *commonDetails) applyUpdate(description **string, displayName *string, freeform *map[string]string, defined *map[string]map[string]any) {
	if d.DisplayName != nil {
		*displayName = *d.DisplayName
	}
	if d.Description != nil {
		*description = d.Description
	}
	if d.FreeformTags != nil {
		*freeform = d.FreeformTags
	}
	if d.DefinedTags != nil {
		*defined = keepTagDefaults(d.DefinedTags, *defined)
	}
}

func (e *Emulator) createProject(r *http.Request, _ []string, body []byte) (*response, error) {
	var d commonDetails
	if err := decodeBody(body, &d); err != nil {
		return nil, err
	}
	if d.CompartmentID == nil || *d.CompartmentID == "" {
		return nil, errorf(http.StatusBadRequest, "MissingParameter", "compartmentId is required")
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	token, err := requestRetryToken(r)
	if err != nil {
		return nil, err
	}
	now := e.now().UTC()
	delay := e.getDelays().create
	var resp *response
	err = e.store.Update(func(tx emulator.Tx) error {
		if replay, err := e.replay(tx, token, r, body, now); replay != nil || err != nil {
			resp = replay
			return err
		}
		if err := checkCompartment(tx, *d.CompartmentID); err != nil {
			return err
		}
		if err := checkDefinedTags(tx, d.DefinedTags); err != nil {
			return err
		}
		rec := &projectRecord{projectView: projectView{
			ID: e.newOCID("ailanguageproject"), CompartmentID: *d.CompartmentID, TimeCreated: fmtTime(now),
			DisplayName: "ailanguageproject" + now.Format("20060102150405"), Description: d.Description,
			FreeformTags: tagsOrEmpty(d.FreeformTags), DefinedTags: withTagDefaults(d.DefinedTags, e.creds.OCIUser, now),
			SystemTags: systemTagsOfNew(),
		}}
		if d.DisplayName != nil {
			rec.DisplayName = *d.DisplayName
		}
		wr, err := e.start(tx, bucketProjects, entityProject, rec, stateCreating, opCreate, "CREATE_PROJECT", now, delay, "")
		if err != nil {
			return err
		}
		resp, err = jsonResponse(http.StatusOK, rec.projectView, map[string]string{
			"etag": etagOf(rec.projectView), "opc-work-request-id": wr,
		})
		if err != nil {
			return err
		}
		return e.remember(tx, token, r, body, rec.ID, resp, now)
	})
	return resp, err
}

func (e *Emulator) getProject(_ *http.Request, args []string, _ []byte) (*response, error) {
	return getObject(e, projectKind, args[0], func(p *projectRecord) any { return p.projectView })
}

// getObject answers a GET of the project or model id: its view, as view
// gives it, with its etag. Loading settles what is due, hence a write
// transaction.
func getObject[R any, PR interface {
	*R
	object
}](e *Emulator, k kind[R, PR], id string, view func(PR) any) (*response, error) {
	now := e.now().UTC()
	var resp *response
	err := e.store.Update(func(tx emulator.Tx) error {
		rec, err := k.load(tx, id, now)
		if err != nil {
			return err
		}
		v := view(rec)
		resp, err = jsonResponse(http.StatusOK, v, map[string]string{"etag": etagOf(v)})
		return err
	})
	return resp, err
}

func (e *Emulator) listProjects(r *http.Request, _ []string, _ []byte) (*response, error) {
	q := r.URL.Query()
	items, err := listObjects(e, q, projectKind, func(rec *projectRecord) (projectView, bool) {
		p := rec.projectView
		return p, matchParam(q, "projectId", p.ID) && matchParam(q, "displayName", p.DisplayName)
	})
	if err != nil {
		return nil, err
	}
	return listPage(q, items, sortKeys[projectView]{
		name:    func(p projectView) string { return p.DisplayName },
		created: func(p projectView) string { return p.TimeCreated },
	})
}

func (e *Emulator) updateProject(r *http.Request, args []string, body []byte) (*response, error) {
	return updateObject(e, projectKind, r, args[0], body, "UPDATE_PROJECT", func(p *projectRecord) any { return p.projectView },
		func(p *projectRecord, d *commonDetails) {
			v := &p.projectView
			d.applyUpdate(&v.Description, &v.DisplayName, &v.FreeformTags, &v.DefinedTags)
		})
}

// updateObject is UpdateProject and UpdateModel: the fields of d applied
// to the object id of kind k (view is what its etag covers, apply sets
// the fields), which stays UPDATING for the update delay under a work
// request of the operation op; 202 with the work request's id.
func updateObject[R any, PR interface {
	*R
	object
}](e *Emulator, k kind[R, PR], r *http.Request, id string, body []byte, op string, view func(PR) any, apply func(PR, *commonDetails)) (*response, error) {
	var d commonDetails
	if err := decodeBody(body, &d); err != nil {
		return nil, err
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	now := e.now().UTC()
	delay := e.getDelays().update
	var resp *response
	err := e.store.Update(func(tx emulator.Tx) error {
		rec, err := k.mutable(tx, r, id, now, view)
		if err != nil {
			return err
		}
		if err := k.busy(rec); err != nil {
			return err
		}
		if err := checkDefinedTags(tx, d.DefinedTags); err != nil {
			return err
		}
		apply(rec, &d)
		wr, err := e.start(tx, k.bucket, k.entity, rec, stateUpdating, opUpdate, op, now, delay, "")
		if err != nil {
			return err
		}
		resp = &response{status: http.StatusAccepted, header: map[string]string{"opc-work-request-id": wr}}
		return nil
	})
	return resp, err
}

func (e *Emulator) deleteProject(r *http.Request, args []string, _ []byte) (*response, error) {
	now := e.now().UTC()
	delay := e.getDelays().delete
	var resp *response
	err := e.store.Update(func(tx emulator.Tx) error {
		rec, err := projectKind.mutable(tx, r, args[0], now, func(p *projectRecord) any { return p.projectView })
		if err != nil {
			return err
		}
		switch rec.LifecycleState {
		case stateDeleting:
			resp = &response{status: http.StatusAccepted, header: map[string]string{"opc-work-request-id": rec.Pending.WorkRequestID}}
			return nil
		case stateCreating, stateUpdating:
			return projectKind.busy(rec)
		}
		if err := e.projectInUse(tx, rec.ID, now); err != nil {
			return err
		}
		wr, err := e.start(tx, bucketProjects, entityProject, rec, stateDeleting, opDelete, "DELETE_PROJECT", now, delay, "")
		if err != nil {
			return err
		}
		resp = &response{status: http.StatusAccepted, header: map[string]string{"opc-work-request-id": wr}}
		return nil
	})
	return resp, err
}

// projectInUse refuses the delete of project id while it holds a model or
// an endpoint that is not DELETED: 409 Conflict, as OCI documents ("fails
// with a 409 error unless all associated resources (models deployments or
// data assets) are in a DELETED state").
func (e *Emulator) projectInUse(tx emulator.Tx, id string, now time.Time) error {
	var held []string
	err := modelKind.each(tx, now, func(m *modelRecord) {
		if m.ProjectID == id && m.LifecycleState != stateDeleted {
			held = append(held, "model "+m.ID)
		}
	})
	if err != nil {
		return err
	}
	err = e.eachEndpoint(tx, now, func(ep *endpointRecord) {
		if ep.View.ProjectID == id && ep.View.LifecycleState != stateDeleted {
			held = append(held, "endpoint "+ep.View.ID)
		}
	})
	if err != nil {
		return err
	}
	if len(held) > 0 {
		slices.Sort(held)
		return errorf(http.StatusConflict, "Conflict", "project %s still holds %s; delete them before deleting the project", id, strings.Join(held, ", "))
	}
	return nil
}

func (e *Emulator) changeProjectCompartment(r *http.Request, args []string, body []byte) (*response, error) {
	return e.changeCompartment(r, body, e.moveObject(func(tx emulator.Tx, now time.Time) (object, error) {
		rec, err := projectKind.mutable(tx, r, args[0], now, func(p *projectRecord) any { return p.projectView })
		if err == nil {
			err = projectKind.busy(rec)
		}
		return rec, err
	}, bucketProjects, entityProject))
}

// changeCompartment answers a changeCompartment action: move, in one
// transaction, loads the object, refuses what OCI refuses and moves it to
// the body's compartment, returning its id. The answer is 200 with no body
// and no work request, the object UPDATING for the update delay, and a
// retried request with the same retry token gets the same answer.
func (e *Emulator) changeCompartment(r *http.Request, body []byte, move func(tx emulator.Tx, now time.Time, compartment string) (id string, err error)) (*response, error) {
	var d struct {
		CompartmentID *string `json:"compartmentId"`
	}
	if err := decodeBody(body, &d); err != nil {
		return nil, err
	}
	if d.CompartmentID == nil || *d.CompartmentID == "" {
		return nil, errorf(http.StatusBadRequest, "MissingParameter", "compartmentId is required")
	}
	token, err := requestRetryToken(r)
	if err != nil {
		return nil, err
	}
	now := e.now().UTC()
	var resp *response
	err = e.store.Update(func(tx emulator.Tx) error {
		if replay, err := e.replay(tx, token, r, body, now); replay != nil || err != nil {
			resp = replay
			return err
		}
		id, err := move(tx, now, *d.CompartmentID)
		if err != nil {
			return err
		}
		resp = &response{status: http.StatusOK}
		return e.remember(tx, token, r, body, id, resp, now)
	})
	return resp, err
}

// moveObject is changeCompartment's move for a project or model, which
// load finds and checks.
func (e *Emulator) moveObject(load func(emulator.Tx, time.Time) (object, error), bucket, entity string) func(emulator.Tx, time.Time, string) (string, error) {
	return func(tx emulator.Tx, now time.Time, compartment string) (string, error) {
		rec, err := load(tx, now)
		if err != nil {
			return "", err
		}
		if err := checkCompartment(tx, compartment); err != nil {
			return "", err
		}
		c := rec.fields()
		if *c.compartment != compartment {
			*c.compartment = compartment
			if _, err := e.start(tx, bucket, entity, rec, stateUpdating, opMove, "", now, e.getDelays().update, ""); err != nil {
				return "", err
			}
		}
		return *c.id, nil
	}
}

// checkCompartment refuses a reference to a compartment that does not
// exist: 400 RelatedResourceNotAuthorizedOrNotFound.
func checkCompartment(tx emulator.Tx, id string) error {
	ok, err := compartmentExists(tx, id)
	if err == nil && !ok {
		err = errorf(http.StatusBadRequest, "RelatedResourceNotAuthorizedOrNotFound", "compartment %s was not found or you are not authorized to use it", id)
	}
	return err
}
