package endpointsiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	servicemanagement "google.golang.org/api/servicemanagement/v1"

	"github.com/reconcile-dev/reconcile/internal/boundedfile"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/httpretry"
)

// scopeCloudPlatform is the OAuth 2 scope requested with Application Default
// Credentials; it covers services.getIamPolicy and consumers.getIamPolicy.
const scopeCloudPlatform = "https://www.googleapis.com/auth/cloud-platform"

// Config says how the lookups reach Service Management.
type Config struct {
	// Endpoint overrides the API base URL, for example an emulator's URL
	// followed by "/". A missing final "/" is added. Empty means the public
	// endpoint https://servicemanagement.googleapis.com/.
	Endpoint string
	// AccessToken, when set, is sent as a static OAuth 2 bearer token (the
	// emulator's); otherwise Application Default Credentials are used. It
	// must never be logged or put in an error.
	AccessToken string
	// HTTPClient supplies the base transport and timeout. Retries and
	// authentication are layered on top of its transport, so it must not
	// add credentials itself. Share one among the lookups of a run, its
	// Transport from httpretry.NewBaseTransport(parallelism), so that
	// connections are reused. Nil (or a nil Transport) means a transport
	// of httpretry.NewBaseTransport of the lookup's own.
	HTTPClient *http.Client
	// TokenInfoURL is where the identity of a bare access token is asked
	// (Google's OAuth 2 tokeninfo); empty means DefaultTokenInfoURL. An
	// emulator serves it at its URL followed by "/tokeninfo".
	TokenInfoURL string
}

// DefaultTokenInfoURL is Google's OAuth 2 tokeninfo endpoint.
const DefaultTokenInfoURL = "https://oauth2.googleapis.com/tokeninfo"

// conn builds the Service Management client on first use and keeps it.
type conn struct {
	cfg Config

	mu  sync.Mutex
	svc *servicemanagement.APIService // nil until the first successful build
	// Set with svc: the token source, the credentials file's JSON (nil
	// for a bare access token), and the client with the retries but not
	// the token, for tokeninfo.
	ts        oauth2.TokenSource
	credsJSON []byte
	plain     *http.Client
	caller    string // once known
}

func (c *conn) service(ctx context.Context) (*servicemanagement.APIService, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.svc != nil {
		return c.svc, nil
	}
	var ts oauth2.TokenSource
	var credsJSON []byte
	quotaProject := os.Getenv("GOOGLE_CLOUD_QUOTA_PROJECT")
	if c.cfg.AccessToken != "" {
		ts = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: c.cfg.AccessToken, TokenType: "Bearer"})
	} else {
		if err := checkCredentialsFile(); err != nil {
			return nil, resources.Refused(fmt.Errorf("find Google Application Default Credentials: %w", err))
		}
		// The token source outlives this call: refreshes must not fail
		// because the first Invoke's context has ended.
		creds, err := google.FindDefaultCredentials(context.WithoutCancel(ctx), scopeCloudPlatform)
		if err != nil {
			return nil, resources.Refused(fmt.Errorf("find Google Application Default Credentials: %w", err))
		}
		ts, credsJSON = creds.TokenSource, creds.JSON
		if quotaProject == "" {
			quotaProject = quotaProjectOf(creds.JSON)
		}
	}
	hc := &http.Client{}
	if c.cfg.HTTPClient != nil {
		*hc = *c.cfg.HTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = httpretry.NewBaseTransport(0)
	}
	base = &httpretry.Transport{Base: base, Service: "gcp", AttemptTimeout: 2 * time.Minute}
	if quotaProject != "" {
		base = userProject{project: quotaProject, base: base}
	}
	ts = oauth2.ReuseTokenSource(nil, ts)
	plain := *hc
	plain.Transport = base
	hc.Transport = &oauth2.Transport{Source: ts, Base: base}
	opts := []option.ClientOption{option.WithHTTPClient(hc)}
	if ep := c.cfg.Endpoint; ep != "" {
		if !strings.HasSuffix(ep, "/") {
			ep += "/"
		}
		opts = append(opts, option.WithEndpoint(ep))
	}
	svc, err := servicemanagement.NewService(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("create Service Management client: %w", err)
	}
	c.svc, c.ts, c.credsJSON, c.plain = svc, ts, credsJSON, &plain
	return svc, nil
}

// Caller returns who the client calls Google's APIs as: the client_email
// of a service account key (or of impersonation's target) in Application
// Default Credentials, read without a request; otherwise what Google's
// tokeninfo says of the access token: its email, or, for a token that
// carries none, its subject or client id.
func (cl *Client) Caller(ctx context.Context) (string, error) { return cl.c.callerOf(ctx) }

// Account names where the client's writes land, as far as its caller
// tells: the project of a service account (so that the read-only account
// of a plan and the account that applies it, both of one project, are
// one account), the domain of any other email, or the caller itself.
func (cl *Client) Account(ctx context.Context) (string, error) {
	caller, err := cl.Caller(ctx)
	if err != nil {
		return "", err
	}
	user, domain, ok := strings.Cut(caller, "@")
	switch {
	case !ok || user == "":
		return caller, nil
	case strings.HasSuffix(domain, ".iam.gserviceaccount.com"):
		return "project " + strings.TrimSuffix(domain, ".iam.gserviceaccount.com"), nil
	case domain == "developer.gserviceaccount.com" || domain == "appspot.gserviceaccount.com":
		return "project of " + caller, nil // a default service account: its project is in its name
	}
	return "domain " + domain, nil
}

func (c *conn) callerOf(ctx context.Context) (string, error) {
	if _, err := c.service(ctx); err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.caller != "" {
		return c.caller, nil
	}
	var file struct {
		ClientEmail string `json:"client_email"`
		Target      string `json:"service_account_impersonation_url"`
	}
	if len(c.credsJSON) > 0 && json.Unmarshal(c.credsJSON, &file) == nil {
		if file.ClientEmail != "" {
			c.caller = file.ClientEmail
			return c.caller, nil
		}
		// ".../serviceAccounts/NAME@PROJECT.iam.gserviceaccount.com:generateAccessToken"
		if i := strings.LastIndex(file.Target, "/serviceAccounts/"); i >= 0 {
			if email, _, ok := strings.Cut(file.Target[i+len("/serviceAccounts/"):], ":"); ok && email != "" {
				c.caller = email
				return c.caller, nil
			}
		}
	}
	tok, err := c.ts.Token()
	if err != nil {
		return "", fmt.Errorf("get an access token: %w", err)
	}
	info, err := tokenInfo(ctx, c.plain, c.cfg.TokenInfoURL, tok.AccessToken)
	if err != nil {
		return "", err
	}
	switch {
	case info.Email != "":
		c.caller = info.Email
	case info.Sub != "":
		c.caller = "subject " + info.Sub
	case info.Azp != "":
		c.caller = "client " + info.Azp
	default:
		return "", errors.New("Google's tokeninfo names no email, subject or client of the access token")
	}
	return c.caller, nil
}

// tokenInfoDoc is the part of Google's tokeninfo answer that names whose
// a token is.
type tokenInfoDoc struct {
	Email string `json:"email"`
	Sub   string `json:"sub"`
	Azp   string `json:"azp"`
}

// tokenInfo asks Google's tokeninfo endpoint (url; "" for the default)
// whose token is. The token travels in the body of a POST, never in a URL
// that an error could quote.
func tokenInfo(ctx context.Context, hc *http.Client, url, token string) (tokenInfoDoc, error) {
	if url == "" {
		url = DefaultTokenInfoURL
	}
	body := "access_token=" + neturl.QueryEscape(token)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return tokenInfoDoc{}, fmt.Errorf("tokeninfo: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		return tokenInfoDoc{}, fmt.Errorf("ask Google's tokeninfo who the access token belongs to: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return tokenInfoDoc{}, fmt.Errorf("tokeninfo: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(data, &e)
		return tokenInfoDoc{}, resources.Refused(fmt.Errorf("Google's tokeninfo refused the access token: %s: %s %s", resp.Status, e.Error, e.Description))
	}
	var doc tokenInfoDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return tokenInfoDoc{}, fmt.Errorf("tokeninfo: %w", err)
	}
	return doc, nil
}

// maxCredentialsFile bounds a credentials file: a service account key or
// an external account configuration is a few kilobytes.
const maxCredentialsFile = 1 << 20

// checkCredentialsFile checks the credentials file the Google library reads
// whole, GOOGLE_APPLICATION_CREDENTIALS or, when it is not set, gcloud's
// well-known file if there is one: it must be a regular file of bounded
// size, so that a path to a FIFO or to /dev/zero fails at once instead of
// hanging or filling memory.
func checkCredentialsFile() error {
	if f := os.Getenv("GOOGLE_APPLICATION_CREDENTIALS"); f != "" {
		if err := boundedfile.Check(f, maxCredentialsFile); err != nil {
			return fmt.Errorf("GOOGLE_APPLICATION_CREDENTIALS: %w", err)
		}
		return nil
	}
	f := wellKnownFile()
	if _, err := os.Stat(f); err != nil {
		return nil // the library looks elsewhere
	}
	return boundedfile.Check(f, maxCredentialsFile)
}

// wellKnownFile is where gcloud writes Application Default Credentials, as
// golang.org/x/oauth2/google finds it.
func wellKnownFile() string {
	const name = "application_default_credentials.json"
	if runtime.GOOS == "windows" {
		return filepath.Join(os.Getenv("APPDATA"), "gcloud", name)
	}
	home := os.Getenv("HOME")
	if home == "" {
		if u, err := user.Current(); err == nil {
			home = u.HomeDir
		}
	}
	return filepath.Join(home, ".config", "gcloud", name)
}

// quotaProjectOf returns the quota_project_id of a credentials file, which
// user credentials need to call Service Management (the Google SDK's own
// transport sends it as X-Goog-User-Project; ours must too).
func quotaProjectOf(credsJSON []byte) string {
	var f struct {
		QuotaProjectID string `json:"quota_project_id"`
	}
	if len(credsJSON) == 0 || json.Unmarshal(credsJSON, &f) != nil {
		return ""
	}
	return f.QuotaProjectID
}

// userProject sets X-Goog-User-Project, the project billed for quota.
type userProject struct {
	project string
	base    http.RoundTripper
}

func (u userProject) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("X-Goog-User-Project", u.project)
	return u.base.RoundTrip(r)
}

// Type tokens of the lookups this package serves, as the schemas name them.
const (
	// ServiceIamPolicyToken is the lookup ServiceIamPolicy serves.
	ServiceIamPolicyToken = "gcp:endpoints:getServiceIamPolicy"
	// ConsumersIamPolicyToken is the lookup ConsumersIamPolicy serves.
	ConsumersIamPolicyToken = "gcp:endpoints:getServiceConsumersIamPolicy"
)

// ServiceIamPolicy is the gcp:endpoints:getServiceIamPolicy lookup. It
// compares its results as resources.ResultComparer says.
type ServiceIamPolicy struct {
	c *conn
	policyResults
}

// ConsumersIamPolicy is the gcp:endpoints:getServiceConsumersIamPolicy
// lookup. It compares its results as resources.ResultComparer says.
type ConsumersIamPolicy struct {
	c *conn
	policyResults
}

var (
	_ resources.Function       = (*ServiceIamPolicy)(nil)
	_ resources.ResultComparer = (*ServiceIamPolicy)(nil)
	_ resources.Function       = (*ConsumersIamPolicy)(nil)
	_ resources.ResultComparer = (*ConsumersIamPolicy)(nil)
)

// NewServiceIamPolicy returns the gcp:endpoints:getServiceIamPolicy lookup.
// It connects on its first Invoke.
func NewServiceIamPolicy(cfg Config) resources.Function {
	return &ServiceIamPolicy{c: &conn{cfg: cfg}}
}

// NewConsumersIamPolicy returns the gcp:endpoints:getServiceConsumersIamPolicy
// lookup. It connects on its first Invoke.
func NewConsumersIamPolicy(cfg Config) resources.Function {
	return &ConsumersIamPolicy{c: &conn{cfg: cfg}}
}

// Invoke reads the IAM policy of the managed service named by the argument
// serviceName ("NAME" or "services/NAME"). The result holds id
// ("services/NAME"), etag, policyData and serviceName as written. Bad
// arguments are *resources.AttrError; a failed call wraps a
// *resources.APIError (403 PERMISSION_DENIED for an unknown service).
func (f *ServiceIamPolicy) Invoke(ctx context.Context, args resources.Attrs) (resources.Attrs, error) {
	raw, name, err := serviceArg(args)
	if err != nil {
		return nil, err
	}
	svc, err := f.c.service(ctx)
	if err != nil {
		return nil, err
	}
	id := "services/" + name
	p, err := svc.Services.GetIamPolicy(id, policyV3()).Context(ctx).Do()
	out, err := policyResult(id, p, err)
	if err != nil {
		return nil, err
	}
	out["serviceName"] = raw
	return out, nil
}

// policyV3 asks for a policy in version 3, the one version that holds
// conditional role bindings whole: asked for version 1, IAM leaves their
// conditions out and mangles their roles.
func policyV3() *servicemanagement.GetIamPolicyRequest {
	return &servicemanagement.GetIamPolicyRequest{Options: &servicemanagement.GetPolicyOptions{RequestedPolicyVersion: 3}}
}

// policyResult turns the answer of a getIamPolicy call on id into the
// lookup's result: id, etag and policyData.
func policyResult(id string, p *servicemanagement.Policy, err error) (resources.Attrs, error) {
	if err != nil {
		return nil, fmt.Errorf("get IAM policy of %q: %w", id, apiError(err))
	}
	data, err := policyData(p)
	if err != nil {
		return nil, fmt.Errorf("get IAM policy of %q: %w", id, err)
	}
	return resources.Attrs{"id": id, "etag": p.Etag, "policyData": data}, nil
}

// Invoke reads the IAM policy of the consumer binding named by the
// arguments serviceName ("NAME" or "services/NAME") and consumerProject
// ("PROJECT", "NAME/PROJECT" or "services/NAME/consumers/PROJECT"; a service
// named there must agree with serviceName). The result holds id
// ("services/NAME/consumers/PROJECT"), etag, policyData, and serviceName and
// consumerProject as written. Errors are as for ServiceIamPolicy.Invoke.
func (f *ConsumersIamPolicy) Invoke(ctx context.Context, args resources.Attrs) (resources.Attrs, error) {
	rawService, name, err := serviceArg(args)
	if err != nil {
		return nil, err
	}
	rawConsumer, consumer, err := consumerArg(args, name)
	if err != nil {
		return nil, err
	}
	svc, err := f.c.service(ctx)
	if err != nil {
		return nil, err
	}
	id := "services/" + name + "/consumers/" + consumer
	p, err := svc.Services.Consumers.GetIamPolicy(id, policyV3()).Context(ctx).Do()
	out, err := policyResult(id, p, err)
	if err != nil {
		return nil, err
	}
	out["serviceName"], out["consumerProject"] = rawService, rawConsumer
	return out, nil
}

// stringArg returns the string argument key, or an AttrError when it is
// missing, empty or not a string.
func stringArg(args resources.Attrs, key string) (string, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return "", &resources.AttrError{Path: []string{key}, Err: errors.New("required")}
	}
	s, ok := v.(string)
	if !ok {
		return "", &resources.AttrError{Path: []string{key}, Err: fmt.Errorf("must be a string, not %T", v)}
	}
	if s == "" {
		return "", &resources.AttrError{Path: []string{key}, Err: errors.New("must not be empty")}
	}
	return s, nil
}

// serviceArg returns serviceName as written and the bare service name.
func serviceArg(args resources.Attrs) (raw, name string, err error) {
	raw, err = stringArg(args, "serviceName")
	if err != nil {
		return "", "", err
	}
	name = strings.TrimPrefix(raw, "services/")
	if name == "" || strings.Contains(name, "/") {
		return "", "", &resources.AttrError{Path: []string{"serviceName"},
			Err: fmt.Errorf("%q is not a service name: want NAME or services/NAME", raw)}
	}
	return raw, name, nil
}

// consumerArg returns consumerProject as written and the bare consumer
// project, checking that a service named in it is service.
func consumerArg(args resources.Attrs, service string) (raw, consumer string, err error) {
	raw, err = stringArg(args, "consumerProject")
	if err != nil {
		return "", "", err
	}
	bad := func(format string, a ...any) error {
		return &resources.AttrError{Path: []string{"consumerProject"}, Err: fmt.Errorf(format, a...)}
	}
	parts := strings.Split(raw, "/")
	var inService string
	switch {
	case len(parts) == 1:
		consumer = parts[0]
	case len(parts) == 2:
		inService, consumer = parts[0], parts[1]
	case len(parts) == 4 && parts[0] == "services" && parts[2] == "consumers":
		inService, consumer = parts[1], parts[3]
	default:
		return "", "", bad("%q is not a consumer project: want PROJECT, SERVICE/PROJECT or services/SERVICE/consumers/PROJECT", raw)
	}
	if consumer == "" || (len(parts) > 1 && inService == "") {
		return "", "", bad("%q is not a consumer project: want PROJECT, SERVICE/PROJECT or services/SERVICE/consumers/PROJECT", raw)
	}
	if inService != "" && inService != service {
		return "", "", bad("%q names service %q but serviceName is %q", raw, inService, service)
	}
	return raw, consumer, nil
}

// policyData renders the policy as the Terraform data sources do: the JSON
// of a Policy holding only auditConfigs and bindings, empty fields omitted.
// The generated types marshal in struct order (auditConfigs, bindings;
// condition, members, role), the order cloudresourcemanager's Policy has.
func policyData(p *servicemanagement.Policy) (string, error) {
	b, err := json.Marshal(&servicemanagement.Policy{AuditConfigs: p.AuditConfigs, Bindings: p.Bindings})
	if err != nil {
		return "", fmt.Errorf("encode policy data: %w", err)
	}
	return string(b), nil
}

// apiError turns a *googleapi.Error into a *resources.APIError; other errors
// (connection failures, a cancelled context) are returned unchanged.
func apiError(err error) error {
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) {
		return err
	}
	ae := &resources.APIError{Service: "gcp", Status: gerr.Code, Message: gerr.Message}
	var body struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(gerr.Body), &body) == nil {
		ae.Code = body.Error.Status
	}
	if ae.Code == "" {
		ae.Code = statusName(gerr.Code)
	}
	if ae.Message == "" {
		ae.Message = strings.TrimSpace(gerr.Body)
		if len(ae.Message) > 200 {
			ae.Message = ae.Message[:200] + "..."
		}
		if ae.Message == "" {
			ae.Message = http.StatusText(gerr.Code)
		}
	}
	return ae
}

// statusName maps an HTTP status to the google.rpc.Code name Google's front
// ends pair with it, for error bodies that do not carry one.
func statusName(httpStatus int) string {
	switch httpStatus {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusConflict:
		return "ABORTED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusNotImplemented:
		return "UNIMPLEMENTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if httpStatus >= 500 {
		return "INTERNAL"
	}
	return ""
}
