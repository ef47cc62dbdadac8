package restrictionpolicy

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"reconcile/resources/emulator"
)

// Store buckets of the emulator. Every Datadog bucket is prefixed "dd.".
const (
	bucketPolicies = "dd.restrictionPolicies" // resource id → storedPolicy
	bucketAccount  = "dd.account"             // accountKey → account
	accountKey     = "current"
)

// Rate limit the emulator announces (and enforces) per endpoint family, in
// requests per calendar-aligned period.
const (
	rateLimit  = 1000
	ratePeriod = 60 // seconds
)

// relations lists the relations each resource type supports, from the
// restriction-policy API reference (v2.67.0 of the Go client's spec).
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
	"network-path-config":         {"viewer", "editor"},
}

var principalRE = regexp.MustCompile(`^(role|team|user|org):[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// Emulator serves the Datadog calls of this package under /api/v2/:
//
//	POST   /api/v2/restriction_policy/{resource_id}   upsert (full replacement), 200
//	GET    /api/v2/restriction_policy/{resource_id}   200, "bindings": [] when there is no policy
//	DELETE /api/v2/restriction_policy/{resource_id}   204, even when there was no policy
//	GET    /api/v2/current_user                       the seeded user, in its org, with its role
//
// The resource id may carry ":" literally or as %3A. Requests need both
// DD-API-KEY and DD-APPLICATION-KEY of the credentials, else 403
// {"errors":["Forbidden"]}. Authenticated responses carry X-RateLimit-Limit,
// -Period, -Remaining, -Reset and -Name; a client above the limit gets 429.
//
// Choices where Datadog's behaviour is not documented:
//   - A resource id without "type:" is 400 "Invalid resource: 'X' is not in
//     a valid format" (observed). A type missing from the documented table,
//     a relation the type does not support, and a principal that is not
//     role:, team:, user: or org: followed by a UUID are 400 with one message
//     per problem; ids of roles, teams and users are not checked to exist.
//   - "bindings": null in a POST is taken as no bindings; a body data.id is
//     ignored (the path names the resource); data.type must be
//     "restriction_policy".
//   - Bindings are stored and returned as given (no merging of duplicate
//     relations, no sorting); allow_self_lockout is accepted and ignored, as
//     self-lockout is not emulated.
type Emulator struct {
	store *emulator.Store
	creds emulator.Credentials

	mu    sync.Mutex
	rates map[string]*window // by X-RateLimit-Name
}

type window struct {
	start int64 // unix seconds, a multiple of ratePeriod
	count int
}

// NewEmulator returns an emulator keeping its data in store and accepting
// the Datadog keys of creds. Call Seed to create the current user.
func NewEmulator(store *emulator.Store, creds emulator.Credentials) *Emulator {
	return &Emulator{store: store, creds: creds, rates: map[string]*window{}}
}

// storedPolicy is a restriction policy as stored.
type storedPolicy struct {
	Bindings []Binding `json:"bindings"`
}

// account is the seeded identity: the current user, its org and its role.
type account struct {
	UserID    string    `json:"userId"`
	Email     string    `json:"email"`
	Handle    string    `json:"handle"`
	Name      string    `json:"name"`
	OrgID     string    `json:"orgId"`
	OrgName   string    `json:"orgName"`
	OrgPublic string    `json:"orgPublicId"`
	RoleID    string    `json:"roleId"`
	RoleName  string    `json:"roleName"`
	Created   time.Time `json:"created"`
}

// Seed creates the current user (UUID id, email, handle, name) in an org
// (UUID) with one role, unless they exist; it is safe on every start. The
// ids are the same in every fresh emulator.
func (e *Emulator) Seed() error {
	_, err := e.account()
	return err
}

// SeedData is the "datadog" section of an emulator seed file: the current
// user and restriction policies. Both are optional.
type SeedData struct {
	User     *UserSeed    `json:"user,omitempty"`
	Policies []PolicySeed `json:"policies,omitempty"`
}

// UserSeed is the current user of a seed file, with its org and role. Empty
// fields take Seed's values; a handle defaults to the email.
type UserSeed struct {
	ID       string `json:"id,omitempty"` // a UUID
	Email    string `json:"email,omitempty"`
	Handle   string `json:"handle,omitempty"`
	Name     string `json:"name,omitempty"`
	OrgID    string `json:"orgId,omitempty"` // a UUID
	OrgName  string `json:"orgName,omitempty"`
	RoleID   string `json:"roleId,omitempty"` // a UUID
	RoleName string `json:"roleName,omitempty"`
}

// PolicySeed is the restriction policy of one resource in a seed file.
type PolicySeed struct {
	ResourceID string    `json:"resourceId"` // "<type>:<id>"
	Bindings   []Binding `json:"bindings"`
}

// bucketSeeded records the resource ids SeedFrom wrote, so that a policy
// deleted since is not made again by the next start with the same file.
const bucketSeeded = "dd.seeded"

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// SeedFrom checks d and writes it inside the caller's transaction tx, before
// Seed. The user becomes the current user if the data has none yet (a
// fresh data directory); otherwise the stored one is left as it is. Each
// policy is written unless its resource already has one, or an earlier
// SeedFrom wrote it (and it was deleted since): nothing is reset by seeding
// again with the same data. It reports how many objects it added and how
// many it left. Policies are checked as a POST of them would be; the first
// problem is returned naming the entry, as in `policies[1] "dashboard:x":
// ...`, and nothing should then be committed.
func (e *Emulator) SeedFrom(tx emulator.Tx, d SeedData) (added, kept int, err error) {
	if u := d.User; u != nil {
		at := func(err error) error { return fmt.Errorf("user: %w", err) }
		for _, f := range []struct{ name, val string }{{"id", u.ID}, {"orgId", u.OrgID}, {"roleId", u.RoleID}} {
			if f.val != "" && !uuidRE.MatchString(f.val) {
				return 0, 0, at(fmt.Errorf("%s %q is not a UUID", f.name, f.val))
			}
		}
		if u.Email != "" && (!strings.Contains(u.Email, "@") || strings.ContainsAny(u.Email, " \t\r\n")) {
			return 0, 0, at(fmt.Errorf("email %q is not an email address", u.Email))
		}
		var a account
		found, err := tx.Get(bucketAccount, accountKey, &a)
		if err != nil {
			return 0, 0, at(err)
		}
		if found {
			kept++
		} else {
			a = defaultAccount()
			a.Handle = ""
			for _, f := range []struct {
				dst *string
				val string
			}{
				{&a.UserID, strings.ToLower(u.ID)}, {&a.Email, u.Email}, {&a.Handle, u.Handle}, {&a.Name, u.Name},
				{&a.OrgID, strings.ToLower(u.OrgID)}, {&a.OrgName, u.OrgName}, {&a.RoleID, strings.ToLower(u.RoleID)}, {&a.RoleName, u.RoleName},
			} {
				if f.val != "" {
					*f.dst = f.val
				}
			}
			if a.Handle == "" {
				a.Handle = a.Email
			}
			if err := tx.Put(bucketAccount, accountKey, a); err != nil {
				return 0, 0, at(err)
			}
			added++
		}
	}
	seen := map[string]int{}
	for i, p := range d.Policies {
		rid := p.ResourceID
		at := func(err error) error { return fmt.Errorf("policies[%d] %q: %w", i, rid, err) }
		if errs := checkResourceID(rid); errs != nil {
			return 0, 0, at(errors.New(errs[0]))
		}
		if strings.ContainsAny(rid, "/?#") {
			return 0, 0, at(errors.New("a resource id cannot hold '/', '?' or '#'"))
		}
		if j, dup := seen[rid]; dup {
			return 0, 0, at(fmt.Errorf("the same resourceId as policies[%d]", j))
		}
		seen[rid] = i
		if len(p.Bindings) == 0 {
			return 0, 0, at(errors.New("bindings: a policy needs at least one binding (a resource without one has no policy)"))
		}
		typ, _, _ := strings.Cut(rid, ":")
		allowed := relations[typ]
		bindings := make([]Binding, len(p.Bindings))
		for j, b := range p.Bindings {
			switch {
			case b.Relation == "":
				return 0, 0, at(fmt.Errorf("bindings[%d].relation is required", j))
			case !slices.Contains(allowed, b.Relation):
				return 0, 0, at(fmt.Errorf("bindings[%d]: Invalid relation: '%s' is not a supported relation for resource type '%s' (supported: %s)",
					j, b.Relation, typ, strings.Join(allowed, ", ")))
			case b.Principals == nil:
				return 0, 0, at(fmt.Errorf("bindings[%d].principals is required", j))
			}
			for _, pr := range b.Principals {
				if !principalRE.MatchString(pr) {
					return 0, 0, at(fmt.Errorf("bindings[%d]: Invalid principal: '%s' is not in a valid format (role:, team:, user: or org: and a UUID)", j, pr))
				}
			}
			bindings[j] = Binding{Relation: b.Relation, Principals: slices.Clone(b.Principals)}
		}
		var cur storedPolicy
		found, err := tx.Get(bucketPolicies, rid, &cur)
		if err != nil {
			return 0, 0, at(err)
		}
		var seeded bool
		if !found {
			if found, err = tx.Get(bucketSeeded, rid, &seeded); err != nil {
				return 0, 0, at(err)
			}
		}
		if found {
			kept++
		} else {
			if err := tx.Put(bucketPolicies, rid, storedPolicy{Bindings: bindings}); err != nil {
				return 0, 0, at(err)
			}
			added++
		}
		if err := tx.Put(bucketSeeded, rid, true); err != nil {
			return 0, 0, at(err)
		}
	}
	return added, kept, nil
}

// account returns the seeded identity, creating it on first use.
func (e *Emulator) account() (account, error) {
	var a account
	var found bool
	if err := e.store.View(func(tx emulator.Tx) error {
		var err error
		found, err = tx.Get(bucketAccount, accountKey, &a)
		return err
	}); err != nil || found {
		return a, err
	}
	err := e.store.Update(func(tx emulator.Tx) error {
		ok, err := tx.Get(bucketAccount, accountKey, &a)
		if err != nil || ok {
			return err
		}
		a = defaultAccount()
		return tx.Put(bucketAccount, accountKey, a)
	})
	return a, err
}

// defaultAccount is the current user the emulator makes when no seed file
// names one: fixed ids, so that outputs are the same on every machine.
func defaultAccount() account {
	return account{
		UserID:    seedUUID("user"),
		Email:     "ops@acme.example",
		Handle:    "ops@acme.example",
		Name:      "Acme Ops",
		OrgID:     seedUUID("org"),
		OrgName:   "Acme",
		OrgPublic: strings.ReplaceAll(seedUUID("org public id"), "-", "")[:12],
		RoleID:    seedUUID("role"),
		RoleName:  "Datadog Admin Role",
		Created:   time.Now().UTC().Truncate(time.Millisecond),
	}
}

// CurrentUser returns the ids of the seeded user and its org, or empty
// strings before Seed.
func (e *Emulator) CurrentUser() (userID, orgID string) {
	var a account
	if err := e.store.View(func(tx emulator.Tx) error {
		_, err := tx.Get(bucketAccount, accountKey, &a)
		return err
	}); err != nil {
		return "", ""
	}
	return a.UserID, a.OrgID
}

// seedUUID returns a version-4-shaped UUID derived from label, so that
// every fresh emulator seeds the same ids and output that shows them (plans,
// goldens) is reproducible.
func seedUUID(label string) string {
	sum := sha256.Sum256([]byte("reconcile emulator datadog " + label))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"errors":["Internal Server Error"]}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func writeErrors(w http.ResponseWriter, status int, msgs ...string) {
	writeJSON(w, status, map[string][]string{"errors": msgs})
}

// ServeHTTP serves the routes listed on Emulator.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	var route, rid string
	switch {
	case path == "/api/v2/current_user":
		route = "current_user"
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
func (e *Emulator) countRate(w http.ResponseWriter, name string) bool {
	now := time.Now().Unix()
	start := now - now%ratePeriod
	e.mu.Lock()
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

func (e *Emulator) currentUser(w http.ResponseWriter) {
	a, err := e.account()
	if err != nil {
		writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	created := a.Created.Format("2006-01-02T15:04:05.000000+00:00")
	type ref struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"data": map[string]any{
			"id":   a.UserID,
			"type": "users",
			"attributes": map[string]any{
				"name": a.Name, "handle": a.Handle, "email": a.Email,
				"created_at": created, "modified_at": created,
				"disabled": false, "verified": true, "service_account": false,
				"mfa_enabled": false, "status": "Active", "title": nil, "icon": "",
			},
			"relationships": map[string]any{
				"org":   map[string]any{"data": ref{a.OrgID, "orgs"}},
				"roles": map[string]any{"data": []ref{{a.RoleID, "roles"}}},
			},
		},
		"included": []any{
			map[string]any{"id": a.OrgID, "type": "orgs", "attributes": map[string]any{
				"name": a.OrgName, "public_id": a.OrgPublic, "created_at": created, "modified_at": created,
				"disabled": false, "sharing": "", "url": "",
			}},
			map[string]any{"id": a.RoleID, "type": "roles", "attributes": map[string]any{
				"name": a.RoleName, "created_at": created, "modified_at": created, "user_count": 1,
			}},
		},
	})
}

// checkResourceID returns the problems with a resource id, or nil.
func checkResourceID(rid string) []string {
	typ, id, ok := strings.Cut(rid, ":")
	if !ok || typ == "" || id == "" {
		return []string{fmt.Sprintf("Invalid resource: '%s' is not in a valid format", rid)}
	}
	if _, ok := relations[typ]; !ok {
		return []string{fmt.Sprintf("Invalid resource: '%s' has an unsupported resource type '%s'", rid, typ)}
	}
	return nil
}

// policyResponse is the response document; bindings are [] rather than
// null, which the official clients fail to decode.
func policyResponse(rid string, bindings []Binding) policyDoc {
	var d policyDoc
	d.Data.ID = rid
	d.Data.Type = "restriction_policy"
	d.Data.Attributes.Bindings = bindings
	if bindings == nil {
		d.Data.Attributes.Bindings = []Binding{}
	}
	return d
}

func (e *Emulator) restrictionPolicy(w http.ResponseWriter, r *http.Request, rid string) {
	if errs := checkResourceID(rid); errs != nil {
		writeErrors(w, http.StatusBadRequest, errs...)
		return
	}
	switch r.Method {
	case http.MethodGet:
		var p storedPolicy
		if err := e.store.View(func(tx emulator.Tx) error {
			_, err := tx.Get(bucketPolicies, rid, &p)
			return err
		}); err != nil {
			writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		writeJSON(w, http.StatusOK, policyResponse(rid, p.Bindings))
	case http.MethodDelete:
		if err := e.store.Update(func(tx emulator.Tx) error { return tx.Delete(bucketPolicies, rid) }); err != nil {
			writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPost:
		if v := r.URL.Query().Get("allow_self_lockout"); v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				writeErrors(w, http.StatusBadRequest, fmt.Sprintf("Invalid value for allow_self_lockout: '%s'", v))
				return
			}
		}
		bindings, errs := decodePolicy(r, rid)
		if errs != nil {
			writeErrors(w, http.StatusBadRequest, errs...)
			return
		}
		err := e.store.Update(func(tx emulator.Tx) error {
			if len(bindings) == 0 {
				return tx.Delete(bucketPolicies, rid)
			}
			return tx.Put(bucketPolicies, rid, storedPolicy{Bindings: bindings})
		})
		if err != nil {
			writeErrors(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		writeJSON(w, http.StatusOK, policyResponse(rid, bindings))
	}
}

// decodePolicy reads and checks a POST body, returning its bindings or the
// list of problems.
func decodePolicy(r *http.Request, rid string) ([]Binding, []string) {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return nil, []string{"Request body too large"}
	}
	var req struct {
		Data *struct {
			ID         string `json:"id"`
			Type       string `json:"type"`
			Attributes *struct {
				Bindings []struct {
					Relation   *string   `json:"relation"`
					Principals *[]string `json:"principals"`
				} `json:"bindings"`
			} `json:"attributes"`
		} `json:"data"`
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&req); err != nil {
		return nil, []string{fmt.Sprintf("Invalid JSON: %v", err)}
	}
	switch {
	case req.Data == nil:
		return nil, []string{"Missing required field: 'data'"}
	case req.Data.Type != "restriction_policy":
		return nil, []string{fmt.Sprintf("Invalid type: '%s', expected 'restriction_policy'", req.Data.Type)}
	case req.Data.Attributes == nil:
		return nil, []string{"Missing required field: 'data.attributes'"}
	}
	typ, _, _ := strings.Cut(rid, ":")
	allowed := relations[typ]
	var errs []string
	bindings := []Binding{}
	for i, b := range req.Data.Attributes.Bindings {
		if b.Relation == nil || *b.Relation == "" {
			errs = append(errs, fmt.Sprintf("Missing required field: 'bindings[%d].relation'", i))
		} else if !slices.Contains(allowed, *b.Relation) {
			errs = append(errs, fmt.Sprintf("Invalid relation: '%s' is not a supported relation for resource type '%s' (supported: %s)",
				*b.Relation, typ, strings.Join(allowed, ", ")))
		}
		if b.Principals == nil {
			errs = append(errs, fmt.Sprintf("Missing required field: 'bindings[%d].principals'", i))
			continue
		}
		for _, p := range *b.Principals {
			if !principalRE.MatchString(p) {
				errs = append(errs, fmt.Sprintf("Invalid principal: '%s' is not in a valid format", p))
			}
		}
		if b.Relation != nil {
			bindings = append(bindings, Binding{Relation: *b.Relation, Principals: append([]string{}, *b.Principals...)})
		}
	}
	return bindings, errs
}
