package restrictionpolicy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/httpretry"
)

// DefaultSite is the Datadog site used when neither Config.Site nor DD_SITE
// names one.
const DefaultSite = "datadoghq.com"

// Config says how to reach the Datadog API. Key values are secrets: nothing
// in this package logs them or puts them in an error.
type Config struct {
	// BaseURL overrides the API base URL (scheme and host, e.g. an
	// emulator's URL). Empty means "https://api." + Site.
	BaseURL string
	// APIKey and AppKey are sent as DD-API-KEY and DD-APPLICATION-KEY. Both
	// are required; their absence, or a control character in one (a newline
	// left by the file it was read from), is reported at the first call.
	APIKey, AppKey string
	// Site is the Datadog site, e.g. "datadoghq.eu"; empty means DefaultSite.
	Site string
	// HTTPClient supplies the base transport and timeout. Retries are
	// layered on top of its transport. Share one among the clients of a
	// run, its Transport from httpretry.NewBaseTransport(parallelism), so
	// that connections are reused. Nil (or a nil Transport) means a
	// transport of httpretry.NewBaseTransport of the client's own.
	HTTPClient *http.Client
	// Version is reconcile's version, sent in User-Agent as
	// "github.com/reconcile-dev/reconcile/<Version>"; empty means "dev".
	Version string
}

// ConfigFromEnv reads the Datadog conventions: DD_API_KEY, DD_APP_KEY and
// DD_SITE. Missing keys are not an error here but at the first call, so that
// a spec without Datadog resources needs no keys.
func ConfigFromEnv() Config {
	return Config{
		APIKey: os.Getenv("DD_API_KEY"),
		AppKey: os.Getenv("DD_APP_KEY"),
		Site:   os.Getenv("DD_SITE"),
	}
}

// Binding grants a relation (viewer, editor, ...) on a resource to a set of
// principals ("role:UUID", "team:UUID", "user:UUID", "org:UUID").
type Binding struct {
	Relation   string   `json:"relation"`
	Principals []string `json:"principals"` // never nil on the wire
}

// Policy is the restriction policy of one resource. A resource without a
// policy has one with no bindings.
type Policy struct {
	ResourceID string // "<type>:<id>", the response's data.id
	Bindings   []Binding
}

// User is the caller of the API, from GET /api/v2/current_user.
type User struct {
	ID, Email, Handle, Name string
	OrgID                   string   // data.relationships.org.data.id, the org's UUID
	RoleIDs                 []string // data.relationships.roles.data[].id, sorted
}

// Client makes the Datadog calls this package needs. It is safe for
// concurrent use.
type Client struct {
	cfg Config
	hc  *http.Client

	mu    sync.Mutex
	me    *User    // the current user, once read
	teams []string // its teams, once read (teamsRead)
	// teamsRead is set once the teams were read.
	teamsRead bool
}

// NewClient returns a client for cfg. It does not check cfg: a missing or
// malformed key or a bad site is reported by the first call, as an error
// matching resources.ErrRefused (nothing is sent).
func NewClient(cfg Config) *Client {
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		*hc = *cfg.HTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = httpretry.NewBaseTransport(0)
	}
	// httpretry retries 429 (waiting at least X-RateLimit-Reset), 5xx and
	// connection errors. Every call here is idempotent: POST is an upsert.
	hc.Transport = &httpretry.Transport{Base: base, Service: "datadog", AttemptTimeout: attemptTimeout}
	return &Client{cfg: cfg, hc: hc}
}

// attemptTimeout bounds one HTTP attempt, which is then retried; the
// context's deadline bounds the call.
const attemptTimeout = 2 * time.Minute

// baseURL checks the configuration and returns the API base URL. A
// configuration error names what is wrong (never a key's value) and
// matches resources.ErrRefused: no request can be sent.
func (c *Client) baseURL() (string, error) {
	u, err := c.checkConfig()
	return u, resources.Refused(err)
}

func (c *Client) checkConfig() (string, error) {
	var missing []string
	if c.cfg.APIKey == "" {
		missing = append(missing, "DD_API_KEY")
	}
	if c.cfg.AppKey == "" {
		missing = append(missing, "DD_APP_KEY")
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("datadog credentials: %s not set (the Datadog API needs both DD_API_KEY and DD_APP_KEY)", strings.Join(missing, " and "))
	}
	for _, k := range []struct{ name, value string }{{"DD_API_KEY", c.cfg.APIKey}, {"DD_APP_KEY", c.cfg.AppKey}} {
		if what := controlChar(k.value); what != "" {
			return "", fmt.Errorf("datadog credentials: %s holds %s, which cannot be sent in a header (was it read from a file with a final newline?)", k.name, what)
		}
	}
	if c.cfg.BaseURL != "" {
		u, err := url.Parse(c.cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("datadog base URL %q: want scheme://host", c.cfg.BaseURL)
		}
		return strings.TrimSuffix(c.cfg.BaseURL, "/"), nil
	}
	site := c.cfg.Site
	if site == "" {
		site = DefaultSite
	}
	if !isHostname(site) {
		return "", fmt.Errorf("DD_SITE %q: want a Datadog site such as %q or %q", site, DefaultSite, "datadoghq.eu")
	}
	return "https://api." + site, nil
}

// controlChar describes the first control character of s, "" when there is
// none. It never quotes s, which is a secret.
func controlChar(s string) string {
	for _, r := range s {
		switch {
		case r == '\n':
			return "a newline"
		case r == '\r':
			return "a carriage return"
		case r == '\t':
			return "a tab"
		case r < 0x20 || r == 0x7f:
			return fmt.Sprintf("the control character U+%04X", r)
		}
	}
	return ""
}

// isHostname reports whether s looks like a DNS name with at least one dot.
// Sites are not checked against a list, so that new Datadog sites work.
func isHostname(s string) bool {
	if !strings.Contains(s, ".") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// do sends one request and decodes a 2xx JSON body into out (when not nil).
// A non-2xx answer is a *resources.APIError.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	base, err := c.baseURL()
	if err != nil {
		return err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return err
	}
	version := c.cfg.Version
	if version == "" {
		version = "dev"
	}
	req.Header.Set("DD-API-KEY", c.cfg.APIKey)
	req.Header.Set("DD-APPLICATION-KEY", c.cfg.AppKey)
	req.Header.Set("User-Agent", "github.com/reconcile-dev/reconcile/"+version)
	if method == http.MethodDelete {
		req.Header.Set("Accept", "*/*")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var te *httpretry.ThrottledError
		if errors.As(err, &te) {
			return te // says all; the URL *url.Error adds is noise
		}
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	if len(raw) > maxResponse {
		return fmt.Errorf("read response: %s %s answered more than %d bytes", method, path, maxResponse)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return apiError(resp.StatusCode, raw)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}

// maxResponse bounds the answers the client decodes: a restriction policy
// or a user is a few kilobytes.
const maxResponse = 8 << 20

// apiError decodes Datadog's error body, {"errors": ["..."]} (or, on some
// endpoints, JSON:API error objects), into a *resources.APIError.
func apiError(status int, raw []byte) error {
	var body struct {
		Errors []json.RawMessage `json:"errors"`
	}
	var msgs []string
	if json.Unmarshal(raw, &body) == nil {
		for _, e := range body.Errors {
			var s string
			if json.Unmarshal(e, &s) == nil {
				msgs = append(msgs, s)
				continue
			}
			var obj struct{ Title, Detail string }
			if json.Unmarshal(e, &obj) == nil {
				switch {
				case obj.Detail != "":
					msgs = append(msgs, obj.Detail)
				case obj.Title != "":
					msgs = append(msgs, obj.Title)
				}
			}
		}
	}
	msg := strings.Join(msgs, "; ")
	if msg == "" {
		msg = strings.TrimSpace(string(raw))
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &resources.APIError{Service: "datadog", Status: status, Message: msg}
}

// isNotFound reports whether err is a 404 from the API.
func isNotFound(err error) bool {
	var ae *resources.APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// policyDoc is the JSON:API document of a restriction policy, as sent and
// received.
type policyDoc struct {
	Data struct {
		ID         string `json:"id"`
		Type       string `json:"type"`
		Attributes struct {
			Bindings []Binding `json:"bindings"`
		} `json:"attributes"`
	} `json:"data"`
}

func policyPath(resourceID string) string {
	return "/api/v2/restriction_policy/" + url.PathEscape(resourceID)
}

func (d *policyDoc) policy(resourceID string) Policy {
	p := Policy{ResourceID: d.Data.ID, Bindings: d.Data.Attributes.Bindings}
	if p.ResourceID == "" {
		p.ResourceID = resourceID
	}
	return p
}

// GetRestrictionPolicy reads the policy of resourceID ("<type>:<id>"). A
// resource without a policy answers 200 with no bindings, so this returns a
// Policy with no bindings, not an error.
func (c *Client) GetRestrictionPolicy(ctx context.Context, resourceID string) (Policy, error) {
	var doc policyDoc
	if err := c.do(ctx, http.MethodGet, policyPath(resourceID), nil, &doc); err != nil {
		return Policy{}, err
	}
	return doc.policy(resourceID), nil
}

// UpdateRestrictionPolicy replaces the whole policy of resourceID with
// bindings (POST, an upsert), without allow_self_lockout, and returns the
// stored policy.
func (c *Client) UpdateRestrictionPolicy(ctx context.Context, resourceID string, bindings []Binding) (Policy, error) {
	var in policyDoc
	in.Data.ID = resourceID
	in.Data.Type = "restriction_policy"
	in.Data.Attributes.Bindings = make([]Binding, len(bindings)) // [] rather than null
	for i, b := range bindings {
		if b.Principals == nil {
			b.Principals = []string{}
		}
		in.Data.Attributes.Bindings[i] = b
	}
	var out policyDoc
	if err := c.do(ctx, http.MethodPost, policyPath(resourceID), &in, &out); err != nil {
		return Policy{}, err
	}
	return out.policy(resourceID), nil
}

// DeleteRestrictionPolicy removes the policy of resourceID, which reverts to
// unrestricted access. The API answers 204 whether or not a policy existed.
func (c *Client) DeleteRestrictionPolicy(ctx context.Context, resourceID string) error {
	return c.do(ctx, http.MethodDelete, policyPath(resourceID), nil, nil)
}

// Account names the org and site the client's keys act in: "org ORG_ID
// at SITE".
func (c *Client) Account(ctx context.Context) (string, error) {
	u, err := c.GetCurrentUser(ctx)
	if err != nil {
		return "", fmt.Errorf("read the current user: %w", err)
	}
	if u.OrgID == "" {
		return "", errors.New("the current user of the Datadog keys has no org")
	}
	site := c.cfg.Site
	if site == "" {
		site = DefaultSite
	}
	return fmt.Sprintf("org %s at %s", u.OrgID, site), nil
}

// GetCurrentUser returns the user owning the application key, with the
// UUID of its org and its roles (the relationships of GET
// /api/v2/current_user). The user is read once per client: it is who the
// keys belong to, which does not change while reconcile runs.
func (c *Client) GetCurrentUser(ctx context.Context) (User, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.me != nil {
		return *c.me, nil
	}
	var doc struct {
		Data struct {
			ID         string `json:"id"`
			Attributes struct {
				Email  string `json:"email"`
				Handle string `json:"handle"`
				Name   string `json:"name"`
			} `json:"attributes"`
			Relationships struct {
				Org struct {
					Data struct {
						ID string `json:"id"`
					} `json:"data"`
				} `json:"org"`
				Roles struct {
					Data []struct {
						ID   string `json:"id"`
						Type string `json:"type"`
					} `json:"data"`
				} `json:"roles"`
			} `json:"relationships"`
		} `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/v2/current_user", nil, &doc); err != nil {
		return User{}, err
	}
	d := doc.Data
	u := User{
		ID:     d.ID,
		Email:  d.Attributes.Email,
		Handle: d.Attributes.Handle,
		Name:   d.Attributes.Name,
		OrgID:  d.Relationships.Org.Data.ID,
	}
	for _, r := range d.Relationships.Roles.Data {
		if r.ID != "" && (r.Type == "" || r.Type == "roles") {
			u.RoleIDs = append(u.RoleIDs, r.ID)
		}
	}
	slices.Sort(u.RoleIDs)
	c.me = &u
	return u, nil
}

// CurrentUserTeams returns the ids of the teams of the user owning the
// application key, sorted, from GET /api/v2/users/{id}/memberships (a
// UserTeamsResponse: each team_memberships item names its team in
// relationships.team.data), as current_user names no team. They are read
// once per client.
func (c *Client) CurrentUserTeams(ctx context.Context) ([]string, error) {
	u, err := c.GetCurrentUser(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.teamsRead {
		return c.teams, nil
	}
	teams, err := c.userTeams(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	c.teams, c.teamsRead = teams, true
	return teams, nil
}

// userTeams reads the teams of the user userID.
func (c *Client) userTeams(ctx context.Context, userID string) ([]string, error) {
	if userID == "" {
		return nil, nil
	}
	var doc struct {
		Data []struct {
			Relationships struct {
				Team struct {
					Data struct {
						ID string `json:"id"`
					} `json:"data"`
				} `json:"team"`
			} `json:"relationships"`
		} `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/v2/users/"+url.PathEscape(userID)+"/memberships", nil, &doc); err != nil {
		return nil, err
	}
	var out []string
	for _, m := range doc.Data {
		if id := m.Relationships.Team.Data.ID; id != "" {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
