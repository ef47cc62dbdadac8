package main

// Log injection: what the specs and the clouds write reaches reconcile's
// output escaped, in every format, so that a pull request's author cannot
// start a line of the CI log with a command of the CI system (GitHub
// Actions acts on a line that begins, after white space, with "::") or a
// fake line of reconcile's.

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// injected is what a hostile spec puts after a value, in YAML's
// double-quoted form: each line a command of GitHub Actions or a fake
// verdict of reconcile's.
const injected = `\n::error::pwned\n::add-mask::masked\n::stop-commands::tok\n##vso[task.complete result=Succeeded]\nNo changes.`

// checkNoInjectedLine fails when a line that r printed begins, after white
// space, with a CI system's command (GitHub Actions', Azure Pipelines') or
// is a fake "No changes." line.
func checkNoInjectedLine(t *testing.T, r result) {
	t.Helper()
	for what, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
		for _, line := range strings.Split(out, "\n") {
			l := strings.TrimLeftFunc(line, unicode.IsSpace)
			if strings.HasPrefix(l, "::") || strings.HasPrefix(l, "##vso[") || strings.TrimSpace(l) == "No changes." {
				t.Errorf("reconcile %s: a line of its %s begins with the specs' or the cloud's text: %q\n%s", strings.Join(r.args, " "), what, line, r)
			}
		}
	}
}

func TestE2ELogInjection(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	var runs []result
	run := func(want int, args ...string) result {
		t.Helper()
		r := w.must(want, args...)
		runs = append(runs, r)
		return r
	}
	formats := []string{"text", "json", "markdown", "jsonl"}

	// A value the API refuses with an error that echoes it: Datadog's
	// "Invalid principal: '...' is not in a valid format".
	w.write("main.yaml", `resources:
  "::error::pol":
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:inject
      bindings:
        - relation: editor
          principals: ["role:x`+injected+`"]
`)
	for _, f := range formats {
		r := run(1, "apply", "--auto-approve", "--output", f)
		if !strings.Contains(r.stdout+r.stderr, `Invalid principal: 'role:x\`) || !strings.Contains(r.stdout+r.stderr, "::error::pwned") {
			t.Errorf("apply --output %s does not show the API's error, escaped:\n%s", f, r)
		}
	}

	// A lookup whose error echoes its argument: a diagnostic of the plan.
	w.write("main.yaml", `variables:
  svc:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: "nosuch`+injected+`"
outputs:
  etag: ${svc.etag}
`)
	for _, f := range formats {
		r := run(1, "plan", "--output", f)
		if !strings.Contains(r.stdout+r.stderr, `Service 'nosuch\`) || !strings.Contains(r.stdout+r.stderr, "::error::pwned") {
			t.Errorf("plan --output %s does not show the lookup's error, escaped:\n%s", f, r)
		}
	}

	// Names, values and outputs shown by every command, in every format.
	model := e.activeModel(t.TempDir())
	w.write("main.yaml", `resources:
`+endpointSpec(`"::error::ep"`, model, "ep-inject", `      description: "about`+injected+`"
      freeformTags:
        note: "tag`+injected+`"
`)+`outputs:
  "::add-mask::out": "out`+injected+`"
  "No changes.": ok
`)
	for _, f := range formats {
		r := run(0, "plan", "--output", f)
		if f == "text" && !strings.Contains(r.stdout, `"::error::ep"`) {
			t.Errorf("plan does not show the name, quoted:\n%s", r)
		}
	}
	run(0, "plan", "--out", "p.plan")
	for _, f := range formats[:3] {
		run(0, "show", "p.plan", "--output", f)
	}
	run(0, "apply", "p.plan")
	for _, f := range formats[:2] {
		run(0, "state", "list", "--output", f)
		run(0, "output", "--output", f)
	}
	run(0, "state", "show", "::error::ep")
	run(0, "output", "::add-mask::out")

	// The cloud changes the endpoint: drift and the plan show its values.
	c := e.ociClient(t.TempDir())
	id := w.stateList()["::error::ep"].ID
	if _, err := c.UpdateEndpoint(context.Background(), ailanguage.UpdateEndpointRequest{EndpointId: &id, UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{
		Description:  common.String("changed\n::error::drift\nNo changes."),
		FreeformTags: map[string]string{"note": "by hand\n::error::tag\nNo changes."},
	}}); err != nil {
		t.Fatal(err)
	}
	e.waitActive(c, id)
	for _, f := range formats[:3] {
		r := run(2, "drift", "--output", f)
		if f == "text" && !strings.Contains(r.stdout, `"changed\n::error::drift\nNo changes."`) {
			t.Errorf("drift does not show the live value, quoted:\n%s", r)
		}
	}
	for _, f := range formats {
		run(0, "plan", "--output", f)
	}

	// Importing an object whose values hold several lines prints YAML in
	// which no line begins with them.
	comp := server.Tenancy
	made, err := c.CreateEndpoint(context.Background(), ailanguage.CreateEndpointRequest{CreateEndpointDetails: ailanguage.CreateEndpointDetails{
		CompartmentId: &comp, ModelId: &model, DisplayName: common.String("made by hand"),
		Description:  common.String("imported\n::error::import\nNo changes."),
		FreeformTags: map[string]string{"::error::key": "v"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.waitActive(c, *made.Id)
	run(0, "import", "other", *made.Id, "--type", "oci:AiLanguage:Endpoint")

	for _, f := range []string{"text", "jsonl"} {
		run(0, "destroy", "--auto-approve", "--output", f)
	}

	// A spec file's name begins the line of a diagnostic.
	w.write("::stop-commands::tok.yaml", "unknownKey: 1\n")
	r := run(1, "validate")
	wantStderr(t, r, "./::stop-commands::tok.yaml:1:1: error:")

	for _, r := range runs {
		checkNoInjectedLine(t, r)
	}
}

// driverPackages matches the name of a driver's Go package used as the
// prefix of an error ("restrictionpolicy: create ..."), which says nothing
// to a user: errors name the resource and its type token instead.
var driverPackages = regexp.MustCompile(`\b(aiendpoint|aimodel|aiproject|ailanguage|endpointsiam|gcpiam|restrictionpolicy|httpretry): `)

// The clouds' refusals, on create, on a lookup and on a refresh, each say
// which resource, of which type, and what the API answered, and no Go
// package of reconcile's.
func TestE2EErrorsNameTypeAndResource(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	w.write("main.yaml", `resources:
  ep:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ocid1.compartment.oc1..nosuch
      modelId: `+e.activeModel(t.TempDir())+`
  sa:
    type: gcp:endpoints:ServiceIamBinding
    properties:
      serviceName: nosuch.endpoints.acme.cloud.goog
      role: roles/viewer
      members: ["user:a@example.com"]
  pol:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:named
      bindings:
        - relation: editor
          principals: ["role:nope"]
`)
	var runs []result
	r := w.must(1, "apply", "--auto-approve")
	runs = append(runs, r)
	wantStderr(t, r,
		"Error: ep (main.yaml:2:3): create oci:AiLanguage:Endpoint: oci API: 400 RelatedResourceNotAuthorizedOrNotFound: ",
		`Error: sa (main.yaml:7:3): create gcp:endpoints:ServiceIamBinding: get IAM policy of "services/nosuch.endpoints.acme.cloud.goog": gcp API: 403 PERMISSION_DENIED: `,
		"Error: pol (main.yaml:13:3): create datadog:RestrictionPolicy: datadog API: 400: Invalid principal: 'role:nope'")

	w.write("main.yaml", `variables:
  svc:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: nosuch.endpoints.acme.cloud.goog
resources:
  pol:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:named
      bindings:
        - relation: editor
          principals: ["`+role1+`"]
`)
	r = w.must(1, "plan")
	runs = append(runs, r)
	wantStderr(t, r, `main.yaml:3:5: error: fn::invoke gcp:endpoints:getServiceIamPolicy: get IAM policy of "services/nosuch.endpoints.acme.cloud.goog": gcp API: 403 PERMISSION_DENIED: `)

	w.write("main.yaml", `resources:
  pol:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:named
      bindings:
        - relation: editor
          principals: ["`+role1+`"]
`)
	runs = append(runs, w.must(0, "apply", "--auto-approve"))
	e.settings(server.Settings{FaultRate: 1, FaultStatuses: []int{403}})
	for _, f := range []string{"text", "markdown", "json"} {
		runs = append(runs, w.must(1, "drift", "--output", f))
	}
	runs = append(runs, w.must(1, "plan"))
	e.settings(server.Settings{})
	wantStdout(t, runs[len(runs)-4], "  ! pol (datadog:RestrictionPolicy) could not be read: datadog API: 403")
	wantStdout(t, runs[len(runs)-3], "<code>pol</code> (<code>datadog:RestrictionPolicy</code>) could not be read: datadog API: 403")
	wantStdout(t, runs[len(runs)-2], `"type": "datadog:RestrictionPolicy",`)
	wantStderr(t, runs[len(runs)-1], `refresh "pol": read datadog:RestrictionPolicy "dashboard:named": datadog API: 403`)
	for _, r := range runs {
		if m := driverPackages.FindString(r.stdout + r.stderr); m != "" {
			t.Errorf("reconcile %s names a Go package (%q):\n%s", strings.Join(r.args, " "), m, r)
		}
	}
}
