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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
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

	mu        sync.Mutex
	delays    delays         // guarded by mu
	training  training       // guarded by mu
	seed      seedIDs        // guarded by mu; zero until Seed or a previous run seeded
	endpoints *endpointCache // guarded by mu; nil until the first list
	listed    *endpointList  // guarded by mu; nil until the first list
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
		{[]string{"models"}, map[string]handler{http.MethodGet: e.listModels, http.MethodPost: e.createModel}},
		{[]string{"models", "*"}, map[string]handler{http.MethodGet: e.getModel, http.MethodPut: e.updateModel, http.MethodDelete: e.deleteModel}},
		{[]string{"models", "*", "actions", "changeCompartment"}, map[string]handler{http.MethodPost: e.changeModelCompartment}},
		{[]string{"projects"}, map[string]handler{http.MethodGet: e.listProjects, http.MethodPost: e.createProject}},
		{[]string{"projects", "*"}, map[string]handler{http.MethodGet: e.getProject, http.MethodPut: e.updateProject, http.MethodDelete: e.deleteProject}},
		{[]string{"projects", "*", "actions", "changeCompartment"}, map[string]handler{http.MethodPost: e.changeProjectCompartment}},
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
	routes := e.routes()
	rest, ok := strings.CutPrefix(r.URL.Path, apiPrefix+"/")
	if !ok {
		if rest, ok = strings.CutPrefix(r.URL.Path, identityPrefix+"/"); !ok {
			return nil, errorf(http.StatusNotFound, "NotFound", "no such route: %s %s", r.Method, r.URL.Path)
		}
		routes = e.identityRoutes()
	}
	segs := strings.Split(rest, "/")
	for _, rt := range routes {
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
