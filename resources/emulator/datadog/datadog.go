package datadog

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// Store buckets of the emulator. Every Datadog bucket is prefixed "dd.".
const (
	bucketPolicies = "dd.restrictionPolicies" // resource id → storedPolicy
	bucketAccount  = "dd.account"             // accountKey → account
	accountKey     = "current"
)

// DefaultRateLimit is the rate limit the emulator announces (and enforces)
// per endpoint family unless SetRateLimit changes it, in requests per
// calendar-aligned period of ratePeriod seconds (a minute).
const DefaultRateLimit = 1000

const ratePeriod = 60 // seconds

// relations lists the relations each resource type supports, least access
// first, from the restriction-policy API reference ("Supported relations
// for resources" of UpdateRestrictionPolicy; the doc comment of
// datadog-api-client-go's RestrictionPoliciesApi at its commit 1f7e702,
// August 2026). The driver keeps the same table
// (restrictionpolicy.Relations), from the same source, for its checks.
var relations = map[string][]string{
	"dashboard":                   {"viewer", "editor"},
	"integration-service":         {"viewer", "editor"},
	"integration-webhook":         {"viewer", "editor"},
	"notebook":                    {"viewer", "editor"},
	"powerpack":                   {"viewer", "editor"},
	"reference-table":             {"viewer", "editor"},
	"security-rule":               {"viewer", "editor"},
	"slo":                         {"viewer", "editor"},
	"synthetics-global-variable":  {"viewer", "editor"},
	"synthetics-test":             {"viewer", "editor"},
	"synthetics-private-location": {"viewer", "editor"},
	"monitor":                     {"viewer", "editor"},
	"workflow":                    {"viewer", "runner", "editor"},
	"app-builder-app":             {"viewer", "editor"},
	"connection":                  {"viewer", "resolver", "editor"},
	"connection-group":            {"viewer", "editor"},
	"rum-application":             {"viewer", "editor"},
	"cross-org-connection":        {"viewer", "editor"},
	"spreadsheet":                 {"viewer", "editor"},
	"on-call-schedule":            {"viewer", "overrider", "editor"},
	"on-call-escalation-policy":   {"viewer", "editor"},
	"on-call-team-routing-rules":  {"viewer", "editor"},
	"logs-pipeline":               {"viewer", "processors_editor", "editor"},
	"case-management-project":     {"viewer", "contributor", "manager"},
	"monitor-notification-rule":   {"viewer", "editor"},
	"status-page":                 {"viewer", "responder", "manager"},
	"feature-flag":                {"viewer", "contributor", "editor"},
}

// Emulator serves the Datadog calls the datadog:RestrictionPolicy driver and
// the datadog:getCurrentUser lookup make, under /api/v2/:
//
//	POST   /api/v2/restriction_policy/{resource_id}   upsert (full replacement), 200; 400 when it
//	                                                  would lower the caller's own access, unless
//	                                                  allow_self_lockout=true
//	GET    /api/v2/restriction_policy/{resource_id}   200, "bindings": [] when there is no policy
//	DELETE /api/v2/restriction_policy/{resource_id}   204, even when there was no policy
//	GET    /api/v2/current_user                       the seeded user, with its role, the role's
//	                                                  permissions and its org included
//	GET    /api/v2/users/{user_id}/memberships        the seeded user's teams (the seed's teamIds);
//	                                                  [] for another user
//
// The resource id may carry ":" literally or as %3A. Requests need both
// DD-API-KEY and DD-APPLICATION-KEY of the credentials, else 403
// {"errors":["Forbidden"]}. Authenticated responses carry X-RateLimit-Limit,
// -Period, -Remaining, -Reset and -Name; a client above the limit
// (DefaultRateLimit, or what SetRateLimit sets) gets 429.
//
// Where it departs from the real API is listed in the package
// documentation.
type Emulator struct {
	store *emulator.Store
	creds emulator.Credentials

	mu    sync.Mutex
	limit int                // requests per minute per endpoint family; 0: none
	rates map[string]*window // by X-RateLimit-Name
}

type window struct {
	start int64 // unix seconds, a multiple of ratePeriod
	count int
}

// New returns an emulator keeping its data in store and accepting the
// Datadog keys of creds. Call Seed to create the current user.
func New(store *emulator.Store, creds emulator.Credentials) *Emulator {
	return &Emulator{store: store, creds: creds, limit: DefaultRateLimit, rates: map[string]*window{}}
}

// SetRateLimit sets how many requests a minute each endpoint family
// (restriction_policy, current_user, users) accepts before answering 429, from
// the next request on; the count of the current minute is kept. Zero or
// negative means no limit: no request is throttled, and answers carry no
// X-RateLimit-* headers.
func (e *Emulator) SetRateLimit(perMinute int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.limit = max(perMinute, 0)
}

// writeJSON writes v as the body of an answer of the given status. As
// Datadog does, it leaves "&", "<" and ">" unescaped (a user's icon URL
// has a "&").
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	b := []byte(`{"errors":["Internal Server Error"]}`)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
	} else {
		b = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func writeErrors(w http.ResponseWriter, status int, msgs ...string) {
	writeJSON(w, status, errorResponse{Errors: msgs})
}

// ServeHTTP serves the routes listed on Emulator.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	var route, rid string
	switch {
	case path == "/api/v2/current_user":
		route = "current_user"
	case strings.HasPrefix(path, "/api/v2/users/") && strings.HasSuffix(path, "/memberships"):
		seg := strings.TrimSuffix(strings.TrimPrefix(path, "/api/v2/users/"), "/memberships")
		if seg == "" || strings.Contains(seg, "/") {
			writeErrors(w, http.StatusNotFound, "Not found")
			return
		}
		route, rid = "users", seg
	case strings.HasPrefix(path, "/api/v2/restriction_policy/"):
		seg := strings.TrimPrefix(path, "/api/v2/restriction_policy/")
		var err error
		if rid, err = url.PathUnescape(seg); err != nil || seg == "" || strings.Contains(seg, "/") {
			writeErrors(w, http.StatusNotFound, "Not found")
			return
		}
		route = "restriction_policy"
	default:
		writeErrors(w, http.StatusNotFound, "Not found")
		return
	}
	if !e.authorized(r) {
		writeErrors(w, http.StatusForbidden, "Forbidden")
		return
	}
	if !e.countRate(w, route) {
		writeErrors(w, http.StatusTooManyRequests, "Too many requests")
		return
	}
	switch {
	case route == "current_user" && r.Method == http.MethodGet:
		e.currentUser(w)
	case route == "users" && r.Method == http.MethodGet:
		e.userMemberships(w, rid)
	case route == "restriction_policy" && (r.Method == http.MethodGet || r.Method == http.MethodPost || r.Method == http.MethodDelete):
		e.restrictionPolicy(w, r, rid)
	default:
		writeErrors(w, http.StatusMethodNotAllowed, "Method Not Allowed")
	}
}

func (e *Emulator) authorized(r *http.Request) bool {
	match := func(got, want string) bool {
		return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
	}
	return match(r.Header.Get("DD-API-KEY"), e.creds.DatadogAPIKey) &&
		match(r.Header.Get("DD-APPLICATION-KEY"), e.creds.DatadogAppKey)
}

// countRate counts the request in its calendar-aligned window, sets the
// X-RateLimit-* headers and reports whether the request is within the limit.
// Without a limit it does neither, and reports true.
func (e *Emulator) countRate(w http.ResponseWriter, name string) bool {
	now := time.Now().Unix()
	start := now - now%ratePeriod
	e.mu.Lock()
	rateLimit := e.limit
	if rateLimit == 0 {
		e.mu.Unlock()
		return true
	}
	win := e.rates[name]
	if win == nil || win.start != start {
		win = &window{start: start}
		e.rates[name] = win
	}
	win.count++
	count := win.count
	e.mu.Unlock()
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(rateLimit))
	h.Set("X-RateLimit-Period", strconv.Itoa(ratePeriod))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(rateLimit-count, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(start+ratePeriod-now, 10))
	h.Set("X-RateLimit-Name", name)
	return count <= rateLimit
}
