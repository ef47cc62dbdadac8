package oci

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// workRequestRecord is what the store holds per work request. Its status
// and percentage are computed from the times when it is read.
type workRequestRecord struct {
	ID            string `json:"id"`
	OperationType string `json:"operationType"`
	CompartmentID string `json:"compartmentId"`
	// EntityID is the object the work request acts on; EntityType says
	// what it is ("endpoint" when empty, as in data written before
	// projects and models had work requests).
	EntityID   string     `json:"endpointId"`
	EntityType string     `json:"entityType,omitempty"`
	Accepted   time.Time  `json:"accepted"`
	Due        time.Time  `json:"due"`
	Finished   *time.Time `json:"finished,omitempty"`
	Failure    string     `json:"failure,omitempty"` // set when the work failed
}

type workRequestResource struct {
	EntityType string `json:"entityType"`
	ActionType string `json:"actionType"`
	Identifier string `json:"identifier"`
	EntityURI  string `json:"entityUri,omitempty"`
}

// workRequestView is the WorkRequest (and WorkRequestSummary) JSON.
type workRequestView struct {
	OperationType   string                `json:"operationType"`
	Status          string                `json:"status"`
	ID              string                `json:"id"`
	CompartmentID   string                `json:"compartmentId"`
	Resources       []workRequestResource `json:"resources"`
	PercentComplete float64               `json:"percentComplete"`
	TimeAccepted    string                `json:"timeAccepted"`
	TimeStarted     string                `json:"timeStarted,omitempty"`
	TimeFinished    string                `json:"timeFinished,omitempty"`
}

type workRequestErrorView struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
}

type workRequestLogView struct {
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
}

// Entity types of work requests, as the API names them.
const (
	entityEndpoint = "endpoint"
	entityProject  = "project"
	entityModel    = "model"
)

// startWorkRequest records the work request id of operation op (such as
// CREATE_MODEL) on the object entityID of type entity, in compartment.
func startWorkRequest(tx emulator.Tx, id, op, entity, entityID, compartment string, now time.Time, delay time.Duration) error {
	return tx.Put(bucketWorkRequests, id, workRequestRecord{
		ID: id, OperationType: op, CompartmentID: compartment, EntityID: entityID, EntityType: entity,
		Accepted: now, Due: now.Add(delay),
	})
}

func (e *Emulator) startWorkRequest(tx emulator.Tx, id, op string, v endpointView, now time.Time, delay time.Duration) error {
	return startWorkRequest(tx, id, op, entityEndpoint, v.ID, v.CompartmentID, now, delay)
}

// entity returns the type of the object the work request acts on.
func (wr *workRequestRecord) entity() string {
	if wr.EntityType == "" {
		return entityEndpoint
	}
	return wr.EntityType
}

// settleEntity settles the object the work request acts on, so that both
// agree; an object that is gone is no error.
func (e *Emulator) settleEntity(tx emulator.Tx, wr *workRequestRecord, now time.Time) error {
	var err error
	switch wr.entity() {
	case entityProject:
		_, err = e.loadProject(tx, wr.EntityID, now)
	case entityModel:
		_, err = e.loadModel(tx, wr.EntityID, now)
	default:
		_, err = e.loadEndpoint(tx, wr.EntityID, now)
	}
	if isAPIError(err) {
		return nil
	}
	return err
}

func finishWorkRequest(tx emulator.Tx, id string, at time.Time, failure string) error {
	var wr workRequestRecord
	found, err := tx.Get(bucketWorkRequests, id, &wr)
	if err != nil || !found {
		return err
	}
	wr.Finished, wr.Failure = &at, failure
	return tx.Put(bucketWorkRequests, id, wr)
}

// loadWorkRequest settles the endpoint the work request acts on, so that
// both agree, and returns the work request.
func (e *Emulator) loadWorkRequest(tx emulator.Tx, id string, now time.Time) (*workRequestRecord, error) {
	var wr workRequestRecord
	found, err := tx.Get(bucketWorkRequests, id, &wr)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errNotFound()
	}
	if wr.Finished == nil {
		if err := e.settleEntity(tx, &wr, now); err != nil {
			return nil, err
		}
		if _, err := tx.Get(bucketWorkRequests, id, &wr); err != nil {
			return nil, err
		}
	}
	return &wr, nil
}

func isAPIError(err error) bool {
	_, ok := err.(*apiError)
	return ok
}

func (wr *workRequestRecord) view(now time.Time) workRequestView {
	v := workRequestView{
		OperationType: wr.OperationType, ID: wr.ID, CompartmentID: wr.CompartmentID,
		TimeAccepted: fmtTime(wr.Accepted), Status: "ACCEPTED",
	}
	action := "IN_PROGRESS"
	switch {
	case wr.Finished != nil:
		v.TimeStarted, v.TimeFinished = fmtTime(wr.Accepted), fmtTime(*wr.Finished)
		v.PercentComplete = 100
		v.Status = "SUCCEEDED"
		switch verb, _, _ := strings.Cut(wr.OperationType, "_"); verb {
		case "CREATE":
			action = "CREATED"
		case "UPDATE":
			action = "UPDATED"
		case "DELETE":
			action = "DELETED"
		}
		if wr.Failure != "" {
			v.Status = "FAILED"
			action = "RELATED"
		}
	case now.After(wr.Accepted):
		v.Status, v.TimeStarted = "IN_PROGRESS", fmtTime(wr.Accepted)
		if total := wr.Due.Sub(wr.Accepted); total > 0 {
			v.PercentComplete = math.Min(99, math.Floor(100*float64(now.Sub(wr.Accepted))/float64(total)))
		}
	}
	v.Resources = []workRequestResource{{
		EntityType: wr.entity(), ActionType: action, Identifier: wr.EntityID,
		EntityURI: apiPrefix + "/" + wr.entity() + "s/" + wr.EntityID,
	}}
	return v
}

func (wr *workRequestRecord) logs() []workRequestLogView {
	verb, _, _ := strings.Cut(wr.OperationType, "_")
	verb = strings.ToLower(verb)
	what := wr.entity() + " " + wr.EntityID
	out := []workRequestLogView{{Message: fmt.Sprintf("Accepted request to %s %s", verb, what), Timestamp: fmtTime(wr.Accepted)}}
	if wr.Finished != nil {
		msg := fmt.Sprintf("Finished request to %s %s", verb, what)
		if wr.Failure != "" {
			msg = fmt.Sprintf("Request to %s %s failed: %s", verb, what, wr.Failure)
		}
		out = append(out, workRequestLogView{Message: msg, Timestamp: fmtTime(*wr.Finished)})
	}
	return out
}

func (e *Emulator) getWorkRequest(_ *http.Request, args []string, _ []byte) (*response, error) {
	now := e.now().UTC()
	var resp *response
	err := e.store.Update(func(tx emulator.Tx) error {
		wr, err := e.loadWorkRequest(tx, args[0], now)
		if err != nil {
			return err
		}
		v := wr.view(now)
		resp, err = jsonResponse(http.StatusOK, v, map[string]string{"etag": etagOf(v)})
		return err
	})
	return resp, err
}

func (e *Emulator) listWorkRequests(r *http.Request, _ []string, _ []byte) (*response, error) {
	q := r.URL.Query()
	compartment := q.Get("compartmentId")
	if compartment == "" {
		return nil, errorf(http.StatusBadRequest, "MissingParameter", "compartmentId is required")
	}
	now := e.now().UTC()
	var items []workRequestView
	err := e.store.Update(func(tx emulator.Tx) error {
		if ok, err := compartmentExists(tx, compartment); err != nil || !ok {
			if err == nil {
				err = errNotFound()
			}
			return err
		}
		if err := e.settleAll(tx, now); err != nil {
			return err
		}
		return tx.List(bucketWorkRequests, func(_ string, raw []byte) error {
			var wr workRequestRecord
			if err := json.Unmarshal(raw, &wr); err != nil {
				return err
			}
			if wr.CompartmentID == compartment && matchParam(q, "workRequestId", wr.ID) && matchParam(q, "resourceId", wr.EntityID) {
				items = append(items, wr.view(now))
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return listPage(q, items, sortKeys[workRequestView]{
		name:    func(v workRequestView) string { return v.OperationType },
		created: func(v workRequestView) string { return v.TimeAccepted },
	})
}

func (e *Emulator) listWorkRequestErrors(r *http.Request, args []string, _ []byte) (*response, error) {
	now := e.now().UTC()
	var items []workRequestErrorView
	err := e.store.Update(func(tx emulator.Tx) error {
		wr, err := e.loadWorkRequest(tx, args[0], now)
		if err != nil {
			return err
		}
		items = []workRequestErrorView{}
		if wr.Failure != "" {
			code := "DeploymentFailed"
			if wr.OperationType == "CREATE_MODEL" {
				code = "TrainingFailed"
			}
			items = append(items, workRequestErrorView{Code: code, Message: wr.Failure, Timestamp: fmtTime(*wr.Finished)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return listPage(r.URL.Query(), items, sortKeys[workRequestErrorView]{
		name:    func(v workRequestErrorView) string { return v.Message },
		created: func(v workRequestErrorView) string { return v.Timestamp },
	})
}

func (e *Emulator) listWorkRequestLogs(r *http.Request, args []string, _ []byte) (*response, error) {
	now := e.now().UTC()
	var items []workRequestLogView
	err := e.store.Update(func(tx emulator.Tx) error {
		wr, err := e.loadWorkRequest(tx, args[0], now)
		if err != nil {
			return err
		}
		items = wr.logs()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return listPage(r.URL.Query(), items, sortKeys[workRequestLogView]{
		name:    func(v workRequestLogView) string { return v.Message },
		created: func(v workRequestLogView) string { return v.Timestamp },
	})
}

// sortKeys are the two sort orders every list of this API offers.
type sortKeys[T any] struct {
	name    func(T) string // sortBy=displayName, ascending by default
	created func(T) string // sortBy=timeCreated (the default), descending by default
}

// listPage sorts, pages and answers a list: {"items":[...]} with
// opc-next-page when more items follow. It honours sortBy, sortOrder, limit
// (1 to 1000, default 100) and page.
func listPage[T any](q url.Values, items []T, keys sortKeys[T]) (*response, error) {
	items, err := sortList(q, items, keys)
	if err != nil {
		return nil, err
	}
	return page(q, items)
}

// sortList sorts items as sortBy and sortOrder say, into a new slice.
func sortList[T any](q url.Values, items []T, keys sortKeys[T]) ([]T, error) {
	key, desc := keys.created, true
	switch sortBy := q.Get("sortBy"); sortBy {
	case "", "timeCreated":
	case "displayName":
		key, desc = keys.name, false
	default:
		return nil, errorf(http.StatusBadRequest, "InvalidParameter", "invalid sortBy %q: use timeCreated or displayName", sortBy)
	}
	switch order := q.Get("sortOrder"); order {
	case "":
	case "ASC":
		desc = false
	case "DESC":
		desc = true
	default:
		return nil, errorf(http.StatusBadRequest, "InvalidParameter", "invalid sortOrder %q: use ASC or DESC", order)
	}
	// A stable sort, as items come in key order: ties keep it. Sorting
	// the positions with them as the last key is as stable, and much
	// faster on long lists than slices.SortStableFunc.
	type item struct {
		key string
		pos int
	}
	order := make([]item, len(items))
	for i, v := range items {
		order[i] = item{key(v), i}
	}
	slices.SortFunc(order, func(a, b item) int {
		c := strings.Compare(a.key, b.key)
		if desc {
			c = -c
		}
		if c == 0 {
			c = a.pos - b.pos
		}
		return c
	})
	sorted := make([]T, len(items))
	for i, o := range order {
		sorted[i] = items[o.pos]
	}
	return sorted, nil
}

// page answers the page of the sorted items that limit and page say.
func page[T any](q url.Values, items []T) (*response, error) {
	limit := 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return nil, errorf(http.StatusBadRequest, "InvalidParameter", "invalid limit %q: use 1 to 1000", l)
		}
		limit = n
	}
	offset := 0
	if p := q.Get("page"); p != "" {
		n, err := decodePage(p)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "InvalidParameter", "invalid page token %q", p)
		}
		offset = min(n, len(items))
	}
	end := min(offset+limit, len(items))
	page := items[offset:end]
	if page == nil {
		page = []T{}
	}
	var header map[string]string
	if end < len(items) {
		header = map[string]string{"opc-next-page": encodePage(end)}
	}
	return jsonResponse(http.StatusOK, map[string]any{"items": page}, header)
}

func encodePage(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(offset)))
}

func decodePage(token string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, err
	}
	s, ok := strings.CutPrefix(string(raw), "offset:")
	if !ok {
		return 0, fmt.Errorf("bad page token")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad page token")
	}
	return n, nil
}
