package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/internal/golden"
	"github.com/reconcile-dev/reconcile/resources"
)

// The golden tests of this file run the real planner (and refresh.Drift)
// against the fake cloud, after real applies, and render what they make in
// every format into testdata/golden/<case>.{txt,json,md}; the render
// package's own goldens render hand-built plans. Rewrite them with
//
//	go test ./engine -run TestGolden -update
//
// and read the diff: a golden that records a wrong output is a defect.

const policyToken = "datadog:RestrictionPolicy"

// Secret values of the golden specs. No output may contain any of them, nor
// the marker they share.
const (
	secretMarker  = "s3cr3t"
	secretConfig  = "cfg-s3cr3t-token"
	secretDesc    = "desc-s3cr3t-1"
	secretDescNew = "desc-s3cr3t-2"
	secretLive    = "live-s3cr3t-edit" // written outside reconcile
)

// stableIDs names each endpoint the fake cloud creates after its
// displayName: ocid1.ailanguageendpoint.oc1..NAME-N, N counting the creates
// of that name. An apply runs independent creates concurrently (whatever
// its parallelism, as each node waits on the semaphore in its own
// goroutine), so the fake's own numbering (fake1, fake2...) follows the
// scheduler and would make the goldens flaky.
type stableIDs struct {
	*fakeCloud
	mu sync.Mutex
	n  map[string]int
}

func (s *stableIDs) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	id, got, err := s.fakeCloud.Create(ctx, want)
	if id == "" {
		return id, got, err
	}
	name := fmt.Sprint(want["displayName"])
	s.mu.Lock()
	s.n[name]++
	stable := fmt.Sprintf("ocid1.ailanguageendpoint.oc1..%s-%d", slug(name), s.n[name])
	s.mu.Unlock()

	f := s.fakeCloud
	f.mu.Lock()
	o := f.objects[id]
	delete(f.objects, id)
	o["id"] = stable
	f.objects[stable] = o
	var out resources.Attrs
	if got != nil {
		out = resources.Attrs{}
		for k, v := range o {
			out[k] = v
		}
	}
	f.mu.Unlock()
	return stable, out, err
}

// slug keeps the letters and digits of s, lower-cased, and turns every run
// of anything else into one hyphen.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// policyCloud is a fake Datadog restriction-policy API: a policy's id is the
// resourceId it restricts, as Datadog's is, and it holds nothing but its
// inputs.
type policyCloud struct {
	mu       sync.Mutex
	policies map[string]resources.Attrs
}

func copyAttrs(a resources.Attrs) resources.Attrs {
	out := resources.Attrs{}
	for k, v := range a {
		out[k] = v
	}
	return out
}

func (c *policyCloud) Read(_ context.Context, id string) (resources.Attrs, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.policies[id]
	if !ok {
		return nil, resources.ErrNotFound
	}
	return copyAttrs(o), nil
}

func (c *policyCloud) Create(_ context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := fmt.Sprint(want["resourceId"])
	o := copyAttrs(want)
	o["id"] = id
	c.policies[id] = o
	return id, copyAttrs(o), nil
}

func (c *policyCloud) Update(_ context.Context, id string, _, want resources.Attrs) (resources.Attrs, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.policies[id]
	if !ok {
		return nil, resources.ErrNotFound
	}
	for k, v := range want {
		o[k] = v
	}
	return copyAttrs(o), nil
}

func (c *policyCloud) Delete(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.policies[id]; !ok {
		return resources.ErrNotFound
	}
	delete(c.policies, id)
	return nil
}

// IDFor is the id of the policy want makes: its resourceId, as Datadog's.
func (c *policyCloud) IDFor(want resources.Attrs) (string, bool) {
	rid, ok := want["resourceId"].(string)
	return rid, ok
}

// set changes the policy id outside reconcile.
func (c *policyCloud) set(t *testing.T, id string, attrs resources.Attrs) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.policies[id]
	if !ok {
		t.Fatalf("no policy %s to edit", id)
	}
	for k, v := range attrs {
		o[k] = v
	}
}

// goldenHarness is a harness whose endpoints get stable ids and which
// manages restriction policies too.
type goldenHarness struct {
	*harness
	policies *policyCloud
}

func newGoldenHarness(t *testing.T) *goldenHarness {
	h := newHarness(t)
	h.reg.Drivers[endpointToken] = &stableIDs{fakeCloud: h.cloud, n: map[string]int{}}
	pc := &policyCloud{policies: map[string]resources.Attrs{}}
	h.reg.Drivers[policyToken] = pc
	return &goldenHarness{harness: h, policies: pc}
}

// restrictionPolicy returns the YAML of one datadog:RestrictionPolicy
// resource; bindings is a YAML flow sequence, and each of opts goes under
// options.
func restrictionPolicy(name, resourceID, bindings string, opts ...string) string {
	s := fmt.Sprintf("  %s:\n    type: datadog:RestrictionPolicy\n    properties:\n      resourceId: %s\n      bindings: %s\n", name, resourceID, bindings)
	if len(opts) > 0 {
		s += "    options:\n"
		for _, o := range opts {
			s += "      " + o + "\n"
		}
	}
	return s
}

// goldenCase sets the stage with real applies (and changes made outside
// reconcile), then returns what to render: a plan, or a drift report.
type goldenCase struct {
	name string
	// actions is what the plan must hold (see actions), checked before the
	// goldens so that a wrong plan is not recorded as right.
	actions string
	run     func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift)
}

// lookupSpec declares the IAM policy lookup of service s, whose result the
// drift stage changes.
const lookupSpec = `
variables:
  svcPolicy:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: s
`

// driftStage applies a spec with three endpoints, a restriction policy and
// an IAM policy lookup, then changes things outside reconcile: endpoint a
// is renamed, tagged and given a new (secret) description; b is deleted;
// the policy gains a binding; the IAM policy gains a member under a new
// etag. c is left alone, but its description follows the IAM policy's etag.
func driftStage(t *testing.T, h *goldenHarness) string {
	t.Helper()
	var mu sync.Mutex
	etag, members := "etag-1", `["user:a@example.com"]`
	h.iam.result = func(args resources.Attrs) (resources.Attrs, error) {
		mu.Lock()
		defer mu.Unlock()
		return resources.Attrs{"id": "services/" + fmt.Sprint(args["serviceName"]), "etag": etag, "serviceName": args["serviceName"],
			"policyData": `{"bindings":[{"members":` + members + `,"role":"roles/viewer"}]}`}, nil
	}
	src := lookupSpec + resourcesOf(
		endpoint("a", "first", "freeformTags: {team: nlp}", "description: {fn::secret: "+secretDesc+"}"),
		endpoint("b", "second"),
		endpoint("c", "third", "description: policy ${svcPolicy.etag}"),
		restrictionPolicy("dashboardPolicy", "dashboard:abc-def-ghi", `[{relation: editor, principals: ["role:1"]}]`),
	)
	h.mustApply(src)

	h.edit(h.record("a").ID, resources.Attrs{"displayName": "renamed by hand", "description": secretLive,
		"freeformTags": map[string]any{"team": "nlp", "owner": "bob"}})
	h.cloud.remove(h.record("b").ID)
	h.policies.set(t, "dashboard:abc-def-ghi", resources.Attrs{"bindings": []any{
		map[string]any{"relation": "editor", "principals": []any{"role:1"}},
		map[string]any{"relation": "viewer", "principals": []any{"team:qa"}},
	}})
	mu.Lock()
	etag, members = "etag-2", `["user:a@example.com","user:b@example.com"]`
	mu.Unlock()
	return src
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{
			// A first plan, from empty state: a lookup read during plan,
			// one deferred to apply (its argument is an id not yet made),
			// secrets from config and fn::secret, references between
			// resources, and outputs of each kind.
			name:    "first_plan",
			actions: "backup:create dashboardPolicy:create me:read sentiment:create svc:read",
			run: func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift) {
				src := `
config:
  apiToken:
    type: string
    secret: true
    default: ` + secretConfig + `
variables:
  me:
    fn::invoke:
      function: datadog:getCurrentUser
  svc:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: ${sentiment.id}
` + resourcesOf(
					endpoint("sentiment", "sentiment-prod", "inferenceUnits: 2",
						"description: {fn::secret: "+secretDesc+"}",
						"freeformTags: {owner: '${me.handle}', token: '${apiToken}'}"),
					endpoint("backup", "${sentiment.displayName}-backup", "description: backup of ${sentiment.id}"),
					restrictionPolicy("dashboardPolicy", "dashboard:abc-def-ghi", `[{relation: editor, principals: ["org:${me.orgId}"]}]`),
				) + `
outputs:
  endpointId: ${sentiment.id}
  owner: ${me.email}
  token: ${apiToken}
  etag: ${svc.etag}
`
				return h.plan(src, planner.Options{Refresh: true}), nil
			},
		},
		{
			// Nothing to do right after an apply.
			name:    "no_changes",
			actions: "a:no-op dashboardPolicy:no-op",
			run: func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift) {
				src := resourcesOf(endpoint("a", "first", "description: {fn::secret: "+secretDesc+"}"),
					restrictionPolicy("dashboardPolicy", "dashboard:abc-def-ghi", `[{relation: editor, principals: ["role:1"]}]`))
				h.mustApply(src)
				return h.plan(src, planner.Options{Refresh: true}), nil
			},
		},
		{
			// Updates in place: scalars changed, a field removed, tags
			// added and removed, a secret changed for another, the
			// bindings of a policy, and a change of options alone.
			name:    "update",
			actions: "a:update dashboardPolicy:update guarded:update keyed:update",
			run: func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift) {
				h.mustApply(resourcesOf(
					endpoint("a", "first", "inferenceUnits: 1", "description: to be removed", "freeformTags: {team: nlp, owner: bob}"),
					endpoint("keyed", "keyed", "description: {fn::secret: "+secretDesc+"}"),
					endpoint("guarded", "guarded", "options.protect: true"),
					restrictionPolicy("dashboardPolicy", "dashboard:abc-def-ghi", `[{relation: editor, principals: ["role:1"]}]`),
				))
				return h.plan(resourcesOf(
					endpoint("a", "renamed", "inferenceUnits: 2", "freeformTags: {team: nlp, env: prod}"),
					endpoint("keyed", "keyed", "description: {fn::secret: "+secretDescNew+"}"),
					endpoint("guarded", "guarded", "options.protect: false"),
					restrictionPolicy("dashboardPolicy", "dashboard:abc-def-ghi",
						`[{relation: editor, principals: ["role:1", "role:3"]}, {relation: viewer, principals: ["role:2"]}]`),
				), planner.Options{Refresh: true}), nil
			},
		},
		{
			// Replacements: replaceOnChanges (new object first, and
			// deleteBeforeReplace), a field that cannot change in place
			// (a policy's resourceId), and an update that follows the
			// replaced object's new id.
			name:    "replace",
			actions: "a:replace d:replace dashboardPolicy:replace follower:update",
			run: func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift) {
				spec := func(model, resourceID string) string {
					return resourcesOf(
						endpoint("a", "alpha", "modelId: "+model, "options.replaceOnChanges: [modelId]"),
						endpoint("d", "delta", "modelId: "+model, "options.replaceOnChanges: [modelId]", "options.deleteBeforeReplace: true"),
						endpoint("follower", "follower", "description: follows ${a.id}"),
						restrictionPolicy("dashboardPolicy", resourceID, `[{relation: editor, principals: ["role:1"]}]`),
					)
				}
				h.mustApply(spec("ocid1.ailanguagemodel.oc1..m1", "dashboard:abc-def-ghi"))
				return h.plan(spec("ocid1.ailanguagemodel.oc1..m2", "dashboard:xyz"), planner.Options{Refresh: true}), nil
			},
		},
		{
			// Resources gone from the specs: deleted, or forgotten with
			// retainOnDelete; the deleted one held a secret.
			name:    "delete_forget",
			actions: "dashboardPolicy:delete gone:delete kept:forget stays:no-op",
			run: func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift) {
				stays := endpoint("stays", "stays")
				h.mustApply(resourcesOf(
					stays,
					endpoint("gone", "gone", "description: {fn::secret: "+secretDesc+"}"),
					endpoint("kept", "kept", "options.retainOnDelete: true"),
					restrictionPolicy("dashboardPolicy", "dashboard:abc-def-ghi", `[{relation: editor, principals: ["role:1"]}]`),
				))
				return h.plan(resourcesOf(stays), planner.Options{Refresh: true}), nil
			},
		},
		{
			// options.import of objects made outside reconcile: one that
			// matches the specs, one the specs then update.
			name:    "import",
			actions: "adopted:import managed:no-op renamed:import",
			run: func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift) {
				managed := endpoint("managed", "managed")
				h.mustApply(resourcesOf(managed))
				for id, name := range map[string]string{"ocid1.ailanguageendpoint.oc1..by-hand": "by hand", "ocid1.ailanguageendpoint.oc1..old-by-hand": "old name"} {
					h.cloud.put(id, resources.Attrs{"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1..m1",
						"displayName": name, "inferenceUnits": int64(1), "state": "ACTIVE"})
				}
				return h.plan(resourcesOf(
					managed,
					endpoint("adopted", "by hand", "options.import: ocid1.ailanguageendpoint.oc1..by-hand"),
					endpoint("renamed", "new name", "inferenceUnits: 2", "options.import: ocid1.ailanguageendpoint.oc1..old-by-hand"),
				), planner.Options{Refresh: true}), nil
			},
		},
		{
			// A refreshing plan after drift (see driftStage): the drift
			// section, then the way back to the specs.
			name:    "drift_plan",
			actions: "a:update b:create c:update dashboardPolicy:update svcPolicy:read",
			run: func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift) {
				src := driftStage(t, h)
				return h.plan(src, planner.Options{Refresh: true}), nil
			},
		},
		{
			// plan --refresh-only of the same drift.
			name:    "refresh_only",
			actions: "a:refresh b:refresh c:no-op dashboardPolicy:refresh svcPolicy:refresh",
			run: func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift) {
				src := driftStage(t, h)
				return h.plan(src, planner.Options{RefreshOnly: true, Refresh: true}), nil
			},
		},
		{
			// reconcile drift of the same drift.
			name: "drift_report",
			run: func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift) {
				src := driftStage(t, h)
				return nil, h.drift(src)
			},
		},
		{
			// reconcile drift right after an apply.
			name: "drift_report_clean",
			run: func(t *testing.T, h *goldenHarness) (*plan.Plan, *report.Drift) {
				src := lookupSpec + resourcesOf(endpoint("a", "first", "description: {fn::secret: "+secretDesc+"}"),
					restrictionPolicy("dashboardPolicy", "dashboard:abc-def-ghi", `[{relation: editor, principals: ["role:1"]}]`))
				h.mustApply(src)
				return nil, h.drift(src)
			},
		},
	}
}

// sortedActions is actions(p) with its entries sorted, as the order of a
// plan's changes is checked by the goldens themselves.
func sortedActions(p *plan.Plan) string {
	parts := strings.Fields(actions(p))
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

var (
	planFormats = map[string]func(io.Writer, *plan.Plan, render.Options) error{
		"txt":  render.PlanText,
		"json": render.PlanJSON,
		"md":   render.PlanMarkdown,
	}
	driftFormats = map[string]func(io.Writer, *report.Drift) error{
		"txt":  render.DriftText,
		"json": render.DriftJSON,
		"md":   render.DriftMarkdown,
	}
)

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newGoldenHarness(t)
			p, rep := tc.run(t, h)
			if p != nil {
				if got := sortedActions(p); got != tc.actions {
					t.Fatalf("plan = %q, want %q", got, tc.actions)
				}
			}
			// The state's lineage is a random UUID: it is written into JSON
			// plans and drift reports, and replaced here by a fixed word.
			lineage := h.meta().Lineage
			outputs := map[string]string{}
			for _, ext := range []string{"txt", "json", "md"} {
				var buf bytes.Buffer
				var err error
				if p != nil {
					err = planFormats[ext](&buf, p, render.Options{Version: "0.1.0-test"})
				} else {
					err = driftFormats[ext](&buf, rep)
				}
				if err != nil {
					t.Fatalf("render %s: %v", ext, err)
				}
				out := buf.String()
				if lineage != "" {
					out = strings.ReplaceAll(out, lineage, "LINEAGE")
				}
				outputs[ext] = out
			}
			for ext, out := range outputs {
				for _, s := range []string{secretMarker, secretConfig, secretDesc, secretDescNew, secretLive} {
					if strings.Contains(out, s) {
						t.Errorf("the %s output shows the secret %q:\n%s", ext, s, out)
					}
				}
				// Nor their sealed form, which state holds.
				if strings.Contains(out, "hmac-sha256:") || strings.Contains(out, `"$secret"`) {
					t.Errorf("the %s output shows a sealed secret:\n%s", ext, out)
				}
				// Nothing of the test's temporary directories may leak.
				if strings.Contains(out, os.TempDir()) || strings.Contains(out, h.path) {
					t.Errorf("the %s output holds a temporary path:\n%s", ext, out)
				}
			}
			for _, ext := range []string{"txt", "json", "md"} {
				t.Run(ext, func(t *testing.T) {
					golden.Check(t, "./engine", filepath.Join("testdata", "golden", tc.name+"."+ext), []byte(outputs[ext]))
				})
			}
		})
	}
}

// TestGoldenDeleteHidesSecrets checks that a plan deleting or forgetting a
// resource that held a secret input shows it as (sensitive value), as every
// other plan does, not as its sealed form from state.
func TestGoldenDeleteHidesSecrets(t *testing.T) {
	t.Parallel()
	h := newGoldenHarness(t)
	stays := endpoint("stays", "stays")
	h.mustApply(resourcesOf(stays,
		endpoint("gone", "gone", "description: {fn::secret: "+secretDesc+"}"),
		endpoint("kept", "kept", "description: {fn::secret: "+secretDesc+"}", "options.retainOnDelete: true")))
	for _, destroy := range []bool{false, true} {
		p := h.plan(resourcesOf(stays), planner.Options{Refresh: true, Destroy: destroy})
		for ext, f := range planFormats {
			var buf bytes.Buffer
			if err := f(&buf, p, render.Options{}); err != nil {
				t.Fatal(err)
			}
			if out := buf.String(); strings.Contains(out, "hmac-sha256:") || strings.Contains(out, `"$secret"`) ||
				ext == "json" && !strings.Contains(out, `"/description"`) {
				t.Errorf("destroy=%v: the %s plan shows a sealed secret, or does not mark it sensitive:\n%s", destroy, ext, out)
			}
		}
	}
}

// TestGoldenSavedPlanRendersTheSame checks that a plan saved to a file and
// read back renders, in every format, byte for byte as the plan did when
// it was made: 'reconcile show FILE' prints what 'plan --out FILE' did.
func TestGoldenSavedPlanRendersTheSame(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenCases() {
		if tc.actions == "" {
			continue // a drift report: there is no plan to save
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newGoldenHarness(t)
			p, _ := tc.run(t, h)
			if p == nil {
				t.Fatal("the case has actions but made no plan")
			}
			saved := signed(t, plan.File{Plan: p, SpecPath: "/specs", Backend: "/state.db", Stack: "default"}, h.stateKey())
			for ext, f := range planFormats {
				for _, color := range []bool{false, true} {
					var want, got bytes.Buffer
					opts := render.Options{Version: "0.1.0-test", Color: color}
					if err := f(&want, p, opts); err != nil {
						t.Fatal(err)
					}
					if err := f(&got, saved.Shown(), opts); err != nil {
						t.Fatal(err)
					}
					if want.String() != got.String() {
						t.Errorf("%s (color %v): the saved plan renders otherwise:\n--- made\n%s\n--- saved\n%s", ext, color, want.String(), got.String())
					}
				}
			}
		})
	}
}
