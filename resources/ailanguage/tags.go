package ailanguage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/identity"

	"github.com/reconcile-dev/reconcile/resources"
)

// tagCatalog is what the tenancy defines of defined tags: its usable tag
// namespaces, by lower-case name, each with its name as written and its
// usable keys (lower-case name → name). Retired namespaces and keys, and
// those not ACTIVE, are left out: OCI does not apply them.
type tagCatalog map[string]tagNamespace

type tagNamespace struct {
	name string
	keys map[string]string
}

// tagCache holds the tenancy's tag catalog once read, for the rest of the
// run: a plan of many objects reads it once.
type tagCache struct {
	mu      sync.Mutex
	catalog tagCatalog // nil until read successfully
}

// identityClient makes the Identity client of the tag checks, with the
// credentials, host, HTTP client and retries of the AI Language client.
func (c *Client) identityClient() (identity.IdentityClient, string, error) {
	var none identity.IdentityClient
	sdk, err := c.SDK()
	if err != nil {
		return none, "", err
	}
	p := sdk.ConfigurationProvider()
	if p == nil || *p == nil {
		return none, "", errors.New("no OCI configuration")
	}
	tenancy, err := (*p).TenancyOCID()
	if err != nil {
		return none, "", fmt.Errorf("OCI tenancy: %w", err)
	}
	ic, err := identity.NewIdentityClientWithConfigurationProvider(*p)
	if err != nil {
		return none, "", resources.Refused(fmt.Errorf("OCI Identity client: %w", err))
	}
	if c.cfg.Host != "" {
		ic.Host = strings.TrimRight(c.cfg.Host, "/")
	}
	noRetry := common.NoRetryPolicy()
	ic.Configuration.RetryPolicy = &noRetry
	ic.Configuration.CircuitBreaker = nil
	ic.HTTPClient = c.httpClient()
	return ic, tenancy, nil
}

// tagCatalog returns the tenancy's tag catalog, reading it on the first
// call that succeeds: every tag namespace of the tenancy and of its
// compartments (ListTagNamespaces), and the keys of each (ListTags).
func (c *Client) tagCatalog(ctx context.Context) (tagCatalog, error) {
	c.tags.mu.Lock()
	defer c.tags.mu.Unlock()
	if c.tags.catalog != nil {
		return c.tags.catalog, nil
	}
	ic, tenancy, err := c.identityClient()
	if err != nil {
		return nil, err
	}
	cat := tagCatalog{}
	req := identity.ListTagNamespacesRequest{CompartmentId: &tenancy, IncludeSubcompartments: common.Bool(true)}
	for {
		resp, err := ic.ListTagNamespaces(Ctx(ctx), req)
		if err != nil {
			return nil, fmt.Errorf("list the tenancy's tag namespaces: %w", APIErr(err))
		}
		for _, ns := range resp.Items {
			if ns.Name == nil || ns.Id == nil || usable(ns.IsRetired, string(ns.LifecycleState)) != nil {
				continue
			}
			keys, err := tagKeys(ctx, ic, *ns.Id)
			if err != nil {
				return nil, fmt.Errorf("list the keys of tag namespace %q: %w", *ns.Name, err)
			}
			cat[strings.ToLower(*ns.Name)] = tagNamespace{name: *ns.Name, keys: keys}
		}
		if resp.OpcNextPage == nil {
			break
		}
		req.Page = resp.OpcNextPage
	}
	c.tags.catalog = cat
	return cat, nil
}

// tagKeys lists the usable keys of the tag namespace id.
func tagKeys(ctx context.Context, ic identity.IdentityClient, id string) (map[string]string, error) {
	keys := map[string]string{}
	req := identity.ListTagsRequest{TagNamespaceId: &id}
	for {
		resp, err := ic.ListTags(Ctx(ctx), req)
		if err != nil {
			return nil, APIErr(err)
		}
		for _, t := range resp.Items {
			if t.Name != nil && usable(t.IsRetired, string(t.LifecycleState)) == nil {
				keys[strings.ToLower(*t.Name)] = *t.Name
			}
		}
		if resp.OpcNextPage == nil {
			return keys, nil
		}
		req.Page = resp.OpcNextPage
	}
}

// usable says why a tag namespace or key cannot be applied: retired, or
// not ACTIVE.
func usable(retired *bool, state string) error {
	switch {
	case retired != nil && *retired:
		return errors.New("retired")
	case state != "" && state != "ACTIVE":
		return fmt.Errorf("%s", state)
	}
	return nil
}

// CheckDefinedTags refuses, with one *resources.AttrError per tag at its
// key of definedTags, the defined tags of want that name a tag namespace,
// or a key of one, that the tenancy lacks (or has retired): OCI refuses
// them with 400 RelatedResourceNotAuthorizedOrNotFound. Names compare
// without regard to case, as OCI's do. The tags are checked when the apply
// would send them: always for a create (prior nil), and when they differ
// from prior's otherwise. The tenancy's tag namespaces are read once per
// run (ListTagNamespaces and ListTags of OCI Identity); a failed read is
// returned as an error of its own.
func (c *Client) CheckDefinedTags(ctx context.Context, want, prior resources.Attrs) error {
	tags, ok := want[AttrDefinedTags].(map[string]any)
	if !ok || len(tags) == 0 {
		return nil
	}
	if prior != nil && resources.Equal(tags, prior[AttrDefinedTags]) {
		return nil
	}
	cat, err := c.tagCatalog(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, flat := range slices.Sorted(maps.Keys(tags)) {
		ns, key, ok := strings.Cut(flat, ".")
		if !ok || ns == "" || key == "" {
			continue // the form is checked when the tags are sent
		}
		at := func(format string, args ...any) {
			errs = append(errs, &resources.AttrError{Path: []string{AttrDefinedTags, flat}, Err: fmt.Errorf(format, args...)})
		}
		n, found := cat[strings.ToLower(ns)]
		switch {
		case !found:
			at("the tenancy has no tag namespace %q (OCI would refuse the tag: RelatedResourceNotAuthorizedOrNotFound); its tag namespaces: %s%s",
				ns, strings.Join(cat.names(), ", "), suggestion(ns, cat.names()))
		case n.keys[strings.ToLower(key)] == "":
			keys := n.keyNames()
			at("tag namespace %q has no key %q (OCI would refuse the tag: RelatedResourceNotAuthorizedOrNotFound); its keys: %s%s",
				n.name, key, strings.Join(keys, ", "), suggestion(key, keys))
		}
	}
	return errors.Join(errs...)
}

// names lists the names of the catalog's namespaces, sorted.
func (cat tagCatalog) names() []string {
	out := make([]string, 0, len(cat))
	for _, n := range cat {
		out = append(out, n.name)
	}
	sort.Strings(out)
	return out
}

// keyNames lists the names of the namespace's keys, sorted.
func (n tagNamespace) keyNames() []string {
	out := make([]string, 0, len(n.keys))
	for _, k := range n.keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// suggestion is ` (did you mean "X"?)` for the name of names closest to s,
// within a small edit distance, or "".
func suggestion(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := distance(strings.ToLower(s), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
