//go:build conformance

package conformance_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/DataDog/datadog-api-client-go/v2/api/datadog"
	"github.com/DataDog/datadog-api-client-go/v2/api/datadogV2"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// datadogContext carries the keys and selects server index 1
// ("{protocol}://{name}") pointed at the emulator, as cloud-apis.md 3.7
// describes.
func datadogContext(ctx context.Context, srv *server.Server, apiKey, appKey string) context.Context {
	ctx = context.WithValue(ctx, datadog.ContextAPIKeys, map[string]datadog.APIKey{
		"apiKeyAuth": {Key: apiKey},
		"appKeyAuth": {Key: appKey},
	})
	ctx = context.WithValue(ctx, datadog.ContextServerIndex, 1)
	return context.WithValue(ctx, datadog.ContextServerVariables, map[string]string{
		"protocol": "http",
		"name":     strings.TrimPrefix(srv.URL, "http://"),
	})
}

// wantDatadogError checks the status and the decoded APIErrorResponse.
func wantDatadogError(t *testing.T, what string, resp *http.Response, err error, status int, messages ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want %d", what, status)
	}
	if resp == nil || resp.StatusCode != status {
		t.Fatalf("%s: %v (response %v), want status %d", what, err, resp, status)
	}
	var ge datadog.GenericOpenAPIError
	if !errors.As(err, &ge) {
		t.Fatalf("%s: error %T is not a datadog.GenericOpenAPIError: %v", what, err, err)
	}
	model, ok := ge.Model().(datadogV2.APIErrorResponse)
	if !ok || model.UnparsedObject != nil {
		t.Fatalf("%s: the SDK did not decode an APIErrorResponse: model %#v, body %s", what, ge.Model(), ge.Body())
	}
	if !slices.Equal(model.Errors, messages) {
		t.Fatalf("%s: errors %q, want %q", what, model.Errors, messages)
	}
}

func bindingsOf(t *testing.T, what string, p datadogV2.RestrictionPolicyResponse, id string) []datadogV2.RestrictionPolicyBinding {
	t.Helper()
	if p.UnparsedObject != nil || p.Data.UnparsedObject != nil || p.Data.Attributes.UnparsedObject != nil {
		t.Fatalf("%s: the SDK could not decode the response: %v", what, p.UnparsedObject)
	}
	if len(p.AdditionalProperties)+len(p.Data.AdditionalProperties)+len(p.Data.Attributes.AdditionalProperties) > 0 {
		t.Errorf("%s: fields outside the spec: %v %v %v", what, p.AdditionalProperties, p.Data.AdditionalProperties, p.Data.Attributes.AdditionalProperties)
	}
	if p.Data.Id != id || p.Data.Type != datadogV2.RESTRICTIONPOLICYTYPE_RESTRICTION_POLICY {
		t.Fatalf("%s: data id %q type %q, want %q restriction_policy", what, p.Data.Id, p.Data.Type, id)
	}
	if p.Data.Attributes.Bindings == nil {
		t.Fatalf("%s: bindings are nil, want an array", what)
	}
	for _, b := range p.Data.Attributes.Bindings {
		if b.UnparsedObject != nil {
			t.Fatalf("%s: binding not decoded: %v", what, b.UnparsedObject)
		}
	}
	return p.Data.Attributes.Bindings
}

func sameBindings(got, want []datadogV2.RestrictionPolicyBinding) bool {
	return slices.EqualFunc(got, want, func(a, b datadogV2.RestrictionPolicyBinding) bool {
		return a.Relation == b.Relation && slices.Equal(a.Principals, b.Principals)
	})
}

func policyRequest(id string, bindings ...datadogV2.RestrictionPolicyBinding) datadogV2.RestrictionPolicyUpdateRequest {
	return *datadogV2.NewRestrictionPolicyUpdateRequest(*datadogV2.NewRestrictionPolicy(
		*datadogV2.NewRestrictionPolicyAttributes(bindings), id, datadogV2.RESTRICTIONPOLICYTYPE_RESTRICTION_POLICY))
}

func TestDatadogRestrictionPolicy(t *testing.T) {
	srv, _ := startEmulator(t)
	ctx := datadogContext(testContext(t), srv, srv.Creds.DatadogAPIKey, srv.Creds.DatadogAppKey)
	client := datadog.NewAPIClient(datadog.NewConfiguration())
	users := datadogV2.NewUsersApi(client)
	policies := datadogV2.NewRestrictionPoliciesApi(client)

	// The current user, and the org id the "org:" principals need.
	me, resp, err := users.GetCurrentUser(ctx)
	if err != nil {
		t.Fatalf("GetCurrentUser: %v", err)
	}
	if resp.StatusCode != 200 || me.UnparsedObject != nil || me.Data == nil || me.Data.UnparsedObject != nil {
		t.Fatalf("GetCurrentUser: status %d, unparsed %v, data %+v", resp.StatusCode, me.UnparsedObject, me.Data)
	}
	rel := me.Data.Relationships
	if me.Data.Id == nil || me.Data.Type == nil || *me.Data.Type != datadogV2.USERSTYPE_USERS || me.Data.Attributes == nil || me.Data.Attributes.UnparsedObject != nil ||
		rel == nil || rel.UnparsedObject != nil || rel.Org == nil || rel.Org.Data.Type != datadogV2.ORGANIZATIONSTYPE_ORGS {
		t.Fatalf("GetCurrentUser: data %+v, relationships %+v", me.Data, rel)
	}
	checkCurrentUser(t, me)
	orgID := rel.Org.Data.Id
	if len(orgID) != 36 {
		t.Errorf("GetCurrentUser: org id %q is not a UUID", orgID)
	}
	var roleID string
	if rel.Roles != nil && len(rel.Roles.Data) > 0 && rel.Roles.Data[0].Id != nil {
		roleID = *rel.Roles.Data[0].Id
	} else {
		t.Fatalf("GetCurrentUser: no role in relationships %+v", rel)
	}

	// Upsert (create), get, replace, delete.
	const rid = "dashboard:abc-def-ghi"
	first := []datadogV2.RestrictionPolicyBinding{
		{Relation: "editor", Principals: []string{"org:" + orgID}},
		{Relation: "viewer", Principals: []string{"role:" + roleID, "user:" + *me.Data.Id}},
	}
	up, resp, err := policies.UpdateRestrictionPolicy(ctx, rid, policyRequest(rid, first...))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("UpdateRestrictionPolicy (create): %v (%v)", err, resp)
	}
	if got := bindingsOf(t, "UpdateRestrictionPolicy (create)", up, rid); !sameBindings(got, first) {
		t.Errorf("UpdateRestrictionPolicy (create): bindings %+v, want %+v", got, first)
	}
	got, _, err := policies.GetRestrictionPolicy(ctx, rid)
	if err != nil {
		t.Fatalf("GetRestrictionPolicy: %v", err)
	}
	if b := bindingsOf(t, "GetRestrictionPolicy", got, rid); !sameBindings(b, first) {
		t.Errorf("GetRestrictionPolicy: bindings %+v, want %+v", b, first)
	}

	second := []datadogV2.RestrictionPolicyBinding{{Relation: "viewer", Principals: []string{"org:" + orgID}}}
	up, _, err = policies.UpdateRestrictionPolicy(ctx, rid, policyRequest(rid, second...),
		*datadogV2.NewUpdateRestrictionPolicyOptionalParameters().WithAllowSelfLockout(true))
	if err != nil {
		t.Fatalf("UpdateRestrictionPolicy (replace): %v", err)
	}
	if b := bindingsOf(t, "UpdateRestrictionPolicy (replace)", up, rid); !sameBindings(b, second) {
		t.Errorf("UpdateRestrictionPolicy (replace): bindings %+v, want %+v", b, second)
	}
	got, _, err = policies.GetRestrictionPolicy(ctx, rid)
	if err != nil {
		t.Fatalf("GetRestrictionPolicy after the replace: %v", err)
	}
	if b := bindingsOf(t, "GetRestrictionPolicy after the replace", got, rid); !sameBindings(b, second) {
		t.Errorf("GetRestrictionPolicy after the replace: bindings %+v, want only %+v", b, second)
	}

	resp, err = policies.DeleteRestrictionPolicy(ctx, rid)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("DeleteRestrictionPolicy: %v (%v)", err, resp)
	}
	got, _, err = policies.GetRestrictionPolicy(ctx, rid)
	if err != nil {
		t.Fatalf("GetRestrictionPolicy after the delete: %v", err)
	}
	if b := bindingsOf(t, "GetRestrictionPolicy after the delete", got, rid); len(b) != 0 {
		t.Errorf("GetRestrictionPolicy after the delete: bindings %+v, want none", b)
	}
	resp, err = policies.DeleteRestrictionPolicy(ctx, rid)
	if err != nil || resp.StatusCode != 204 {
		t.Errorf("DeleteRestrictionPolicy without a policy: %v (%v), want 204", err, resp)
	}

	// A resource that never had a policy: 200 with "bindings": [].
	got, resp, err = policies.GetRestrictionPolicy(ctx, "dashboard:test-get")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GetRestrictionPolicy without a policy: %v (%v)", err, resp)
	}
	if b := bindingsOf(t, "GetRestrictionPolicy without a policy", got, "dashboard:test-get"); len(b) != 0 {
		t.Errorf("GetRestrictionPolicy without a policy: bindings %+v", b)
	}

	// A private location keeps its own "pl:" prefix after the type.
	const pl = "synthetics-private-location:pl:conformance-1234"
	editors := []datadogV2.RestrictionPolicyBinding{{Relation: "editor", Principals: []string{"org:" + orgID}}}
	if _, _, err := policies.UpdateRestrictionPolicy(ctx, pl, policyRequest(pl, editors...)); err != nil {
		t.Fatalf("UpdateRestrictionPolicy(%s): %v", pl, err)
	}
	got, _, err = policies.GetRestrictionPolicy(ctx, pl)
	if err != nil {
		t.Fatalf("GetRestrictionPolicy(%s): %v", pl, err)
	}
	if b := bindingsOf(t, "GetRestrictionPolicy("+pl+")", got, pl); !sameBindings(b, editors) {
		t.Errorf("GetRestrictionPolicy(%s): bindings %+v, want %+v", pl, b, editors)
	}

	// A malformed resource id (recorded by the SDK's scenarios).
	_, resp, err = policies.GetRestrictionPolicy(ctx, "malformed")
	wantDatadogError(t, "GetRestrictionPolicy(malformed)", resp, err, 400, "Invalid resource: 'malformed' is not in a valid format")
	_, resp, err = policies.UpdateRestrictionPolicy(ctx, "malformed", policyRequest("malformed", second...))
	wantDatadogError(t, "UpdateRestrictionPolicy(malformed)", resp, err, 400, "Invalid resource: 'malformed' is not in a valid format")
	resp, err = policies.DeleteRestrictionPolicy(ctx, "malformed")
	if err == nil || resp == nil || resp.StatusCode != 400 {
		t.Errorf("DeleteRestrictionPolicy(malformed): %v (%v), want 400", err, resp)
	}

	// A type without restriction policies, and a principal of a type no
	// relation supports (recorded by Datadog's Terraform provider).
	_, resp, err = policies.UpdateRestrictionPolicy(ctx, "security_rule:xs9-9lw-fjj", policyRequest("security_rule:xs9-9lw-fjj", editors...))
	wantDatadogError(t, "UpdateRestrictionPolicy(security_rule:...)", resp, err, 400,
		"Invalid resource type: 'security_rule' does not support restriction policies")
	_, resp, err = policies.GetRestrictionPolicy(ctx, "security_rule:xs9-9lw-fjj")
	wantDatadogError(t, "GetRestrictionPolicy(security_rule:...)", resp, err, 400,
		"Invalid resource type: 'security_rule' does not support restriction policies")
	const foo = "foo:4dee724d-00cc-11ea-a77b-570c9d03c6c5"
	_, resp, err = policies.UpdateRestrictionPolicy(ctx, "security-rule:xs9-9lw-fjj", policyRequest("security-rule:xs9-9lw-fjj",
		datadogV2.RestrictionPolicyBinding{Relation: "editor", Principals: []string{foo, "org:" + orgID}}))
	wantDatadogError(t, "UpdateRestrictionPolicy with a foo: principal", resp, err, 400,
		`Invalid request: [PrincipalTypeInvalidForRelation] principal "`+foo+`" is not supported by "editor" relation, supported types: "org, role, team, user"`)
}

// TestDatadogSelfLockout: a POST that would lower the caller's own access
// to the resource is refused unless allow_self_lockout=true, which the
// seeded user (an admin, with user_access_manage) may pass.
func TestDatadogSelfLockout(t *testing.T) {
	srv, _ := startEmulator(t)
	ctx := datadogContext(testContext(t), srv, srv.Creds.DatadogAPIKey, srv.Creds.DatadogAppKey)
	client := datadog.NewAPIClient(datadog.NewConfiguration())
	policies := datadogV2.NewRestrictionPoliciesApi(client)
	me, _, err := datadogV2.NewUsersApi(client).GetCurrentUser(ctx)
	if err != nil {
		t.Fatalf("GetCurrentUser: %v", err)
	}
	org := "org:" + me.Data.Relationships.Org.Data.Id
	const rid, other = "dashboard:lockout", "role:00000000-0000-0000-0000-000000000009"
	mine := []datadogV2.RestrictionPolicyBinding{{Relation: "editor", Principals: []string{org}}}
	if _, _, err := policies.UpdateRestrictionPolicy(ctx, rid, policyRequest(rid, mine...)); err != nil {
		t.Fatalf("UpdateRestrictionPolicy keeping the caller editor: %v", err)
	}
	viewer := []datadogV2.RestrictionPolicyBinding{{Relation: "viewer", Principals: []string{org}}, {Relation: "editor", Principals: []string{other}}}
	for _, opt := range [][]datadogV2.UpdateRestrictionPolicyOptionalParameters{
		nil, {*datadogV2.NewUpdateRestrictionPolicyOptionalParameters().WithAllowSelfLockout(false)},
	} {
		_, resp, err := policies.UpdateRestrictionPolicy(ctx, rid, policyRequest(rid, viewer...), opt...)
		wantDatadogError(t, "UpdateRestrictionPolicy demoting the caller", resp, err, 400,
			"Invalid request: users cannot decrease their own level of access (from editor to viewer)")
	}
	got, _, err := policies.GetRestrictionPolicy(ctx, rid)
	if err != nil {
		t.Fatalf("GetRestrictionPolicy: %v", err)
	}
	if b := bindingsOf(t, "GetRestrictionPolicy after the refusals", got, rid); !sameBindings(b, mine) {
		t.Errorf("GetRestrictionPolicy after the refusals: bindings %+v, want %+v unchanged", b, mine)
	}
	up, _, err := policies.UpdateRestrictionPolicy(ctx, rid, policyRequest(rid, viewer...),
		*datadogV2.NewUpdateRestrictionPolicyOptionalParameters().WithAllowSelfLockout(true))
	if err != nil {
		t.Fatalf("UpdateRestrictionPolicy with allow_self_lockout=true: %v", err)
	}
	if b := bindingsOf(t, "UpdateRestrictionPolicy with allow_self_lockout=true", up, rid); !sameBindings(b, viewer) {
		t.Errorf("UpdateRestrictionPolicy with allow_self_lockout=true: bindings %+v, want %+v", b, viewer)
	}
	// A new policy without the caller at all.
	_, resp, err := policies.UpdateRestrictionPolicy(ctx, "notebook:lockout", policyRequest("notebook:lockout",
		datadogV2.RestrictionPolicyBinding{Relation: "editor", Principals: []string{other}}))
	wantDatadogError(t, "UpdateRestrictionPolicy without the caller", resp, err, 400,
		"Invalid request: users cannot decrease their own level of access (from editor to no access)")
}

// checkCurrentUser checks that the SDK decodes every attribute,
// relationship and included object of the current user that Datadog
// sends (a recording of 2026): nothing unparsed, the nullable fields null,
// allowed_login_methods and team_roles (not in the SDK's model) kept as
// additional properties, and
// the role, its permissions and the org each decoded as what they are.
func checkCurrentUser(t *testing.T, me datadogV2.UserResponse) {
	t.Helper()
	a := me.Data.Attributes
	// allowed_login_methods, which Datadog sends, is not in the model.
	if m, ok := a.AdditionalProperties["allowed_login_methods"].([]any); !ok || len(m) != 0 || len(a.AdditionalProperties) != 1 {
		t.Errorf("GetCurrentUser: attributes outside the SDK's model %v, want allowed_login_methods [] alone", a.AdditionalProperties)
	}
	if a.Uuid == nil || *a.Uuid != *me.Data.Id || a.Email == nil || a.Handle == nil || a.Icon == nil || !strings.HasPrefix(*a.Icon, "https://secure.gravatar.com/avatar/") ||
		a.CreatedAt == nil || a.ModifiedAt == nil || !a.Name.IsSet() || a.Name.Get() == nil || !a.Title.IsSet() || a.Title.Get() != nil ||
		!a.LastLoginTime.IsSet() || a.LastLoginTime.Get() != nil || a.Verified == nil || !*a.Verified ||
		a.ServiceAccount == nil || *a.ServiceAccount || a.Disabled == nil || *a.Disabled || a.Status == nil || *a.Status != "Active" || a.MfaEnabled != nil {
		t.Errorf("GetCurrentUser: attributes %+v", a)
	}
	rel := me.Data.Relationships
	if rel.Roles == nil || len(rel.Roles.Data) != 1 || rel.OtherOrgs != nil || rel.OtherUsers != nil {
		t.Errorf("GetCurrentUser: relationships %+v, want one role and no other_orgs or other_users", rel)
	}
	if tr, ok := rel.AdditionalProperties["team_roles"].(map[string]any); !ok || tr["data"] == nil {
		t.Errorf("GetCurrentUser: relationships' additional properties %v, want team_roles with data []", rel.AdditionalProperties)
	}
	var roles, perms, orgs int
	var permIDs []string
	for i, inc := range me.Included {
		switch {
		case inc.UnparsedObject != nil:
			t.Errorf("GetCurrentUser: included[%d] not decoded: %v", i, inc.UnparsedObject)
		case inc.Role != nil:
			roles++
			r := inc.Role
			if r.Id == nil || *r.Id != *rel.Roles.Data[0].Id || r.Attributes == nil || r.Attributes.Name == nil || r.Relationships == nil || r.Relationships.Permissions == nil {
				t.Errorf("GetCurrentUser: included role %+v", r)
			} else {
				for _, p := range r.Relationships.Permissions.Data {
					permIDs = append(permIDs, p.GetId())
				}
			}
		case inc.Permission != nil:
			perms++
			if p := inc.Permission; p.Id == nil || !slices.Contains(permIDs, *p.Id) || p.Attributes == nil || p.Attributes.Name == nil {
				t.Errorf("GetCurrentUser: included permission %+v, not among the role's %v", p, permIDs)
			}
		case inc.Organization != nil:
			orgs++
			o := inc.Organization
			if o.Id == nil || *o.Id != rel.Org.Data.Id || o.Attributes == nil || o.Attributes.PublicId == nil || o.Attributes.Name == nil ||
				o.Attributes.Description != nil || o.Attributes.Url != nil || o.Attributes.UnparsedObject != nil {
				t.Errorf("GetCurrentUser: included org %+v", o)
			}
		}
	}
	if roles != 1 || orgs != 1 || perms == 0 || perms != len(permIDs) {
		t.Errorf("GetCurrentUser: included %d roles, %d permissions (of %d), %d orgs; want the role, its permissions and the org", roles, perms, len(permIDs), orgs)
	}
}

// TestDatadogReplacedServers wires the client the other way cloud-apis.md
// 3.7 describes: cfg.Servers replaced, cfg.OperationServers cleared.
func TestDatadogReplacedServers(t *testing.T) {
	srv, _ := startEmulator(t)
	cfg := datadog.NewConfiguration()
	cfg.Servers = datadog.ServerConfigurations{{URL: srv.URL}}
	cfg.OperationServers = map[string]datadog.ServerConfigurations{}
	client := datadog.NewAPIClient(cfg)
	ctx := context.WithValue(testContext(t), datadog.ContextAPIKeys, map[string]datadog.APIKey{
		"apiKeyAuth": {Key: srv.Creds.DatadogAPIKey},
		"appKeyAuth": {Key: srv.Creds.DatadogAppKey},
	})
	me, _, err := datadogV2.NewUsersApi(client).GetCurrentUser(ctx)
	if err != nil {
		t.Fatalf("GetCurrentUser: %v", err)
	}
	if me.Data == nil || me.Data.Relationships == nil || me.Data.Relationships.Org == nil || me.Data.Relationships.Org.Data.Id == "" {
		t.Fatalf("GetCurrentUser: %+v", me.Data)
	}
	got, _, err := datadogV2.NewRestrictionPoliciesApi(client).GetRestrictionPolicy(ctx, "slo:0123")
	if err != nil {
		t.Fatalf("GetRestrictionPolicy: %v", err)
	}
	bindingsOf(t, "GetRestrictionPolicy", got, "slo:0123")
}

func TestDatadogBadKeys(t *testing.T) {
	srv, _ := startEmulator(t)
	client := datadog.NewAPIClient(datadog.NewConfiguration())
	users := datadogV2.NewUsersApi(client)
	policies := datadogV2.NewRestrictionPoliciesApi(client)
	for name, keys := range map[string][2]string{
		"bad api key": {"0123456789abcdef0123456789abcdef", srv.Creds.DatadogAppKey},
		"bad app key": {srv.Creds.DatadogAPIKey, "0123456789abcdef0123456789abcdef01234567"},
		"no keys":     {"", ""},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := datadogContext(testContext(t), srv, keys[0], keys[1])
			_, resp, err := users.GetCurrentUser(ctx)
			wantDatadogError(t, "GetCurrentUser", resp, err, 403, "Forbidden")
			_, resp, err = policies.GetRestrictionPolicy(ctx, "dashboard:abc-def-ghi")
			wantDatadogError(t, "GetRestrictionPolicy", resp, err, 403, "Forbidden")
			_, resp, err = policies.UpdateRestrictionPolicy(ctx, "dashboard:abc-def-ghi", policyRequest("dashboard:abc-def-ghi"))
			wantDatadogError(t, "UpdateRestrictionPolicy", resp, err, 403, "Forbidden")
			resp, err = policies.DeleteRestrictionPolicy(ctx, "dashboard:abc-def-ghi")
			if err == nil || resp == nil || resp.StatusCode != 403 {
				t.Fatalf("DeleteRestrictionPolicy: %v (%v), want 403", err, resp)
			}
		})
	}
}
