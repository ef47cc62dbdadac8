package oci

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// identityPrefix is the path prefix of OCI's Identity API (version
// 20160918), of which the emulator serves the two calls that list the
// tenancy's tag namespaces and their tag keys.
const identityPrefix = "/20160918"

// identityRoutes are the Identity calls served, under identityPrefix:
//
//	GET /20160918/tagNamespaces?compartmentId=&includeSubcompartments=   ListTagNamespaces
//	GET /20160918/tagNamespaces/{tagNamespaceId}/tags                    ListTags
//
// Their answers are JSON arrays of TagNamespaceSummary and TagSummary (the
// models of the SDK's identity package), paged with limit, page and
// opc-next-page as the AI Language lists are.
func (e *Emulator) identityRoutes() []route {
	return []route{
		{[]string{"tagNamespaces"}, map[string]handler{http.MethodGet: e.listTagNamespaces}},
		{[]string{"tagNamespaces", "*", "tags"}, map[string]handler{http.MethodGet: e.listTags}},
	}
}

// tagNamespaceSummary is a TagNamespaceSummary.
type tagNamespaceSummary struct {
	ID             string                    `json:"id"`
	CompartmentID  string                    `json:"compartmentId"`
	Name           string                    `json:"name"`
	Description    string                    `json:"description"`
	FreeformTags   map[string]string         `json:"freeformTags"`
	DefinedTags    map[string]map[string]any `json:"definedTags"`
	IsRetired      bool                      `json:"isRetired"`
	LifecycleState string                    `json:"lifecycleState"`
	TimeCreated    string                    `json:"timeCreated"`
}

// tagSummary is a TagSummary.
type tagSummary struct {
	CompartmentID  string                    `json:"compartmentId"`
	ID             string                    `json:"id"`
	Name           string                    `json:"name"`
	Description    string                    `json:"description"`
	FreeformTags   map[string]string         `json:"freeformTags"`
	DefinedTags    map[string]map[string]any `json:"definedTags"`
	IsRetired      bool                      `json:"isRetired"`
	LifecycleState string                    `json:"lifecycleState"`
	TimeCreated    string                    `json:"timeCreated"`
	IsCostTracking bool                      `json:"isCostTracking"`
}

// tagTimeCreated is the creation time of every tag namespace and key:
// the store does not record one.
const tagTimeCreated = "2019-01-01T00:00:00.000Z"

// tagNamespaceID is the OCID of the tag namespace named name: made from
// the name (compared without regard to case), so that it stays the same
// across restarts without being stored.
func tagNamespaceID(name string) string {
	return "ocid1.tagnamespace.oc1.." + digest32("ns/"+strings.ToLower(name))
}

// tagID is the OCID of the tag key of the namespace named ns.
func tagID(ns, key string) string {
	return "ocid1.tagdefinition.oc1.." + digest32("tag/"+strings.ToLower(ns)+"/"+strings.ToLower(key))
}

// digest32 is the unique tail of an OCID made from s: 60 lowercase
// base-32 characters.
func digest32(s string) string {
	sum := sha256.Sum256([]byte(s))
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))[:52] + "aaaaaaaa"
}

// tagNamespaces returns the tenancy's tag namespaces, sorted by name.
func tagNamespaces(tx emulator.Tx) ([]tagNamespaceRecord, error) {
	var out []tagNamespaceRecord
	err := tx.List(bucketTagNamespaces, func(_ string, raw []byte) error {
		var rec tagNamespaceRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return err
		}
		out = append(out, rec)
		return nil
	})
	slices.SortFunc(out, func(a, b tagNamespaceRecord) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}

// listTagNamespaces is ListTagNamespaces. The emulated tenancy keeps its
// tag namespaces in the root compartment: they are listed for the tenancy's
// OCID, and for another compartment none are. compartmentId is required
// (400 MissingParameter); a compartment that does not exist is 404
// NotAuthorizedOrNotFound, as the lists of AI Language answer.
func (e *Emulator) listTagNamespaces(r *http.Request, _ []string, _ []byte) (*response, error) {
	q := r.URL.Query()
	comp := q.Get("compartmentId")
	if comp == "" {
		return nil, errorf(http.StatusBadRequest, "MissingParameter", "compartmentId is required")
	}
	var items []tagNamespaceSummary
	err := e.store.View(func(tx emulator.Tx) error {
		var c compartmentRecord
		found, err := tx.Get(bucketCompartments, comp, &c)
		if err != nil {
			return err
		}
		if !found {
			return errNotFound()
		}
		if !c.Root {
			return nil
		}
		all, err := tagNamespaces(tx)
		for _, ns := range all {
			if st := q.Get("lifecycleState"); st != "" && st != "ACTIVE" {
				continue
			}
			items = append(items, tagNamespaceSummary{
				ID: tagNamespaceID(ns.Name), CompartmentID: comp, Name: ns.Name, Description: ns.Name,
				FreeformTags: map[string]string{}, DefinedTags: map[string]map[string]any{},
				LifecycleState: "ACTIVE", TimeCreated: tagTimeCreated,
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return arrayPage(q, items)
}

// listTags is ListTags: the tag keys of a tag namespace, sorted by name.
// An unknown namespace is 404 NotAuthorizedOrNotFound.
func (e *Emulator) listTags(r *http.Request, args []string, _ []byte) (*response, error) {
	q := r.URL.Query()
	var items []tagSummary
	err := e.store.View(func(tx emulator.Tx) error {
		all, err := tagNamespaces(tx)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(all, func(ns tagNamespaceRecord) bool { return tagNamespaceID(ns.Name) == args[0] })
		if i < 0 {
			return errNotFound()
		}
		ns := all[i]
		root := e.creds.OCITenancy
		for _, k := range slices.Sorted(slices.Values(ns.Keys)) {
			if st := q.Get("lifecycleState"); st != "" && st != "ACTIVE" {
				continue
			}
			items = append(items, tagSummary{
				CompartmentID: root, ID: tagID(ns.Name, k), Name: k, Description: k,
				FreeformTags: map[string]string{}, DefinedTags: map[string]map[string]any{},
				LifecycleState: "ACTIVE", TimeCreated: tagTimeCreated,
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return arrayPage(q, items)
}

// arrayPage answers the page of items that limit and page say, as a JSON
// array (Identity's lists have no "items" wrapper), with opc-next-page
// when more follow.
func arrayPage[T any](q url.Values, items []T) (*response, error) {
	resp, err := page(q, items)
	if err != nil {
		return nil, err
	}
	var wrapped struct {
		Items []T `json:"items"`
	}
	if err := json.Unmarshal(resp.body, &wrapped); err != nil {
		return nil, err
	}
	if wrapped.Items == nil {
		wrapped.Items = []T{}
	}
	out, err := jsonResponse(http.StatusOK, wrapped.Items, resp.header)
	return out, err
}
