package oci

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"reconcile/resources/emulator"
)

// Buckets of the emulator.Store used by the OCI AI Language emulator. All
// start with "oci." so that other vendors' emulators sharing the store never
// collide with them.
const (
	bucketCompartments = "oci.compartments"
	bucketProjects     = "oci.ailanguage.projects"
	bucketModels       = "oci.ailanguage.models"
	bucketEndpoints    = "oci.ailanguage.endpoints"
	bucketWorkRequests = "oci.ailanguage.workrequests"
	bucketRetryTokens  = "oci.ailanguage.retrytokens"
	bucketMeta         = "oci.ailanguage.meta"
)

const (
	apiPrefix = "/20221001"

	// deletedRetention is how long a DELETED endpoint stays visible to
	// GetEndpoint and ListEndpoints before it answers 404.
	deletedRetention = time.Hour
	// retryTokenTTL is how long an opc-retry-token is remembered.
	retryTokenTTL = 24 * time.Hour
	// maxRetryTokenLen is the longest opc-retry-token accepted.
	maxRetryTokenLen = 64
	// maxClockSkew is how far a signed date may be from the emulator's clock.
	maxClockSkew = 5 * time.Minute
	// maxBody bounds request bodies.
	maxBody = 1 << 20

	msgNotFound = "Authorization failed or requested resource not found."
)

// Emulator serves the OCI AI Language API (version 20221001) for endpoints,
// their work requests, models and projects, with the real paths, JSON
// bodies, headers, status codes, error bodies and HTTP-signature
// authentication, persisting everything in an emulator.Store. Asynchronous
// lifecycles are computed lazily from timestamps when objects are read, so
// no goroutine runs in the background and pending transitions survive a
// restart. It is safe for concurrent use.
type Emulator struct {
	store *emulator.Store
	creds emulator.Credentials
	pub   *rsa.PublicKey // nil when creds.OCIPublicKey does not parse: every request is refused
	// now is the clock of lifecycles and timestamps, set by SetClock before
	// serving. Signature dates are always checked against the real clock.
	now func() time.Time

	mu     sync.Mutex
	delays delays  // guarded by mu
	seed   seedIDs // guarded by mu; zero until Seed or a previous run seeded
}

type delays struct{ create, update, delete time.Duration }

type seedIDs struct {
	Compartment      string `json:"compartment"`
	OtherCompartment string `json:"otherCompartment"`
	Project          string `json:"project"`
	ActiveModel      string `json:"activeModel"`
	FailedModel      string `json:"failedModel"`
}

// New returns an emulator serving the data in store and accepting requests
// signed with creds' OCI key. The ids of an earlier Seed on the same store
// and tenancy are reloaded; call Seed to create them otherwise.
func New(store *emulator.Store, creds emulator.Credentials) *Emulator {
	e := &Emulator{store: store, creds: creds, now: time.Now}
	if block, _ := pem.Decode([]byte(creds.OCIPublicKey)); block != nil {
		if k, err := x509.ParsePKIXPublicKey(block.Bytes); err == nil {
			e.pub, _ = k.(*rsa.PublicKey)
		}
	}
	var ids seedIDs
	if err := store.View(func(tx emulator.Tx) error {
		_, err := tx.Get(bucketMeta, seedKey(creds), &ids)
		return err
	}); err == nil {
		e.seed = ids
	}
	return e
}

// SetClock replaces the clock of lifecycles and timestamps (time.Now by
// default), so that a test can step an endpoint through its transitions
// without waiting. Call it before Seed and before serving: it is not safe
// to call while requests are served. Signature dates are still checked
// against the real clock.
func (e *Emulator) SetClock(now func() time.Time) { e.now = now }

// SetDelays sets how long newly started operations stay CREATING, UPDATING
// (update and change of compartment) and DELETING. Zero, the default, means
// the operation is finished at the next read. Operations already started
// keep the delay they began with.
func (e *Emulator) SetDelays(create, update, delete time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.delays = delays{create, update, delete}
}

func (e *Emulator) getDelays() delays {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.delays
}

// SeedIDs returns the ids made by Seed: the root compartment (the tenancy),
// a second compartment, a project, an ACTIVE trained model and a FAILED
// model. They are empty when the store was never seeded for this tenancy.
func (e *Emulator) SeedIDs() (compartment, otherCompartment, project, activeModel, failedModel string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.seed
	return s.Compartment, s.OtherCompartment, s.Project, s.ActiveModel, s.FailedModel
}

func seedKey(c emulator.Credentials) string { return "seed/" + c.OCITenancy }

// Seed creates, unless an earlier run did, the data a fresh tenancy needs:
// the tenancy as root compartment, a second compartment, one project holding
// an ACTIVE trained text-classification model and a model whose training
// FAILED. It is idempotent.
func (e *Emulator) Seed() error {
	now := e.now().UTC()
	var ids seedIDs
	err := e.store.Update(func(tx emulator.Tx) error {
		found, err := tx.Get(bucketMeta, seedKey(e.creds), &ids)
		if err != nil {
			return err
		}
		if !found {
			region := regionKey(e.creds.OCIRegion)
			ids = seedIDs{
				Compartment: e.creds.OCITenancy,
				// Fixed ids, so that specs written for the emulator work
				// on every machine and after every reset.
				OtherCompartment: "ocid1.compartment.oc1..aaaaaaaaemulatorother",
				Project:          "ocid1.ailanguageproject.oc1." + region + ".emulatorproject",
				ActiveModel:      "ocid1.ailanguagemodel.oc1." + region + ".emulatoractivemodel",
				FailedModel:      "ocid1.ailanguagemodel.oc1." + region + ".emulatorfailedmodel",
			}
			if err := tx.Put(bucketMeta, seedKey(e.creds), ids); err != nil {
				return err
			}
		}
		return e.seedRecords(tx, ids, now)
	})
	if err != nil {
		return fmt.Errorf("seed OCI AI Language emulator: %w", err)
	}
	e.mu.Lock()
	e.seed = ids
	e.mu.Unlock()
	return nil
}

// seedRecords writes every seeded object that is missing.
func (e *Emulator) seedRecords(tx emulator.Tx, ids seedIDs, now time.Time) error {
	created := fmtTime(now)
	emptyTags := func() (map[string]string, map[string]map[string]any) {
		return map[string]string{}, map[string]map[string]any{}
	}
	putIfAbsent := func(bucket, key string, v any) error {
		var raw json.RawMessage
		found, err := tx.Get(bucket, key, &raw)
		if err != nil || found {
			return err
		}
		return tx.Put(bucket, key, v)
	}
	if err := putIfAbsent(bucketCompartments, ids.Compartment, compartmentRecord{ID: ids.Compartment, Name: "root", Root: true}); err != nil {
		return err
	}
	if err := putIfAbsent(bucketCompartments, ids.OtherCompartment, compartmentRecord{ID: ids.OtherCompartment, Name: "reconcile-other", Parent: ids.Compartment}); err != nil {
		return err
	}
	ff, dt := emptyTags()
	if err := putIfAbsent(bucketProjects, ids.Project, projectView{
		ID: ids.Project, DisplayName: "reconcile-project", CompartmentID: ids.Compartment,
		TimeCreated: created, TimeUpdated: created, LifecycleState: "ACTIVE",
		Description:  strPtr("Project seeded by the reconcile emulator"),
		FreeformTags: ff, DefinedTags: dt, SystemTags: map[string]map[string]any{},
	}); err != nil {
		return err
	}
	ff, dt = emptyTags()
	if err := putIfAbsent(bucketModels, ids.ActiveModel, modelView{
		ID: ids.ActiveModel, DisplayName: "sentiment-classifier", CompartmentID: ids.Compartment,
		ProjectID: ids.Project, TimeCreated: created, TimeUpdated: created, LifecycleState: "ACTIVE",
		ModelDetails: map[string]any{
			"modelType":          "TEXT_CLASSIFICATION",
			"languageCode":       "en",
			"classificationMode": map[string]any{"classificationMode": "MULTI_CLASS"},
		},
		Description:  strPtr("Trained text classification model"),
		Version:      strPtr("1.0"),
		FreeformTags: ff, DefinedTags: dt, SystemTags: map[string]map[string]any{},
	}); err != nil {
		return err
	}
	ff, dt = emptyTags()
	return putIfAbsent(bucketModels, ids.FailedModel, modelView{
		ID: ids.FailedModel, DisplayName: "broken-ner-model", CompartmentID: ids.Compartment,
		ProjectID: ids.Project, TimeCreated: created, TimeUpdated: created, LifecycleState: "FAILED",
		LifecycleDetails: strPtr("Training failed: the training dataset contains no labelled records"),
		ModelDetails:     map[string]any{"modelType": "NAMED_ENTITY_RECOGNITION", "languageCode": "en"},
		Version:          strPtr("1.0"),
		FreeformTags:     ff, DefinedTags: dt, SystemTags: map[string]map[string]any{},
	})
}

// SeedData is the "oci" section of an emulator seed file: objects to create
// besides those of Seed. Every list is optional.
type SeedData struct {
	Compartments []CompartmentSeed `json:"compartments,omitempty"`
	Projects     []ProjectSeed     `json:"projects,omitempty"`
	Models       []ModelSeed       `json:"models,omitempty"`
}

// CompartmentSeed is a compartment of a seed file.
type CompartmentSeed struct {
	ID       string `json:"id"`                 // ocid1.compartment.<realm>.<region>.<unique>
	Name     string `json:"name"`               // required
	ParentID string `json:"parentId,omitempty"` // an existing or earlier compartment; default the tenancy
}

// ProjectSeed is an AI Language project of a seed file.
type ProjectSeed struct {
	ID            string            `json:"id"`                      // ocid1.ailanguageproject.<realm>.<region>.<unique>
	DisplayName   string            `json:"displayName"`             // required
	CompartmentID string            `json:"compartmentId,omitempty"` // default the tenancy
	Description   string            `json:"description,omitempty"`
	State         string            `json:"state,omitempty"` // lifecycleState; default ACTIVE
	FreeformTags  map[string]string `json:"freeformTags,omitempty"`
}

// ModelSeed is a trained AI Language model of a seed file.
type ModelSeed struct {
	ID               string            `json:"id"`                      // ocid1.ailanguagemodel.<realm>.<region>.<unique>
	DisplayName      string            `json:"displayName"`             // required
	CompartmentID    string            `json:"compartmentId,omitempty"` // default the project's
	ProjectID        string            `json:"projectId"`               // required: a project of the file or the data
	State            string            `json:"state,omitempty"`         // lifecycleState; default ACTIVE
	LifecycleDetails string            `json:"lifecycleDetails,omitempty"`
	ModelType        string            `json:"modelType,omitempty"` // TEXT_CLASSIFICATION (default) or NAMED_ENTITY_RECOGNITION
	LanguageCode     string            `json:"languageCode,omitempty"`
	Description      string            `json:"description,omitempty"`
	Version          string            `json:"version,omitempty"`
	FreeformTags     map[string]string `json:"freeformTags,omitempty"`
}

// seedStates are the lifecycle states of models and projects (the SDK's
// ModelLifecycleStateEnum and ProjectLifecycleStateEnum).
var seedStates = []string{stateCreating, stateActive, stateUpdating, stateDeleting, stateDeleted, stateFailed}

// seedModelTypes are the model types a custom (trained) model can have.
var seedModelTypes = []string{"TEXT_CLASSIFICATION", "NAMED_ENTITY_RECOGNITION"}

// ocidRE matches an OCID of one resource type: ocid1.TYPE.REALM.[REGION].UNIQUE.
func ocidRE(typ string) *regexp.Regexp {
	return regexp.MustCompile(`^ocid1\.` + typ + `\.[a-z0-9]+\.[a-z0-9-]*\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
}

var (
	compartmentOCID = ocidRE("compartment")
	projectOCID     = ocidRE("ailanguageproject")
	modelOCID       = ocidRE("ailanguagemodel")
)

// SeedFrom checks d and creates, inside the caller's transaction tx, each of
// its objects whose id does not exist yet; an existing object is left as it
// is, so seeding again with the same data changes nothing. It reports how
// many objects it added and how many it left. Compartments come first (a
// parent must exist or be listed earlier), then projects, then models; a
// reference may name an object of d or one already in the data, such as
// the tenancy or Seed's project. The first problem is returned naming the
// entry, as in `models[2] "ocid1...": ...`, and nothing should then be
// committed.
func (e *Emulator) SeedFrom(tx emulator.Tx, d SeedData) (added, kept int, err error) {
	created := fmtTime(e.now())
	exists := func(bucket, id string) (bool, error) {
		var raw json.RawMessage
		return tx.Get(bucket, id, &raw)
	}
	put := func(bucket, id string, v any) error {
		found, err := exists(bucket, id)
		if err != nil {
			return err
		}
		if found {
			kept++
			return nil
		}
		added++
		return tx.Put(bucket, id, v)
	}
	// compartment checks that field names a compartment of d or the data.
	compartment := func(field, id string) error {
		found, err := exists(bucketCompartments, id)
		if err == nil && !found {
			err = fmt.Errorf("%s %q is no compartment of the seed file or of the emulator's data", field, id)
		}
		return err
	}
	checkState := func(s string) (string, error) {
		if s == "" {
			return stateActive, nil
		}
		if !slices.Contains(seedStates, s) {
			return "", fmt.Errorf("state %q is not one of %s", s, strings.Join(seedStates, ", "))
		}
		return s, nil
	}
	tags := func(m map[string]string) map[string]string {
		if m == nil {
			return map[string]string{}
		}
		return m
	}
	seen := map[string]string{}
	entry := func(list string, i int, id string, re *regexp.Regexp, kind string) (func(error) error, error) {
		at := func(err error) error { return fmt.Errorf("%s[%d] %q: %w", list, i, id, err) }
		if !re.MatchString(id) {
			return at, at(fmt.Errorf("id must be an OCID of the form ocid1.%s.REALM.[REGION].UNIQUE", kind))
		}
		if prev, dup := seen[id]; dup {
			return at, at(fmt.Errorf("the same id as %s", prev))
		}
		seen[id] = fmt.Sprintf("%s[%d]", list, i)
		return at, nil
	}

	for i, c := range d.Compartments {
		at, err := entry("compartments", i, c.ID, compartmentOCID, "compartment")
		if err != nil {
			return 0, 0, err
		}
		if c.Name == "" {
			return 0, 0, at(errors.New("name is required"))
		}
		if c.ParentID == "" {
			c.ParentID = e.creds.OCITenancy
		}
		if err := compartment("parentId", c.ParentID); err != nil {
			return 0, 0, at(fmt.Errorf("%w (a parent must be listed before its children)", err))
		}
		if err := put(bucketCompartments, c.ID, compartmentRecord{ID: c.ID, Name: c.Name, Parent: c.ParentID}); err != nil {
			return 0, 0, at(err)
		}
	}
	for i, p := range d.Projects {
		at, err := entry("projects", i, p.ID, projectOCID, "ailanguageproject")
		if err != nil {
			return 0, 0, err
		}
		if p.DisplayName == "" {
			return 0, 0, at(errors.New("displayName is required"))
		}
		state, err := checkState(p.State)
		if err != nil {
			return 0, 0, at(err)
		}
		if p.CompartmentID == "" {
			p.CompartmentID = e.creds.OCITenancy
		}
		if err := compartment("compartmentId", p.CompartmentID); err != nil {
			return 0, 0, at(err)
		}
		v := projectView{
			ID: p.ID, DisplayName: p.DisplayName, CompartmentID: p.CompartmentID,
			TimeCreated: created, TimeUpdated: created, LifecycleState: state,
			FreeformTags: tags(p.FreeformTags), DefinedTags: map[string]map[string]any{}, SystemTags: map[string]map[string]any{},
		}
		if p.Description != "" {
			v.Description = strPtr(p.Description)
		}
		if err := put(bucketProjects, p.ID, v); err != nil {
			return 0, 0, at(err)
		}
	}
	for i, m := range d.Models {
		at, err := entry("models", i, m.ID, modelOCID, "ailanguagemodel")
		if err != nil {
			return 0, 0, err
		}
		if m.DisplayName == "" {
			return 0, 0, at(errors.New("displayName is required"))
		}
		state, err := checkState(m.State)
		if err != nil {
			return 0, 0, at(err)
		}
		typ := m.ModelType
		if typ == "" {
			typ = "TEXT_CLASSIFICATION"
		}
		if !slices.Contains(seedModelTypes, typ) {
			return 0, 0, at(fmt.Errorf("modelType %q is not one of %s", typ, strings.Join(seedModelTypes, ", ")))
		}
		if m.ProjectID == "" {
			return 0, 0, at(errors.New("projectId is required"))
		}
		var project projectView
		found, err := tx.Get(bucketProjects, m.ProjectID, &project)
		if err == nil && !found {
			err = fmt.Errorf("projectId %q is no project of the seed file or of the emulator's data", m.ProjectID)
		}
		if err != nil {
			return 0, 0, at(err)
		}
		if m.CompartmentID == "" {
			m.CompartmentID = project.CompartmentID
		}
		if err := compartment("compartmentId", m.CompartmentID); err != nil {
			return 0, 0, at(err)
		}
		lang := m.LanguageCode
		if lang == "" {
			lang = "en"
		}
		details := map[string]any{"modelType": typ, "languageCode": lang}
		if typ == "TEXT_CLASSIFICATION" {
			details["classificationMode"] = map[string]any{"classificationMode": "MULTI_CLASS"}
		}
		v := modelView{
			ID: m.ID, DisplayName: m.DisplayName, CompartmentID: m.CompartmentID, ProjectID: m.ProjectID,
			ModelDetails: details, TimeCreated: created, TimeUpdated: created, LifecycleState: state,
			FreeformTags: tags(m.FreeformTags), DefinedTags: map[string]map[string]any{}, SystemTags: map[string]map[string]any{},
		}
		for _, f := range []struct {
			dst **string
			val string
		}{{&v.Description, m.Description}, {&v.Version, m.Version}, {&v.LifecycleDetails, m.LifecycleDetails}} {
			if f.val != "" {
				*f.dst = strPtr(f.val)
			}
		}
		if err := put(bucketModels, m.ID, v); err != nil {
			return 0, 0, at(err)
		}
	}
	return added, kept, nil
}

type compartmentRecord struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Parent string `json:"parent,omitempty"`
	Root   bool   `json:"root,omitempty"`
}

// apiError is an error answered with OCI's error body.
type apiError struct {
	status int
	code   string
	msg    string
	allow  string // Allow header of a 405
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.msg) }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

func errNotFound() *apiError {
	return &apiError{status: http.StatusNotFound, code: "NotAuthorizedOrNotFound", msg: msgNotFound}
}

// response is what a handler answers; it is built inside a store
// transaction and written after the transaction commits.
type response struct {
	status int
	header map[string]string
	body   json.RawMessage // nil: no body
}

func jsonResponse(status int, v any, header map[string]string) (*response, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &response{status: status, header: header, body: raw}, nil
}

type handler func(r *http.Request, args []string, body []byte) (*response, error)

type route struct {
	pattern []string // "*" matches one segment, passed to the handler in order
	methods map[string]handler
}

func (e *Emulator) routes() []route {
	return []route{
		{[]string{"endpoints"}, map[string]handler{http.MethodGet: e.listEndpoints, http.MethodPost: e.createEndpoint}},
		{[]string{"endpoints", "*"}, map[string]handler{http.MethodGet: e.getEndpoint, http.MethodPut: e.updateEndpoint, http.MethodDelete: e.deleteEndpoint}},
		{[]string{"endpoints", "*", "actions", "changeCompartment"}, map[string]handler{http.MethodPost: e.changeEndpointCompartment}},
		{[]string{"workRequests"}, map[string]handler{http.MethodGet: e.listWorkRequests}},
		{[]string{"workRequests", "*"}, map[string]handler{http.MethodGet: e.getWorkRequest}},
		{[]string{"workRequests", "*", "errors"}, map[string]handler{http.MethodGet: e.listWorkRequestErrors}},
		{[]string{"workRequests", "*", "logs"}, map[string]handler{http.MethodGet: e.listWorkRequestLogs}},
		{[]string{"models"}, map[string]handler{http.MethodGet: e.listModels}},
		{[]string{"models", "*"}, map[string]handler{http.MethodGet: e.getModel}},
		{[]string{"projects"}, map[string]handler{http.MethodGet: e.listProjects}},
		{[]string{"projects", "*"}, map[string]handler{http.MethodGet: e.getProject}},
	}
}

// ServeHTTP serves the API under /20221001/. Every request must carry a
// valid OCI HTTP signature (401 NotAuthenticated otherwise); unknown paths
// answer 404 NotFound and known paths with another method 405
// MethodNotAllowed, all with OCI's {"code","message"} body and an
// opc-request-id header.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("opc-request-id", requestID(r.Header.Get("opc-request-id")))
	resp, err := e.serve(r)
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = errorf(http.StatusInternalServerError, "InternalServerError", "internal error: %v", err)
		}
		if ae.allow != "" {
			w.Header().Set("Allow", ae.allow)
		}
		resp, _ = jsonResponse(ae.status, map[string]string{"code": ae.code, "message": ae.msg}, nil)
	}
	for k, v := range resp.header {
		w.Header().Set(k, v)
	}
	if resp.body != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.status)
		_, _ = w.Write(resp.body)
		return
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(resp.status)
}

func (e *Emulator) serve(r *http.Request) (*response, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "CannotParseRequest", "reading the request body: %v", err)
	}
	if len(body) > maxBody {
		return nil, errorf(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "the request body exceeds %d bytes", maxBody)
	}
	if err := e.authenticate(r, body); err != nil {
		return nil, err
	}
	rest, ok := strings.CutPrefix(r.URL.Path, apiPrefix+"/")
	if !ok {
		return nil, errorf(http.StatusNotFound, "NotFound", "no such route: %s %s", r.Method, r.URL.Path)
	}
	segs := strings.Split(rest, "/")
	for _, rt := range e.routes() {
		args, ok := match(rt.pattern, segs)
		if !ok {
			continue
		}
		h, ok := rt.methods[r.Method]
		if !ok {
			allowed := make([]string, 0, len(rt.methods))
			for m := range rt.methods {
				allowed = append(allowed, m)
			}
			slices.Sort(allowed)
			ae := errorf(http.StatusMethodNotAllowed, "MethodNotAllowed", "method %s is not allowed on %s", r.Method, r.URL.Path)
			ae.allow = strings.Join(allowed, ", ")
			return nil, ae
		}
		return h(r, args, body)
	}
	return nil, errorf(http.StatusNotFound, "NotFound", "no such route: %s %s", r.Method, r.URL.Path)
}

func match(pattern, segs []string) ([]string, bool) {
	if len(pattern) != len(segs) {
		return nil, false
	}
	var args []string
	for i, p := range pattern {
		switch {
		case p == "*" && segs[i] != "":
			args = append(args, segs[i])
		case p != segs[i]:
			return nil, false
		}
	}
	return args, true
}

// requestID makes an opc-request-id, keeping the client's own as a prefix
// the way OCI does.
func requestID(client string) string {
	id := strings.ToUpper(randomHex(16))
	if client != "" {
		return client + "/" + id
	}
	return id
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// uniquePart is the unique tail of an OCID: 60 lowercase base-32 characters.
func uniquePart() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	b := make([]byte, 60)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "amaaaaaa" + string(b[8:])
}

func regionKey(region string) string {
	switch region {
	case "us-phoenix-1":
		return "phx"
	case "eu-frankfurt-1":
		return "fra"
	case "uk-london-1":
		return "lhr"
	}
	return "iad"
}

func (e *Emulator) newOCID(kind string) string {
	return "ocid1." + kind + ".oc1." + regionKey(e.creds.OCIRegion) + "." + uniquePart()
}

// fmtTime formats t as OCI does: RFC 3339, UTC, millisecond precision.
func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func strPtr(s string) *string { return &s }

// etagOf derives an entity's etag from its visible JSON, so that every
// visible change, including lifecycle transitions, changes it.
func etagOf(v any) string {
	raw, _ := json.Marshal(v)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}
