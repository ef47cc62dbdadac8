package endpointsiam

import (
	"context"
	"errors"
	"fmt"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

// PolicyDriver manages gcp:endpoints:ServiceIamPolicy (the whole IAM
// policy of a managed service) and gcp:endpoints:ConsumersIamPolicy (of a
// consumer project on one). It is authoritative: the policy becomes
// policyData, whatever it held. Its id is the resource name,
// "services/S" or "services/S/consumers/C". Attributes:
//
//	serviceName      string  "services/S" (ServiceIamPolicy) or "S" (ConsumersIamPolicy)
//	consumerProject  string  "services/S/consumers/C" (ConsumersIamPolicy only)
//	policyData       string  the policy document, in canonical form (gcpiam.Policy.Canonical)
//	etag             string  output: the policy's etag as last read or written
type PolicyDriver struct {
	base
	policyResults
}

var (
	_ resources.Driver         = (*PolicyDriver)(nil)
	_ resources.Normalizer     = (*PolicyDriver)(nil)
	_ resources.Recoverer      = (*PolicyDriver)(nil)
	_ resources.ResultComparer = (*PolicyDriver)(nil)
)

// NewServicePolicy returns the gcp:endpoints:ServiceIamPolicy driver.
func NewServicePolicy(cl *Client) *PolicyDriver {
	return &PolicyDriver{base: base{cl: cl, scope: serviceScope}}
}

// NewConsumersPolicy returns the gcp:endpoints:ConsumersIamPolicy driver.
func NewConsumersPolicy(cl *Client) *PolicyDriver {
	return &PolicyDriver{base: base{cl: cl, scope: consumersScope}}
}

// Read returns the policy of the object id names ("services/S" or "S";
// "services/S/consumers/C" or "S/C"). Every object has a policy, if only
// an empty one ("{}"), so Read never returns resources.ErrNotFound; an
// unknown service is the API's 403.
func (d *PolicyDriver) Read(ctx context.Context, id string) (resources.Attrs, error) {
	pid, err := d.scope.parseID(id, 1)
	if err != nil {
		return nil, resources.Refused(err)
	}
	p, err := d.cl.get(ctx, pid.target)
	if err != nil {
		return nil, err
	}
	return d.attrs(pid.target, p), nil
}

func (d *PolicyDriver) attrs(t target, p policyOf) resources.Attrs {
	out := t.attrs()
	out["id"] = t.resource()
	out["policyData"] = p.doc.Canonical().JSON()
	out["etag"] = p.etag
	return out
}

// inputs reads the target and the policy document of want.
func (d *PolicyDriver) inputs(want resources.Attrs) (target, gcpiam.Policy, error) {
	t, err := d.scope.targetOf(want)
	if err != nil {
		return target{}, gcpiam.Policy{}, err
	}
	text, err := stringArg(want, "policyData")
	if err != nil {
		return target{}, gcpiam.Policy{}, err
	}
	doc, err := gcpiam.Parse(text)
	if err != nil {
		return target{}, gcpiam.Policy{}, &resources.AttrError{Path: []string{"policyData"}, Err: err}
	}
	for _, b := range doc.Bindings {
		for _, m := range b.Members {
			if err := gcpiam.CheckMember(m); err != nil {
				return target{}, gcpiam.Policy{}, &resources.AttrError{Path: []string{"policyData"}, Err: fmt.Errorf("binding of %s: %w", b.Role, err)}
			}
		}
	}
	return t, doc.Canonical(), nil
}

// write makes policyData the policy of the target: its bindings and audit
// configs, with the etag it read, again after a conflict.
func (d *PolicyDriver) write(ctx context.Context, t target, doc gcpiam.Policy) (resources.Attrs, error) {
	p, _, err := d.cl.modify(ctx, t, maskWithAudit, d.edit(doc))
	if err != nil {
		return nil, err
	}
	return d.attrs(t, p), nil
}

// edit makes a policy doc (in canonical form), unless it is so already.
func (d *PolicyDriver) edit(doc gcpiam.Policy) editor {
	return func(cur *gcpiam.Policy) (bool, error) {
		if cur.Canonical().JSON() == doc.JSON() {
			return false, nil
		}
		*cur = doc
		return true, nil
	}
}

// Create sets the policy to policyData, replacing what it held. Bad
// inputs, and a failed read of the current policy, match
// resources.ErrRefused; a failed write leaves open whether it landed.
func (d *PolicyDriver) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	t, doc, err := d.inputs(want)
	if err != nil {
		return "", nil, err
	}
	got, err := d.write(ctx, t, doc)
	if err != nil {
		return "", nil, err
	}
	return t.resource(), got, nil
}

// Update sets the policy to the new policyData. Another object (a changed
// serviceName or consumerProject) needs a replacement, declared in the
// schema: Update reports it as an AttrError.
func (d *PolicyDriver) Update(ctx context.Context, id string, _, want resources.Attrs) (resources.Attrs, error) {
	t, doc, err := d.inputs(want)
	if err != nil {
		return nil, err
	}
	if pid, err := d.scope.parseID(id, 1); err != nil || pid.target != t {
		return nil, &resources.AttrError{Path: []string{"serviceName"}, Err: fmt.Errorf("the policy of %q cannot move to %q in place", id, t.resource())}
	}
	got, err := d.write(ctx, t, doc)
	if err != nil {
		return nil, err
	}
	return got, nil
}

// Delete clears the policy, as the provider does: no bindings and no
// audit configs remain. An empty policy is left alone.
func (d *PolicyDriver) Delete(ctx context.Context, id string) error {
	pid, err := d.scope.parseID(id, 1)
	if err != nil {
		return resources.Refused(err)
	}
	if _, err := d.write(ctx, pid.target, gcpiam.Policy{}); err != nil {
		return err
	}
	return nil
}

// Normalize writes the target in canonical form (see PolicyDriver) and
// policyData as its canonical text, so that two documents granting the
// same compare equal. Inputs that do not parse are left as they are, for
// Create to report.
func (d *PolicyDriver) Normalize(want resources.Attrs) resources.Attrs {
	out := copyAttrs(want)
	d.canonTarget(want, out)
	if text, ok := want["policyData"].(string); ok {
		if doc, err := gcpiam.Parse(text); err == nil {
			out["policyData"] = doc.Canonical().JSON()
		}
	}
	return out
}

// Recover finds what an interrupted Create wrote. The policy's id is its
// object's name, so Recover reads it: a policy holding what the create was
// to write is adopted; any other is not the create's doing (it never
// landed, or was changed since), and Recover reports that the create made
// nothing, for the next plan to write the policy again. It needs the
// inputs in clear.
func (d *PolicyDriver) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	if err := hiddenInputs(req, "serviceName", "consumerProject", "policyData"); err != nil {
		return "", nil, err
	}
	t, doc, err := d.inputs(req.Want)
	if err != nil {
		return "", nil, err
	}
	got, err := d.Read(ctx, t.resource())
	if err != nil {
		return "", nil, err
	}
	if got["policyData"] != doc.JSON() {
		return "", nil, nil
	}
	return t.resource(), got, nil
}

// errNoUpdate is the cause of an Update of a resource whose every input
// forces a replacement.
var errNoUpdate = errors.New("cannot change in place: every input of this type forces a replacement")
