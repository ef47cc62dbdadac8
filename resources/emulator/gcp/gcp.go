package gcp

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// Store buckets of the emulator. Every GCP bucket is prefixed "gcp.".
const (
	bucketServices  = "gcp.services"         // service name → managedService
	bucketConsumers = "gcp.consumerPolicies" // "SERVICE/CONSUMER" → iamPolicy
)

// emptyEtag is the etag of a policy that was never set, the value Google's
// IAM-backed APIs answer with for an empty policy.
const emptyEtag = "ACAB"

// maxPolicyMembers is Google's bound on member occurrences in one policy.
const maxPolicyMembers = 1500

// Emulator serves the Service Management calls the gcp:endpoints lookups
// make, and the ones a test or another user needs to change what they read,
// under /v1/:
//
//	GET  /v1/services                                       services.list
//	GET  /v1/services/{s}                                   services.get
//	POST /v1/services/{s}:getIamPolicy                      (also setIamPolicy, testIamPermissions)
//	POST /v1/services/{s}/consumers/{c}:getIamPolicy        (also setIamPolicy, testIamPermissions)
//
// Requests need "Authorization: Bearer <creds.GoogleAccessToken>" (or the
// access_token query parameter); others get 401 UNAUTHENTICATED. Only
// alt=json is served; prettyPrint=false gives compact JSON, as the Go SDK
// asks for.
//
// Where it departs from the real API is listed in the package
// documentation.
type Emulator struct {
	store *emulator.Store
	creds emulator.Credentials
}

// New returns an emulator keeping its data in store and accepting the
// access token of creds. Call Seed to create the seed data.
func New(store *emulator.Store, creds emulator.Credentials) *Emulator {
	return &Emulator{store: store, creds: creds}
}

// managedService is a stored service: its ManagedService fields and policy.
type managedService struct {
	ServiceName       string     `json:"serviceName"`
	ProducerProjectID string     `json:"producerProjectId,omitempty"`
	Policy            *iamPolicy `json:"policy,omitempty"` // nil until set
}

// iamPolicy is the wire and stored form of a google.iam.v1.Policy.
type iamPolicy struct {
	Version      int64         `json:"version,omitempty"`
	Bindings     []iamBinding  `json:"bindings,omitempty"`
	AuditConfigs []auditConfig `json:"auditConfigs,omitempty"`
	Etag         string        `json:"etag,omitempty"`
}

type iamBinding struct {
	Role      string   `json:"role,omitempty"`
	Members   []string `json:"members,omitempty"`
	Condition *iamExpr `json:"condition,omitempty"`
}

type iamExpr struct {
	Expression  string `json:"expression,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Location    string `json:"location,omitempty"`
}

type auditConfig struct {
	Service         string           `json:"service,omitempty"`
	AuditLogConfigs []auditLogConfig `json:"auditLogConfigs,omitempty"`
}

type auditLogConfig struct {
	LogType         logType  `json:"logType,omitempty"`
	ExemptedMembers []string `json:"exemptedMembers,omitempty"`
}

// logType is an AuditLogConfig.LogType, kept by its name. A request may
// give it as a number too, as clients asking for enum-encoding=int (the
// generated REST clients of cloud.google.com/go) write enums.
type logType string

// logTypes are the names of the LogType enum, by number.
var logTypes = []string{"LOG_TYPE_UNSPECIFIED", "ADMIN_READ", "DATA_WRITE", "DATA_READ"}

func (l *logType) UnmarshalJSON(b []byte) error {
	var n int64
	if err := json.Unmarshal(b, &n); err == nil {
		if n >= 0 && n < int64(len(logTypes)) {
			*l = logType(logTypes[n])
		} else {
			*l = logType(strconv.FormatInt(n, 10)) // refused by validatePolicy
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*l = logType(s)
	return nil
}

// number is the enum number of l, for answers in enum-encoding=int.
func (l logType) number() int {
	return max(slices.Index(logTypes, string(l)), 0)
}

func newEtag() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.StdEncoding.EncodeToString(b)
}

// gerr is a Google API error, written as Google's JSON error body.
type gerr struct {
	status  int
	code    string // google.rpc.Code name
	msg     string
	details []any
	// legacy is the "errors" list some Google front ends still add
	// ({"domain", "message", "reason"}), nil for none.
	legacy []map[string]string
}

func (g *gerr) Error() string { return fmt.Sprintf("%d %s: %s", g.status, g.code, g.msg) }

func errorInfo(reason, domain string, metadata map[string]string) map[string]any {
	d := map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": domain}
	if len(metadata) > 0 {
		d["metadata"] = metadata
	}
	return d
}

func badRequest(field, msg string) *gerr {
	return &gerr{status: http.StatusBadRequest, code: "INVALID_ARGUMENT", msg: msg, details: []any{
		map[string]any{
			"@type":           "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": []any{map[string]string{"field": field, "description": msg}},
		},
	}}
}

func notFoundOrDenied(service string) *gerr {
	msg := fmt.Sprintf("Service '%s' not found or permission denied.", service)
	return &gerr{status: http.StatusForbidden, code: "PERMISSION_DENIED", msg: msg, details: []any{
		map[string]any{
			"@type": "type.googleapis.com/google.rpc.PreconditionFailure",
			"violations": []any{map[string]string{
				"type": "googleapis.com", "subject": "services/" + service, "description": msg,
			}},
		},
		errorInfo("SERVICE_NOT_FOUND_OR_PERMISSION_DENIED", "servicemanagement.googleapis.com",
			map[string]string{"service": service}),
	}}
}

func routeNotFound(path string) *gerr {
	return &gerr{status: http.StatusNotFound, code: "NOT_FOUND",
		msg: fmt.Sprintf("The requested URL %s was not found on this server.", path)}
}

// responder writes JSON, pretty unless the request said prettyPrint=false,
// and with enums as numbers when it asked for enum-encoding=int.
type responder struct {
	w        http.ResponseWriter
	pretty   bool
	intEnums bool
}

func (o responder) json(status int, v any) {
	if p, ok := v.(iamPolicy); ok && o.intEnums {
		v = p.withIntEnums()
	}
	var b []byte
	var err error
	if o.pretty {
		b, err = json.MarshalIndent(v, "", "  ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}`)
	}
	h := o.w.Header()
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("Vary", "Origin, X-Origin, Referer")
	o.w.WriteHeader(status)
	o.w.Write(append(b, '\n'))
}

func (o responder) error(err error) {
	var g *gerr
	if !errors.As(err, &g) {
		g = &gerr{status: http.StatusInternalServerError, code: "INTERNAL", msg: "Internal error encountered."}
	}
	type body struct {
		Code    int                 `json:"code"`
		Message string              `json:"message"`
		Errors  []map[string]string `json:"errors,omitempty"`
		Status  string              `json:"status"`
		Details []any               `json:"details,omitempty"`
	}
	if g.status == http.StatusUnauthorized {
		o.w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
	}
	o.json(g.status, map[string]body{"error": {Code: g.status, Message: g.msg, Errors: g.legacy, Status: g.code, Details: g.details}})
}

// ServeHTTP serves the routes listed on Emulator.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	out := responder{w: w, pretty: true}
	if v := q.Get("prettyPrint"); v != "" {
		pretty, err := strconv.ParseBool(v)
		if err != nil {
			out.error(badRequest("prettyPrint", fmt.Sprintf("Invalid boolean value for parameter 'prettyPrint': %q", v)))
			return
		}
		out.pretty = pretty
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/")
	if !ok {
		out.error(routeNotFound(r.URL.Path))
		return
	}
	if alt := q.Get("alt"); alt != "" && alt != "json" {
		out.error(badRequest("alt", fmt.Sprintf("The emulator serves only alt=json, not alt=%s.", alt)))
		return
	}
	// The generated REST clients of cloud.google.com/go send
	// $alt=json;enum-encoding=int (as recorded from Google), and read enums
	// as numbers then.
	if alt := q.Get("$alt"); alt != "" {
		switch alt {
		case "json":
		case "json;enum-encoding=int":
			out.intEnums = true
		default:
			out.error(badRequest("$alt", fmt.Sprintf("The emulator serves only $alt=json and $alt=json;enum-encoding=int, not $alt=%s.", alt)))
			return
		}
	}
	if err := e.authenticate(r); err != nil {
		out.error(err)
		return
	}
	if rest == "services" {
		if r.Method != http.MethodGet {
			out.error(routeNotFound(r.URL.Path))
			return
		}
		e.list(out, q)
		return
	}
	res, ok := strings.CutPrefix(rest, "services/")
	if !ok {
		out.error(routeNotFound(r.URL.Path))
		return
	}
	var verb string
	if i := strings.LastIndex(res, ":"); i >= 0 && !strings.Contains(res[i:], "/") {
		res, verb = res[:i], res[i+1:]
	}
	var service, consumer string
	switch segs := strings.Split(res, "/"); {
	case len(segs) == 1 && segs[0] != "":
		service = segs[0]
	case len(segs) == 3 && segs[0] != "" && segs[1] == "consumers" && segs[2] != "":
		service, consumer = segs[0], segs[2]
	default:
		out.error(routeNotFound(r.URL.Path))
		return
	}
	var v any
	var err error
	switch {
	case verb == "" && consumer == "" && r.Method == http.MethodGet:
		v, err = e.getService(service)
	case verb == "getIamPolicy" && r.Method == http.MethodPost:
		v, err = e.getIamPolicy(r, service, consumer)
	case verb == "setIamPolicy" && r.Method == http.MethodPost:
		v, err = e.setIamPolicy(r, service, consumer)
	case verb == "testIamPermissions" && r.Method == http.MethodPost:
		v, err = e.testIamPermissions(r, service)
	default:
		err = routeNotFound(r.URL.Path)
	}
	if err != nil {
		out.error(err)
		return
	}
	out.json(http.StatusOK, v)
}

// authenticate checks the bearer token (header, or access_token /
// oauth_token query parameter).
func (e *Emulator) authenticate(r *http.Request) error {
	token := r.URL.Query().Get("access_token")
	if token == "" {
		token = r.URL.Query().Get("oauth_token")
	}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, t, _ := strings.Cut(h, " ")
		if strings.EqualFold(scheme, "Bearer") {
			token = strings.TrimSpace(t)
		} else {
			token = "\x00" // a credential of another kind is never valid
		}
	}
	meta := map[string]string{"service": "servicemanagement.googleapis.com"}
	if token == "" {
		return &gerr{status: http.StatusUnauthorized, code: "UNAUTHENTICATED",
			msg:     "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
			details: []any{errorInfo("CREDENTIALS_MISSING", "googleapis.com", meta)}}
	}
	want := e.creds.GoogleAccessToken
	if want == "" || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		return &gerr{status: http.StatusUnauthorized, code: "UNAUTHENTICATED",
			msg:     "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
			details: []any{errorInfo("ACCESS_TOKEN_TYPE_UNSUPPORTED", "googleapis.com", meta)}}
	}
	return nil
}

// decodeBody decodes a JSON request body into v, rejecting unknown fields
// as Google does. An empty body and "null" leave v unchanged.
func decodeBody(r *http.Request, v any) error {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return badRequest("", "Request payload size exceeds the limit: 1048576 bytes.")
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			// Google's words for a field the request message lacks.
			return badRequest("", fmt.Sprintf("Invalid JSON payload received. Unknown name %s: Cannot find field.", name))
		}
		return badRequest("", "Invalid JSON payload received. "+err.Error())
	}
	return nil
}

func (e *Emulator) lookupService(tx emulator.Tx, name string) (managedService, error) {
	var s managedService
	ok, err := tx.Get(bucketServices, name, &s)
	if err != nil {
		return s, err
	}
	if !ok {
		return s, notFoundOrDenied(name)
	}
	return s, nil
}

func (e *Emulator) getService(name string) (any, error) {
	var s managedService
	err := e.store.View(func(tx emulator.Tx) error {
		var err error
		s, err = e.lookupService(tx, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return managedService{ServiceName: s.ServiceName, ProducerProjectID: s.ProducerProjectID}, nil
}

func (e *Emulator) list(out responder, q map[string][]string) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	pageSize := 50
	if v := get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			out.error(badRequest("page_size", fmt.Sprintf("Invalid value for page_size: %q", v)))
			return
		}
		if n > 0 {
			pageSize = min(n, 500)
		}
	}
	var after string
	if tok := get("pageToken"); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			out.error(badRequest("page_token", "Invalid page token."))
			return
		}
		after = string(b)
	}
	producer := get("producerProjectId")
	var consumedBy string
	if c := get("consumerId"); c != "" {
		var ok bool
		if consumedBy, ok = strings.CutPrefix(c, "project:"); !ok || consumedBy == "" {
			out.error(badRequest("consumer_id", fmt.Sprintf("Invalid consumer_id: %q. The accepted form is project:<project_id>.", c)))
			return
		}
	}
	type item struct {
		ServiceName       string `json:"serviceName"`
		ProducerProjectID string `json:"producerProjectId,omitempty"`
	}
	var resp struct {
		Services      []item `json:"services,omitempty"`
		NextPageToken string `json:"nextPageToken,omitempty"`
	}
	err := e.store.View(func(tx emulator.Tx) error {
		return tx.List(bucketServices, func(key string, raw []byte) error {
			if key <= after && after != "" {
				return nil
			}
			var s managedService
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			if producer != "" && s.ProducerProjectID != producer {
				return nil
			}
			if consumedBy != "" {
				var p iamPolicy
				if ok, err := tx.Get(bucketConsumers, s.ServiceName+"/"+consumedBy, &p); err != nil || !ok {
					return err
				}
			}
			if len(resp.Services) == pageSize {
				last := resp.Services[len(resp.Services)-1].ServiceName
				resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(last))
				return errStop
			}
			resp.Services = append(resp.Services, item{s.ServiceName, s.ProducerProjectID})
			return nil
		})
	})
	if err != nil && !errors.Is(err, errStop) {
		out.error(err)
		return
	}
	out.json(http.StatusOK, resp)
}

var errStop = errors.New("stop")

// readPolicy returns the stored policy of a service or consumer, or the
// empty policy.
func (e *Emulator) readPolicy(tx emulator.Tx, service, consumer string) (iamPolicy, error) {
	s, err := e.lookupService(tx, service)
	if err != nil {
		return iamPolicy{}, err
	}
	if consumer == "" {
		if s.Policy == nil {
			return iamPolicy{Etag: emptyEtag}, nil
		}
		return *s.Policy, nil
	}
	var p iamPolicy
	ok, err := tx.Get(bucketConsumers, service+"/"+consumer, &p)
	if err != nil {
		return iamPolicy{}, err
	}
	if !ok {
		return iamPolicy{Etag: emptyEtag}, nil
	}
	return p, nil
}

func (e *Emulator) getIamPolicy(r *http.Request, service, consumer string) (any, error) {
	var req struct {
		// Resource is sent by the generated REST clients, which write the
		// whole request message as the body; the path names the resource
		// all the same (see the package documentation).
		Resource string `json:"resource"`
		Options  *struct {
			RequestedPolicyVersion int64 `json:"requestedPolicyVersion"`
		} `json:"options"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.Options != nil {
		switch v := req.Options.RequestedPolicyVersion; v {
		case 0, 1, 3:
		default:
			return nil, badRequest("options.requested_policy_version",
				fmt.Sprintf("Invalid requested_policy_version: %d. Valid values are 0, 1 and 3.", v))
		}
	}
	var p iamPolicy
	err := e.store.View(func(tx emulator.Tx) error {
		var err error
		p, err = e.readPolicy(tx, service, consumer)
		return err
	})
	if err != nil {
		return nil, err
	}
	var requested int64
	if req.Options != nil {
		requested = req.Options.RequestedPolicyVersion
	}
	return formatPolicy(p, requested), nil
}

// formatPolicy answers a stored policy in the version a getIamPolicy asked
// for, as IAM does: a policy without conditional bindings is version 1
// whatever was asked; one with conditional bindings is version 3 when
// version 3 was asked, and otherwise version 1 with each conditional
// binding's condition left out and "_withcond_" and a digest of the
// condition added to its role, so that a reader of version 1 cannot write
// them back as unconditional grants. A policy never set stays
// {"etag":"ACAB"}.
func formatPolicy(p iamPolicy, requested int64) iamPolicy {
	if p.Etag == emptyEtag && p.Version == 0 {
		return p
	}
	out := p
	out.Version = 1
	if !hasConditions(p.Bindings) {
		return out
	}
	if requested == 3 {
		out.Version = 3
		return out
	}
	out.Bindings = make([]iamBinding, len(p.Bindings))
	for i, b := range p.Bindings {
		if b.Condition != nil {
			b.Role += withCond + conditionDigest(*b.Condition)
			b.Condition = nil
		}
		out.Bindings[i] = b
	}
	return out
}

// withCond marks the role of a conditional binding in a policy answered in
// version 1.
const withCond = "_withcond_"

// conditionDigest is a short, stable digest of a condition.
func conditionDigest(c iamExpr) string {
	sum := sha256.Sum256([]byte(c.Title + "\x00" + c.Description + "\x00" + c.Expression + "\x00" + c.Location))
	return hex.EncodeToString(sum[:10])
}

func (e *Emulator) setIamPolicy(r *http.Request, service, consumer string) (any, error) {
	var req struct {
		Resource   string     `json:"resource"` // as in getIamPolicy
		Policy     *iamPolicy `json:"policy"`
		UpdateMask string     `json:"updateMask"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.Policy == nil {
		return nil, badRequest("policy", "Request contains an invalid argument: policy is required.")
	}
	mask, err := parseMask(req.UpdateMask)
	if err != nil {
		return nil, err
	}
	want := *req.Policy
	if err := validatePolicy(&want); err != nil {
		return nil, err
	}
	var got iamPolicy
	err = e.store.Update(func(tx emulator.Tx) error {
		cur, err := e.readPolicy(tx, service, consumer)
		if err != nil {
			return err
		}
		if want.Etag != "" && want.Etag != cur.Etag {
			return errConcurrentChange()
		}
		if want.Etag != "" && want.Version != 3 && hasConditions(cur.Bindings) {
			// Only a write without etag may drop the conditions of a
			// version 3 policy (IAM documents that it then loses them).
			return badRequest("policy.version", "The policy has conditional role bindings: a change of it must set version 3.")
		}
		got = cur
		if mask["bindings"] {
			got.Bindings = want.Bindings
		}
		if mask["auditConfigs"] {
			got.AuditConfigs = want.AuditConfigs
		}
		if hasConditions(got.Bindings) && want.Version != 3 {
			return badRequest("policy.version", "Policies with conditional role bindings must have version 3.")
		}
		got.Version = 1
		if hasConditions(got.Bindings) {
			got.Version = 3
		}
		got.Etag = newEtag()
		if consumer != "" {
			return tx.Put(bucketConsumers, service+"/"+consumer, got)
		}
		s, err := e.lookupService(tx, service)
		if err != nil {
			return err
		}
		s.Policy = &got
		return tx.Put(bucketServices, service, s)
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// errConcurrentChange is IAM's answer to a setIamPolicy whose etag is not
// the policy's, as observed from Google: 409 ABORTED, with the legacy
// errors list (domain "global", reason "aborted").
func errConcurrentChange() *gerr {
	const msg = "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff."
	return &gerr{status: http.StatusConflict, code: "ABORTED", msg: msg,
		legacy: []map[string]string{{"domain": "global", "message": msg, "reason": "aborted"}}}
}

// parseMask reads a setIamPolicy update mask; an empty mask means
// "bindings,etag".
func parseMask(mask string) (map[string]bool, error) {
	if mask == "" {
		mask = "bindings,etag"
	}
	out := map[string]bool{}
	for _, f := range strings.Split(mask, ",") {
		switch f = strings.TrimSpace(f); f {
		case "bindings", "etag", "version":
			out[f] = true
		case "auditConfigs", "audit_configs":
			out["auditConfigs"] = true
		default:
			return nil, badRequest("update_mask", fmt.Sprintf("Invalid update_mask path: %q. Valid paths are bindings, etag, audit_configs and version.", f))
		}
	}
	return out, nil
}

var memberPrefixes = []string{
	"user:", "serviceAccount:", "group:", "domain:", "principal://", "principalSet://",
	"deleted:user:", "deleted:serviceAccount:", "deleted:group:",
	"projectOwner:", "projectEditor:", "projectViewer:",
}

// validatePolicy checks a policy to be set and drops bindings without
// members and repeated members.
func validatePolicy(p *iamPolicy) error {
	switch p.Version {
	case 0, 1, 3:
	default:
		return badRequest("policy.version", fmt.Sprintf("Invalid policy version: %d. Valid values are 0, 1 and 3.", p.Version))
	}
	total := 0
	var kept []iamBinding
	for i, b := range p.Bindings {
		field := fmt.Sprintf("policy.bindings[%d]", i)
		if !strings.HasPrefix(b.Role, "roles/") && !strings.Contains(b.Role, "/roles/") {
			return badRequest(field+".role", fmt.Sprintf("Invalid role: %q. A role is roles/NAME or a custom role's resource name.", b.Role))
		}
		if strings.Contains(b.Role, withCond) {
			return badRequest(field+".role", fmt.Sprintf("Invalid role: %q. Roles of conditional bindings read in policy version 1 cannot be set; read the policy in version 3.", b.Role))
		}
		var members []string
		for _, m := range b.Members {
			if m != "allUsers" && m != "allAuthenticatedUsers" && !hasMemberPrefix(m) {
				// IAM's text for a member without a known type prefix, as
				// observed from Google on the setIamPolicy of service
				// accounts (gRPC InvalidArgument) and of Cloud Storage
				// buckets (400 "invalid"), public reports quote it.
				return badRequest(field+".members", fmt.Sprintf("The member %s is of an unknown type. Please set a valid type prefix for the member.", m))
			}
			if !slices.Contains(members, m) {
				members = append(members, m)
			}
		}
		if b.Condition != nil && strings.TrimSpace(b.Condition.Expression) == "" {
			return badRequest(field+".condition.expression", "A condition needs a non-empty expression.")
		}
		if len(members) == 0 {
			continue
		}
		total += len(members)
		b.Members = members
		kept = append(kept, b)
	}
	if total > maxPolicyMembers {
		return badRequest("policy.bindings", fmt.Sprintf("The number of principals in the policy (%d) exceeds the maximum of %d.", total, maxPolicyMembers))
	}
	p.Bindings = kept
	for i, a := range p.AuditConfigs {
		for j, l := range a.AuditLogConfigs {
			switch string(l.LogType) {
			case "LOG_TYPE_UNSPECIFIED", "ADMIN_READ", "DATA_WRITE", "DATA_READ":
			default:
				return badRequest(fmt.Sprintf("policy.audit_configs[%d].audit_log_configs[%d].log_type", i, j),
					fmt.Sprintf("Invalid value for log_type: %q.", l.LogType))
			}
		}
	}
	return nil
}

// withIntEnums is p as answered to a client asking for enum-encoding=int:
// every log type a number.
func (p iamPolicy) withIntEnums() any {
	type logConfig struct {
		LogType         int      `json:"logType,omitempty"`
		ExemptedMembers []string `json:"exemptedMembers,omitempty"`
	}
	type audit struct {
		Service         string      `json:"service,omitempty"`
		AuditLogConfigs []logConfig `json:"auditLogConfigs,omitempty"`
	}
	out := struct {
		Version      int64        `json:"version,omitempty"`
		Bindings     []iamBinding `json:"bindings,omitempty"`
		AuditConfigs []audit      `json:"auditConfigs,omitempty"`
		Etag         string       `json:"etag,omitempty"`
	}{Version: p.Version, Bindings: p.Bindings, Etag: p.Etag}
	for _, a := range p.AuditConfigs {
		na := audit{Service: a.Service}
		for _, l := range a.AuditLogConfigs {
			na.AuditLogConfigs = append(na.AuditLogConfigs, logConfig{LogType: l.LogType.number(), ExemptedMembers: l.ExemptedMembers})
		}
		out.AuditConfigs = append(out.AuditConfigs, na)
	}
	return out
}

func hasMemberPrefix(m string) bool {
	for _, p := range memberPrefixes {
		if strings.HasPrefix(m, p) && len(m) > len(p) {
			return true
		}
	}
	return false
}

func hasConditions(bs []iamBinding) bool {
	for _, b := range bs {
		if b.Condition != nil {
			return true
		}
	}
	return false
}

func (e *Emulator) testIamPermissions(r *http.Request, service string) (any, error) {
	var req struct {
		Permissions []string `json:"permissions"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if err := e.store.View(func(tx emulator.Tx) error {
		_, err := e.lookupService(tx, service)
		return err
	}); err != nil {
		return nil, err
	}
	var resp struct {
		Permissions []string `json:"permissions,omitempty"`
	}
	for _, p := range req.Permissions {
		if strings.HasPrefix(p, "servicemanagement.") {
			resp.Permissions = append(resp.Permissions, p)
		}
	}
	return resp, nil
}

// Caller is the service account the emulator's access token belongs to,
// as tokeninfo reports it; callerID is its unique id.
const (
	Caller   = "reconcile@acme-prod.iam.gserviceaccount.com"
	callerID = "104598326617380952741"
)

// tokenLifetime is the lifetime, in seconds, tokeninfo gives the
// emulator's access token: always nearly an hour left, as a token just
// refreshed has.
const tokenLifetime = 3599

// tokenFrom returns the access token of a tokeninfo request: the
// access_token query parameter, or for a POST the form field.
func tokenFrom(r *http.Request) (string, bool) {
	switch r.Method {
	case http.MethodGet:
		return r.URL.Query().Get("access_token"), true
	case http.MethodPost:
		var token string
		if err := r.ParseForm(); err == nil {
			token = r.PostForm.Get("access_token")
		}
		if token == "" {
			token = r.URL.Query().Get("access_token")
		}
		return token, true
	}
	return "", false
}

// TokenInfo serves Google's OAuth 2 tokeninfo endpoint
// (oauth2.googleapis.com/tokeninfo), at /tokeninfo: GET with the
// access_token query parameter, or POST with it in a form body. The
// emulator's access token belongs to the service account Caller, with the
// cloud-platform scope; any other token is answered 400 invalid_token, as
// Google answers one that is unknown or expired.
func (e *Emulator) TokenInfo(w http.ResponseWriter, r *http.Request) {
	out := responder{w: w, pretty: true}
	token, ok := tokenFrom(r)
	if !ok {
		out.json(http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "Method not allowed"})
		return
	}
	if !e.validToken(token) {
		out.json(http.StatusBadRequest, map[string]string{"error": "invalid_token", "error_description": "Invalid Value"})
		return
	}
	out.json(http.StatusOK, map[string]string{
		"azp": callerID, "aud": callerID, "sub": callerID,
		"scope":      "https://www.googleapis.com/auth/cloud-platform",
		"exp":        strconv.FormatInt(time.Now().Add(tokenLifetime*time.Second).Unix(), 10),
		"expires_in": strconv.Itoa(tokenLifetime),
		"email":      Caller, "email_verified": "true",
		"access_type": "online",
	})
}

// TokenInfoV2 serves the older tokeninfo of Google's OAuth 2 API v2
// (www.googleapis.com/oauth2/v2/tokeninfo), at /oauth2/v2/tokeninfo: the
// one the Go client library google.golang.org/api/oauth2/v2 calls, a POST
// with access_token in the query. It answers as Google does, in its own
// shape (issued_to, audience, user_id, scope, expires_in as a number,
// email, verified_email as a boolean); any other token is 400
// invalid_token.
func (e *Emulator) TokenInfoV2(w http.ResponseWriter, r *http.Request) {
	out := responder{w: w, pretty: r.URL.Query().Get("prettyPrint") != "false"}
	token, ok := tokenFrom(r)
	if !ok {
		out.json(http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "Method not allowed"})
		return
	}
	if !e.validToken(token) {
		out.json(http.StatusBadRequest, map[string]string{"error": "invalid_token", "error_description": "Invalid Value"})
		return
	}
	out.json(http.StatusOK, struct {
		IssuedTo      string `json:"issued_to"`
		Audience      string `json:"audience"`
		UserID        string `json:"user_id"`
		Scope         string `json:"scope"`
		ExpiresIn     int    `json:"expires_in"`
		Email         string `json:"email"`
		VerifiedEmail bool   `json:"verified_email"`
		AccessType    string `json:"access_type"`
	}{callerID, callerID, callerID, "https://www.googleapis.com/auth/cloud-platform", tokenLifetime, Caller, true, "online"})
}

// validToken reports whether token is the emulator's access token.
func (e *Emulator) validToken(token string) bool {
	want := e.creds.GoogleAccessToken
	return token != "" && want != "" && subtle.ConstantTimeCompare([]byte(token), []byte(want)) == 1
}
