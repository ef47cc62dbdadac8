package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestE2EPlanFileWrongCloud: a plan file records the emulator and the
// accounts it was made in, and its apply refuses to run anywhere else:
// against another emulator, against the real clouds, or, behind the same
// URL, in other accounts (another tenancy, org and caller). Nothing is
// written to the cloud it was not made in.
func TestE2EPlanFileWrongCloud(t *testing.T) {
	needBinary(t)
	t.Parallel()
	// The second emulator's Datadog keys are of another org.
	e1 := startEmulator(t)
	e2 := startSeededEmulator(t, `{"datadog": {"user": {"roleId": "00000000-0000-0000-0000-000000000001", "orgId": "9d2a5c1e-0000-4000-8000-00000000abcd"}}}`)
	// One URL in front of either emulator: what a plan file's "emulator"
	// cannot tell apart, its accounts can.
	var target atomic.Pointer[url.URL]
	u1, _ := url.Parse(e1.URL)
	u2, _ := url.Parse(e2.URL)
	target.Store(u1)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httputil.NewSingleHostReverseProxy(target.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	w := newWS(t, e1)
	w.write("main.yaml", `variables:
  svcPolicy:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: orders.endpoints.acme-prod.cloud.goog
resources:
  project:
    type: oci:AiLanguage:Project
    properties:
      compartmentId: `+e1.srv.Creds.OCITenancy+`
      displayName: wrong-cloud
  pol:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: `+rid(t, "")+`
      bindings:
        - relation: editor
          principals: ["role:00000000-0000-0000-0000-000000000001"]
outputs:
  etag: ${svcPolicy.etag}
`)
	r := w.must(0, "plan", "--out", "p.plan")
	wantStdout(t, r, "reconcile apply --emulator="+e1.URL+" p.plan")

	mark2 := e2.mark()
	r = w.rc("apply", "p.plan", "--emulator="+e2.URL)
	if r.code != 1 {
		t.Fatalf("apply on another emulator: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, "it was made against the emulator at "+e1.URL+", not at "+e2.URL+": pass --emulator="+e1.URL)
	if calls := e2.callsSince(mark2, ""); len(calls) != 0 {
		t.Errorf("the refused apply called the other emulator: %v", calls)
	}

	r = w.rc("apply", "p.plan")
	if r.code != 1 {
		t.Fatalf("apply against the real clouds: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, "it was made against the emulator at "+e1.URL+", and this apply would run against the real clouds: pass --emulator="+e1.URL)

	// The same URL, in front of another emulator: other accounts.
	if r = w.rc("plan", "--out", "front.plan", "--emulator="+front.URL); r.code != 0 {
		t.Fatalf("plan through the front: want exit 0, got:\n%s", r)
	}
	target.Store(u2)
	mark2 = e2.mark()
	r = w.rc("apply", "front.plan", "--emulator="+front.URL)
	if r.code != 1 {
		t.Fatalf("apply in other accounts: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, `it was made in the datadog account "org `+e1.orgID()+` at datadoghq.com", and this apply would run in "org 9d2a5c1e-0000-4000-8000-00000000abcd at datadoghq.com": use the credentials of the account it was made in`)
	for _, c := range e2.callsSince(mark2, "") {
		if c.Method != "GET" && !strings.HasSuffix(c.Path, ":getIamPolicy") && c.Path != "/tokeninfo" {
			t.Errorf("the refused apply changed the other cloud: %v", c)
		}
	}

	// Where it was made, it applies.
	target.Store(u1)
	if r = w.rc("apply", "front.plan", "--emulator="+front.URL); r.code != 0 {
		t.Errorf("apply where the plan was made: want exit 0, got:\n%s", r)
	}
}
