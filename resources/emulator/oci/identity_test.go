package oci

import (
	"errors"
	"slices"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/identity"
)

// identityClient returns the official SDK's Identity client pointed at the
// emulator, with the SDK's retries and circuit breaker off.
func (env *testEnv) identityClient() identity.IdentityClient {
	env.t.Helper()
	c, err := identity.NewIdentityClientWithConfigurationProvider(common.NewRawConfigurationProvider(
		env.creds.OCITenancy, env.creds.OCIUser, env.creds.OCIRegion, env.creds.OCIFingerprint, env.creds.OCIPrivateKey, nil))
	if err != nil {
		env.t.Fatal(err)
	}
	c.Host = env.srv.URL
	noRetry := common.NoRetryPolicy()
	c.Configuration.RetryPolicy = &noRetry
	c.Configuration.CircuitBreaker = nil
	return c
}

// TestEmulatorTagNamespaces: the official Identity client lists the
// tenancy's tag namespaces and their keys, paged, as Identity answers.
func TestEmulatorTagNamespaces(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	c := env.identityClient()
	ctx := t.Context()

	var names []string
	var ids = map[string]string{}
	req := identity.ListTagNamespacesRequest{CompartmentId: &env.compartment, IncludeSubcompartments: common.Bool(true), Limit: common.Int(2)}
	pages := 0
	for {
		resp, err := c.ListTagNamespaces(ctx, req)
		if err != nil {
			t.Fatalf("ListTagNamespaces: %v", err)
		}
		pages++
		for _, ns := range resp.Items {
			if *ns.CompartmentId != env.compartment || ns.LifecycleState != identity.TagNamespaceLifecycleStateActive || *ns.IsRetired {
				t.Errorf("tag namespace %+v", ns)
			}
			names = append(names, *ns.Name)
			ids[*ns.Name] = *ns.Id
		}
		if resp.OpcNextPage == nil {
			break
		}
		req.Page = resp.OpcNextPage
	}
	if want := []string{"Finance", "Operations", "Oracle-Tags"}; !slices.Equal(names, want) || pages != 2 {
		t.Errorf("tag namespaces = %q in %d pages, want %q in 2", names, pages, want)
	}

	tags, err := c.ListTags(ctx, identity.ListTagsRequest{TagNamespaceId: common.String(ids["Operations"])})
	if err != nil {
		t.Fatalf("ListTags: %v", err)
	}
	var keys []string
	for _, tg := range tags.Items {
		keys = append(keys, *tg.Name)
	}
	if want := []string{"CostCenter", "Environment", "Owner"}; !slices.Equal(keys, want) {
		t.Errorf("keys of Operations = %q, want %q", keys, want)
	}

	// Another compartment holds none; an unknown one, and an unknown
	// namespace, are 404.
	other, err := c.ListTagNamespaces(ctx, identity.ListTagNamespacesRequest{CompartmentId: &env.otherCompartment})
	if err != nil || len(other.Items) != 0 {
		t.Errorf("ListTagNamespaces of another compartment = %+v, %v; want none", other.Items, err)
	}
	for name, call := range map[string]func() error{
		"unknown compartment": func() error {
			_, err := c.ListTagNamespaces(ctx, identity.ListTagNamespacesRequest{CompartmentId: common.String("ocid1.compartment.oc1..nope")})
			return err
		},
		"unknown namespace": func() error {
			_, err := c.ListTags(ctx, identity.ListTagsRequest{TagNamespaceId: common.String("ocid1.tagnamespace.oc1..nope")})
			return err
		},
	} {
		var se common.ServiceError
		if err := call(); !errors.As(err, &se) || se.GetHTTPStatusCode() != 404 || se.GetCode() != "NotAuthorizedOrNotFound" {
			t.Errorf("%s: %v, want 404 NotAuthorizedOrNotFound", name, err)
		}
	}
}
