package ailanguage

import (
	"context"
	"crypto/rsa"
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

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/httpretry"
)

// Bounds of the local files the OCI SDK reads whole: a config file and the
// key it names are a few kilobytes.
const (
	maxConfigFile = 1 << 20
	maxKeyFile    = 64 << 10
)

// DefaultPollInterval is the pause between two polls of an asynchronous
// operation when Config.PollInterval is zero.
const DefaultPollInterval = 2 * time.Second

// Config says where the drivers find their credentials and the API.
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
	// with the drivers' retries. Share one among the drivers of a run, its
	// Transport from httpretry.NewBaseTransport(parallelism), so that
	// connections are reused. Nil (or a nil Transport) means a transport
	// of httpretry.NewBaseTransport of the client's own.
	HTTPClient *http.Client
	// PollInterval is the pause between two polls of an asynchronous
	// operation; zero means DefaultPollInterval.
	PollInterval time.Duration
}

// Client is the official SDK's AI Language client of one driver, made on
// first use from a Config, so that a program that never touches an OCI
// resource needs no OCI configuration. It is safe for concurrent use.
type Client struct {
	cfg Config

	once sync.Once
	sdk  ailanguage.AIServiceLanguageClient // set by once; not to be used before SDK()
	err  error                              // set by once

	tags tagCache // the tenancy's tag namespaces, for CheckDefinedTags
}

// NewClient returns the client of a driver for cfg. It reads no file and
// makes no request until SDK is first called. Its errors name what failed
// (the OCI config file, a profile, the SDK's configuration), not the
// driver: the engine says which resource and type the call was for.
func NewClient(cfg Config) *Client { return &Client{cfg: cfg} }

// Config returns the configuration the client was made with.
func (c *Client) Config() Config { return c.cfg }

// PollInterval is the pause between two polls of an asynchronous operation.
func (c *Client) PollInterval() time.Duration {
	if c.cfg.PollInterval > 0 {
		return c.cfg.PollInterval
	}
	return DefaultPollInterval
}

// SDK returns the SDK client, making it on the first call. Its errors are
// configuration errors (a missing or unreadable config file or key, a
// misspelt profile): they match resources.ErrRefused, as no request can be
// sent, and every later call returns the same error.
func (c *Client) SDK() (ailanguage.AIServiceLanguageClient, error) {
	c.once.Do(func() {
		c.sdk, c.err = c.connect()
		c.err = resources.Refused(c.err)
	})
	return c.sdk, c.err
}

func (c *Client) connect() (ailanguage.AIServiceLanguageClient, error) {
	var none ailanguage.AIServiceLanguageClient
	if c.cfg.Provider != nil {
		return c.newSDK(c.cfg.Provider, "the given credentials")
	}
	file := c.cfg.ConfigFile
	if file == "" {
		file = os.Getenv("OCI_CLI_CONFIG_FILE")
	}
	if file == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return none, fmt.Errorf("locate the OCI config file: %w", err)
		}
		file = filepath.Join(home, ".oci", "config")
	}
	profile := c.cfg.Profile
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
			return none, fmt.Errorf("OCI config %q: profile %q: %w", file, profile, err)
		}
	}
	return c.newSDK(common.CustomProfileConfigProvider(file, profile), fmt.Sprintf("OCI config %q profile %q", file, profile))
}

// Account names the tenancy and region the client acts in, from its
// configuration: no request is made.
func (c *Client) Account() (string, error) {
	sdk, err := c.SDK()
	if err != nil {
		return "", err
	}
	p := sdk.ConfigurationProvider()
	if p == nil || *p == nil {
		return "", errors.New("no OCI configuration")
	}
	tenancy, err := (*p).TenancyOCID()
	if err != nil {
		return "", fmt.Errorf("OCI tenancy: %w", err)
	}
	region, err := (*p).Region()
	if err != nil {
		return "", fmt.Errorf("OCI region: %w", err)
	}
	return fmt.Sprintf("tenancy %s in %s", tenancy, region), nil
}

// newSDK makes the SDK client for provider, described by what in errors.
func (c *Client) newSDK(provider common.ConfigurationProvider, what string) (ailanguage.AIServiceLanguageClient, error) {
	var none ailanguage.AIServiceLanguageClient
	if err := checkSDKFiles(); err != nil {
		return none, err
	}
	region := c.cfg.Region
	if region == "" {
		region = os.Getenv("OCI_REGION")
	}
	if region != "" {
		provider = regionOverride{provider, region}
	}
	provider = &keyOnce{ConfigurationProvider: provider}
	sdk, err := ailanguage.NewAIServiceLanguageClientWithConfigurationProvider(provider)
	if err != nil {
		return none, fmt.Errorf("%s: %w", what, err)
	}
	if c.cfg.Host != "" {
		sdk.Host = strings.TrimRight(c.cfg.Host, "/")
	}
	// Retries are httpretry's job: turn off the SDK's own, and its circuit
	// breaker, which would otherwise open on the faults an emulator injects.
	noRetry := common.NoRetryPolicy()
	sdk.Configuration.RetryPolicy = &noRetry
	sdk.Configuration.CircuitBreaker = nil
	sdk.HTTPClient = c.httpClient()
	return sdk, nil
}

// regionOverride replaces the region of a configuration provider.
type regionOverride struct {
	common.ConfigurationProvider
	region string
}

func (p regionOverride) Region() (string, error) { return p.region, nil }

// keyOnce parses the private key once per run. The SDK's file provider
// parses its PEM again for every request it signs, which cost a sixth of
// an apply's CPU.
type keyOnce struct {
	common.ConfigurationProvider
	once sync.Once
	key  *rsa.PrivateKey
	err  error
}

func (p *keyOnce) PrivateRSAKey() (*rsa.PrivateKey, error) {
	p.once.Do(func() { p.key, p.err = p.ConfigurationProvider.PrivateRSAKey() })
	return p.key, p.err
}

// attemptTimeout bounds one HTTP attempt. It is not an http.Client
// Timeout, which would bound the retries too and end them long before the
// operation's deadline.
const attemptTimeout = 5 * time.Minute

func (c *Client) httpClient() *http.Client {
	hc := &http.Client{}
	if c.cfg.HTTPClient != nil {
		cp := *c.cfg.HTTPClient
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
// writing. So the SDK gets a context that never ends (Ctx), carrying the
// caller's, which callerContext puts back on each HTTP request: the request
// still ends with the caller's context, as an error the SDK's goroutine
// returns.
type callerCtxKey struct{}

// Ctx is the context to give the SDK for a call made with ctx: one that
// never ends, carrying ctx, which ends the call's HTTP requests.
func Ctx(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), callerCtxKey{}, ctx)
}

// callerContext sends each request with the caller's context of Ctx,
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

// WithDefaultTimeout returns ctx with a deadline of d from now when it has
// none (the default of options.customTimeouts), and its cancel function.
func WithDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
