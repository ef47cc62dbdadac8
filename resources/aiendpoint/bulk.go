package aiendpoint

import (
	"context"
	"sync"

	oci "github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources"
)

var _ resources.BulkReader = (*Driver)(nil)

// listPageLimit is how many endpoints one ListEndpoints page asks for: the
// largest page of OCI's list calls (and of the emulator). Should the API
// answer fewer, more pages are read (within ReadMany's bound, then Read
// takes over); should it refuse the limit, Read reads every endpoint.
const listPageLimit = 1000

// BulkOmitted names timeUpdated: ListEndpoints answers an EndpointSummary
// per endpoint, which holds every field of the Endpoint that GetEndpoint
// answers but timeUpdated.
func (d *Driver) BulkOmitted() []string { return []string{attrTimeUpdated} }

// ReadMany reads endpoints with ListEndpoints, a page of up to 1,000 at a
// time, in the compartments where state records them (objs' compartmentId),
// up to parallelism compartments at once, and returns the attributes of
// those it finds there, as Read would but without timeUpdated. It lists a
// compartment only when it holds more endpoints of objs than parallelism
// (reading them one by one would take more than one round of calls), and
// reads at most one page per round saved: in a compartment that holds many
// more endpoints than objs names there, it gives up and leaves the rest to
// Read. Endpoints it does not find in the compartment state names (moved
// elsewhere, deleted and purged), those that list as DELETED (Read says
// they are gone) and those of a compartment it cannot list (the list is
// refused or fails) are left out. Bad configuration is left to Read to
// report. Its only error is the end of ctx.
func (d *Driver) ReadMany(ctx context.Context, objs []resources.BulkObject, parallelism int) (map[string]resources.Attrs, error) {
	parallelism = max(parallelism, 1)
	wanted := map[string]map[string]bool{} // compartment → ids
	for _, o := range objs {
		comp, _ := o.Attrs[attrCompartmentID].(string)
		if comp == "" || o.ID == "" {
			continue
		}
		if wanted[comp] == nil {
			wanted[comp] = map[string]bool{}
		}
		wanted[comp][o.ID] = true
	}
	out := map[string]resources.Attrs{}
	c, err := d.sdk()
	if err != nil {
		return out, nil // Read reports it, for each endpoint
	}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, parallelism)
	)
	for comp, ids := range wanted {
		if len(ids) <= parallelism {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				return
			}
			listCompartment(ctx, c, comp, ids, d.listLimit(), len(ids)/parallelism, func(id string, a resources.Attrs) {
				mu.Lock()
				out[id] = a
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func (d *Driver) listLimit() int {
	if d.pageLimit > 0 {
		return d.pageLimit
	}
	return listPageLimit
}

// listCompartment lists the endpoints of comp, at most maxPages pages of
// limit endpoints, and calls found with the attributes of each of ids it
// finds there, not DELETED, until it has found them all. A failed list
// ends it.
func listCompartment(ctx context.Context, c sdkClient, comp string, ids map[string]bool, limit, maxPages int, found func(string, resources.Attrs)) {
	left := len(ids)
	seen := map[string]bool{}
	var page *string
	for range max(maxPages, 1) {
		resp, err := c.ListEndpoints(sdkCtx(ctx), oci.ListEndpointsRequest{
			CompartmentId: &comp, Limit: common.Int(limit), Page: page,
		})
		if err != nil {
			return
		}
		for _, s := range resp.Items {
			id := deref(s.Id)
			if !ids[id] || seen[id] || deref(s.CompartmentId) != comp || s.LifecycleState == oci.EndpointLifecycleStateDeleted {
				continue
			}
			seen[id] = true
			left--
			found(id, toAttrs(fromSummary(s)))
		}
		if left == 0 || resp.OpcNextPage == nil || *resp.OpcNextPage == "" {
			return
		}
		page = resp.OpcNextPage
	}
}

// fromSummary is the Endpoint that s summarises, without its timeUpdated,
// which a summary does not hold.
func fromSummary(s oci.EndpointSummary) oci.Endpoint {
	return oci.Endpoint{
		Id:               s.Id,
		DisplayName:      s.DisplayName,
		CompartmentId:    s.CompartmentId,
		ProjectId:        s.ProjectId,
		TimeCreated:      s.TimeCreated,
		LifecycleState:   s.LifecycleState,
		ModelId:          s.ModelId,
		Alias:            s.Alias,
		Description:      s.Description,
		LifecycleDetails: s.LifecycleDetails,
		InferenceUnits:   s.InferenceUnits,
		FreeformTags:     s.FreeformTags,
		DefinedTags:      s.DefinedTags,
		SystemTags:       s.SystemTags,
	}
}
