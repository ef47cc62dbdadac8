package endpointsiam

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	servicemanagement "google.golang.org/api/servicemanagement/v1"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
	"github.com/reconcile-dev/reconcile/resources/httpretry"
)

// Client is what the IAM resources of this package share: one connection
// to Service Management, made on first use, and a lock per IAM policy, so
// that the read-modify-write cycles one process makes on one policy run one
// after the other instead of failing each other's etag. Other processes
// are met by the etag: see modify.
type Client struct {
	c *conn

	mu    sync.Mutex
	locks map[string]*sync.Mutex // by resource name, "services/S[/consumers/C]"
}

// NewClient returns a client of the Service Management API described by
// cfg. It connects on its first call.
func NewClient(cfg Config) *Client {
	return &Client{c: &conn{cfg: cfg}, locks: map[string]*sync.Mutex{}}
}

// lock holds the lock of the policy of resource until unlock is called.
func (cl *Client) lock(resource string) (unlock func()) {
	cl.mu.Lock()
	l := cl.locks[resource]
	if l == nil {
		l = &sync.Mutex{}
		cl.locks[resource] = l
	}
	cl.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// policyOf is one read of an IAM policy: its document and etag.
type policyOf struct {
	doc  gcpiam.Policy
	etag string
}

// get reads the policy of t in version 3 (conditions whole).
func (cl *Client) get(ctx context.Context, t target) (policyOf, error) {
	svc, err := cl.c.service(ctx)
	if err != nil {
		return policyOf{}, err
	}
	var p *servicemanagement.Policy
	if t.consumer == "" {
		p, err = svc.Services.GetIamPolicy(t.resource(), policyV3()).Context(ctx).Do()
	} else {
		p, err = svc.Services.Consumers.GetIamPolicy(t.resource(), policyV3()).Context(ctx).Do()
	}
	if err != nil {
		return policyOf{}, fmt.Errorf("get IAM policy of %q: %w", t.resource(), apiError(err))
	}
	return policyOf{doc: fromAPI(p), etag: p.Etag}, nil
}

// set writes doc as the policy of t, in version 3, if its etag is still
// etag. mask names the fields written: "" means bindings (and the etag),
// the API's default.
func (cl *Client) set(ctx context.Context, t target, doc gcpiam.Policy, etag, mask string) (policyOf, error) {
	svc, err := cl.c.service(ctx)
	if err != nil {
		return policyOf{}, err
	}
	req := &servicemanagement.SetIamPolicyRequest{Policy: toAPI(doc, etag), UpdateMask: mask}
	var p *servicemanagement.Policy
	if t.consumer == "" {
		p, err = svc.Services.SetIamPolicy(t.resource(), req).Context(ctx).Do()
	} else {
		p, err = svc.Services.Consumers.SetIamPolicy(t.resource(), req).Context(ctx).Do()
	}
	if err != nil {
		return policyOf{}, fmt.Errorf("set IAM policy of %q: %w", t.resource(), apiError(err))
	}
	return policyOf{doc: fromAPI(p), etag: p.Etag}, nil
}

// maskWithAudit writes audit configs too: an authoritative policy sets them.
const maskWithAudit = "bindings,etag,auditConfigs"

// Backoff between attempts of a read-modify-write whose write met a newer
// etag: a random pause up to conflictBase doubling per conflict, at most
// conflictMax. Variables, so that tests can shorten them.
var (
	conflictBase = 50 * time.Millisecond
	conflictMax  = 2 * time.Second
)

// modify reads the policy of t, lets change edit its document, and writes
// it back with the etag read, unless change reports that nothing changed,
// or the write would remove the caller's own access and ctx guards against
// that (see guard: the refusal matches resources.ErrRefused).
// When the write meets a newer etag (409 ABORTED: someone else wrote the
// policy in between), it reads again and repeats, after a growing random
// pause, until it succeeds or the context ends (httpretry.DefaultBudget
// when it has no deadline): so writers adding
// different members never lose one another's. It returns the policy as
// written (or as read, when nothing changed), and whether it wrote.
//
// A failed read has changed nothing: its error matches resources.ErrRefused.
// A write the API refused (a 4xx other than 408, 409 and 429) also matches
// it; other failures of a write leave open whether it landed.
func (cl *Client) modify(ctx context.Context, t target, mask string, change editor) (policyOf, bool, error) {
	unlock := cl.lock(t.resource())
	defer unlock()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, httpretry.DefaultBudget)
		defer cancel()
	}
	for attempt := 1; ; attempt++ {
		cur, err := cl.get(ctx, t)
		if err != nil {
			if attempt == 1 {
				err = resources.Refused(err)
			}
			return policyOf{}, false, err
		}
		doc := cur.doc
		doc.Bindings = slices.Clone(doc.Bindings)
		changed, err := change(&doc)
		if err != nil || !changed {
			return cur, false, err
		}
		if err := cl.guard(ctx, t, cur.doc, doc); err != nil {
			return policyOf{}, false, err
		}
		got, err := cl.set(ctx, t, doc, cur.etag, mask)
		if err == nil {
			return got, true, nil
		}
		var ae *resources.APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusConflict {
			if errors.As(err, &ae) && resources.RefusalStatus(ae.Status) {
				err = resources.Refused(err)
			}
			return policyOf{}, false, err
		}
		wait := rand.N(min(conflictMax, conflictBase<<min(attempt-1, 16)) + 1)
		resources.ReportRetry(ctx, resources.RetryInfo{Method: http.MethodPost, Path: "/v1/" + t.resource() + ":setIamPolicy",
			Cause: fmt.Sprintf("409 %s: the policy changed since it was read", ae.Code), Attempt: attempt + 1, Wait: wait})
		select {
		case <-ctx.Done():
			return policyOf{}, false, fmt.Errorf("%w (%w) while waiting to read the IAM policy of %q again", context.Cause(ctx), err, t.resource())
		case <-time.After(wait):
		}
	}
}

// fromAPI returns the document part of an API policy.
func fromAPI(p *servicemanagement.Policy) gcpiam.Policy {
	var doc gcpiam.Policy
	for _, b := range p.Bindings {
		if b == nil {
			continue
		}
		nb := gcpiam.Binding{Role: b.Role, Members: b.Members}
		if c := b.Condition; c != nil {
			nb.Condition = &gcpiam.Expr{Title: c.Title, Description: c.Description, Expression: c.Expression, Location: c.Location}
		}
		doc.Bindings = append(doc.Bindings, nb)
	}
	for _, a := range p.AuditConfigs {
		if a == nil {
			continue
		}
		na := gcpiam.AuditConfig{Service: a.Service}
		for _, l := range a.AuditLogConfigs {
			if l != nil {
				na.AuditLogConfigs = append(na.AuditLogConfigs, gcpiam.AuditLogConfig{LogType: l.LogType, ExemptedMembers: l.ExemptedMembers})
			}
		}
		doc.AuditConfigs = append(doc.AuditConfigs, na)
	}
	return doc
}

// toAPI returns doc as an API policy of version 3 with etag.
func toAPI(doc gcpiam.Policy, etag string) *servicemanagement.Policy {
	p := &servicemanagement.Policy{Version: 3, Etag: etag}
	for _, b := range doc.Bindings {
		nb := &servicemanagement.Binding{Role: b.Role, Members: b.Members}
		if c := b.Condition; c != nil {
			nb.Condition = &servicemanagement.Expr{Title: c.Title, Description: c.Description, Expression: c.Expression, Location: c.Location}
		}
		p.Bindings = append(p.Bindings, nb)
	}
	for _, a := range doc.AuditConfigs {
		na := &servicemanagement.AuditConfig{Service: a.Service}
		for _, l := range a.AuditLogConfigs {
			na.AuditLogConfigs = append(na.AuditLogConfigs, &servicemanagement.AuditLogConfig{LogType: l.LogType, ExemptedMembers: l.ExemptedMembers})
		}
		p.AuditConfigs = append(p.AuditConfigs, na)
	}
	return p
}
