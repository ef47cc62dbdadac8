package oci

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// Lifecycle states (shared by endpoints, models and projects).
const (
	stateCreating = "CREATING"
	stateActive   = "ACTIVE"
	stateUpdating = "UPDATING"
	stateDeleting = "DELETING"
	stateDeleted  = "DELETED"
	stateFailed   = "FAILED"
)

// Pending operations of an endpoint.
const (
	opCreate = "create"
	opUpdate = "update"
	opMove   = "move" // change of compartment: UPDATING, no work request
	opDelete = "delete"
)

// endpointView is the Endpoint JSON of GetEndpoint; with TimeUpdated cleared
// it is the EndpointSummary of ListEndpoints.
type endpointView struct {
	ID               string                    `json:"id"`
	DisplayName      string                    `json:"displayName"`
	CompartmentID    string                    `json:"compartmentId"`
	ProjectID        string                    `json:"projectId"`
	TimeCreated      string                    `json:"timeCreated"`
	LifecycleState   string                    `json:"lifecycleState"`
	ModelID          string                    `json:"modelId"`
	Alias            *string                   `json:"alias,omitempty"`
	Description      *string                   `json:"description,omitempty"`
	TimeUpdated      string                    `json:"timeUpdated,omitempty"`
	LifecycleDetails *string                   `json:"lifecycleDetails,omitempty"`
	InferenceUnits   int                       `json:"inferenceUnits"`
	FreeformTags     map[string]string         `json:"freeformTags"`
	DefinedTags      map[string]map[string]any `json:"definedTags"`
	SystemTags       map[string]map[string]any `json:"systemTags"`
}

// endpointRecord is what the store holds per endpoint: the view as of the
// last settled transition, plus the transition in progress.
type endpointRecord struct {
	View      endpointView `json:"view"`
	Pending   *pendingOp   `json:"pending,omitempty"`
	DeletedAt *time.Time   `json:"deletedAt,omitempty"`
}

// pendingOp is a transition that ends at Done; it is applied by settle the
// first time the endpoint is looked at on or after Done.
type pendingOp struct {
	Op            string    `json:"op"`
	WorkRequestID string    `json:"workRequestId,omitempty"`
	Done          time.Time `json:"done"`
	// Failure, on the create of a model, is why its training fails when
	// it is done (the lifecycleDetails of the FAILED model); "" when it
	// succeeds.
	Failure string `json:"failure,omitempty"`
}

type createEndpointDetails struct {
	CompartmentID  *string                   `json:"compartmentId"`
	ModelID        *string                   `json:"modelId"`
	DisplayName    *string                   `json:"displayName"`
	Alias          *string                   `json:"alias"`
	Description    *string                   `json:"description"`
	InferenceUnits *int                      `json:"inferenceUnits"`
	FreeformTags   map[string]string         `json:"freeformTags"`
	DefinedTags    map[string]map[string]any `json:"definedTags"`
}

type updateEndpointDetails struct {
	DisplayName    *string                   `json:"displayName"`
	Alias          *string                   `json:"alias"`
	Description    *string                   `json:"description"`
	ModelID        *string                   `json:"modelId"`
	InferenceUnits *int                      `json:"inferenceUnits"`
	FreeformTags   map[string]string         `json:"freeformTags"`
	DefinedTags    map[string]map[string]any `json:"definedTags"`
}

// retryTokenRecord remembers the first successful answer to a request
// carrying an opc-retry-token.
type retryTokenRecord struct {
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	BodyHash string            `json:"bodyHash"`
	EntityID string            `json:"entityId"`
	Status   int               `json:"status"`
	Header   map[string]string `json:"header,omitempty"`
	Body     json.RawMessage   `json:"body,omitempty"`
	Created  time.Time         `json:"created"`
}

func decodeBody(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errorf(http.StatusBadRequest, "CannotParseRequest", "the request body is empty")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return errorf(http.StatusBadRequest, "InvalidParameter", "invalid value for %q: %v", te.Field, err)
		}
		return errorf(http.StatusBadRequest, "CannotParseRequest", "the request body is not valid JSON: %v", err)
	}
	return nil
}

func validateEndpointFields(displayName, description *string, units *int) error {
	if displayName != nil && (*displayName == "" || len(*displayName) > 255) {
		return errorf(http.StatusBadRequest, "InvalidParameter", "displayName must be 1 to 255 characters long")
	}
	if description != nil && len(*description) > 400 {
		return errorf(http.StatusBadRequest, "InvalidParameter", "description must be at most 400 characters long")
	}
	if units != nil && *units < 1 {
		return errorf(http.StatusBadRequest, "InvalidParameter", "inferenceUnits must be at least 1")
	}
	return nil
}

func (e *Emulator) createEndpoint(r *http.Request, _ []string, body []byte) (*response, error) {
	var d createEndpointDetails
	if err := decodeBody(body, &d); err != nil {
		return nil, err
	}
	if d.CompartmentID == nil || *d.CompartmentID == "" {
		return nil, errorf(http.StatusBadRequest, "MissingParameter", "compartmentId is required")
	}
	if d.ModelID == nil || *d.ModelID == "" {
		return nil, errorf(http.StatusBadRequest, "MissingParameter", "modelId is required")
	}
	if err := validateEndpointFields(d.DisplayName, d.Description, d.InferenceUnits); err != nil {
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
		if ok, err := compartmentExists(tx, *d.CompartmentID); err != nil || !ok {
			if err == nil {
				err = errorf(http.StatusBadRequest, "RelatedResourceNotAuthorizedOrNotFound", "compartment %s was not found or you are not authorized to use it", *d.CompartmentID)
			}
			return err
		}
		if err := checkDefinedTags(tx, d.DefinedTags); err != nil {
			return err
		}
		m, err := liveModel(tx, *d.ModelID, now)
		if err != nil || m == nil {
			if err == nil {
				err = errorf(http.StatusBadRequest, "RelatedResourceNotAuthorizedOrNotFound", "model %s was not found or you are not authorized to use it", *d.ModelID)
			}
			return err
		}
		id := e.newOCID("ailanguageendpoint")
		wrID := e.newOCID("ailanguageworkrequest")
		v := endpointView{
			ID: id, CompartmentID: *d.CompartmentID, ProjectID: m.ProjectID, ModelID: m.ID,
			TimeCreated: fmtTime(now), TimeUpdated: fmtTime(now), LifecycleState: stateCreating,
			Alias: d.Alias, Description: d.Description, InferenceUnits: 1,
			FreeformTags: d.FreeformTags, DefinedTags: d.DefinedTags, SystemTags: systemTagsOfNew(),
		}
		if d.DisplayName != nil {
			v.DisplayName = *d.DisplayName
		} else {
			v.DisplayName = "ailanguageendpoint" + now.Format("20060102150405")
		}
		if d.InferenceUnits != nil {
			v.InferenceUnits = *d.InferenceUnits
		}
		if v.FreeformTags == nil {
			v.FreeformTags = map[string]string{}
		}
		v.DefinedTags = withTagDefaults(v.DefinedTags, e.creds.OCIUser, now)
		rec := endpointRecord{View: v, Pending: &pendingOp{Op: opCreate, WorkRequestID: wrID, Done: now.Add(delay)}}
		if err := tx.Put(bucketEndpoints, id, rec); err != nil {
			return err
		}
		if err := e.startWorkRequest(tx, wrID, "CREATE_ENDPOINT", v, now, delay); err != nil {
			return err
		}
		resp, err = jsonResponse(http.StatusOK, v, map[string]string{
			"etag":                etagOf(v),
			"location":            locationOf(r, id),
			"opc-work-request-id": wrID,
		})
		if err != nil {
			return err
		}
		return e.remember(tx, token, r, body, id, resp, now)
	})
	return resp, err
}

// Tag defaults. Every tenancy made since 2019 has the Oracle-Tags namespace
// with two tag defaults that OCI applies to each resource created in it:
// CreatedBy (the caller) and CreatedOn (the time, as fmtTime writes it). A
// value given in the create request wins over the default. An update that
// replaces definedTags without them keeps them: they are reset to the values
// inherited at creation, as the real service does.
const (
	tagDefaultsNamespace = "Oracle-Tags"
	tagCreatedBy         = "CreatedBy"
	tagCreatedOn         = "CreatedOn"
)

// withTagDefaults returns the defined tags of a new resource: tags as
// requested, plus the Oracle-Tags defaults the request does not set.
func withTagDefaults(tags map[string]map[string]any, user string, now time.Time) map[string]map[string]any {
	out := make(map[string]map[string]any, len(tags)+1)
	for ns, kv := range tags {
		out[ns] = kv
	}
	defaults := map[string]any{}
	for k, v := range out[tagDefaultsNamespace] {
		defaults[k] = v
	}
	if _, ok := defaults[tagCreatedBy]; !ok {
		defaults[tagCreatedBy] = user
	}
	if _, ok := defaults[tagCreatedOn]; !ok {
		defaults[tagCreatedOn] = fmtTime(now)
	}
	out[tagDefaultsNamespace] = defaults
	return out
}

// keepTagDefaults returns the defined tags an update sets: want, with the
// Oracle-Tags defaults of cur that want does not give.
func keepTagDefaults(want, cur map[string]map[string]any) map[string]map[string]any {
	out := make(map[string]map[string]any, len(want)+1)
	for ns, kv := range want {
		out[ns] = kv
	}
	var kept map[string]any
	for _, k := range []string{tagCreatedBy, tagCreatedOn} {
		v, ok := cur[tagDefaultsNamespace][k]
		if !ok {
			continue
		}
		if _, given := out[tagDefaultsNamespace][k]; given {
			continue
		}
		if kept == nil {
			kept = map[string]any{}
			for k2, v2 := range out[tagDefaultsNamespace] {
				kept[k2] = v2
			}
		}
		kept[k] = v
	}
	if kept != nil {
		out[tagDefaultsNamespace] = kept
	}
	return out
}

func locationOf(r *http.Request, id string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + apiPrefix + "/endpoints/" + id
}

func (e *Emulator) getEndpoint(_ *http.Request, args []string, _ []byte) (*response, error) {
	now := e.now().UTC()
	var resp *response
	// Most reads find nothing to settle: answer them in a read-only
	// transaction, which concurrent readers share, rather than queueing
	// behind every other request for the write lock and a sync.
	done := false
	err := e.store.View(func(tx emulator.Tx) error {
		var rec endpointRecord
		found, err := tx.Get(bucketEndpoints, args[0], &rec)
		if err != nil || !found || needsSettle(&rec, now) {
			return err
		}
		done = true
		resp, err = jsonResponse(http.StatusOK, rec.View, map[string]string{"etag": etagOf(rec.View)})
		return err
	})
	if err != nil || done {
		return resp, err
	}
	err = e.store.Update(func(tx emulator.Tx) error {
		rec, err := e.loadEndpoint(tx, args[0], now)
		if err != nil {
			return err
		}
		resp, err = jsonResponse(http.StatusOK, rec.View, map[string]string{"etag": etagOf(rec.View)})
		return err
	})
	return resp, err
}

func (e *Emulator) listEndpoints(r *http.Request, _ []string, _ []byte) (*response, error) {
	q := r.URL.Query()
	compartment := q.Get("compartmentId")
	if compartment == "" {
		return nil, errorf(http.StatusBadRequest, "MissingParameter", "compartmentId is required")
	}
	state := q.Get("lifecycleState")
	if state != "" && !validState(state) {
		return nil, errorf(http.StatusBadRequest, "InvalidParameter", "invalid lifecycleState %q", state)
	}
	now := e.now().UTC()
	var items []*endpointView
	keep := func(rec *endpointRecord) {
		v := rec.View
		switch {
		case v.CompartmentID != compartment,
			!matchParam(q, "endpointId", v.ID),
			!matchParam(q, "projectId", v.ProjectID),
			!matchParam(q, "displayName", v.DisplayName),
			!matchParam(q, "modelId", v.ModelID),
			state != "" && v.LifecycleState != state:
			return
		}
		v.TimeUpdated = "" // EndpointSummary has no timeUpdated
		items = append(items, &v)
	}
	checkCompartment := func(tx emulator.Tx) error {
		ok, err := compartmentExists(tx, compartment)
		if err == nil && !ok {
			err = errNotFound()
		}
		return err
	}
	keys := sortKeys[*endpointView]{
		name:    func(v *endpointView) string { return v.DisplayName },
		created: func(v *endpointView) string { return v.TimeCreated },
	}
	// When nothing is to be settled, as in most lists, answer from a
	// read-only transaction, which concurrent readers share, with the
	// records decoded by an earlier list of the same data, and the next
	// pages of a list from the items its first page sorted.
	var sorted []*endpointView
	err := e.store.View(func(tx emulator.Tx) error {
		if err := checkCompartment(tx); err != nil {
			return err
		}
		query := listQuery(q)
		e.mu.Lock()
		last := e.listed
		e.mu.Unlock()
		if last != nil && last.txID == tx.ID() && last.query == query && now.Before(last.due) {
			sorted = last.items
			return nil
		}
		recs, due, err := e.settledEndpoints(tx, now)
		if err != nil || recs == nil {
			return err
		}
		for i := range recs {
			keep(&recs[i])
		}
		if sorted, err = sortList(q, items, keys); err != nil {
			return err
		}
		e.mu.Lock()
		e.listed = &endpointList{txID: tx.ID(), query: query, due: due, items: sorted}
		e.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if sorted != nil {
		return page(q, sorted)
	}
	err = e.store.Update(func(tx emulator.Tx) error {
		if err := checkCompartment(tx); err != nil {
			return err
		}
		return e.eachEndpoint(tx, now, keep)
	})
	if err != nil {
		return nil, err
	}
	return listPage(q, items, keys)
}

// listQuery is what a list's items depend on: its query but the page and
// its size.
func listQuery(q url.Values) string {
	c := url.Values{}
	for k, v := range q {
		if k != "page" && k != "limit" {
			c[k] = v
		}
	}
	return c.Encode()
}

// endpointList is the sorted items of the last list answered from a
// read-only transaction, for its next pages.
type endpointList struct {
	txID  int    // emulator.Tx.ID of the data
	query string // listQuery
	// due is when the first of its endpoints is to be settled (its
	// pending transition is done, or it is to be purged): until then the
	// items stand.
	due   time.Time
	items []*endpointView
}

// endpointCache holds the endpoint records that a read-only transaction
// decoded, for the lists that follow while the data stays the same.
type endpointCache struct {
	txID int // emulator.Tx.ID of the data
	recs []endpointRecord
}

// settledEndpoints returns every endpoint record that the read-only
// transaction tx sees, decoding them only when the data changed since the
// last call, or nil when one of them is to be settled at now (a list must
// then settle them in a read-write transaction), and when the first of
// them is to be settled (the far future when none is). The records are
// shared: callers must not change them.
func (e *Emulator) settledEndpoints(tx emulator.Tx, now time.Time) ([]endpointRecord, time.Time, error) {
	e.mu.Lock()
	c := e.endpoints
	e.mu.Unlock()
	if c == nil || c.txID != tx.ID() {
		c = &endpointCache{txID: tx.ID(), recs: []endpointRecord{}}
		err := tx.List(bucketEndpoints, func(_ string, raw []byte) error {
			var rec endpointRecord
			if err := json.Unmarshal(raw, &rec); err != nil {
				return err
			}
			c.recs = append(c.recs, rec)
			return nil
		})
		if err != nil {
			return nil, time.Time{}, err
		}
		e.mu.Lock()
		e.endpoints = c
		e.mu.Unlock()
	}
	due := farFuture
	for i := range c.recs {
		d := settleDue(&c.recs[i])
		if !now.Before(d) {
			return nil, time.Time{}, nil
		}
		if d.Before(due) {
			due = d
		}
	}
	return c.recs, due, nil
}

// farFuture is the settleDue of an endpoint with nothing to settle.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

func matchParam(q map[string][]string, key, value string) bool {
	want := q[key]
	return len(want) == 0 || want[0] == "" || want[0] == value
}

func validState(s string) bool {
	switch s {
	case stateCreating, stateActive, stateUpdating, stateDeleting, stateDeleted, stateFailed:
		return true
	}
	return false
}

// mutable loads an endpoint for a mutation and applies the checks every
// mutation shares: existence, if-match, and a state that allows changes.
func (e *Emulator) mutable(tx emulator.Tx, r *http.Request, id string, now time.Time) (*endpointRecord, error) {
	rec, err := e.loadEndpoint(tx, id, now)
	if err != nil {
		return nil, err
	}
	if rec.View.LifecycleState == stateDeleted {
		return nil, errNotFound()
	}
	if m := r.Header.Get("if-match"); m != "" && m != "*" && m != etagOf(rec.View) {
		return nil, errorf(http.StatusPreconditionFailed, "NoEtagMatch", "the if-match value %q does not match the current etag of endpoint %s", m, id)
	}
	return rec, nil
}

func incorrectState(rec *endpointRecord) error {
	switch s := rec.View.LifecycleState; s {
	case stateCreating, stateUpdating, stateDeleting:
		return errorf(http.StatusConflict, "IncorrectState", "endpoint %s is in state %s; retry when the operation in progress has finished", rec.View.ID, s)
	case stateFailed:
		return errorf(http.StatusConflict, "Conflict", "endpoint %s is in state FAILED; a failed endpoint can only be deleted", rec.View.ID)
	}
	return nil
}

func (e *Emulator) updateEndpoint(r *http.Request, args []string, body []byte) (*response, error) {
	var d updateEndpointDetails
	if err := decodeBody(body, &d); err != nil {
		return nil, err
	}
	if err := validateEndpointFields(d.DisplayName, d.Description, d.InferenceUnits); err != nil {
		return nil, err
	}
	now := e.now().UTC()
	delay := e.getDelays().update
	var resp *response
	err := e.store.Update(func(tx emulator.Tx) error {
		rec, err := e.mutable(tx, r, args[0], now)
		if err != nil {
			return err
		}
		if err := incorrectState(rec); err != nil {
			return err
		}
		if err := checkDefinedTags(tx, d.DefinedTags); err != nil {
			return err
		}
		v := &rec.View
		if d.ModelID != nil && *d.ModelID != v.ModelID {
			m, err := liveModel(tx, *d.ModelID, now)
			if err != nil {
				return err
			}
			if m == nil {
				return errorf(http.StatusBadRequest, "RelatedResourceNotAuthorizedOrNotFound", "model %s was not found or you are not authorized to use it", *d.ModelID)
			}
			if m.LifecycleState != stateActive {
				return errorf(http.StatusBadRequest, "InvalidParameter", "model %s is in state %s; only an ACTIVE model can be deployed", m.ID, m.LifecycleState)
			}
			v.ModelID, v.ProjectID = m.ID, m.ProjectID
		}
		if d.DisplayName != nil {
			v.DisplayName = *d.DisplayName
		}
		if d.Alias != nil {
			v.Alias = d.Alias
		}
		if d.Description != nil {
			v.Description = d.Description
		}
		if d.InferenceUnits != nil {
			v.InferenceUnits = *d.InferenceUnits
		}
		if d.FreeformTags != nil {
			v.FreeformTags = d.FreeformTags
		}
		if d.DefinedTags != nil {
			v.DefinedTags = keepTagDefaults(d.DefinedTags, v.DefinedTags)
		}
		wrID := e.newOCID("ailanguageworkrequest")
		v.LifecycleState, v.LifecycleDetails, v.TimeUpdated = stateUpdating, nil, fmtTime(now)
		rec.Pending = &pendingOp{Op: opUpdate, WorkRequestID: wrID, Done: now.Add(delay)}
		if err := tx.Put(bucketEndpoints, v.ID, rec); err != nil {
			return err
		}
		if err := e.startWorkRequest(tx, wrID, "UPDATE_ENDPOINT", *v, now, delay); err != nil {
			return err
		}
		resp = &response{status: http.StatusAccepted, header: map[string]string{"opc-work-request-id": wrID}}
		return nil
	})
	return resp, err
}

func (e *Emulator) deleteEndpoint(r *http.Request, args []string, _ []byte) (*response, error) {
	now := e.now().UTC()
	delay := e.getDelays().delete
	var resp *response
	err := e.store.Update(func(tx emulator.Tx) error {
		rec, err := e.mutable(tx, r, args[0], now)
		if err != nil {
			return err
		}
		v := &rec.View
		switch v.LifecycleState {
		case stateDeleting: // already under way: answer with the same work request
			resp = &response{status: http.StatusAccepted, header: map[string]string{"opc-work-request-id": rec.Pending.WorkRequestID}}
			return nil
		case stateCreating, stateUpdating:
			return incorrectState(rec)
		}
		wrID := e.newOCID("ailanguageworkrequest")
		v.LifecycleState, v.TimeUpdated = stateDeleting, fmtTime(now)
		rec.Pending = &pendingOp{Op: opDelete, WorkRequestID: wrID, Done: now.Add(delay)}
		if err := tx.Put(bucketEndpoints, v.ID, rec); err != nil {
			return err
		}
		if err := e.startWorkRequest(tx, wrID, "DELETE_ENDPOINT", *v, now, delay); err != nil {
			return err
		}
		resp = &response{status: http.StatusAccepted, header: map[string]string{"opc-work-request-id": wrID}}
		return nil
	})
	return resp, err
}

func (e *Emulator) changeEndpointCompartment(r *http.Request, args []string, body []byte) (*response, error) {
	return e.changeCompartment(r, body, func(tx emulator.Tx, now time.Time, compartment string) (string, error) {
		rec, err := e.mutable(tx, r, args[0], now)
		if err != nil {
			return "", err
		}
		if err := incorrectState(rec); err != nil {
			return "", err
		}
		if err := checkCompartment(tx, compartment); err != nil {
			return "", err
		}
		v := &rec.View
		if v.CompartmentID != compartment {
			v.CompartmentID = compartment
			v.LifecycleState, v.TimeUpdated = stateUpdating, fmtTime(now)
			rec.Pending = &pendingOp{Op: opMove, Done: now.Add(e.getDelays().update)}
			if err := tx.Put(bucketEndpoints, v.ID, rec); err != nil {
				return "", err
			}
		}
		return v.ID, nil
	})
}

// loadEndpoint reads and settles an endpoint; a missing or purged one is
// 404 NotAuthorizedOrNotFound.
func (e *Emulator) loadEndpoint(tx emulator.Tx, id string, now time.Time) (*endpointRecord, error) {
	var rec endpointRecord
	found, err := tx.Get(bucketEndpoints, id, &rec)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errNotFound()
	}
	gone, err := e.settle(tx, &rec, now)
	if err != nil {
		return nil, err
	}
	if gone {
		return nil, errNotFound()
	}
	return &rec, nil
}

// eachEndpoint settles every endpoint and calls fn with those still visible.
func (e *Emulator) eachEndpoint(tx emulator.Tx, now time.Time, fn func(*endpointRecord)) error {
	var recs []endpointRecord
	if err := tx.List(bucketEndpoints, func(_ string, raw []byte) error {
		var rec endpointRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return err
		}
		recs = append(recs, rec)
		return nil
	}); err != nil {
		return err
	}
	for i := range recs {
		gone, err := e.settle(tx, &recs[i], now)
		if err != nil {
			return err
		}
		if !gone {
			fn(&recs[i])
		}
	}
	return nil
}

// needsSettle reports whether settle would change rec at now.
func needsSettle(rec *endpointRecord, now time.Time) bool {
	return !now.Before(settleDue(rec))
}

// settleDue is the first time at which settle changes rec: when its
// pending transition is done, or when it is to be purged; farFuture when
// nothing is to be settled.
func settleDue(rec *endpointRecord) time.Time {
	switch {
	case rec.Pending != nil:
		return rec.Pending.Done
	case rec.DeletedAt != nil:
		return rec.DeletedAt.Add(deletedRetention + time.Nanosecond) // purged once more than deletedRetention passed
	}
	return farFuture
}

// settle applies the endpoint's pending transition if it is due, finishing
// its work request, and purges an endpoint deleted more than
// deletedRetention ago (reporting it gone). It writes what it changes.
func (e *Emulator) settle(tx emulator.Tx, rec *endpointRecord, now time.Time) (gone bool, err error) {
	if p := rec.Pending; p != nil && !now.Before(p.Done) {
		v := &rec.View
		var failure string
		switch p.Op {
		case opCreate:
			if failure, err = modelProblem(tx, v.ModelID, now); err != nil {
				return false, err
			}
			if failure != "" {
				v.LifecycleState, v.LifecycleDetails = stateFailed, &failure
			} else {
				v.LifecycleState, v.LifecycleDetails = stateActive, nil
			}
		case opUpdate, opMove:
			v.LifecycleState = stateActive
		case opDelete:
			v.LifecycleState = stateDeleted
			done := p.Done
			rec.DeletedAt = &done
		}
		v.TimeUpdated = fmtTime(p.Done)
		rec.Pending = nil
		if p.WorkRequestID != "" {
			if err := finishWorkRequest(tx, p.WorkRequestID, p.Done, failure); err != nil {
				return false, err
			}
		}
		if err := tx.Put(bucketEndpoints, v.ID, rec); err != nil {
			return false, err
		}
	}
	if rec.DeletedAt != nil && now.Sub(*rec.DeletedAt) > deletedRetention {
		return true, tx.Delete(bucketEndpoints, rec.View.ID)
	}
	return false, nil
}

// modelProblem explains why a model cannot be deployed, or returns "".
func modelProblem(tx emulator.Tx, id string, now time.Time) (string, error) {
	m, err := liveModel(tx, id, now)
	if err != nil {
		return "", err
	}
	if m == nil {
		return "Deployment failed: model " + id + " no longer exists", nil
	}
	if m.LifecycleState != stateActive {
		msg := "Deployment failed: model " + id + " is in state " + m.LifecycleState + ", only an ACTIVE model can be deployed"
		if m.LifecycleDetails != nil && *m.LifecycleDetails != "" {
			msg += " (" + *m.LifecycleDetails + ")"
		}
		return msg, nil
	}
	return "", nil
}

// liveModel reads and settles the model id, or returns nil when it does
// not exist or is DELETED.
func liveModel(tx emulator.Tx, id string, now time.Time) (*modelRecord, error) {
	m, err := modelKind.load(tx, id, now)
	if isAPIError(err) || (err == nil && m.LifecycleState == stateDeleted) {
		return nil, nil
	}
	return m, err
}

func compartmentExists(tx emulator.Tx, id string) (bool, error) {
	var c compartmentRecord
	return tx.Get(bucketCompartments, id, &c)
}

func requestRetryToken(r *http.Request) (string, error) {
	t := r.Header.Get("opc-retry-token")
	if len(t) > maxRetryTokenLen {
		return "", errorf(http.StatusBadRequest, "InvalidParameter", "opc-retry-token must be at most %d characters long", maxRetryTokenLen)
	}
	return t, nil
}

// bodyHash hashes a JSON body independently of key order and spacing.
func bodyHash(body []byte) string {
	var v any
	if err := json.Unmarshal(body, &v); err == nil {
		if canon, err := json.Marshal(v); err == nil {
			body = canon
		}
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// replay answers a request whose retry token was seen in the last 24 hours:
// the original answer for the same request, 409 Conflict for a different
// one, 409 InvalidatedRetryToken when the entity has since been deleted. It
// returns nil, nil for a new token.
func (e *Emulator) replay(tx emulator.Tx, token string, r *http.Request, body []byte, now time.Time) (*response, error) {
	if token == "" {
		return nil, nil
	}
	var rec retryTokenRecord
	found, err := tx.Get(bucketRetryTokens, token, &rec)
	if err != nil || !found || now.Sub(rec.Created) > retryTokenTTL {
		return nil, err
	}
	if rec.Method != r.Method || rec.Path != r.URL.Path || rec.BodyHash != bodyHash(body) {
		return nil, errorf(http.StatusConflict, "Conflict", "the opc-retry-token was already used for a different request")
	}
	state, err := e.entityState(tx, rec.Path, rec.EntityID, now)
	if err != nil {
		return nil, err
	}
	if state == "" || state == stateDeleting || state == stateDeleted {
		return nil, errorf(http.StatusConflict, "InvalidatedRetryToken", "the resource created with this opc-retry-token has been deleted; use a new token")
	}
	return &response{status: rec.Status, header: rec.Header, body: rec.Body}, nil
}

// entityState returns the lifecycle state of the object a request to path
// made (a project, a model or an endpoint), or "" when it is gone.
func (e *Emulator) entityState(tx emulator.Tx, path, id string, now time.Time) (string, error) {
	var state string
	var err error
	switch rest := strings.TrimPrefix(path, apiPrefix+"/"); {
	case strings.HasPrefix(rest, "projects"):
		var rec *projectRecord
		if rec, err = projectKind.load(tx, id, now); rec != nil {
			state = rec.LifecycleState
		}
	case strings.HasPrefix(rest, "models"):
		var rec *modelRecord
		if rec, err = modelKind.load(tx, id, now); rec != nil {
			state = rec.LifecycleState
		}
	default:
		var rec *endpointRecord
		if rec, err = e.loadEndpoint(tx, id, now); rec != nil {
			state = rec.View.LifecycleState
		}
	}
	if errors.As(err, new(*apiError)) {
		err = nil
	}
	return state, err
}

// remember stores the answer to a request carrying a retry token.
func (e *Emulator) remember(tx emulator.Tx, token string, r *http.Request, body []byte, entity string, resp *response, now time.Time) error {
	if token == "" {
		return nil
	}
	return tx.Put(bucketRetryTokens, token, retryTokenRecord{
		Method: r.Method, Path: r.URL.Path, BodyHash: bodyHash(body), EntityID: entity,
		Status: resp.status, Header: resp.header, Body: resp.body, Created: now,
	})
}
