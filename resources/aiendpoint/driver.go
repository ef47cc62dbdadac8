package aiendpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"reconcile/resources"
	"reconcile/resources/httpretry"
)

// DefaultTimeout bounds a create, update or delete, including the wait for
// the endpoint to settle, when the context carries no deadline. It is the
// default of options.customTimeouts, as in the Terraform provider; the
// engine passes a custom timeout as the context's deadline.
const DefaultTimeout = 20 * time.Minute

const defaultPollInterval = 2 * time.Second

// Bounds of the local files the OCI SDK reads whole: a config file and the
// key it names are a few kilobytes.
const (
	maxConfigFile = 1 << 20
	maxKeyFile    = 64 << 10
)

// Config says where the driver finds its credentials and the API.
type Config struct {
	// ConfigFile is the OCI config file; empty means $OCI_CLI_CONFIG_FILE,
	// else ~/.oci/config.
	ConfigFile string
	// Profile is the profile of ConfigFile; empty means $OCI_CLI_PROFILE,
	// else DEFAULT.
	Profile string
	// Provider, when set, supplies the credentials instead of ConfigFile
	// and Profile, so that a key need not be written to disk (an emulator's
	// credentials fetched over HTTP).
	Provider common.ConfigurationProvider
	// Host overrides the service's scheme and host (no path), for example an
	// emulator's URL. Empty means the regional endpoint.
	Host string
	// Region overrides the profile's region; empty means $OCI_REGION, else
	// the profile's.
	Region string
	// HTTPClient, when set, performs the requests; its Transport is wrapped
	// with the driver's retries. Share one among the drivers of a run, its
	// Transport from httpretry.NewBaseTransport(parallelism), so that
	// connections are reused. Nil (or a nil Transport) means a transport
	// of httpretry.NewBaseTransport of the driver's own.
	HTTPClient *http.Client
	// PollInterval is the pause between two polls of an asynchronous
	// operation; zero means 2s.
	PollInterval time.Duration
}

// Token is the type token of the resources Driver manages, as the schemas
// name it.
const Token = "oci:AiLanguage:Endpoint"

// Driver manages oci:AiLanguage:Endpoint resources through the official OCI
// Go SDK. It connects on first use, so that a program that never touches an
// OCI resource needs no OCI configuration. It is safe for concurrent use.
type Driver struct {
	cfg Config
	// pageLimit is how many endpoints a ListEndpoints page of ReadMany
	// asks for; 0 means listPageLimit. Tests lower it.
	pageLimit int

	once   sync.Once
	client ailanguage.AIServiceLanguageClient // set by once; not to be used before sdk()
	err    error                              // set by once
}

var (
	_ resources.Driver     = (*Driver)(nil)
	_ resources.Normalizer = (*Driver)(nil)
	_ resources.VendorKeys = (*Driver)(nil)
	_ resources.Recoverer  = (*Driver)(nil)
)

// New returns a driver for cfg. It reads no file and makes no request until
// the first call.
func New(cfg Config) *Driver { return &Driver{cfg: cfg} }

func (d *Driver) sdk() (ailanguage.AIServiceLanguageClient, error) {
	d.once.Do(func() { d.client, d.err = d.connect() })
	return d.client, d.err
}

// connect makes the SDK client. Its errors are configuration errors: they
// match resources.ErrRefused, as no request can be sent.
func (d *Driver) connect() (ailanguage.AIServiceLanguageClient, error) {
	c, err := d.connectSDK()
	return c, resources.Refused(err)
}

func (d *Driver) connectSDK() (ailanguage.AIServiceLanguageClient, error) {
	var none ailanguage.AIServiceLanguageClient
	if d.cfg.Provider != nil {
		return d.newClient(d.cfg.Provider, "the given credentials")
	}
	file := d.cfg.ConfigFile
	if file == "" {
		file = os.Getenv("OCI_CLI_CONFIG_FILE")
	}
	if file == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return none, fmt.Errorf("aiendpoint: locate the OCI config file: %w", err)
		}
		file = filepath.Join(home, ".oci", "config")
	}
	profile := d.cfg.Profile
	if profile == "" {
		profile = os.Getenv("OCI_CLI_PROFILE")
	}
	if profile == "" {
		profile = "DEFAULT"
	}
	// The SDK reads the config file and the key it names whole, and would
	// hang on a FIFO or fill memory from /dev/zero: check them first.
	if err := checkConfigFiles(file, profile); err != nil {
		return none, err
	}
	if profile != "DEFAULT" {
		// The SDK falls back to DEFAULT silently; a misspelt profile must not.
		p, _ := common.ConfigurationProviderFromFileWithProfile(file, profile, "")
		if _, err := p.TenancyOCID(); err != nil {
			return none, fmt.Errorf("aiendpoint: OCI config %q: profile %q: %w", file, profile, err)
		}
	}
	return d.newClient(common.CustomProfileConfigProvider(file, profile), fmt.Sprintf("OCI config %q profile %q", file, profile))
}

// newClient makes the SDK client for provider, described by what in errors.
func (d *Driver) newClient(provider common.ConfigurationProvider, what string) (ailanguage.AIServiceLanguageClient, error) {
	var none ailanguage.AIServiceLanguageClient
	if err := checkSDKFiles(); err != nil {
		return none, err
	}
	region := d.cfg.Region
	if region == "" {
		region = os.Getenv("OCI_REGION")
	}
	if region != "" {
		provider = regionOverride{provider, region}
	}
	c, err := ailanguage.NewAIServiceLanguageClientWithConfigurationProvider(provider)
	if err != nil {
		return none, fmt.Errorf("aiendpoint: %s: %w", what, err)
	}
	if d.cfg.Host != "" {
		c.Host = strings.TrimRight(d.cfg.Host, "/")
	}
	// Retries are httpretry's job: turn off the SDK's own, and its circuit
	// breaker, which would otherwise open on the faults an emulator injects.
	noRetry := common.NoRetryPolicy()
	c.Configuration.RetryPolicy = &noRetry
	c.Configuration.CircuitBreaker = nil
	c.HTTPClient = d.httpClient()
	return c, nil
}

// regionOverride replaces the region of a configuration provider.
type regionOverride struct {
	common.ConfigurationProvider
	region string
}

func (p regionOverride) Region() (string, error) { return p.region, nil }

// attemptTimeout bounds one HTTP attempt. It is not an http.Client
// Timeout, which would bound the retries too and end them long before the
// operation's deadline.
const attemptTimeout = 5 * time.Minute

func (d *Driver) httpClient() *http.Client {
	hc := &http.Client{}
	if d.cfg.HTTPClient != nil {
		cp := *d.cfg.HTTPClient
		hc = &cp
	}
	base := hc.Transport
	if base == nil {
		base = httpretry.NewBaseTransport(0)
	}
	hc.Transport = callerContext{&httpretry.Transport{Base: base, Retryable: retryable, Service: "oci", AttemptTimeout: attemptTimeout}}
	return hc
}

// The OCI SDK races when the context of a call ends during the call: its
// common.Retry returns the response variable that its goroutine is still
// writing. So the SDK gets a context that never ends (sdkCtx), carrying
// the caller's, which callerContext puts back on each HTTP request: the
// request still ends with the caller's context, as an error the SDK's
// goroutine returns.
type callerCtxKey struct{}

// sdkCtx is the context to give the SDK for a call made with ctx.
func sdkCtx(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), callerCtxKey{}, ctx)
}

// callerContext sends each request with the caller's context of sdkCtx,
// ended too when the request's own context ends (the http.Client's
// timeout).
type callerContext struct{ base http.RoundTripper }

func (t callerContext) RoundTrip(req *http.Request) (*http.Response, error) {
	caller, ok := req.Context().Value(callerCtxKey{}).(context.Context)
	if !ok {
		return t.base.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(caller)
	stop := context.AfterFunc(req.Context(), cancel)
	done := func() {
		stop()
		cancel()
	}
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil || resp == nil || resp.Body == nil {
		done()
		return resp, err
	}
	resp.Body = &closeFunc{ReadCloser: resp.Body, done: done}
	return resp, nil
}

// closeFunc calls done once its body is closed.
type closeFunc struct {
	io.ReadCloser
	done func()
}

func (c *closeFunc) Close() error {
	err := c.ReadCloser.Close()
	c.done()
	return err
}

// retryable retries what the OCI SDK's default policy retries: 429, 5xx
// except 501, and 409 with code IncorrectState or LockConflict.
func retryable(resp *http.Response, body []byte) bool {
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests:
		return true
	case s >= 500:
		return s != http.StatusNotImplemented
	case s == http.StatusConflict:
		var e struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(body, &e)
		return e.Code == "IncorrectState" || e.Code == "LockConflict"
	}
	return false
}

// refusal marks err with resources.Refused when it is the API's refusal of
// the request (see resources.RefusalStatus).
func refusal(err error) error {
	var ae *resources.APIError
	if errors.As(err, &ae) && resources.RefusalStatus(ae.Status) {
		return resources.Refused(err)
	}
	return err
}

// apiErr turns an SDK service error into *resources.APIError. Other errors
// (transport, context) are returned unchanged.
func apiErr(err error) error {
	var se common.ServiceError
	if errors.As(err, &se) {
		return &resources.APIError{Service: "oci", Status: se.GetHTTPStatusCode(), Code: se.GetCode(), Message: se.GetMessage()}
	}
	return err
}

// objectErr is apiErr for calls on one endpoint: a 404 also matches
// resources.ErrNotFound.
func objectErr(err error) error {
	err = apiErr(err)
	var ae *resources.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return fmt.Errorf("%w: %w", resources.ErrNotFound, ae)
	}
	return err
}

func hasStatus(err error, status int) bool {
	var ae *resources.APIError
	return errors.As(err, &ae) && ae.Status == status
}

// Read returns the endpoint's inputs and outputs. It returns an error
// matching resources.ErrNotFound when the endpoint does not exist or is
// DELETED.
func (d *Driver) Read(ctx context.Context, id string) (resources.Attrs, error) {
	c, err := d.sdk()
	if err != nil {
		return nil, err
	}
	ep, _, err := get(ctx, c, id)
	if err == nil && ep.LifecycleState == ailanguage.EndpointLifecycleStateDeleted {
		err = fmt.Errorf("endpoint is DELETED: %w", resources.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("aiendpoint: read %q: %w", id, err)
	}
	return toAttrs(ep), nil
}

// get returns the endpoint and its etag.
func get(ctx context.Context, c ailanguage.AIServiceLanguageClient, id string) (ailanguage.Endpoint, string, error) {
	resp, err := c.GetEndpoint(sdkCtx(ctx), ailanguage.GetEndpointRequest{EndpointId: &id})
	if err != nil {
		return ailanguage.Endpoint{}, "", objectErr(err)
	}
	return resp.Endpoint, deref(resp.Etag), nil
}

// Create creates the endpoint, deploying its model, and waits until it is
// ACTIVE, reporting progress. The context's idempotency token, when set, is
// sent as opc-retry-token so that a repeated create returns the first
// endpoint.
//
// Its errors say what it made. Bad inputs (*resources.AttrError), a bad
// OCI configuration, and a CreateEndpoint the API refused (4xx but 408,
// 409 and 429) match resources.ErrRefused: nothing was made. An endpoint
// that ends FAILED (its lifecycleDetails in the error), whose work request
// fails, or that is deleted during the wait, comes back with its id and an
// error matching resources.ErrUnusable. A wait that times out, is cancelled
// or cannot reach the API returns the id with an error matching neither:
// how the create ends is unknown.
func (d *Driver) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	details, err := createDetails(d.Normalize(want))
	if err != nil {
		return "", nil, fmt.Errorf("aiendpoint: create: %w", err)
	}
	c, err := d.sdk()
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	start := time.Now()
	req := ailanguage.CreateEndpointRequest{CreateEndpointDetails: details}
	if tok := retryToken(resources.IdempotencyToken(ctx)); tok != "" {
		req.OpcRetryToken = &tok
	}
	resp, err := c.CreateEndpoint(sdkCtx(ctx), req)
	if err != nil {
		return "", nil, fmt.Errorf("aiendpoint: create: %w", refusal(apiErr(err)))
	}
	id := deref(resp.Id)
	ep, err := d.waitFor(ctx, c, id, waitSpec{target: ailanguage.EndpointLifecycleStateActive, workRequest: deref(resp.OpcWorkRequestId)}, start)
	if err != nil {
		var got resources.Attrs
		if ep.Id != nil {
			got = toAttrs(ep)
		}
		return id, got, fmt.Errorf("aiendpoint: create %q: %w", id, err)
	}
	return id, toAttrs(ep), nil
}

// RetryTokenLifetime is how long OCI remembers an opc-retry-token. Recover
// does not replay a create older than this, less a margin: the replay would
// make a second endpoint instead of returning the first.
const RetryTokenLifetime = 24 * time.Hour

// Recover finds the endpoint that an interrupted Create with req.Token made,
// by replaying the create: the same CreateEndpoint body with the same
// opc-retry-token, to which OCI answers with its first answer (the same
// endpoint id) rather than creating another. Recover then waits for the
// endpoint to become ACTIVE, as Create does, and returns it; an endpoint
// that ends FAILED comes back with its id and an error matching
// resources.ErrUnusable; a wait that does not end comes back with the id
// and an error matching neither, as from Create.
//
// If the first create never reached OCI, the replay creates the endpoint
// now. That is what the interrupted apply was asked to do, and the endpoint
// is adopted into state either way: nothing is left that nobody manages.
// When OCI refuses the replay (400, 404) the first create, which had the
// same body, made nothing either, and neither did the replay: Recover
// returns no id and no error. The same goes for a token whose endpoint was
// deleted since (409 InvalidatedRetryToken). Other refusals of the replay
// (401, 403: the credentials or permissions changed since) say nothing of
// the first create: Recover returns them as errors, it cannot tell.
//
// Recover cannot replay a create whose inputs held a secret (state keeps
// only a digest of it) nor one older than RetryTokenLifetime; it says so.
func (d *Driver) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	switch {
	case len(req.Hidden) > 0:
		return "", nil, fmt.Errorf("aiendpoint: cannot replay the create: its inputs %s were secret, and state keeps no secret value", strings.Join(req.Hidden, ", "))
	case req.Token == "":
		return "", nil, errors.New("aiendpoint: cannot replay the create: it has no retry token")
	case !req.Time.IsZero() && time.Since(req.Time) > RetryTokenLifetime-time.Hour:
		return "", nil, fmt.Errorf("aiendpoint: cannot replay the create of %s: OCI keeps retry tokens for %s, so a replay could make a second endpoint",
			req.Time.UTC().Format(time.RFC3339), RetryTokenLifetime)
	}
	id, got, err := d.Create(resources.WithIdempotencyToken(ctx, req.Token), req.Want)
	var ae *resources.APIError
	if id == "" && errors.As(err, &ae) {
		switch {
		case ae.Status == http.StatusConflict && ae.Code == "InvalidatedRetryToken",
			ae.Status == http.StatusBadRequest, ae.Status == http.StatusNotFound:
			return "", nil, nil
		}
	}
	if id == "" && err != nil {
		return "", nil, fmt.Errorf("aiendpoint: replay the create: %w", err)
	}
	return id, got, err
}

// retryToken fits the engine's token to OCI's opc-retry-token (at most 64
// characters of letters, digits, '-' and '_'), hashing it when it does not.
func retryToken(tok string) string {
	ok := len(tok) <= 64
	for _, r := range tok {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			ok = false
		}
	}
	if ok {
		return tok
	}
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// Update changes the endpoint in place: a new compartmentId through
// ChangeEndpointCompartment, the other inputs through one partial
// UpdateEndpoint guarded by the current etag (re-read once on 412), and
// waits until the endpoint is ACTIVE again. A field is sent when want
// differs from prior or from the live endpoint, so drift is repaired too.
// It returns an error matching resources.ErrNotFound when the endpoint is
// gone.
func (d *Driver) Update(ctx context.Context, id string, prior, want resources.Attrs) (resources.Attrs, error) {
	want, prior = d.Normalize(want), d.Normalize(prior)
	if _, err := createDetails(want); err != nil {
		return nil, fmt.Errorf("aiendpoint: update %q: %w", id, err)
	}
	c, err := d.sdk()
	if err != nil {
		return nil, err
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	ep, err := d.update(ctx, c, id, prior, want)
	if err != nil {
		return nil, fmt.Errorf("aiendpoint: update %q: %w", id, err)
	}
	return toAttrs(ep), nil
}

func (d *Driver) update(ctx context.Context, c ailanguage.AIServiceLanguageClient, id string, prior, want resources.Attrs) (ailanguage.Endpoint, error) {
	start := time.Now()
	ep, etag, err := d.settled(ctx, c, id, start)
	if err != nil {
		return ep, err
	}
	// Tags OCI added by itself (Oracle-Tags) are not a reason to send
	// definedTags; when definedTags are sent anyway, OCI keeps them.
	live := d.Normalize(withoutVendorTags(toAttrs(ep), want))
	changed := func(k string) bool {
		return !resources.Equal(want[k], prior[k]) || !resources.Equal(want[k], live[k])
	}

	if comp, _ := want[attrCompartmentID].(string); comp != deref(ep.CompartmentId) {
		err := d.withIfMatch(ctx, c, id, etag, func(ifMatch *string) error {
			_, err := c.ChangeEndpointCompartment(sdkCtx(ctx), ailanguage.ChangeEndpointCompartmentRequest{
				EndpointId:                       &id,
				ChangeEndpointCompartmentDetails: ailanguage.ChangeEndpointCompartmentDetails{CompartmentId: &comp},
				IfMatch:                          ifMatch,
			})
			return err
		})
		if err != nil {
			return ep, fmt.Errorf("change compartment to %q: %w", comp, err)
		}
		// No work request: the endpoint's lifecycle shows the progress.
		if ep, err = d.waitFor(ctx, c, id, waitSpec{target: ailanguage.EndpointLifecycleStateActive}, start); err != nil {
			return ep, fmt.Errorf("change compartment to %q: %w", comp, err)
		}
		if ep, etag, err = get(ctx, c, id); err != nil {
			return ep, err
		}
	}

	details, some, err := updateDetails(want, changed)
	if err != nil || !some {
		return ep, err
	}
	var wr string
	err = d.withIfMatch(ctx, c, id, etag, func(ifMatch *string) error {
		resp, err := c.UpdateEndpoint(sdkCtx(ctx), ailanguage.UpdateEndpointRequest{EndpointId: &id, UpdateEndpointDetails: details, IfMatch: ifMatch})
		wr = deref(resp.OpcWorkRequestId)
		return err
	})
	if err != nil {
		return ep, err
	}
	return d.waitFor(ctx, c, id, waitSpec{target: ailanguage.EndpointLifecycleStateActive, workRequest: wr}, start)
}

// settled reads the endpoint, first waiting out a create or update in
// progress, and returns it with its etag.
func (d *Driver) settled(ctx context.Context, c ailanguage.AIServiceLanguageClient, id string, start time.Time) (ailanguage.Endpoint, string, error) {
	ep, etag, err := get(ctx, c, id)
	if err != nil {
		return ep, etag, err
	}
	switch ep.LifecycleState {
	case ailanguage.EndpointLifecycleStateDeleted, ailanguage.EndpointLifecycleStateDeleting:
		return ep, etag, fmt.Errorf("endpoint is %s: %w", ep.LifecycleState, resources.ErrNotFound)
	case ailanguage.EndpointLifecycleStateCreating, ailanguage.EndpointLifecycleStateUpdating:
		if ep, err = d.waitFor(ctx, c, id, waitSpec{target: ailanguage.EndpointLifecycleStateActive}, start); err != nil {
			return ep, "", err
		}
		return get(ctx, c, id)
	}
	return ep, etag, nil
}

// withIfMatch runs call with the etag as if-match; on 412 it reads the
// current etag and runs call once more. Errors come back converted.
func (d *Driver) withIfMatch(ctx context.Context, c ailanguage.AIServiceLanguageClient, id, etag string, call func(ifMatch *string) error) error {
	ptr := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	err := objectErr(call(ptr(etag)))
	if hasStatus(err, http.StatusPreconditionFailed) {
		_, fresh, gerr := get(ctx, c, id)
		if gerr != nil {
			return gerr
		}
		err = objectErr(call(ptr(fresh)))
	}
	return err
}

// Delete deletes the endpoint and waits until it is DELETED or gone. An
// endpoint that is already gone is not an error.
func (d *Driver) Delete(ctx context.Context, id string) error {
	c, err := d.sdk()
	if err != nil {
		return err
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	start := time.Now()
	resp, err := c.DeleteEndpoint(sdkCtx(ctx), ailanguage.DeleteEndpointRequest{EndpointId: &id})
	if err = objectErr(err); errors.Is(err, resources.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("aiendpoint: delete %q: %w", id, err)
	}
	if _, err := d.waitFor(ctx, c, id, waitSpec{target: ailanguage.EndpointLifecycleStateDeleted, workRequest: deref(resp.OpcWorkRequestId)}, start); err != nil {
		return fmt.Errorf("aiendpoint: delete %q: %w", id, err)
	}
	return nil
}

func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}

// waitSpec says what waitFor waits for.
type waitSpec struct {
	target      ailanguage.EndpointLifecycleStateEnum
	workRequest string // optional; its percentage is reported and it must succeed
}

// waitFor polls the work request (if any) and the endpoint until the
// endpoint reaches the target state (for DELETED, also when it is gone),
// reporting "state X, work request N% complete" on each poll. It fails when
// the endpoint ends FAILED (with its lifecycleDetails), when the work
// request fails or is cancelled, or when the endpoint is being deleted
// while waiting for another state: those errors match resources.ErrUnusable.
// It fails too when ctx ends (saying in which state and after how long) or
// a poll fails, with errors that do not. It returns the last endpoint seen.
func (d *Driver) waitFor(ctx context.Context, c ailanguage.AIServiceLanguageClient, id string, w waitSpec, start time.Time) (ailanguage.Endpoint, error) {
	interval := d.cfg.PollInterval
	if interval <= 0 {
		interval = defaultPollInterval
	}
	var last ailanguage.Endpoint
	state, percent := "unknown", -1.0
	timedOut := func() error {
		what := "timed out"
		if errors.Is(ctx.Err(), context.Canceled) {
			what = "cancelled"
		}
		at := "state " + state
		if percent >= 0 {
			at += fmt.Sprintf(", work request %.0f%% complete", percent)
		}
		return fmt.Errorf("%s after %s waiting for the endpoint to become %s (still %s): %w",
			what, time.Since(start).Round(time.Millisecond), w.target, at, ctx.Err())
	}
	for {
		var wrStatus ailanguage.OperationStatusEnum
		if w.workRequest != "" {
			resp, err := c.GetWorkRequest(sdkCtx(ctx), ailanguage.GetWorkRequestRequest{WorkRequestId: &w.workRequest})
			if ctx.Err() != nil {
				return last, timedOut()
			}
			if err != nil {
				return last, fmt.Errorf("get work request %q: %w", w.workRequest, apiErr(err))
			}
			wrStatus = resp.Status
			if resp.PercentComplete != nil {
				percent = float64(*resp.PercentComplete)
			}
		}
		ep, _, err := get(ctx, c, id)
		if ctx.Err() != nil {
			return last, timedOut()
		}
		if errors.Is(err, resources.ErrNotFound) && w.target == ailanguage.EndpointLifecycleStateDeleted {
			return last, nil
		}
		if err != nil {
			return last, err
		}
		last, state = ep, string(ep.LifecycleState)
		if percent >= 0 {
			resources.Progress(ctx, "state %s, work request %.0f%% complete", state, percent)
		} else {
			resources.Progress(ctx, "state %s", state)
		}

		switch {
		case ep.LifecycleState == ailanguage.EndpointLifecycleStateFailed && w.target != ailanguage.EndpointLifecycleStateFailed:
			details := deref(ep.LifecycleDetails)
			if details == "" {
				details = "no lifecycleDetails given"
			}
			return ep, resources.Unusable(fmt.Errorf("endpoint is FAILED: %s", details))
		case wrStatus == ailanguage.OperationStatusFailed || wrStatus == ailanguage.OperationStatusCanceled:
			return ep, resources.Unusable(fmt.Errorf("work request %s %s: %s", w.workRequest, wrStatus, workRequestErrors(ctx, c, w.workRequest)))
		case ep.LifecycleState == w.target && (wrStatus == "" || wrStatus == ailanguage.OperationStatusSucceeded || w.target == ailanguage.EndpointLifecycleStateDeleted):
			return ep, nil
		case w.target != ailanguage.EndpointLifecycleStateDeleted &&
			(ep.LifecycleState == ailanguage.EndpointLifecycleStateDeleting || ep.LifecycleState == ailanguage.EndpointLifecycleStateDeleted):
			return ep, resources.Unusable(fmt.Errorf("endpoint is %s while waiting for %s", ep.LifecycleState, w.target))
		}

		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return last, timedOut()
		case <-t.C:
		}
	}
}

// workRequestErrors summarises a failed work request's errors.
func workRequestErrors(ctx context.Context, c ailanguage.AIServiceLanguageClient, id string) string {
	resp, err := c.ListWorkRequestErrors(sdkCtx(ctx), ailanguage.ListWorkRequestErrorsRequest{WorkRequestId: &id})
	if err != nil {
		return fmt.Sprintf("listing its errors: %v", apiErr(err))
	}
	var msgs []string
	for _, e := range resp.Items {
		msgs = append(msgs, deref(e.Code)+": "+deref(e.Message))
	}
	if len(msgs) == 0 {
		return "no errors reported"
	}
	return strings.Join(msgs, "; ")
}
