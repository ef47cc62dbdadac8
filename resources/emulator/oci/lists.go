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

	"reconcile/resources/emulator"
)

// workRequestRecord is what the store holds per work request. Its status
// and percentage are computed from the times when it is read.
type workRequestRecord struct {
	ID            string     `json:"id"`
	OperationType string     `json:"operationType"`
	CompartmentID string     `json:"compartmentId"`
	EndpointID    string     `json:"endpointId"`
	Accepted      time.Time  `json:"accepted"`
	Due           time.Time  `json:"due"`
	Finished      *time.Time `json:"finished,omitempty"`
	Failure       string     `json:"failure,omitempty"` // set when the work failed
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

// modelView is the Model JSON; with TimeUpdated cleared, the ModelSummary.
type modelView struct {
	ID               string                    `json:"id"`
	DisplayName      string                    `json:"displayName"`
	CompartmentID    string                    `json:"compartmentId"`
	ProjectID        string                    `json:"projectId"`
	ModelDetails     map[string]any            `json:"modelDetails"`
	TimeCreated      string                    `json:"timeCreated"`
	LifecycleState   string                    `json:"lifecycleState"`
	Description      *string                   `json:"description,omitempty"`
	TimeUpdated      string                    `json:"timeUpdated,omitempty"`
	LifecycleDetails *string                   `json:"lifecycleDetails,omitempty"`
	Version          *string                   `json:"version,omitempty"`
	FreeformTags     map[string]string         `json:"freeformTags"`
	DefinedTags      map[string]map[string]any `json:"definedTags"`
	SystemTags       map[string]map[string]any `json:"systemTags"`
}

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

func (e *Emulator) startWorkRequest(tx emulator.Tx, id, op string, v endpointView, now time.Time, delay time.Duration) error {
	return tx.Put(bucketWorkRequests, id, workRequestRecord{
		ID: id, OperationType: op, CompartmentID: v.CompartmentID, EndpointID: v.ID,
		Accepted: now, Due: now.Add(delay),
	})
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
		if _, err := e.loadEndpoint(tx, wr.EndpointID, now); err != nil && !isAPIError(err) {
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
		switch wr.OperationType {
		case "CREATE_ENDPOINT":
			action = "CREATED"
		case "UPDATE_ENDPOINT":
			action = "UPDATED"
		case "DELETE_ENDPOINT":
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
		EntityType: "endpoint", ActionType: action, Identifier: wr.EndpointID,
		EntityURI: apiPrefix + "/endpoints/" + wr.EndpointID,
	}}
	return v
}

func (wr *workRequestRecord) logs() []workRequestLogView {
	verb := map[string]string{"CREATE_ENDPOINT": "create", "UPDATE_ENDPOINT": "update", "DELETE_ENDPOINT": "delete"}[wr.OperationType]
	out := []workRequestLogView{{Message: fmt.Sprintf("Accepted request to %s endpoint %s", verb, wr.EndpointID), Timestamp: fmtTime(wr.Accepted)}}
	if wr.Finished != nil {
		msg := fmt.Sprintf("Finished request to %s endpoint %s", verb, wr.EndpointID)
		if wr.Failure != "" {
			msg = fmt.Sprintf("Request to %s endpoint %s failed: %s", verb, wr.EndpointID, wr.Failure)
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
		if err := e.eachEndpoint(tx, now, func(*endpointRecord) {}); err != nil { // settle
			return err
		}
		return tx.List(bucketWorkRequests, func(_ string, raw []byte) error {
			var wr workRequestRecord
			if err := json.Unmarshal(raw, &wr); err != nil {
				return err
			}
			if wr.CompartmentID == compartment && matchParam(q, "workRequestId", wr.ID) && matchParam(q, "resourceId", wr.EndpointID) {
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
			items = append(items, workRequestErrorView{Code: "DeploymentFailed", Message: wr.Failure, Timestamp: fmtTime(*wr.Finished)})
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

func (e *Emulator) getModel(_ *http.Request, args []string, _ []byte) (*response, error) {
	var m modelView
	if err := getDoc(e.store, bucketModels, args[0], &m); err != nil {
		return nil, err
	}
	return jsonResponse(http.StatusOK, m, map[string]string{"etag": etagOf(m)})
}

func (e *Emulator) listModels(r *http.Request, _ []string, _ []byte) (*response, error) {
	q := r.URL.Query()
	items, err := listDocs(e.store, q, bucketModels, func(m modelView) (modelView, bool) {
		ok := m.CompartmentID == q.Get("compartmentId") && matchParam(q, "modelId", m.ID) &&
			matchParam(q, "projectId", m.ProjectID) && matchParam(q, "displayName", m.DisplayName) &&
			matchParam(q, "lifecycleState", m.LifecycleState)
		m.TimeUpdated = "" // ModelSummary has no timeUpdated
		return m, ok
	})
	if err != nil {
		return nil, err
	}
	return listPage(q, items, sortKeys[modelView]{
		name:    func(m modelView) string { return m.DisplayName },
		created: func(m modelView) string { return m.TimeCreated },
	})
}

func (e *Emulator) getProject(_ *http.Request, args []string, _ []byte) (*response, error) {
	var p projectView
	if err := getDoc(e.store, bucketProjects, args[0], &p); err != nil {
		return nil, err
	}
	return jsonResponse(http.StatusOK, p, map[string]string{"etag": etagOf(p)})
}

func (e *Emulator) listProjects(r *http.Request, _ []string, _ []byte) (*response, error) {
	q := r.URL.Query()
	items, err := listDocs(e.store, q, bucketProjects, func(p projectView) (projectView, bool) {
		return p, p.CompartmentID == q.Get("compartmentId") && matchParam(q, "projectId", p.ID) &&
			matchParam(q, "displayName", p.DisplayName) && matchParam(q, "lifecycleState", p.LifecycleState)
	})
	if err != nil {
		return nil, err
	}
	return listPage(q, items, sortKeys[projectView]{
		name:    func(p projectView) string { return p.DisplayName },
		created: func(p projectView) string { return p.TimeCreated },
	})
}

func getDoc(store *emulator.Store, bucket, id string, v any) error {
	return store.View(func(tx emulator.Tx) error {
		found, err := tx.Get(bucket, id, v)
		if err == nil && !found {
			err = errNotFound()
		}
		return err
	})
}

// listDocs checks the required compartmentId, then returns the documents of
// bucket that keep says to keep, as keep shapes them.
func listDocs[T any](store *emulator.Store, q url.Values, bucket string, keep func(T) (T, bool)) ([]T, error) {
	compartment := q.Get("compartmentId")
	if compartment == "" {
		return nil, errorf(http.StatusBadRequest, "MissingParameter", "compartmentId is required")
	}
	if s := q.Get("lifecycleState"); s != "" && !validState(s) {
		return nil, errorf(http.StatusBadRequest, "InvalidParameter", "invalid lifecycleState %q", s)
	}
	var items []T
	err := store.View(func(tx emulator.Tx) error {
		if ok, err := compartmentExists(tx, compartment); err != nil || !ok {
			if err == nil {
				err = errNotFound()
			}
			return err
		}
		return tx.List(bucket, func(_ string, raw []byte) error {
			var v T
			if err := json.Unmarshal(raw, &v); err != nil {
				return err
			}
			if v, ok := keep(v); ok {
				items = append(items, v)
			}
			return nil
		})
	})
	return items, err
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
