package datadog_test

import (
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/datadog"
)

func TestEmulatorWire(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	api, app := e.creds.DatadogAPIKey, e.creds.DatadogAppKey
	_, orgID := e.em.CurrentUser()
	org := "org:" + orgID
	const rp = "/api/v2/restriction_policy/"
	body := func(bindings string) string {
		return `{"data":{"id":"x","type":"restriction_policy","attributes":{"bindings":` + bindings + `}}}`
	}
	for name, tc := range map[string]struct {
		method, path, api, app, body string
		wantStatus                   int
		wantBody                     string // exact
	}{
		"GET without policy": {"GET", rp + "dashboard:test-get", api, app, "", 200,
			`{"data":{"type":"restriction_policy","id":"dashboard:test-get","attributes":{"bindings":[]}}}`},
		"GET with %3A": {"GET", rp + "dashboard%3Atest-get", api, app, "", 200,
			`{"data":{"type":"restriction_policy","id":"dashboard:test-get","attributes":{"bindings":[]}}}`},
		"DELETE without policy": {"DELETE", rp + "dashboard:test-delete", api, app, "", 204, ""},
		"POST upsert": {"POST", rp + "notebook%3A77", api, app, body(`[{"relation":"editor","principals":["` + org + `","` + roleA + `"]}]`), 200,
			`{"data":{"type":"restriction_policy","id":"notebook:77","attributes":{"bindings":[{"relation":"editor","principals":["` + org + `","` + roleA + `"]}]}}}`},
		"POST null bindings": {"POST", rp + "slo:1", api, app, body(`null`), 200,
			`{"data":{"type":"restriction_policy","id":"slo:1","attributes":{"bindings":[]}}}`},
		"POST private location keeps its pl: prefix": {"POST", rp + "synthetics-private-location:pl:abc", api, app, body(`[]`), 200,
			`{"data":{"type":"restriction_policy","id":"synthetics-private-location:pl:abc","attributes":{"bindings":[]}}}`},
		"POST wrong type": {"POST", rp + "slo:1", api, app, `{"data":{"type":"policy","attributes":{"bindings":[]}}}`, 400,
			`{"errors":["Invalid type: 'policy', expected 'restriction_policy'"]}`},
		"POST relation of another type": {"POST", rp + "connection:1", api, app, body(`[{"relation":"runner","principals":[]}]`), 400,
			`{"errors":["Invalid relation: 'runner' is not a supported relation for resource type 'connection' (supported: viewer, resolver, editor)"]}`},
		"POST principal without uuid": {"POST", rp + "workflow:1", api, app, body(`[{"relation":"runner","principals":["team:ops"]}]`), 400,
			`{"errors":["Invalid principal: 'team:ops' is not in a valid format"]}`},
		// Recorded: TestAccRestrictionPolicyInvalidInput of terraform-provider-datadog.
		"POST principal of an unknown type": {"POST", rp + "security-rule:xs9-9lw-fjj", api, app,
			body(`[{"relation":"editor","principals":["foo:4dee724d-00cc-11ea-a77b-570c9d03c6c5","` + org + `"]}]`), 400,
			`{"errors":["Invalid request: [PrincipalTypeInvalidForRelation] principal \"foo:4dee724d-00cc-11ea-a77b-570c9d03c6c5\" is not supported by \"editor\" relation, supported types: \"org, role, team, user\""]}`},
		"POST principal without a type": {"POST", rp + "dashboard:1", api, app, body(`[{"relation":"viewer","principals":["4dee724d-00cc-11ea-a77b-570c9d03c6c5"]}]`), 400,
			`{"errors":["Invalid principal: '4dee724d-00cc-11ea-a77b-570c9d03c6c5' is not in a valid format"]}`},
		"POST one problem at a time": {"POST", rp + "dashboard:1", api, app, body(`[{"relation":"owner","principals":["foo:1"]},{"relation":"viewer"}]`), 400,
			`{"errors":["Invalid relation: 'owner' is not a supported relation for resource type 'dashboard' (supported: viewer, editor)"]}`},
		"POST unsupported type": {"POST", rp + "security_rule:xs9-9lw-fjj", api, app, body(`[{"relation":"editor","principals":["` + org + `"]}]`), 400,
			`{"errors":["Invalid resource type: 'security_rule' does not support restriction policies"]}`},
		"GET unsupported type": {"GET", rp + "widget:1", api, app, "", 400,
			`{"errors":["Invalid resource type: 'widget' does not support restriction policies"]}`},
		"DELETE unsupported type": {"DELETE", rp + "widget:1", api, app, "", 400,
			`{"errors":["Invalid resource type: 'widget' does not support restriction policies"]}`},
		"malformed id": {"GET", rp + "malformed", api, app, "", 400,
			`{"errors":["Invalid resource: 'malformed' is not in a valid format"]}`},
		"no keys":          {"GET", rp + "dashboard:1", "", "", "", 403, `{"errors":["Forbidden"]}`},
		"API key only":     {"GET", rp + "dashboard:1", api, "", "", 403, `{"errors":["Forbidden"]}`},
		"wrong app key":    {"DELETE", rp + "dashboard:1", api, "nope", "", 403, `{"errors":["Forbidden"]}`},
		"keys swapped":     {"GET", "/api/v2/current_user", app, api, "", 403, `{"errors":["Forbidden"]}`},
		"unknown route":    {"GET", "/api/v2/restriction_policies", api, app, "", 404, `{"errors":["Not found"]}`},
		"PUT not allowed":  {"PUT", rp + "dashboard:1", api, app, body(`[]`), 405, `{"errors":["Method Not Allowed"]}`},
		"bad self-lockout": {"POST", rp + "dashboard:1?allow_self_lockout=maybe", api, app, body(`[]`), 400, `{"errors":["Invalid value for allow_self_lockout: 'maybe'"]}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp, got := e.call(t, tc.method, tc.path, tc.api, tc.app, tc.body)
			if resp.StatusCode != tc.wantStatus || got != tc.wantBody {
				t.Errorf("%s %s = %d %s\nwant %d %s", tc.method, tc.path, resp.StatusCode, got, tc.wantStatus, tc.wantBody)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s %s: Content-Type %q, want application/json (a 204 too)", tc.method, tc.path, ct)
			}
			if tc.wantStatus != 403 && tc.wantStatus != 404 {
				for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Period", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Name"} {
					if resp.Header.Get(h) == "" {
						t.Errorf("%s %s: no %s header", tc.method, tc.path, h)
					}
				}
			}
		})
	}
}

// TestEmulatorSelfLockout pins the refusal of a POST that would lower the
// caller's own access to the resource, unless allow_self_lockout=true.
func TestEmulatorSelfLockout(t *testing.T) {
	t.Parallel()
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	const (
		user  = "user:aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa"
		org   = "org:bbbbbbbb-2222-4222-8222-bbbbbbbbbbbb"
		role  = "role:cccccccc-3333-4333-8333-cccccccccccc"
		team  = "team:dddddddd-4444-4444-8444-dddddddddddd"
		other = "role:00000000-0000-0000-0000-000000000009"
	)
	bind := func(rel string, ps ...string) string {
		return `{"relation":"` + rel + `","principals":["` + strings.Join(ps, `","`) + `"]}`
	}
	refused := func(from, to string) string {
		return `{"errors":["Invalid request: users cannot decrease their own level of access (from ` + from + ` to ` + to + `)"]}`
	}
	for name, tc := range map[string]struct {
		rid    string
		before []string // bindings, set first with allow_self_lockout=true; none: no policy
		after  []string
		allow  string // the query parameter's value; "": none
		want   string // "": 200
	}{
		"new policy with the caller's org as editor":  {rid: "dashboard:1", after: []string{bind("editor", org)}},
		"new policy with the caller as editor":        {rid: "dashboard:1", after: []string{bind("viewer", org), bind("editor", user)}},
		"new policy with the caller's role as editor": {rid: "dashboard:1", after: []string{bind("editor", other, "role:"+strings.ToUpper(role[5:]))}},
		"new policy with the caller's team as editor": {rid: "dashboard:1", after: []string{bind("editor", team)}},
		"new policy with the caller as viewer":        {rid: "dashboard:1", after: []string{bind("viewer", org), bind("editor", other)}, want: refused("editor", "viewer")},
		"new policy without the caller":               {rid: "dashboard:1", after: []string{bind("editor", other)}, want: refused("editor", "no access")},
		"new policy without the caller, allowed":      {rid: "dashboard:1", after: []string{bind("editor", other)}, allow: "true"},
		"new policy without the caller, not allowed":  {rid: "dashboard:1", after: []string{bind("editor", other)}, allow: "false", want: refused("editor", "no access")},
		"no bindings: no restriction":                 {rid: "dashboard:1", before: []string{bind("editor", other)}, after: []string{}},
		"the caller keeps what it had":                {rid: "dashboard:1", before: []string{bind("viewer", org), bind("editor", other)}, after: []string{bind("viewer", user)}},
		"the caller gains access":                     {rid: "dashboard:1", before: []string{bind("editor", other)}, after: []string{bind("viewer", role)}},
		"the caller loses editor to another relation": {rid: "workflow:1", after: []string{bind("runner", org), bind("editor", other)}, want: refused("editor", "runner")},
		"the caller loses a relation between":         {rid: "workflow:1", before: []string{bind("runner", team), bind("editor", other)}, after: []string{bind("viewer", team), bind("editor", other)}, want: refused("runner", "viewer")},
		"the top relation of a type is not editor":    {rid: "case-management-project:1", after: []string{bind("contributor", org)}, want: refused("manager", "contributor")},
		"a type whose top relation the caller keeps":  {rid: "case-management-project:1", after: []string{bind("manager", org)}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, em := seedStore(t, creds)
			if err := store.Update(func(tx emulator.Tx) error {
				_, _, err := em.SeedFrom(tx, datadog.SeedData{User: &datadog.UserSeed{
					ID: user[5:], OrgID: org[4:], RoleID: role[5:], TeamIDs: []string{strings.ToUpper(team[5:])}}})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(em)
			t.Cleanup(srv.Close)
			e := &env{url: srv.URL, creds: creds, em: em}
			path := "/api/v2/restriction_policy/" + tc.rid
			post := func(bindings []string, query string) (int, string) {
				t.Helper()
				resp, got := e.call(t, "POST", path+query, creds.DatadogAPIKey, creds.DatadogAppKey,
					`{"data":{"id":"`+tc.rid+`","type":"restriction_policy","attributes":{"bindings":[`+strings.Join(bindings, ",")+`]}}}`)
				return resp.StatusCode, got
			}
			if tc.before != nil {
				if status, got := post(tc.before, "?allow_self_lockout=true"); status != 200 {
					t.Fatalf("POST the policy before = %d %s", status, got)
				}
			}
			query := ""
			if tc.allow != "" {
				query = "?allow_self_lockout=" + tc.allow
			}
			status, got := post(tc.after, query)
			_, stored := e.call(t, "GET", path, creds.DatadogAPIKey, creds.DatadogAppKey, "")
			wantStored := `[` + strings.Join(tc.before, ",") + `]`
			if tc.want == "" {
				wantStored = `[` + strings.Join(tc.after, ",") + `]`
				if status != 200 {
					t.Errorf("POST = %d %s, want 200", status, got)
				}
			} else if status != 400 || got != tc.want {
				t.Errorf("POST = %d %s\nwant 400 %s", status, got, tc.want)
			}
			if !strings.Contains(stored, `"bindings":`+wantStored) {
				t.Errorf("GET after the POST = %s, want bindings %s", stored, wantStored)
			}
		})
	}
}

// TestEmulatorCurrentUserShape pins the answer of GET /api/v2/current_user
// on the one Datadog's provider recorded in 2026
// (TestAccDatadogCurrentUserDatasource_basic of terraform-provider-datadog):
// the same members, in the same order, with the same JSON types.
func TestEmulatorCurrentUserShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, body := e.call(t, "GET", "/api/v2/current_user", e.creds.DatadogAPIKey, e.creds.DatadogAppKey, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET current_user = %d %s", resp.StatusCode, body)
	}
	// shape lists the members of a JSON object in order, each with the
	// JSON type of its value, and the shapes of nested objects under
	// their path.
	shapes := map[string]string{}
	var walk func(path string, dec *json.Decoder)
	walk = func(path string, dec *json.Decoder) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("decode %s: %v", path, err)
		}
		switch tok {
		case json.Delim('{'):
			var members []string
			for dec.More() {
				k, _ := dec.Token()
				members = append(members, k.(string))
				walk(path+"."+k.(string), dec)
			}
			dec.Token()
			if _, seen := shapes[path]; !seen {
				shapes[path] = strings.Join(members, " ")
			}
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				walk(path+"[]", dec)
			}
			dec.Token()
		default:
			kind := map[bool]string{true: "null"}[tok == nil]
			switch tok.(type) {
			case string:
				kind = "string"
			case bool:
				kind = "bool"
			case float64:
				kind = "number"
			}
			shapes[path+":"] += kind + " "
		}
	}
	walk("", json.NewDecoder(strings.NewReader(body)))
	for path, want := range map[string]string{
		"":                                  "data included",
		".data":                             "type id attributes relationships",
		".data.attributes":                  "uuid name handle created_at modified_at email icon title verified service_account disabled allowed_login_methods status last_login_time",
		".data.attributes.title:":           "null ",
		".data.attributes.last_login_time:": "null ",
		".data.attributes.verified:":        "bool ",
		".data.relationships":               "roles org team_roles",
		".data.relationships.org":           "data",
		".data.relationships.org.data":      "type id",
		".included[]":                       "type id attributes relationships", // the first: the role
		".included[].attributes":            "name managed created_at modified_at",
		".included[].relationships":         "permissions",
	} {
		if shapes[path] != want {
			t.Errorf("current_user%s = %q, want %q", path, shapes[path], want)
		}
	}
	var doc struct {
		Data struct {
			ID         string
			Type       string
			Attributes struct {
				UUID, Email, Icon, Status string
				AllowedLoginMethods       []string `json:"allowed_login_methods"`
			}
			Relationships struct {
				Org struct {
					Data struct{ ID, Type string }
				}
				Roles struct {
					Data []struct{ ID, Type string }
				}
				TeamRoles struct {
					Data []any
				} `json:"team_roles"`
			}
		}
		Included []struct {
			ID, Type      string
			Attributes    map[string]any
			Relationships struct {
				Permissions struct {
					Data []struct{ ID, Type string }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("GET current_user = %s (%v)", body, err)
	}
	user, org := e.em.CurrentUser()
	d := doc.Data
	if d.ID != user || d.Type != "users" || d.Attributes.UUID != user || d.Relationships.Org.Data.ID != org || d.Relationships.Org.Data.Type != "orgs" ||
		len(d.Relationships.Roles.Data) != 1 || d.Relationships.TeamRoles.Data == nil || d.Attributes.AllowedLoginMethods == nil || d.Attributes.Status != "Active" {
		t.Errorf("GET current_user = %s\nwant user %s in org %s with one role", body, user, org)
	}
	// The icon is the Gravatar of the email, with "&" as Datadog writes it.
	if sum := md5.Sum([]byte(d.Attributes.Email)); d.Attributes.Icon != fmt.Sprintf("https://secure.gravatar.com/avatar/%x?s=48&d=retro", sum) || strings.Contains(body, `\u0026`) {
		t.Errorf("icon %q of %s, in %s", d.Attributes.Icon, d.Attributes.Email, body)
	}
	// Included: the role, then its permissions, then the org.
	inc := doc.Included
	if len(inc) < 3 || inc[0].Type != "roles" || inc[0].ID != d.Relationships.Roles.Data[0].ID || inc[len(inc)-1].Type != "orgs" || inc[len(inc)-1].ID != org {
		t.Fatalf("included = %+v, want the role, its permissions and the org", inc)
	}
	perms := inc[0].Relationships.Permissions.Data
	var names []string
	for i, p := range perms {
		if p.Type != "permissions" || inc[1+i].Type != "permissions" || inc[1+i].ID != p.ID {
			t.Errorf("permission %d of the role = %+v, included %+v", i, p, inc[1+i])
		}
		names = append(names, fmt.Sprint(inc[1+i].Attributes["name"]))
	}
	if len(perms)+2 != len(inc) || !slices.Contains(names, "user_access_manage") {
		t.Errorf("the role's permissions %v, included %d objects: want each permission once, user_access_manage among them", names, len(inc))
	}
	if resp.Header.Get("X-RateLimit-Name") != "current_user" {
		t.Errorf("X-RateLimit-Name = %q, want current_user", resp.Header.Get("X-RateLimit-Name"))
	}
}

// seedStore is an emulator on a fresh store, not seeded.
func seedStore(t *testing.T, creds emulator.Credentials) (*emulator.Store, *datadog.Emulator) {
	t.Helper()
	store, err := emulator.OpenStore(filepath.Join(t.TempDir(), "emulator.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, datadog.New(store, creds)
}

// storedJSON returns the document under bucket/key, decoded, or nil.
func storedJSON(t *testing.T, store *emulator.Store, bucket, key string) any {
	t.Helper()
	var v any
	if err := store.View(func(tx emulator.Tx) error {
		_, err := tx.Get(bucket, key, &v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

const (
	sfUser = "AAAAAAAA-1111-4111-8111-AAAAAAAAAAAA"
	sfOrg  = "BBBBBBBB-2222-4222-8222-BBBBBBBBBBBB"
	sfRole = "role:cccccccc-3333-4333-8333-cccccccccccc"
)

// TestSeedFrom pins what SeedFrom writes, defaults and counts.
func TestSeedFrom(t *testing.T) {
	t.Parallel()
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	store, em := seedStore(t, creds)
	// A policy made since, and one seeded then deleted.
	if err := store.Update(func(tx emulator.Tx) error {
		if err := tx.Put("dd.restrictionPolicies", "notebook:1", map[string]any{"bindings": []any{}}); err != nil {
			return err
		}
		return tx.Put("dd.seeded", "slo:9", true)
	}); err != nil {
		t.Fatal(err)
	}
	d := datadog.SeedData{
		User: &datadog.UserSeed{ID: sfUser, Email: "dev@acme.example", Name: "Dev", OrgID: sfOrg, RoleName: "Dev Role"},
		Policies: []datadog.PolicySeed{
			{ResourceID: "dashboard:abc", Bindings: []datadog.BindingSeed{{Relation: "viewer", Principals: []string{sfRole}}, {Relation: "editor", Principals: []string{}}}},
			{ResourceID: "notebook:1", Bindings: []datadog.BindingSeed{{Relation: "viewer", Principals: []string{sfRole}}}},
			{ResourceID: "slo:9", Bindings: []datadog.BindingSeed{{Relation: "viewer", Principals: []string{sfRole}}}},
		},
	}
	seed := func() (added, kept int) {
		t.Helper()
		if err := store.Update(func(tx emulator.Tx) (err error) {
			added, kept, err = em.SeedFrom(tx, d)
			return err
		}); err != nil {
			t.Fatalf("SeedFrom: %v", err)
		}
		return added, kept
	}
	if added, kept := seed(); added != 2 || kept != 2 {
		t.Errorf("SeedFrom = %d added, %d kept; want 2, 2", added, kept)
	}
	// Seed's user, made first, is the default for what the seed leaves out.
	defStore, def := seedStore(t, creds)
	if err := def.Seed(); err != nil {
		t.Fatal(err)
	}
	defAcct := storedJSON(t, defStore, "dd.account", "current").(map[string]any)
	check := func() {
		t.Helper()
		acct, _ := storedJSON(t, store, "dd.account", "current").(map[string]any)
		delete(acct, "created")
		wantAcct := map[string]any{
			"userId": strings.ToLower(sfUser), "email": "dev@acme.example", "handle": "dev@acme.example", "name": "Dev",
			"orgId": strings.ToLower(sfOrg), "orgName": "Acme", "orgPublicId": defAcct["orgPublicId"],
			"roleId": defAcct["roleId"], "roleName": "Dev Role",
		}
		if !reflect.DeepEqual(acct, wantAcct) {
			t.Errorf("account = %v\nwant %v", acct, wantAcct)
		}
		for key, want := range map[string]any{
			"dashboard:abc": map[string]any{"bindings": []any{
				map[string]any{"relation": "viewer", "principals": []any{sfRole}},
				map[string]any{"relation": "editor", "principals": []any{}},
			}},
			"notebook:1": map[string]any{"bindings": []any{}},
			"slo:9":      nil,
		} {
			if got := storedJSON(t, store, "dd.restrictionPolicies", key); !reflect.DeepEqual(got, want) {
				t.Errorf("policy of %s = %#v, want %#v", key, got, want)
			}
			if got := storedJSON(t, store, "dd.seeded", key); got != true {
				t.Errorf("seeded mark of %s = %v, want true", key, got)
			}
		}
	}
	check()
	if added, kept := seed(); added != 0 || kept != 4 {
		t.Errorf("SeedFrom again = %d added, %d kept; want 0, 4", added, kept)
	}
	check()
	if err := store.Update(func(tx emulator.Tx) (err error) {
		_, _, err = em.SeedFrom(tx, datadog.SeedData{User: &datadog.UserSeed{Handle: "h", Email: "x@y"}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if acct := storedJSON(t, store, "dd.account", "current").(map[string]any); acct["handle"] != "dev@acme.example" {
		t.Errorf("handle after seeding another user = %v, want the first one's", acct["handle"])
	}
}

// TestSeedFromHandle pins the defaults of a user seeded without a handle
// or an email, and with a handle.
func TestSeedFromHandle(t *testing.T) {
	t.Parallel()
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user       datadog.UserSeed
		wantHandle string
		wantEmail  string
	}{
		{user: datadog.UserSeed{Name: "N"}, wantHandle: "ops@acme.example", wantEmail: "ops@acme.example"},
		{user: datadog.UserSeed{Handle: "dev"}, wantHandle: "dev", wantEmail: "ops@acme.example"},
		{user: datadog.UserSeed{Email: "a@b"}, wantHandle: "a@b", wantEmail: "a@b"},
	} {
		store, em := seedStore(t, creds)
		var added, kept int
		if err := store.Update(func(tx emulator.Tx) (err error) {
			added, kept, err = em.SeedFrom(tx, datadog.SeedData{User: &tc.user})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		acct := storedJSON(t, store, "dd.account", "current").(map[string]any)
		if added != 1 || kept != 0 || acct["handle"] != tc.wantHandle || acct["email"] != tc.wantEmail {
			t.Errorf("SeedFrom(%+v) = %d, %d, account %v; want 1, 0 with handle %q and email %q", tc.user, added, kept, acct, tc.wantHandle, tc.wantEmail)
		}
	}
}

// TestSeedFromRefused pins SeedFrom's checks, their order and their
// messages.
func TestSeedFromRefused(t *testing.T) {
	t.Parallel()
	creds, err := emulator.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	const okRole = "role:00000000-0000-0000-0000-000000000001"
	user := func(u datadog.UserSeed) datadog.SeedData { return datadog.SeedData{User: &u} }
	policy := func(rid string, bs ...datadog.BindingSeed) datadog.PolicySeed {
		return datadog.PolicySeed{ResourceID: rid, Bindings: bs}
	}
	viewer := datadog.BindingSeed{Relation: "viewer", Principals: []string{okRole}}
	policies := func(ps ...datadog.PolicySeed) datadog.SeedData { return datadog.SeedData{Policies: ps} }
	broken := func(bucket, key string) func(tx emulator.Tx) error {
		return func(tx emulator.Tx) error { return tx.Put(bucket, key, "broken") }
	}
	for name, tc := range map[string]struct {
		d        datadog.SeedData
		setup    func(tx emulator.Tx) error // committed before SeedFrom
		readOnly bool                       // SeedFrom runs in a View
		want     string
	}{
		"user id":           {d: user(datadog.UserSeed{ID: "7", OrgID: "8", Email: "x"}), want: `user: id "7" is not a UUID`},
		"org id":            {d: user(datadog.UserSeed{OrgID: "8", RoleID: "9"}), want: `user: orgId "8" is not a UUID`},
		"role id":           {d: user(datadog.UserSeed{RoleID: "9", Email: "x"}), want: `user: roleId "9" is not a UUID`},
		"team id":           {d: user(datadog.UserSeed{TeamIDs: []string{sfUser, "ops"}, Email: "x"}), want: `user: teamIds[1] "ops" is not a UUID`},
		"email":             {d: user(datadog.UserSeed{Email: "x"}), want: `user: email "x" is not an email address`},
		"email with blanks": {d: user(datadog.UserSeed{Email: "a b@c"}), want: `user: email "a b@c" is not an email address`},
		"user unreadable":   {d: user(datadog.UserSeed{}), setup: broken("dd.account", "current"), want: `user: decode dd.account/current: json: cannot unmarshal string into Go value of type datadog.account`},
		"user not written":  {d: user(datadog.UserSeed{}), readOnly: true, want: `user: tx not writable`},
		"user before policies": {
			d:    datadog.SeedData{User: &datadog.UserSeed{ID: "7"}, Policies: []datadog.PolicySeed{policy("bad")}},
			want: `user: id "7" is not a UUID`,
		},
		"resource id":    {d: policies(policy("malformed")), want: `policies[0] "malformed": Invalid resource: 'malformed' is not in a valid format`},
		"resource type":  {d: policies(policy("widget:1")), want: `policies[0] "widget:1": Invalid resource type: 'widget' does not support restriction policies`},
		"resource path":  {d: policies(policy("dashboard:a/b", viewer)), want: `policies[0] "dashboard:a/b": a resource id cannot hold '/', '?' or '#'`},
		"resource twice": {d: policies(policy("dashboard:x", viewer), policy("dashboard:x")), want: `policies[1] "dashboard:x": the same resourceId as policies[0]`},
		"no binding":     {d: policies(policy("dashboard:x")), want: `policies[0] "dashboard:x": bindings: a policy needs at least one binding (a resource without one has no policy)`},
		"no relation":    {d: policies(policy("dashboard:x", datadog.BindingSeed{})), want: `policies[0] "dashboard:x": bindings[0].relation is required`},
		"unknown relation": {d: policies(policy("dashboard:x", viewer, datadog.BindingSeed{Relation: "owner"})),
			want: `policies[0] "dashboard:x": bindings[1]: Invalid relation: 'owner' is not a supported relation for resource type 'dashboard' (supported: viewer, editor)`},
		"no principals": {d: policies(policy("dashboard:x", datadog.BindingSeed{Relation: "viewer"})), want: `policies[0] "dashboard:x": bindings[0].principals is required`},
		"bad principal": {d: policies(policy("dashboard:x", datadog.BindingSeed{Relation: "viewer", Principals: []string{okRole, "user:bob"}})),
			want: `policies[0] "dashboard:x": bindings[0]: Invalid principal: 'user:bob' is not in a valid format (role:, team:, user: or org: and a UUID)`},
		"principal type": {d: policies(policy("dashboard:x", datadog.BindingSeed{Relation: "editor", Principals: []string{"group:" + sfUser}})),
			want: `policies[0] "dashboard:x": bindings[0]: Invalid request: [PrincipalTypeInvalidForRelation] principal "group:` + sfUser + `" is not supported by "editor" relation, supported types: "org, role, team, user"`},
		"policy unreadable": {d: policies(policy("dashboard:x", viewer)), setup: broken("dd.restrictionPolicies", "dashboard:x"),
			want: `policies[0] "dashboard:x": decode dd.restrictionPolicies/dashboard:x: json: cannot unmarshal string into Go value of type datadog.storedPolicy`},
		"mark unreadable": {d: policies(policy("dashboard:x", viewer)), setup: broken("dd.seeded", "dashboard:x"),
			want: `policies[0] "dashboard:x": decode dd.seeded/dashboard:x: json: cannot unmarshal string into Go value of type bool`},
		"policy not written": {d: policies(policy("dashboard:x", viewer)), readOnly: true, want: `policies[0] "dashboard:x": tx not writable`},
		"mark not written": {d: policies(policy("dashboard:x", viewer)), readOnly: true,
			setup: func(tx emulator.Tx) error {
				return tx.Put("dd.restrictionPolicies", "dashboard:x", map[string]any{"bindings": []any{}})
			},
			want: `policies[0] "dashboard:x": tx not writable`},
		"later policy": {d: policies(policy("dashboard:x", viewer), policy("dashboard:y", datadog.BindingSeed{Relation: "runner"})),
			want: `policies[1] "dashboard:y": bindings[0]: Invalid relation: 'runner' is not a supported relation for resource type 'dashboard' (supported: viewer, editor)`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, em := seedStore(t, creds)
			if tc.setup != nil {
				if err := store.Update(tc.setup); err != nil {
					t.Fatal(err)
				}
			}
			run := store.Update
			if tc.readOnly {
				run = store.View
			}
			var added, kept int
			var err error
			_ = run(func(tx emulator.Tx) error {
				added, kept, err = em.SeedFrom(tx, tc.d)
				return errors.New("roll back")
			})
			if err == nil || err.Error() != tc.want || added != 0 || kept != 0 {
				t.Errorf("SeedFrom = %d, %d, %v\nwant 0, 0, %s", added, kept, err, tc.want)
			}
		})
	}
}
