package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/aiendpoint"
	"github.com/reconcile-dev/reconcile/resources/ailanguage"
	"github.com/reconcile-dev/reconcile/resources/aimodel"
	"github.com/reconcile-dev/reconcile/resources/aiproject"
	"github.com/reconcile-dev/reconcile/resources/emulator/server"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
	"github.com/reconcile-dev/reconcile/resources/httpretry"
	"github.com/reconcile-dev/reconcile/resources/restrictionpolicy"
)

// builtinEmulatorDir is where --emulator keeps the in-process emulator's data.
const builtinEmulatorDir = ".reconcile/emulator"

// target says where the drivers send their calls and with what credentials.
type target struct {
	ociConfigFile string                       // "" means the user's ~/.oci/config
	ociProvider   common.ConfigurationProvider // in-memory credentials, instead of a file
	ociHost       string
	gcpEndpoint   string
	gcpToken      string
	gcpTokenInfo  string // "" for Google's
	ddBaseURL     string
	ddAPIKey      string
	ddAppKey      string
}

// registry builds the drivers for every supported type, pointed at the real
// clouds or, with --emulator, at an emulator. The drivers and lookups of
// one vendor share one HTTP transport, which keeps as many idle
// connections per host as calls run at once (--parallelism), so that
// calls reuse connections. The cleanup closes those connections, stops an
// in-process emulator and removes temporary credential files.
func (c *cli) registry() (resources.Registry, func(), error) {
	t, cleanup, err := c.target()
	if err != nil {
		return resources.Registry{}, func() {}, err
	}
	var transports []*http.Transport
	client := func() *http.Client {
		tr := httpretry.NewBaseTransport(c.g.parallelism)
		transports = append(transports, tr)
		return &http.Client{Transport: tr}
	}
	dd := restrictionpolicy.ConfigFromEnv()
	dd.Version = version
	dd.HTTPClient = client()
	if t.ddBaseURL != "" {
		dd.BaseURL, dd.APIKey, dd.AppKey = t.ddBaseURL, t.ddAPIKey, t.ddAppKey
	}
	gcp := endpointsiam.Config{Endpoint: t.gcpEndpoint, AccessToken: t.gcpToken, TokenInfoURL: t.gcpTokenInfo, HTTPClient: client()}
	if gcp.AccessToken == "" {
		gcp.AccessToken = os.Getenv("GOOGLE_OAUTH_ACCESS_TOKEN")
	}
	ociCfg := ailanguage.Config{ConfigFile: t.ociConfigFile, Provider: t.ociProvider, Host: t.ociHost, HTTPClient: client()}
	iam := endpointsiam.NewClient(gcp) // one client: one lock per IAM policy for all six
	reg := resources.Registry{
		Drivers: map[string]resources.Driver{
			aiendpoint.Token:        aiendpoint.New(ociCfg),
			aiproject.Token:         aiproject.New(ociCfg),
			aimodel.Token:           aimodel.New(ociCfg),
			restrictionpolicy.Token: restrictionpolicy.New(dd),
			endpointsiam.ServiceIamPolicyResourceToken:   endpointsiam.NewServicePolicy(iam),
			endpointsiam.ServiceIamBindingToken:          endpointsiam.NewServiceBinding(iam),
			endpointsiam.ServiceIamMemberToken:           endpointsiam.NewServiceMember(iam),
			endpointsiam.ConsumersIamPolicyResourceToken: endpointsiam.NewConsumersPolicy(iam),
			endpointsiam.ConsumersIamBindingToken:        endpointsiam.NewConsumersBinding(iam),
			endpointsiam.ConsumersIamMemberToken:         endpointsiam.NewConsumersMember(iam),
		},
		Functions: map[string]resources.Function{
			endpointsiam.ServiceIamPolicyToken:   endpointsiam.NewServiceIamPolicy(gcp),
			endpointsiam.ConsumersIamPolicyToken: endpointsiam.NewConsumersIamPolicy(gcp),
			gcpiam.GetIAMPolicyToken:             gcpiam.NewGetIAMPolicy(),
			restrictionpolicy.CurrentUserToken:   restrictionpolicy.NewCurrentUser(dd),
		},
	}
	oci, ddc := ailanguage.NewClient(ociCfg), restrictionpolicy.NewClient(dd)
	reg.Accounts = map[string]resources.Account{
		"oci":     func(context.Context) (string, error) { return oci.Account() },
		"gcp":     iam.Account,
		"datadog": ddc.Account,
	}
	return reg, func() {
		for _, tr := range transports {
			tr.CloseIdleConnections()
		}
		cleanup()
	}, nil
}

// inputCheckers returns, by type token, the drivers' checks of the inputs
// their API would refuse that the specs alone show
// (resources.InputChecker), for the loading of the specs. The drivers are
// made without configuration: their checks make no request and read no
// file.
func inputCheckers() map[string]resources.InputChecker {
	iam := endpointsiam.NewClient(endpointsiam.Config{})
	all := map[string]resources.Driver{
		restrictionpolicy.Token:                      restrictionpolicy.New(restrictionpolicy.Config{}),
		endpointsiam.ServiceIamPolicyResourceToken:   endpointsiam.NewServicePolicy(iam),
		endpointsiam.ServiceIamBindingToken:          endpointsiam.NewServiceBinding(iam),
		endpointsiam.ServiceIamMemberToken:           endpointsiam.NewServiceMember(iam),
		endpointsiam.ConsumersIamPolicyResourceToken: endpointsiam.NewConsumersPolicy(iam),
		endpointsiam.ConsumersIamBindingToken:        endpointsiam.NewConsumersBinding(iam),
		endpointsiam.ConsumersIamMemberToken:         endpointsiam.NewConsumersMember(iam),
	}
	out := make(map[string]resources.InputChecker, len(all))
	for token, d := range all {
		if c, ok := d.(resources.InputChecker); ok {
			out[token] = c
		}
	}
	return out
}

func (c *cli) target() (target, func(), error) {
	switch c.g.emulator {
	case "":
		return target{}, func() {}, nil
	case "builtin":
		srv, err := server.Start(server.Options{DataDir: builtinEmulatorDir})
		if err != nil {
			return target{}, nil, fmt.Errorf("start the built-in emulator: %w", err)
		}
		dir := filepath.Join(builtinEmulatorDir, "credentials")
		env := server.Env(srv.Creds)
		return target{
			ociConfigFile: filepath.Join(dir, "oci_config"), ociHost: srv.URL,
			gcpEndpoint: srv.URL + "/", gcpToken: env["GOOGLE_OAUTH_ACCESS_TOKEN"], gcpTokenInfo: srv.URL + "/tokeninfo",
			ddBaseURL: srv.URL, ddAPIKey: env["DD_API_KEY"], ddAppKey: env["DD_APP_KEY"],
		}, func() { srv.Close() }, nil
	}
	return remoteTarget(c.g.emulator)
}

// remoteTarget fetches a running emulator's credentials. They stay in
// memory: nothing is written to disk, so that a process killed with SIGKILL
// leaves no key behind.
func remoteTarget(url string) (target, func(), error) {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url + "/_emulator/credentials")
	if err != nil {
		return target{}, nil, fmt.Errorf("reach the emulator at %s: %w (is 'reconcile emulate' running?)", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return target{}, nil, fmt.Errorf("emulator at %s answered %s to GET /_emulator/credentials", url, resp.Status)
	}
	var doc server.CredentialsDoc
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc); err != nil {
		return target{}, nil, fmt.Errorf("emulator credentials from %s: %w", url, err)
	}
	cfg := map[string]string{}
	for _, line := range splitLines(doc.OCIConfig) {
		if k, v, ok := strings.Cut(line, "="); ok {
			cfg[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	provider := common.NewRawConfigurationProvider(cfg["tenancy"], cfg["user"], cfg["region"], cfg["fingerprint"], doc.OCIPrivateKey, nil)
	return target{
		ociProvider: provider, ociHost: url,
		gcpEndpoint: url + "/", gcpToken: doc.Env["GOOGLE_OAUTH_ACCESS_TOKEN"], gcpTokenInfo: url + "/tokeninfo",
		ddBaseURL: url, ddAPIKey: doc.Env["DD_API_KEY"], ddAppKey: doc.Env["DD_APP_KEY"],
	}, func() {}, nil
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
