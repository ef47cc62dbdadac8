package oci

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

const endpointsPath = "/20221001/endpoints"

// signerFunc adapts a function to common.HTTPRequestSigner.
type signerFunc func(*http.Request) error

func (f signerFunc) Sign(r *http.Request) error { return f(r) }

func nopBody(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }

func mustJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(raw)
}

type endpointJSON struct {
	ID               string                    `json:"id"`
	DisplayName      string                    `json:"displayName"`
	CompartmentID    string                    `json:"compartmentId"`
	ProjectID        string                    `json:"projectId"`
	ModelID          string                    `json:"modelId"`
	LifecycleState   string                    `json:"lifecycleState"`
	LifecycleDetails *string                   `json:"lifecycleDetails"`
	InferenceUnits   int                       `json:"inferenceUnits"`
	TimeCreated      string                    `json:"timeCreated"`
	TimeUpdated      *string                   `json:"timeUpdated"`
	FreeformTags     map[string]string         `json:"freeformTags"`
	DefinedTags      map[string]map[string]any `json:"definedTags"`
}

type workRequestJSON struct {
	Status          string  `json:"status"`
	OperationType   string  `json:"operationType"`
	PercentComplete float64 `json:"percentComplete"`
	TimeFinished    *string `json:"timeFinished"`
	Resources       []struct {
		EntityType, ActionType, Identifier string
	} `json:"resources"`
}

func (env *testEnv) createBody(name string) map[string]any {
	return map[string]any{"compartmentId": env.compartment, "modelId": env.activeModel, "displayName": name}
}

// getEndpoint GETs an endpoint and decodes it.
func (env *testEnv) getEndpoint(id string) (endpointJSON, rawResponse) {
	env.t.Helper()
	r := env.do("GET", endpointsPath+"/"+id, nil, nil)
	var ep endpointJSON
	if r.status == http.StatusOK {
		r.decode(env.t, &ep)
	}
	return ep, r
}

func (env *testEnv) getWorkRequest(id string) workRequestJSON {
	env.t.Helper()
	r := env.do("GET", "/20221001/workRequests/"+id, nil, nil)
	if r.status != http.StatusOK {
		env.t.Fatalf("GET work request %s: %d %s", id, r.status, r.body)
	}
	var wr workRequestJSON
	r.decode(env.t, &wr)
	return wr
}

func TestEmulatorCreateEndpoint(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	r := env.do("POST", endpointsPath, map[string]any{"compartmentId": env.compartment, "modelId": env.activeModel}, map[string]string{"opc-request-id": "client-id"})
	if r.status != http.StatusOK {
		t.Fatalf("CreateEndpoint = %d %s, want 200", r.status, r.body)
	}
	var ep endpointJSON
	r.decode(t, &ep)
	if ep.LifecycleState != "CREATING" || ep.ProjectID != env.project || ep.InferenceUnits != 1 ||
		!strings.HasPrefix(ep.DisplayName, "ailanguageendpoint") || ep.FreeformTags == nil || ep.DefinedTags == nil {
		t.Errorf("CreateEndpoint body = %s; want CREATING, the model's project, 1 unit, a generated name and empty tag maps", r.body)
	}
	for _, h := range []string{"etag", "location", "opc-work-request-id", "opc-request-id"} {
		if r.header.Get(h) == "" {
			t.Errorf("CreateEndpoint: no %s header", h)
		}
	}
	if got := r.header.Get("location"); got != env.srv.URL+endpointsPath+"/"+ep.ID {
		t.Errorf("location = %q, want the endpoint's URL", got)
	}
	if got := r.header.Get("opc-request-id"); !strings.HasPrefix(got, "client-id/") {
		t.Errorf("opc-request-id = %q, want the client's id as prefix", got)
	}
	got, g := env.getEndpoint(ep.ID)
	if got.LifecycleState != "ACTIVE" || g.header.Get("etag") == "" || g.header.Get("etag") == r.header.Get("etag") {
		t.Errorf("GetEndpoint after a zero-delay create = %s (etag %q); want ACTIVE with a new etag", g.body, g.header.Get("etag"))
	}
	if got.TimeUpdated == nil {
		t.Errorf("GetEndpoint has no timeUpdated")
	}
}

func TestEmulatorErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	id := func() string {
		r := env.do("POST", endpointsPath, env.createBody("victim"), nil)
		var ep endpointJSON
		r.decode(t, &ep)
		return ep.ID
	}()
	for name, tc := range map[string]struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		"unknown model":                     {"POST", endpointsPath, map[string]any{"compartmentId": env.compartment, "modelId": "ocid1.ailanguagemodel.oc1.iad.nope"}, 400, "RelatedResourceNotAuthorizedOrNotFound"},
		"unknown compartment":               {"POST", endpointsPath, map[string]any{"compartmentId": "ocid1.compartment.oc1..nope", "modelId": env.activeModel}, 400, "RelatedResourceNotAuthorizedOrNotFound"},
		"missing modelId":                   {"POST", endpointsPath, map[string]any{"compartmentId": env.compartment}, 400, "MissingParameter"},
		"not JSON":                          {"POST", endpointsPath, []byte("{nope"), 400, "CannotParseRequest"},
		"wrong type":                        {"POST", endpointsPath, map[string]any{"compartmentId": env.compartment, "modelId": env.activeModel, "inferenceUnits": "two"}, 400, "InvalidParameter"},
		"zero units":                        {"POST", endpointsPath, map[string]any{"compartmentId": env.compartment, "modelId": env.activeModel, "inferenceUnits": 0}, 400, "InvalidParameter"},
		"list without compartment":          {"GET", endpointsPath, nil, 400, "MissingParameter"},
		"list bad sortBy":                   {"GET", endpointsPath + "?compartmentId=" + env.compartment + "&sortBy=size", nil, 400, "InvalidParameter"},
		"list bad state":                    {"GET", endpointsPath + "?compartmentId=" + env.compartment + "&lifecycleState=HAPPY", nil, 400, "InvalidParameter"},
		"list bad page":                     {"GET", endpointsPath + "?compartmentId=" + env.compartment + "&page=zzz", nil, 400, "InvalidParameter"},
		"list unknown compartment":          {"GET", endpointsPath + "?compartmentId=ocid1.compartment.oc1..nope", nil, 404, "NotAuthorizedOrNotFound"},
		"get unknown endpoint":              {"GET", endpointsPath + "/ocid1.ailanguageendpoint.oc1.iad.nope", nil, 404, "NotAuthorizedOrNotFound"},
		"update unknown":                    {"PUT", endpointsPath + "/ocid1.ailanguageendpoint.oc1.iad.nope", map[string]any{"displayName": "x"}, 404, "NotAuthorizedOrNotFound"},
		"delete unknown":                    {"DELETE", endpointsPath + "/ocid1.ailanguageendpoint.oc1.iad.nope", nil, 404, "NotAuthorizedOrNotFound"},
		"update to failed model":            {"PUT", endpointsPath + "/" + id, map[string]any{"modelId": env.failedModel}, 400, "InvalidParameter"},
		"stale if-match":                    {"DELETE", endpointsPath + "/" + id, nil, 412, "NoEtagMatch"},
		"unknown route":                     {"GET", "/20221001/nothing", nil, 404, "NotFound"},
		"other API version":                 {"GET", "/20210101/endpoints", nil, 404, "NotFound"},
		"wrong method":                      {"PATCH", endpointsPath + "/" + id, map[string]any{}, 405, "MethodNotAllowed"},
		"unknown work request":              {"GET", "/20221001/workRequests/ocid1.ailanguageworkrequest.oc1.iad.nope", nil, 404, "NotAuthorizedOrNotFound"},
		"work requests without compartment": {"GET", "/20221001/workRequests", nil, 400, "MissingParameter"},
		"models without compartment":        {"GET", "/20221001/models", nil, 400, "MissingParameter"},
		"unknown model get":                 {"GET", "/20221001/models/ocid1.ailanguagemodel.oc1.iad.nope", nil, 404, "NotAuthorizedOrNotFound"},
		"move to unknown compartment":       {"POST", "/20221001/models/" + env.activeModel + "/actions/changeCompartment", map[string]any{"compartmentId": "ocid1.compartment.oc1..nope"}, 400, "RelatedResourceNotAuthorizedOrNotFound"},
		"move without compartment":          {"POST", "/20221001/projects/" + env.project + "/actions/changeCompartment", map[string]any{}, 400, "MissingParameter"},
		"move unknown endpoint":             {"POST", endpointsPath + "/ocid1.ailanguageendpoint.oc1.iad.nope/actions/changeCompartment", map[string]any{"compartmentId": env.compartment}, 404, "NotAuthorizedOrNotFound"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var header map[string]string
			if tc.status == 412 {
				header = map[string]string{"if-match": "stale"}
			}
			r := env.do(tc.method, tc.path, tc.body, header)
			if r.status != tc.status || r.code() != tc.code {
				t.Errorf("%s %s = %d %s, want %d %s", tc.method, tc.path, r.status, r.body, tc.status, tc.code)
			}
			if !strings.Contains(string(r.body), `"message"`) || r.header.Get("opc-request-id") == "" {
				t.Errorf("%s %s: error body %s or opc-request-id %q is not OCI's", tc.method, tc.path, r.body, r.header.Get("opc-request-id"))
			}
			if tc.status == 405 && r.header.Get("Allow") != "DELETE, GET, PUT" {
				t.Errorf("405 Allow = %q", r.header.Get("Allow"))
			}
		})
	}
}

func TestEmulatorRetryToken(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	token := map[string]string{"opc-retry-token": "token-1"}
	first := env.do("POST", endpointsPath, env.createBody("once"), token)
	// The same request, with its keys in another order, is a replay.
	again := env.do("POST", endpointsPath, []byte(`{"displayName":"once","modelId":"`+env.activeModel+`","compartmentId":"`+env.compartment+`"}`), token)
	if first.status != 200 || again.status != 200 || string(first.body) != string(again.body) ||
		first.header.Get("opc-work-request-id") != again.header.Get("opc-work-request-id") {
		t.Fatalf("replayed create = %d %s, want the original answer %d %s", again.status, again.body, first.status, first.body)
	}
	list := env.do("GET", endpointsPath+"?compartmentId="+env.compartment+"&displayName=once", nil, nil)
	var items struct{ Items []endpointJSON }
	list.decode(t, &items)
	if len(items.Items) != 1 {
		t.Errorf("after a replay there are %d endpoints, want 1", len(items.Items))
	}
	if r := env.do("POST", endpointsPath, env.createBody("other"), token); r.status != 409 || r.code() != "Conflict" {
		t.Errorf("token reused for another body = %d %s, want 409 Conflict", r.status, r.body)
	}
	if r := env.do("POST", endpointsPath, env.createBody("x"), map[string]string{"opc-retry-token": strings.Repeat("t", 65)}); r.status != 400 {
		t.Errorf("65-character token = %d %s, want 400", r.status, r.body)
	}
	var ep endpointJSON
	first.decode(t, &ep)
	if r := env.do("DELETE", endpointsPath+"/"+ep.ID, nil, nil); r.status != 202 {
		t.Fatalf("DeleteEndpoint = %d %s", r.status, r.body)
	}
	if r := env.do("POST", endpointsPath, env.createBody("once"), token); r.status != 409 || r.code() != "InvalidatedRetryToken" {
		t.Errorf("token of a deleted endpoint = %d %s, want 409 InvalidatedRetryToken", r.status, r.body)
	}
}

// TestEmulatorLifecycle walks one endpoint through every transition on a
// fake clock.
func TestEmulatorLifecycle(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	env := newEnv(t, envOptions{now: clock.Now})
	env.emu.SetDelays(10*time.Second, 4*time.Second, 2*time.Second)

	created := env.do("POST", endpointsPath, env.createBody("life"), nil)
	var ep endpointJSON
	created.decode(t, &ep)
	path := endpointsPath + "/" + ep.ID
	wrID := created.header.Get("opc-work-request-id")

	clock.Advance(4 * time.Second)
	if got, _ := env.getEndpoint(ep.ID); got.LifecycleState != "CREATING" {
		t.Errorf("at 4s of 10: state %s, want CREATING", got.LifecycleState)
	}
	if wr := env.getWorkRequest(wrID); wr.Status != "IN_PROGRESS" || wr.PercentComplete != 40 || wr.Resources[0].ActionType != "IN_PROGRESS" || wr.OperationType != "CREATE_ENDPOINT" {
		t.Errorf("work request at 4s of 10 = %+v, want IN_PROGRESS 40%%", wr)
	}
	if r := env.do("PUT", path, map[string]any{"displayName": "early"}, nil); r.status != 409 || r.code() != "IncorrectState" {
		t.Errorf("update while CREATING = %d %s, want 409 IncorrectState", r.status, r.body)
	}
	if r := env.do("DELETE", path, nil, nil); r.status != 409 || r.code() != "IncorrectState" {
		t.Errorf("delete while CREATING = %d %s, want 409 IncorrectState", r.status, r.body)
	}

	clock.Advance(6 * time.Second)
	if wr := env.getWorkRequest(wrID); wr.Status != "SUCCEEDED" || wr.PercentComplete != 100 || wr.TimeFinished == nil ||
		wr.Resources[0].ActionType != "CREATED" || wr.Resources[0].EntityType != "endpoint" || wr.Resources[0].Identifier != ep.ID {
		t.Errorf("work request at 10s = %+v, want SUCCEEDED, CREATED", wr)
	}
	got, g := env.getEndpoint(ep.ID)
	if got.LifecycleState != "ACTIVE" {
		t.Fatalf("at 10s: state %s, want ACTIVE", got.LifecycleState)
	}
	etag := g.header.Get("etag")

	updated := env.do("PUT", path, map[string]any{"inferenceUnits": 2, "freeformTags": map[string]string{"a": "b"}}, map[string]string{"if-match": etag})
	if updated.status != 202 || len(updated.body) != 0 || updated.header.Get("opc-work-request-id") == "" {
		t.Fatalf("UpdateEndpoint = %d %q (work request %q), want 202, no body, a work request", updated.status, updated.body, updated.header.Get("opc-work-request-id"))
	}
	got, _ = env.getEndpoint(ep.ID)
	if got.LifecycleState != "UPDATING" || got.InferenceUnits != 2 || got.DisplayName != "life" || got.FreeformTags["a"] != "b" {
		t.Errorf("after a partial update: %+v, want UPDATING with 2 units, the name kept and the new tags", got)
	}
	if r := env.do("PUT", path, map[string]any{"displayName": "x"}, map[string]string{"if-match": etag}); r.status != 412 {
		t.Errorf("update with the etag from before the update = %d %s, want 412", r.status, r.body)
	}
	clock.Advance(4 * time.Second)
	if wr := env.getWorkRequest(updated.header.Get("opc-work-request-id")); wr.Status != "SUCCEEDED" || wr.Resources[0].ActionType != "UPDATED" {
		t.Errorf("update work request = %+v, want SUCCEEDED, UPDATED", wr)
	}

	moved := env.do("POST", path+"/actions/changeCompartment", map[string]any{"compartmentId": env.otherCompartment}, nil)
	if moved.status != 200 || moved.header.Get("opc-work-request-id") != "" || len(moved.body) != 0 {
		t.Errorf("ChangeEndpointCompartment = %d %q (work request %q), want 200 without body or work request", moved.status, moved.body, moved.header.Get("opc-work-request-id"))
	}
	if got, _ := env.getEndpoint(ep.ID); got.LifecycleState != "UPDATING" || got.CompartmentID != env.otherCompartment {
		t.Errorf("after ChangeEndpointCompartment: %s in %s, want UPDATING in the other compartment", got.LifecycleState, got.CompartmentID)
	}
	clock.Advance(4 * time.Second)

	deleted := env.do("DELETE", path, nil, nil)
	if deleted.status != 202 || deleted.header.Get("opc-work-request-id") == "" {
		t.Fatalf("DeleteEndpoint = %d %s", deleted.status, deleted.body)
	}
	if again := env.do("DELETE", path, nil, nil); again.status != 202 || again.header.Get("opc-work-request-id") != deleted.header.Get("opc-work-request-id") {
		t.Errorf("second DeleteEndpoint while DELETING = %d, work request %q; want 202 with the same work request", again.status, again.header.Get("opc-work-request-id"))
	}
	if got, _ := env.getEndpoint(ep.ID); got.LifecycleState != "DELETING" {
		t.Errorf("after DeleteEndpoint: %s, want DELETING", got.LifecycleState)
	}
	clock.Advance(2 * time.Second)
	if got, _ := env.getEndpoint(ep.ID); got.LifecycleState != "DELETED" {
		t.Errorf("after the delete delay: %s, want DELETED", got.LifecycleState)
	}
	if r := env.do("DELETE", path, nil, nil); r.status != 404 {
		t.Errorf("DeleteEndpoint of a DELETED endpoint = %d, want 404", r.status)
	}
	clock.Advance(deletedRetention + time.Second)
	if _, r := env.getEndpoint(ep.ID); r.status != 404 {
		t.Errorf("GetEndpoint an hour after deletion = %d, want 404", r.status)
	}
}

func TestEmulatorCreateWithFailedModel(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	body := env.createBody("doomed")
	body["modelId"] = env.failedModel
	r := env.do("POST", endpointsPath, body, nil)
	if r.status != 200 {
		t.Fatalf("create with a FAILED model = %d %s, want 200 (it fails asynchronously)", r.status, r.body)
	}
	wrID := r.header.Get("opc-work-request-id")
	var ep endpointJSON
	r.decode(t, &ep)
	got, _ := env.getEndpoint(ep.ID)
	if got.LifecycleState != "FAILED" || got.LifecycleDetails == nil || !strings.Contains(*got.LifecycleDetails, env.failedModel) {
		t.Errorf("endpoint = %+v, want FAILED with lifecycleDetails naming the model", got)
	}
	if wr := env.getWorkRequest(wrID); wr.Status != "FAILED" {
		t.Errorf("work request status %s, want FAILED", wr.Status)
	}
	c := env.client()
	errs, err := c.ListWorkRequestErrors(t.Context(), ailanguage.ListWorkRequestErrorsRequest{WorkRequestId: &wrID})
	if err != nil || len(errs.Items) != 1 || *errs.Items[0].Message != *got.LifecycleDetails {
		t.Errorf("ListWorkRequestErrors = %v, %v; want the lifecycleDetails", errs.Items, err)
	}
	logs, err := c.ListWorkRequestLogs(t.Context(), ailanguage.ListWorkRequestLogsRequest{WorkRequestId: &wrID, SortOrder: ailanguage.ListWorkRequestLogsSortOrderAsc})
	if err != nil || len(logs.Items) != 2 || !strings.Contains(*logs.Items[1].Message, "failed") {
		t.Errorf("ListWorkRequestLogs = %v, %v; want accepted then failed", logs.Items, err)
	}
	if r := env.do("PUT", endpointsPath+"/"+ep.ID, map[string]any{"displayName": "x"}, nil); r.status != 409 || r.code() != "Conflict" {
		t.Errorf("update of a FAILED endpoint = %d %s, want 409 Conflict (not retryable)", r.status, r.body)
	}
}

// TestEmulatorLifecycleSurvivesRestart starts a create, closes the store,
// and finds it finished after reopening: time is computed, not run.
func TestEmulatorLifecycleSurvivesRestart(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	first := newEnv(t, envOptions{now: clock.Now})
	first.emu.SetDelays(time.Minute, 0, 0)
	r := first.do("POST", endpointsPath, first.createBody("durable"), nil)
	var ep endpointJSON
	r.decode(t, &ep)
	first.srv.Close()
	first.closeStore()

	clock.Advance(2 * time.Minute)
	second := newEnv(t, envOptions{dir: first.dir, now: clock.Now})
	if got, _ := second.getEndpoint(ep.ID); got.LifecycleState != "ACTIVE" || got.DisplayName != "durable" {
		t.Errorf("after restart: %+v, want the endpoint ACTIVE", got)
	}
	if wr := second.getWorkRequest(r.header.Get("opc-work-request-id")); wr.Status != "SUCCEEDED" {
		t.Errorf("after restart: work request %s, want SUCCEEDED", wr.Status)
	}
}

func TestEmulatorAuthentication(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	trusted, other := sharedCreds(t)
	good := signer(t, trusted, trusted.OCIPrivateKey)
	listPath := endpointsPath + "?compartmentId=" + env.compartment
	for name, tc := range map[string]struct {
		method, path string
		body         any
		sign         common.HTTPRequestSigner
		tweak        func(*http.Request)
		want         int
	}{
		"signed GET":               {method: "GET", path: listPath, sign: good, want: 200},
		"signed POST":              {method: "POST", path: endpointsPath, body: env.createBody("signed"), sign: good, want: 200},
		"unsigned":                 {method: "GET", path: listPath, want: 401},
		"foreign key":              {method: "GET", path: listPath, sign: signer(t, other, other.OCIPrivateKey), want: 401},
		"trusted keyId, wrong key": {method: "GET", path: listPath, sign: signer(t, trusted, other.OCIPrivateKey), want: 401},
		"tampered body": {method: "POST", path: endpointsPath, body: env.createBody("aaaa"), sign: good, want: 401, tweak: func(r *http.Request) {
			r.Body = nopBody(strings.Replace(mustJSON(env.createBody("aaaa")), "aaaa", "bbbb", 1))
		}},
		"tampered query": {method: "GET", path: listPath, sign: good, want: 401, tweak: func(r *http.Request) {
			r.URL.RawQuery += "&displayName=x"
		}},
		"old date": {method: "GET", path: listPath, want: 401, sign: signerFunc(func(r *http.Request) error {
			r.Header.Set("Date", time.Now().Add(-10*time.Minute).UTC().Format(http.TimeFormat))
			return good.Sign(r)
		})},
		"x-date instead of date": {method: "GET", path: listPath, want: 200, sign: common.RequestSigner(
			common.NewRawConfigurationProvider(trusted.OCITenancy, trusted.OCIUser, trusted.OCIRegion, trusted.OCIFingerprint, trusted.OCIPrivateKey, nil),
			[]string{"x-date", "(request-target)", "host"}, common.DefaultBodyHeaders()), tweak: nil},
		"host not signed": {method: "GET", path: listPath, want: 401, sign: common.RequestSigner(
			common.NewRawConfigurationProvider(trusted.OCITenancy, trusted.OCIUser, trusted.OCIRegion, trusted.OCIFingerprint, trusted.OCIPrivateKey, nil),
			[]string{"date", "(request-target)"}, common.DefaultBodyHeaders())},
		"body hash not signed": {method: "POST", path: endpointsPath, body: env.createBody("x"), want: 401, sign: common.RequestSignerExcludeBody(
			common.NewRawConfigurationProvider(trusted.OCITenancy, trusted.OCIUser, trusted.OCIRegion, trusted.OCIFingerprint, trusted.OCIPrivateKey, nil))},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			header := map[string]string{}
			if name == "x-date instead of date" {
				header["x-date"] = time.Now().UTC().Format(http.TimeFormat)
			}
			r := env.request(tc.method, tc.path, tc.body, header, tc.sign, tc.tweak)
			if r.status != tc.want {
				t.Errorf("%s %s = %d %s, want %d", tc.method, tc.path, r.status, r.body, tc.want)
			}
			if tc.want == 401 && r.code() != "NotAuthenticated" {
				t.Errorf("401 code = %q, want NotAuthenticated", r.code())
			}
		})
	}
}

func TestEmulatorListEndpoints(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	env := newEnv(t, envOptions{now: clock.Now})
	for _, name := range []string{"b", "a", "c"} {
		clock.Advance(time.Second)
		if r := env.do("POST", endpointsPath, env.createBody(name), nil); r.status != 200 {
			t.Fatal(r.status, string(r.body))
		}
	}
	clock.Advance(time.Second)
	body := env.createBody("failed")
	body["modelId"] = env.failedModel
	env.do("POST", endpointsPath, body, nil)

	base := endpointsPath + "?compartmentId=" + env.compartment
	names := func(path string) ([]string, string) {
		t.Helper()
		r := env.do("GET", path, nil, nil)
		if r.status != 200 {
			t.Fatalf("GET %s = %d %s", path, r.status, r.body)
		}
		if strings.Contains(string(r.body), "timeUpdated") {
			t.Errorf("GET %s: summaries carry timeUpdated", path)
		}
		var out struct{ Items []endpointJSON }
		r.decode(t, &out)
		var ns []string
		for _, ep := range out.Items {
			ns = append(ns, ep.DisplayName)
		}
		return ns, r.header.Get("opc-next-page")
	}
	for name, tc := range map[string]struct {
		query string
		want  string
	}{
		"default newest first": {"&lifecycleState=ACTIVE", "c,a,b"},
		"by name":              {"&sortBy=displayName&lifecycleState=ACTIVE", "a,b,c"},
		"by name descending":   {"&sortBy=displayName&sortOrder=DESC&lifecycleState=ACTIVE", "c,b,a"},
		"oldest first":         {"&sortOrder=ASC", "b,a,c,failed"},
		"by display name":      {"&displayName=a", "a"},
		"failed ones":          {"&lifecycleState=FAILED", "failed"},
		"by model":             {"&modelId=" + env.failedModel, "failed"},
		"by project":           {"&projectId=" + env.project + "&sortBy=displayName", "a,b,c,failed"},
		"other compartment":    {"&compartmentId=" + env.otherCompartment, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := base + tc.query
			if strings.Contains(tc.query, "compartmentId=") {
				path = endpointsPath + "?" + tc.query[1:]
			}
			got, next := names(path)
			if strings.Join(got, ",") != tc.want || next != "" {
				t.Errorf("list%s = %v (next page %q), want %s", tc.query, got, next, tc.want)
			}
		})
	}
	t.Run("pages", func(t *testing.T) {
		t.Parallel()
		first, next := names(base + "&sortBy=displayName&limit=3")
		if strings.Join(first, ",") != "a,b,c" || next == "" {
			t.Fatalf("first page = %v, next %q; want a,b,c and a next page", first, next)
		}
		second, next2 := names(base + "&sortBy=displayName&limit=3&page=" + next)
		if strings.Join(second, ",") != "failed" || next2 != "" {
			t.Errorf("second page = %v, next %q; want failed and no next page", second, next2)
		}
	})
}

// TestEmulatorListSeesEveryChange: a list answers what the data holds
// now, after every create, update, transition and delete, although lists
// reuse the records an earlier list decoded while nothing changed.
func TestEmulatorListSeesEveryChange(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	env := newEnv(t, envOptions{now: clock.Now})
	env.emu.SetDelays(2*time.Second, 2*time.Second, 2*time.Second)
	list := func() map[string]endpointJSON {
		t.Helper()
		r := env.do("GET", endpointsPath+"?compartmentId="+env.compartment, nil, nil)
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		var out struct{ Items []endpointJSON }
		r.decode(t, &out)
		m := map[string]endpointJSON{}
		for _, ep := range out.Items {
			m[ep.ID] = ep
		}
		return m
	}
	if n := len(list()); n != 0 {
		t.Fatalf("a new tenancy lists %d endpoints", n)
	}
	r := env.do("POST", endpointsPath, env.createBody("first"), nil)
	var ep endpointJSON
	r.decode(t, &ep)
	for i, want := range []struct {
		step  func()
		name  string
		state string
	}{
		{func() {}, "first", "CREATING"},
		{func() {}, "first", "CREATING"}, // unchanged: from the decoded records
		{func() { clock.Advance(3 * time.Second) }, "first", "ACTIVE"},
		{func() { env.do("PUT", endpointsPath+"/"+ep.ID, map[string]any{"displayName": "renamed"}, nil) }, "renamed", "UPDATING"},
		{func() { clock.Advance(3 * time.Second) }, "renamed", "ACTIVE"},
		{func() { env.do("DELETE", endpointsPath+"/"+ep.ID, nil, nil) }, "renamed", "DELETING"},
		{func() { clock.Advance(3 * time.Second) }, "renamed", "DELETED"},
		{func() { clock.Advance(2 * time.Hour) }, "", ""},
	} {
		want.step()
		got, ok := list()[ep.ID]
		if want.name == "" {
			if ok {
				t.Errorf("step %d: listed %+v, want it purged", i, got)
			}
			continue
		}
		if !ok || got.DisplayName != want.name || got.LifecycleState != want.state || got.TimeUpdated != nil {
			t.Errorf("step %d: listed %+v (found %v), want %s %s without timeUpdated", i, got, ok, want.name, want.state)
		}
	}
}

func TestEmulatorModelsProjectsAndWorkRequests(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	c, ctx := env.client(), t.Context()

	models, err := c.ListModels(ctx, ailanguage.ListModelsRequest{CompartmentId: &env.compartment, LifecycleState: ailanguage.ModelLifecycleStateActive})
	if err != nil {
		t.Fatalf("ListModels: %v", err)
	}
	if len(models.Items) != 1 || deref(models.Items[0].Id) != env.activeModel || deref(models.Items[0].ProjectId) != env.project {
		t.Fatalf("ListModels(ACTIVE) = %v, want the seeded trained model", models.Items)
	}
	if _, ok := models.Items[0].ModelDetails.(ailanguage.TextClassificationModelDetails); !ok {
		t.Errorf("model details are %T, want TextClassificationModelDetails", models.Items[0].ModelDetails)
	}
	model, err := c.GetModel(ctx, ailanguage.GetModelRequest{ModelId: &env.failedModel})
	if err != nil || model.LifecycleState != ailanguage.ModelLifecycleStateFailed || model.Etag == nil {
		t.Errorf("GetModel(failed model) = %v, %v; want state FAILED and an etag", model.Model, err)
	}
	projects, err := c.ListProjects(ctx, ailanguage.ListProjectsRequest{CompartmentId: &env.compartment})
	if err != nil || len(projects.Items) != 1 || deref(projects.Items[0].Id) != env.project {
		t.Errorf("ListProjects = %v, %v; want the seeded project", projects.Items, err)
	}
	if p, err := c.GetProject(ctx, ailanguage.GetProjectRequest{ProjectId: &env.project}); err != nil || p.LifecycleState != ailanguage.ProjectLifecycleStateActive {
		t.Errorf("GetProject = %v, %v", p.Project, err)
	}

	created, err := c.CreateEndpoint(ctx, ailanguage.CreateEndpointRequest{CreateEndpointDetails: ailanguage.CreateEndpointDetails{
		CompartmentId: &env.compartment, ModelId: &env.activeModel, InferenceUnits: common.Int(2),
		DefinedTags: map[string]map[string]interface{}{"Operations": {"CostCenter": "42"}},
	}})
	if err != nil {
		t.Fatalf("CreateEndpoint: %v", err)
	}
	if created.LifecycleState != ailanguage.EndpointLifecycleStateCreating || *created.InferenceUnits != 2 || created.DefinedTags["Operations"]["CostCenter"] != "42" {
		t.Errorf("CreateEndpoint = %v", created.Endpoint)
	}
	wrs, err := c.ListWorkRequests(ctx, ailanguage.ListWorkRequestsRequest{CompartmentId: &env.compartment, ResourceId: created.Id})
	if err != nil || len(wrs.Items) != 1 || deref(wrs.Items[0].Id) != deref(created.OpcWorkRequestId) || wrs.Items[0].Status != ailanguage.OperationStatusSucceeded {
		t.Errorf("ListWorkRequests(resourceId) = %v, %v; want the create's work request, SUCCEEDED", wrs.Items, err)
	}
	wr, err := c.GetWorkRequest(ctx, ailanguage.GetWorkRequestRequest{WorkRequestId: created.OpcWorkRequestId})
	if err != nil || wr.OperationType != ailanguage.OperationTypeCreateEndpoint || *wr.PercentComplete != 100 || wr.Etag == nil {
		t.Errorf("GetWorkRequest = %v, %v", wr.WorkRequest, err)
	}
	errs, err := c.ListWorkRequestErrors(ctx, ailanguage.ListWorkRequestErrorsRequest{WorkRequestId: created.OpcWorkRequestId})
	if err != nil || len(errs.Items) != 0 {
		t.Errorf("ListWorkRequestErrors of a success = %v, %v; want none", errs.Items, err)
	}
}

func TestEmulatorSeedIsIdempotent(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	before := [5]string{}
	before[0], before[1], before[2], before[3], before[4] = env.emu.SeedIDs()
	if err := env.emu.Seed(); err != nil {
		t.Fatal(err)
	}
	reopened := New(env.store, env.creds)
	after := [5]string{}
	after[0], after[1], after[2], after[3], after[4] = reopened.SeedIDs()
	if before != after {
		t.Errorf("SeedIDs after a second Seed and a new Emulator = %v, want %v", after, before)
	}
	if before[0] != env.creds.OCITenancy || !strings.HasPrefix(before[1], "ocid1.compartment.oc1..") ||
		!strings.HasPrefix(before[2], "ocid1.ailanguageproject.oc1.iad.") || !strings.HasPrefix(before[3], "ocid1.ailanguagemodel.oc1.iad.") {
		t.Errorf("SeedIDs = %v, want OCIDs of the documented shapes", before)
	}
	r := env.do("GET", "/20221001/models?compartmentId="+env.compartment, nil, nil)
	var models struct{ Items []map[string]any }
	r.decode(t, &models)
	if len(models.Items) != 2 {
		t.Errorf("after two Seeds there are %d models, want 2", len(models.Items))
	}
}

// Ids of TestSeedFrom's objects.
const (
	sfCompA   = "ocid1.compartment.oc1..seedfroma"
	sfCompB   = "ocid1.compartment.oc1..seedfromb"
	sfProjA   = "ocid1.ailanguageproject.oc1.iad.seedfroma"
	sfProjB   = "ocid1.ailanguageproject.oc1.iad.seedfromb"
	sfModelA  = "ocid1.ailanguagemodel.oc1.iad.seedfroma"
	sfModelB  = "ocid1.ailanguagemodel.oc1.iad.seedfromb"
	sfModelC  = "ocid1.ailanguagemodel.oc1.iad.seedfromc"
	sfNoComp  = "ocid1.compartment.oc1..nope"
	sfNoProj  = "ocid1.ailanguageproject.oc1.iad.nope"
	sfCreated = "2024-05-06T07:08:09.123Z"
)

// seedFromEnv is an emulator seeded at sfCreated.
func seedFromEnv(t *testing.T) *testEnv {
	t.Helper()
	at := time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC)
	return newEnv(t, envOptions{now: func() time.Time { return at }})
}

// stored returns the document under bucket/id, decoded, or nil.
func (env *testEnv) stored(bucket, id string) any {
	env.t.Helper()
	var v any
	if err := env.store.View(func(tx emulator.Tx) error {
		_, err := tx.Get(bucket, id, &v)
		return err
	}); err != nil {
		env.t.Fatal(err)
	}
	return v
}

// TestSeedFrom pins what SeedFrom writes, defaults and counts.
func TestSeedFrom(t *testing.T) {
	t.Parallel()
	env := seedFromEnv(t)
	d := SeedData{
		Compartments: []CompartmentSeed{
			{ID: sfCompA, Name: "team-a"},
			{ID: sfCompB, Name: "team-b", ParentID: sfCompA},
			{ID: env.otherCompartment, Name: "renamed"},
		},
		Projects: []ProjectSeed{
			{ID: sfProjA, DisplayName: "plain"},
			{ID: sfProjB, DisplayName: "full", CompartmentID: sfCompB, Description: "the B project", State: "FAILED", FreeformTags: map[string]string{"team": "b"}},
			{ID: env.project, DisplayName: "renamed"},
		},
		Models: []ModelSeed{
			{ID: sfModelA, DisplayName: "defaults", ProjectID: sfProjB},
			{
				ID: sfModelB, DisplayName: "full", ProjectID: sfProjA, CompartmentID: sfCompA, State: "FAILED", LifecycleDetails: "no data",
				ModelType: "NAMED_ENTITY_RECOGNITION", LanguageCode: "de", Description: "the B model", Version: "2.1", FreeformTags: map[string]string{"k": "v"},
			},
			{ID: sfModelC, DisplayName: "in the seeded project", ProjectID: env.project, ModelType: "TEXT_CLASSIFICATION"},
			{ID: env.activeModel, DisplayName: "renamed", ProjectID: env.project},
		},
	}
	seed := func() (added, kept int) {
		t.Helper()
		if err := env.store.Update(func(tx emulator.Tx) (err error) {
			added, kept, err = env.emu.SeedFrom(tx, d)
			return err
		}); err != nil {
			t.Fatalf("SeedFrom: %v", err)
		}
		return added, kept
	}
	if added, kept := seed(); added != 7 || kept != 3 {
		t.Errorf("SeedFrom = %d added, %d kept; want 7, 3", added, kept)
	}
	tenancy := env.creds.OCITenancy
	empty := `"definedTags": {}, "systemTags": {}`
	times := `"timeCreated": "` + sfCreated + `", "timeUpdated": "` + sfCreated + `"`
	want := []struct{ bucket, id, json string }{
		{bucketCompartments, sfCompA, `{"id": "` + sfCompA + `", "name": "team-a", "parent": "` + tenancy + `"}`},
		{bucketCompartments, sfCompB, `{"id": "` + sfCompB + `", "name": "team-b", "parent": "` + sfCompA + `"}`},
		{bucketCompartments, env.otherCompartment, `{"id": "` + env.otherCompartment + `", "name": "reconcile-other", "parent": "` + tenancy + `"}`},
		{bucketProjects, sfProjA, `{"id": "` + sfProjA + `", "displayName": "plain", "compartmentId": "` + tenancy + `", ` + times +
			`, "lifecycleState": "ACTIVE", "freeformTags": {}, ` + empty + `}`},
		{bucketProjects, sfProjB, `{"id": "` + sfProjB + `", "displayName": "full", "compartmentId": "` + sfCompB + `", ` + times +
			`, "lifecycleState": "FAILED", "description": "the B project", "freeformTags": {"team": "b"}, ` + empty + `}`},
		{bucketModels, sfModelA, `{"id": "` + sfModelA + `", "displayName": "defaults", "compartmentId": "` + sfCompB + `", "projectId": "` + sfProjB + `", ` + times +
			`, "lifecycleState": "ACTIVE", "modelDetails": {"modelType": "TEXT_CLASSIFICATION", "languageCode": "en", "classificationMode": {"classificationMode": "MULTI_CLASS"}}, "freeformTags": {}, ` + empty + `}`},
		{bucketModels, sfModelB, `{"id": "` + sfModelB + `", "displayName": "full", "compartmentId": "` + sfCompA + `", "projectId": "` + sfProjA + `", ` + times +
			`, "lifecycleState": "FAILED", "lifecycleDetails": "no data", "description": "the B model", "version": "2.1", "modelDetails": {"modelType": "NAMED_ENTITY_RECOGNITION", "languageCode": "de"}, "freeformTags": {"k": "v"}, ` + empty + `}`},
		{bucketModels, sfModelC, `{"id": "` + sfModelC + `", "displayName": "in the seeded project", "compartmentId": "` + tenancy + `", "projectId": "` + env.project + `", ` + times +
			`, "lifecycleState": "ACTIVE", "modelDetails": {"modelType": "TEXT_CLASSIFICATION", "languageCode": "en", "classificationMode": {"classificationMode": "MULTI_CLASS"}}, "freeformTags": {}, ` + empty + `}`},
	}
	check := func() {
		t.Helper()
		for _, w := range want {
			var v any
			if err := json.Unmarshal([]byte(w.json), &v); err != nil {
				t.Fatalf("%s/%s: bad expectation: %v", w.bucket, w.id, err)
			}
			if got := env.stored(w.bucket, w.id); !reflect.DeepEqual(got, v) {
				t.Errorf("%s/%s =\n%s\nwant\n%s", w.bucket, w.id, mustJSON(got), mustJSON(v))
			}
		}
		for bucket, id := range map[string]string{bucketProjects: env.project, bucketModels: env.activeModel} {
			if got := env.stored(bucket, id).(map[string]any)["displayName"]; got == "renamed" {
				t.Errorf("%s/%s was overwritten by SeedFrom", bucket, id)
			}
		}
	}
	check()
	if added, kept := seed(); added != 0 || kept != 10 {
		t.Errorf("SeedFrom again = %d added, %d kept; want 0, 10", added, kept)
	}
	check()
}

// TestSeedFromRefused pins SeedFrom's checks, their order and their
// messages.
func TestSeedFromRefused(t *testing.T) {
	t.Parallel()
	comp := func(id, name, parent string) []CompartmentSeed {
		return []CompartmentSeed{{ID: id, Name: name, ParentID: parent}}
	}
	proj := func(p ProjectSeed) []ProjectSeed { return []ProjectSeed{p} }
	model := func(m ModelSeed) []ModelSeed { return []ModelSeed{m} }
	const seeded = "SEEDED" // stands for Seed's project in a case
	for name, tc := range map[string]struct {
		d        SeedData
		setup    func(tx emulator.Tx) error // committed before SeedFrom
		readOnly bool                       // SeedFrom runs in a View
		want     string
	}{
		"compartment id": {d: SeedData{Compartments: comp("team", "team", "")},
			want: `compartments[0] "team": id must be an OCID of the form ocid1.compartment.REALM.[REGION].UNIQUE`},
		"compartment id before name": {d: SeedData{Compartments: comp("ocid1.compartment", "", "")},
			want: `compartments[0] "ocid1.compartment": id must be an OCID of the form ocid1.compartment.REALM.[REGION].UNIQUE`},
		"compartment twice": {d: SeedData{Compartments: append(comp(sfCompA, "a", ""), comp(sfCompA, "a", "")...)},
			want: `compartments[1] "` + sfCompA + `": the same id as compartments[0]`},
		"compartment name": {d: SeedData{Compartments: comp(sfCompA, "", sfNoComp)},
			want: `compartments[0] "` + sfCompA + `": name is required`},
		"compartment parent": {d: SeedData{Compartments: comp(sfCompA, "a", sfNoComp)},
			want: `compartments[0] "` + sfCompA + `": parentId "` + sfNoComp + `" is no compartment of the seed file or of the emulator's data (a parent must be listed before its children)`},
		"child before parent": {d: SeedData{Compartments: append(comp(sfCompB, "b", sfCompA), comp(sfCompA, "a", "")...)},
			want: `compartments[0] "` + sfCompB + `": parentId "` + sfCompA + `" is no compartment of the seed file or of the emulator's data (a parent must be listed before its children)`},
		"compartment not written": {d: SeedData{Compartments: comp(sfCompA, "a", "")}, readOnly: true,
			want: `compartments[0] "` + sfCompA + `": tx not writable`},
		"project id": {d: SeedData{Projects: proj(ProjectSeed{ID: sfCompA, DisplayName: "p"})},
			want: `projects[0] "` + sfCompA + `": id must be an OCID of the form ocid1.ailanguageproject.REALM.[REGION].UNIQUE`},
		"project twice": {d: SeedData{Projects: []ProjectSeed{{ID: sfProjA, DisplayName: "p"}, {ID: sfProjA, DisplayName: "p"}}},
			want: `projects[1] "` + sfProjA + `": the same id as projects[0]`},
		"project name": {d: SeedData{Projects: proj(ProjectSeed{ID: sfProjA, State: "RUNNING"})},
			want: `projects[0] "` + sfProjA + `": displayName is required`},
		"project state": {d: SeedData{Projects: proj(ProjectSeed{ID: sfProjA, DisplayName: "p", State: "RUNNING", CompartmentID: sfNoComp})},
			want: `projects[0] "` + sfProjA + `": state "RUNNING" is not one of CREATING, ACTIVE, UPDATING, DELETING, DELETED, FAILED`},
		"project compartment": {d: SeedData{Projects: proj(ProjectSeed{ID: sfProjA, DisplayName: "p", CompartmentID: sfNoComp})},
			want: `projects[0] "` + sfProjA + `": compartmentId "` + sfNoComp + `" is no compartment of the seed file or of the emulator's data`},
		"project not written": {d: SeedData{Projects: proj(ProjectSeed{ID: sfProjA, DisplayName: "p"})}, readOnly: true,
			want: `projects[0] "` + sfProjA + `": tx not writable`},
		"model id": {d: SeedData{Models: model(ModelSeed{ID: sfProjA, DisplayName: "m", ProjectID: seeded})},
			want: `models[0] "` + sfProjA + `": id must be an OCID of the form ocid1.ailanguagemodel.REALM.[REGION].UNIQUE`},
		"model twice": {d: SeedData{Models: []ModelSeed{{ID: sfModelA, DisplayName: "m", ProjectID: seeded}, {ID: sfModelA, DisplayName: "m", ProjectID: seeded}}},
			want: `models[1] "` + sfModelA + `": the same id as models[0]`},
		"model name": {d: SeedData{Models: model(ModelSeed{ID: sfModelA, State: "RUNNING"})},
			want: `models[0] "` + sfModelA + `": displayName is required`},
		"model state": {d: SeedData{Models: model(ModelSeed{ID: sfModelA, DisplayName: "m", State: "RUNNING", ModelType: "LLM"})},
			want: `models[0] "` + sfModelA + `": state "RUNNING" is not one of CREATING, ACTIVE, UPDATING, DELETING, DELETED, FAILED`},
		"model type": {d: SeedData{Models: model(ModelSeed{ID: sfModelA, DisplayName: "m", ModelType: "LLM"})},
			want: `models[0] "` + sfModelA + `": modelType "LLM" is not one of TEXT_CLASSIFICATION, NAMED_ENTITY_RECOGNITION`},
		"model project required": {d: SeedData{Models: model(ModelSeed{ID: sfModelA, DisplayName: "m", CompartmentID: sfNoComp})},
			want: `models[0] "` + sfModelA + `": projectId is required`},
		"model project": {d: SeedData{Models: model(ModelSeed{ID: sfModelA, DisplayName: "m", ProjectID: sfNoProj, CompartmentID: sfNoComp})},
			want: `models[0] "` + sfModelA + `": projectId "` + sfNoProj + `" is no project of the seed file or of the emulator's data`},
		"model project unreadable": {d: SeedData{Models: model(ModelSeed{ID: sfModelA, DisplayName: "m", ProjectID: sfProjA})},
			setup: func(tx emulator.Tx) error { return tx.Put(bucketProjects, sfProjA, "broken") },
			want:  `models[0] "` + sfModelA + `": decode oci.ailanguage.projects/` + sfProjA + `: json: cannot unmarshal string into Go value of type oci.projectView`},
		"model compartment": {d: SeedData{Models: model(ModelSeed{ID: sfModelA, DisplayName: "m", ProjectID: seeded, CompartmentID: sfNoComp})},
			want: `models[0] "` + sfModelA + `": compartmentId "` + sfNoComp + `" is no compartment of the seed file or of the emulator's data`},
		"model not written": {d: SeedData{Models: model(ModelSeed{ID: sfModelA, DisplayName: "m", ProjectID: seeded})}, readOnly: true,
			want: `models[0] "` + sfModelA + `": tx not writable`},
		"later entry": {
			d: SeedData{
				Compartments: comp(sfCompA, "a", ""),
				Projects:     proj(ProjectSeed{ID: sfProjA, DisplayName: "p", CompartmentID: sfCompA}),
				Models:       model(ModelSeed{ID: sfCompA, DisplayName: "m", ProjectID: sfProjA}),
			},
			want: `models[0] "` + sfCompA + `": id must be an OCID of the form ocid1.ailanguagemodel.REALM.[REGION].UNIQUE`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, envOptions{})
			for i := range tc.d.Models {
				if tc.d.Models[i].ProjectID == seeded {
					tc.d.Models[i].ProjectID = env.project
				}
			}
			if tc.setup != nil {
				if err := env.store.Update(tc.setup); err != nil {
					t.Fatal(err)
				}
			}
			run := env.store.Update
			if tc.readOnly {
				run = env.store.View
			}
			var added, kept int
			var err error
			_ = run(func(tx emulator.Tx) error {
				added, kept, err = env.emu.SeedFrom(tx, tc.d)
				return errors.New("roll back")
			})
			if err == nil || err.Error() != tc.want || added != 0 || kept != 0 {
				t.Errorf("SeedFrom = %d, %d, %v\nwant 0, 0, %s", added, kept, err, tc.want)
			}
		})
	}
}
