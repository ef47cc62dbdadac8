package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/resources"
)

// checkingCloud is the fake cloud with the optional checks of inputs.
type checkingCloud struct {
	*fakeCloud
	mu     sync.Mutex
	inputs func(want resources.Attrs) error
	plan   func(want, prior resources.Attrs) error
	seen   []resources.Attrs // prior of each CheckPlan
}

func (c *checkingCloud) CheckInputs(want resources.Attrs) error {
	if c.inputs == nil {
		return nil
	}
	return c.inputs(want)
}

func (c *checkingCloud) CheckPlan(_ context.Context, want, prior resources.Attrs) error {
	c.mu.Lock()
	c.seen = append(c.seen, prior)
	c.mu.Unlock()
	if c.plan == nil {
		return nil
	}
	return c.plan(want, prior)
}

// TestPlanRunsDriverChecks: what a driver's checks find fails the plan at
// the input's place in the specs; they see known values only (not what
// apply makes, nor secrets), and the inputs last applied.
func TestPlanRunsDriverChecks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cc := &checkingCloud{fakeCloud: h.cloud}
	h.reg.Drivers[endpointToken] = cc
	var got []resources.Attrs
	cc.inputs = func(want resources.Attrs) error {
		cc.mu.Lock()
		got = append(got, want)
		cc.mu.Unlock()
		var errs []error
		if want["displayName"] == "refused" {
			errs = append(errs, &resources.AttrError{Path: []string{"displayName"}, Err: errors.New("the API refuses it")})
		}
		if tags, ok := want["freeformTags"].(map[string]any); ok && tags["team"] == "refused" {
			errs = append(errs, &resources.AttrError{Path: []string{"freeformTags", "team"}, Err: errors.New("no such team")})
		}
		return errors.Join(errs...)
	}

	src := resourcesOf(endpoint("a", "refused"), endpoint("b", "fine", `freeformTags: {team: "${a.id}", env: refused}`))
	_, ds := h.makePlan(src, planner.Options{})
	if text := diagText(ds); !strings.Contains(text, `spec.yaml:6:20: error: oci:AiLanguage:Endpoint "a": field "displayName": the API refuses it`) || len(ds) != 1 {
		t.Errorf("plan diagnostics:\n%s\nwant one error at a's displayName", text)
	}
	for _, w := range got {
		if tags, ok := w["freeformTags"].(map[string]any); ok {
			if _, has := tags["team"]; has {
				t.Errorf("CheckInputs was given %v: a value known only at apply", w)
			}
		}
	}
	if calls := h.cloud.callLog(); len(calls) != 0 {
		t.Errorf("a refused plan called the cloud: %v", calls)
	}

	// A value the plan evaluates (not a literal) is found at its expression.
	src = "variables:\n  t: {fn::join: [\"\", [ref, used]]}\n" + resourcesOf(endpoint("a", "${t}"))
	cc.inputs = func(want resources.Attrs) error {
		if want["displayName"] == "refused" {
			return &resources.AttrError{Path: []string{"displayName"}, Err: errors.New("the API refuses it")}
		}
		return nil
	}
	_, ds = h.makePlan(src, planner.Options{})
	if text := diagText(ds); !strings.Contains(text, `spec.yaml:8:20: error: oci:AiLanguage:Endpoint "a": field "displayName"`) {
		t.Errorf("plan diagnostics:\n%s\nwant one error at the ${t} of a's displayName", text)
	}

	// The plan check: prior is nil for a create, the inputs last applied
	// after; a failed read is an error at the resource.
	src = resourcesOf(endpoint("a", "one"))
	h.mustApply(src)
	cc.mu.Lock()
	if len(cc.seen) == 0 || cc.seen[len(cc.seen)-1] != nil {
		t.Errorf("CheckPlan of a create got prior %v, want nil", cc.seen)
	}
	cc.mu.Unlock()
	cc.plan = func(want, prior resources.Attrs) error {
		if prior["displayName"] != "one" || want["displayName"] != "two" {
			return &resources.AttrError{Path: []string{"displayName"}, Err: errors.New("unexpected prior or want")}
		}
		return errors.New("read the tag namespaces: 503")
	}
	_, ds = h.makePlan(resourcesOf(endpoint("a", "two")), planner.Options{})
	if text := diagText(ds); !strings.Contains(text, `spec.yaml:2:3: error: oci:AiLanguage:Endpoint "a": check what the API would refuse: read the tag namespaces: 503`) {
		t.Errorf("plan diagnostics:\n%s\nwant the failed read at a", text)
	}
}
