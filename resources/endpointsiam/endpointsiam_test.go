package endpointsiam_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	servicemanagement "google.golang.org/api/servicemanagement/v1"

	"github.com/reconcile-dev/reconcile/internal/conntest"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
)

const (
	orders    = gcp.SeedService
	inventory = gcp.SeedEmptyService
	consumer  = gcp.SeedConsumer

	ordersPolicyData = `{"bindings":[` +
		`{"members":["group:orders-clients@acme.example","user:alice@acme.example"],"role":"roles/servicemanagement.serviceConsumer"},` +
		`{"members":["serviceAccount:orders-esp@acme-prod.iam.gserviceaccount.com"],"role":"roles/servicemanagement.serviceController"}]}`
	consumerPolicyData = `{"bindings":[` +
		`{"members":["serviceAccount:checkout@acme-consumer.iam.gserviceaccount.com"],"role":"roles/servicemanagement.serviceConsumer"}]}`
)

// env is a seeded emulator served over HTTP.
type env struct {
	url   string
	creds emulator.Credentials
	conns *conntest.Counter // TCP connections the server accepted
}

// newEnv starts a seeded emulator; wrap, when not nil, wraps its handler
// (to inject faults).
func newEnv(t *testing.T, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	store, err := emulator.OpenStore(filepath.Join(t.TempDir(), "emulator.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	em := gcp.New(store, creds)
	if err := em.Seed(); err != nil {
		t.Fatalf("Seed() = %v", err)
	}
	var h http.Handler = em
	if wrap != nil {
		h = wrap(h)
	}
	conns := &conntest.Counter{}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = conns.ConnState
	srv.Start()
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, creds: creds, conns: conns}
}

func (e *env) config() endpointsiam.Config {
	return endpointsiam.Config{Endpoint: e.url + "/", AccessToken: e.creds.GoogleAccessToken}
}

// sdk returns a raw Service Management client, for calls the lookups do not
// make (setIamPolicy, list), as another user of the API would.
func (e *env) sdk(t *testing.T) *servicemanagement.APIService {
	t.Helper()
	hc := &http.Client{Transport: &oauth2.Transport{
		Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.creds.GoogleAccessToken}),
	}}
	svc, err := servicemanagement.NewService(t.Context(), option.WithEndpoint(e.url+"/"), option.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestServiceIamPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	fn := endpointsiam.NewServiceIamPolicy(e.config())
	ordersEtag := e.etag(t, "services/"+orders)
	for name, tc := range map[string]struct {
		serviceName string
		want        resources.Attrs
	}{
		"bare name with policy": {orders, resources.Attrs{
			"id": "services/" + orders, "etag": ordersEtag, "policyData": ordersPolicyData, "serviceName": orders}},
		"resource name with policy": {"services/" + orders, resources.Attrs{
			"id": "services/" + orders, "etag": ordersEtag, "policyData": ordersPolicyData, "serviceName": "services/" + orders}},
		"empty policy": {inventory, resources.Attrs{
			"id": "services/" + inventory, "etag": "ACAB", "policyData": "{}", "serviceName": inventory}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := fn.Invoke(t.Context(), resources.Attrs{"serviceName": tc.serviceName})
			if err != nil {
				t.Fatalf("Invoke(serviceName=%q) error: %v", tc.serviceName, err)
			}
			if !resources.Equal(got, tc.want) {
				t.Errorf("Invoke(serviceName=%q) =\n%v\nwant\n%v", tc.serviceName, got, tc.want)
			}
		})
	}
}

// etag reads a policy's etag with the raw SDK.
func (e *env) etag(t *testing.T, resource string) string {
	t.Helper()
	svc := e.sdk(t)
	var p *servicemanagement.Policy
	var err error
	if strings.Contains(resource, "/consumers/") {
		p, err = svc.Services.Consumers.GetIamPolicy(resource, nil).Context(t.Context()).Do()
	} else {
		p, err = svc.Services.GetIamPolicy(resource, nil).Context(t.Context()).Do()
	}
	if err != nil {
		t.Fatalf("getIamPolicy %s: %v", resource, err)
	}
	if p.Etag == "" || p.Etag == "ACAB" {
		t.Fatalf("getIamPolicy %s: etag %q, want a set policy's etag", resource, p.Etag)
	}
	return p.Etag
}

func TestConsumersIamPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	fn := endpointsiam.NewConsumersIamPolicy(e.config())
	id := "services/" + orders + "/consumers/" + consumer
	etag := e.etag(t, id)
	for name, tc := range map[string]struct {
		serviceName, consumerProject string
		want                         resources.Attrs
	}{
		"bare project": {orders, consumer, resources.Attrs{
			"id": id, "etag": etag, "policyData": consumerPolicyData, "serviceName": orders, "consumerProject": consumer}},
		"service/project": {orders, orders + "/" + consumer, resources.Attrs{
			"id": id, "etag": etag, "policyData": consumerPolicyData, "serviceName": orders, "consumerProject": orders + "/" + consumer}},
		"resource names": {"services/" + orders, id, resources.Attrs{
			"id": id, "etag": etag, "policyData": consumerPolicyData, "serviceName": "services/" + orders, "consumerProject": id}},
		"consumer without policy": {orders, "acme-other", resources.Attrs{
			"id": "services/" + orders + "/consumers/acme-other", "etag": "ACAB", "policyData": "{}",
			"serviceName": orders, "consumerProject": "acme-other"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := resources.Attrs{"serviceName": tc.serviceName, "consumerProject": tc.consumerProject}
			got, err := fn.Invoke(t.Context(), args)
			if err != nil {
				t.Fatalf("Invoke(%v) error: %v", args, err)
			}
			if !resources.Equal(got, tc.want) {
				t.Errorf("Invoke(%v) =\n%v\nwant\n%v", args, got, tc.want)
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	// No server: argument errors come before any connection.
	cfg := endpointsiam.Config{Endpoint: "http://127.0.0.1:1/", AccessToken: "unused"}
	service := endpointsiam.NewServiceIamPolicy(cfg)
	consumers := endpointsiam.NewConsumersIamPolicy(cfg)
	for name, tc := range map[string]struct {
		fn       resources.Function
		args     resources.Attrs
		wantPath string
	}{
		"missing serviceName":      {service, resources.Attrs{}, "serviceName"},
		"serviceName not a string": {service, resources.Attrs{"serviceName": int64(3)}, "serviceName"},
		"serviceName with slash":   {service, resources.Attrs{"serviceName": "projects/p/services/x"}, "serviceName"},
		"missing consumerProject":  {consumers, resources.Attrs{"serviceName": orders}, "consumerProject"},
		"consumerProject of another service": {consumers,
			resources.Attrs{"serviceName": orders, "consumerProject": "services/other/consumers/" + consumer}, "consumerProject"},
		"malformed consumerProject": {consumers,
			resources.Attrs{"serviceName": orders, "consumerProject": "a/b/c"}, "consumerProject"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.fn.Invoke(t.Context(), tc.args)
			var ae *resources.AttrError
			if !errors.As(err, &ae) || strings.Join(ae.Path, ".") != tc.wantPath {
				t.Fatalf("Invoke(%v) error = %v, want an AttrError on %q", tc.args, err, tc.wantPath)
			}
		})
	}
}

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	badToken := e.config()
	badToken.AccessToken = "ya29.not-the-token"
	for name, tc := range map[string]struct {
		fn         resources.Function
		args       resources.Attrs
		wantStatus int
		wantCode   string
		wantMsg    string
	}{
		"unknown service": {endpointsiam.NewServiceIamPolicy(e.config()),
			resources.Attrs{"serviceName": "nope.endpoints.acme-prod.cloud.goog"},
			403, "PERMISSION_DENIED", "Service 'nope.endpoints.acme-prod.cloud.goog' not found or permission denied."},
		"consumer of unknown service": {endpointsiam.NewConsumersIamPolicy(e.config()),
			resources.Attrs{"serviceName": "nope.endpoints.acme-prod.cloud.goog", "consumerProject": consumer},
			403, "PERMISSION_DENIED", "Service 'nope.endpoints.acme-prod.cloud.goog' not found or permission denied."},
		"bad token": {endpointsiam.NewServiceIamPolicy(badToken),
			resources.Attrs{"serviceName": orders},
			401, "UNAUTHENTICATED", "Request had invalid authentication credentials."},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.fn.Invoke(t.Context(), tc.args)
			var ae *resources.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("Invoke(%v) error = %v, want a *resources.APIError", tc.args, err)
			}
			if ae.Service != "gcp" || ae.Status != tc.wantStatus || ae.Code != tc.wantCode || !strings.HasPrefix(ae.Message, tc.wantMsg) {
				t.Errorf("Invoke(%v) error = %+v, want gcp %d %s %q", tc.args, *ae, tc.wantStatus, tc.wantCode, tc.wantMsg)
			}
			if errors.Is(err, resources.ErrNotFound) {
				t.Errorf("Invoke(%v) error is ErrNotFound; a lookup reports what the API said", tc.args)
			}
			if strings.Contains(err.Error(), e.creds.GoogleAccessToken) {
				t.Errorf("error text %q holds the access token", err)
			}
		})
	}
}

func TestSetIamPolicyChangesEtag(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := t.Context()
	svc := e.sdk(t)
	service := endpointsiam.NewServiceIamPolicy(e.config())
	consumers := endpointsiam.NewConsumersIamPolicy(e.config())

	for name, tc := range map[string]struct {
		fn       resources.Function
		args     resources.Attrs
		get      func(*servicemanagement.GetIamPolicyRequest) (*servicemanagement.Policy, error)
		set      func(*servicemanagement.SetIamPolicyRequest) (*servicemanagement.Policy, error)
		wantData string
	}{
		"service": {
			fn:   service,
			args: resources.Attrs{"serviceName": inventory},
			get: func(r *servicemanagement.GetIamPolicyRequest) (*servicemanagement.Policy, error) {
				return svc.Services.GetIamPolicy("services/"+inventory, r).Context(ctx).Do()
			},
			set: func(r *servicemanagement.SetIamPolicyRequest) (*servicemanagement.Policy, error) {
				return svc.Services.SetIamPolicy("services/"+inventory, r).Context(ctx).Do()
			},
			wantData: `{"auditConfigs":[{"auditLogConfigs":[{"logType":"DATA_READ"}],"service":"allServices"}],` +
				`"bindings":[{"condition":{"expression":"request.time \u003c timestamp(\"2030-01-01T00:00:00Z\")","title":"until-2030"},` +
				`"members":["user:bob@acme.example"],"role":"roles/servicemanagement.serviceConsumer"}]}`,
		},
		"consumer": {
			fn:   consumers,
			args: resources.Attrs{"serviceName": orders, "consumerProject": consumer},
			get: func(r *servicemanagement.GetIamPolicyRequest) (*servicemanagement.Policy, error) {
				return svc.Services.Consumers.GetIamPolicy("services/"+orders+"/consumers/"+consumer, r).Context(ctx).Do()
			},
			set: func(r *servicemanagement.SetIamPolicyRequest) (*servicemanagement.Policy, error) {
				return svc.Services.Consumers.SetIamPolicy("services/"+orders+"/consumers/"+consumer, r).Context(ctx).Do()
			},
			wantData: `{"auditConfigs":[{"auditLogConfigs":[{"logType":"DATA_READ"}],"service":"allServices"}],` +
				`"bindings":[{"condition":{"expression":"request.time \u003c timestamp(\"2030-01-01T00:00:00Z\")","title":"until-2030"},` +
				`"members":["user:bob@acme.example"],"role":"roles/servicemanagement.serviceConsumer"}]}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			before, err := tc.fn.Invoke(ctx, tc.args)
			if err != nil {
				t.Fatalf("Invoke(%v) error: %v", tc.args, err)
			}
			cur, err := tc.get(&servicemanagement.GetIamPolicyRequest{Options: &servicemanagement.GetPolicyOptions{RequestedPolicyVersion: 3}})
			if err != nil {
				t.Fatalf("getIamPolicy: %v", err)
			}
			if cur.Etag != before["etag"] {
				t.Fatalf("getIamPolicy etag %q, lookup etag %q", cur.Etag, before["etag"])
			}
			want := &servicemanagement.Policy{
				Version: 3,
				Etag:    cur.Etag,
				Bindings: []*servicemanagement.Binding{{
					Role:    "roles/servicemanagement.serviceConsumer",
					Members: []string{"user:bob@acme.example"},
					Condition: &servicemanagement.Expr{
						Title:      "until-2030",
						Expression: `request.time < timestamp("2030-01-01T00:00:00Z")`,
					},
				}},
				AuditConfigs: []*servicemanagement.AuditConfig{{
					Service:         "allServices",
					AuditLogConfigs: []*servicemanagement.AuditLogConfig{{LogType: "DATA_READ"}},
				}},
			}
			set, err := tc.set(&servicemanagement.SetIamPolicyRequest{Policy: want, UpdateMask: "bindings,etag,auditConfigs"})
			if err != nil {
				t.Fatalf("setIamPolicy: %v", err)
			}
			if set.Etag == cur.Etag || set.Etag == "" {
				t.Errorf("setIamPolicy etag = %q, want a new one (old %q)", set.Etag, cur.Etag)
			}
			after, err := tc.fn.Invoke(ctx, tc.args)
			if err != nil {
				t.Fatalf("Invoke(%v) after set error: %v", tc.args, err)
			}
			if after["etag"] != set.Etag || after["policyData"] != tc.wantData {
				t.Errorf("Invoke(%v) after set = etag %q policyData %s\nwant etag %q policyData %s",
					tc.args, after["etag"], after["policyData"], set.Etag, tc.wantData)
			}

			// The etag read before the change is stale now.
			want.Etag = cur.Etag
			_, err = tc.set(&servicemanagement.SetIamPolicyRequest{Policy: want})
			if code := httpStatus(err); code != http.StatusConflict || !strings.Contains(err.Error(), "concurrent policy changes") {
				t.Errorf("setIamPolicy with stale etag: error %v (status %d), want 409 ABORTED", err, code)
			}
			// Without an etag the write is unconditional.
			want.Etag = ""
			want.Bindings[0].Condition = nil
			want.Version = 1
			if _, err := tc.set(&servicemanagement.SetIamPolicyRequest{Policy: want}); err != nil {
				t.Errorf("setIamPolicy without etag: %v", err)
			}
		})
	}
}

func httpStatus(err error) int {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return gerr.Code
	}
	return 0
}

func TestRetriesServerErrors(t *testing.T) {
	t.Parallel()
	var calls, failures atomic.Int32
	e := newEnv(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			if failures.Add(1) <= 2 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				w.Write([]byte(`{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	fn := endpointsiam.NewServiceIamPolicy(e.config())
	got, err := fn.Invoke(t.Context(), resources.Attrs{"serviceName": inventory})
	if err != nil {
		t.Fatalf("Invoke after two 500s: %v", err)
	}
	if got["etag"] != "ACAB" {
		t.Errorf("Invoke etag = %v, want ACAB", got["etag"])
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("server saw %d requests, want 3 (two 500s, then success)", n)
	}
}

// TestApplicationDefaultCredentialsAreLazy checks that building the lookups
// needs no credentials, and that missing ADC is reported at the first call.
func TestApplicationDefaultCredentialsAreLazy(t *testing.T) {
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
	fn := endpointsiam.NewServiceIamPolicy(endpointsiam.Config{Endpoint: "http://127.0.0.1:1/"})
	_, err := fn.Invoke(t.Context(), resources.Attrs{"serviceName": orders})
	if err == nil || !strings.Contains(err.Error(), "Application Default Credentials") {
		t.Errorf("Invoke without credentials: error = %v, want one about Application Default Credentials", err)
	}
}
