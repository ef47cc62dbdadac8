package oci

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// bucketTagNamespaces holds the tenancy's tag namespaces, by lower-case
// name: a defined tag must name one of them and one of its keys.
const bucketTagNamespaces = "oci.tagnamespaces"

// tagNamespaceRecord is a tag namespace and its tag keys (tag
// definitions).
type tagNamespaceRecord struct {
	Name string   `json:"name"`
	Keys []string `json:"keys"`
}

// builtinTagNamespaces are the tag namespaces Seed creates: the Oracle-Tags
// namespace of the tag defaults every tenancy made since 2019 has, and two
// of the tenancy's own.
var builtinTagNamespaces = []tagNamespaceRecord{
	{Name: tagDefaultsNamespace, Keys: []string{tagCreatedBy, tagCreatedOn}},
	{Name: "Operations", Keys: []string{"CostCenter", "Environment", "Owner"}},
	{Name: "Finance", Keys: []string{"Budget", "Project"}},
}

// msgTagsNotFound starts the message OCI answers, with 400
// RelatedResourceNotAuthorizedOrNotFound, to definedTags naming a tag
// namespace or key that does not exist.
const msgTagsNotFound = "The following tag namespaces / keys are not authorized or not found: "

// checkDefinedTags refuses defined tags naming a tag namespace, or a key
// of one, that the tenancy does not have, as OCI does: 400
// RelatedResourceNotAuthorizedOrNotFound. Names compare without regard to
// case, as OCI's do. The first problem in name order is reported.
func checkDefinedTags(tx emulator.Tx, tags map[string]map[string]any) error {
	names := make([]string, 0, len(tags))
	for ns := range tags {
		names = append(names, ns)
	}
	sort.Strings(names)
	for _, ns := range names {
		var rec tagNamespaceRecord
		found, err := tx.Get(bucketTagNamespaces, strings.ToLower(ns), &rec)
		if err != nil {
			return err
		}
		if !found {
			return errorf(http.StatusBadRequest, "RelatedResourceNotAuthorizedOrNotFound", "%sTagNamespace %s does not exists.", msgTagsNotFound, ns)
		}
		keys := make([]string, 0, len(tags[ns]))
		for k := range tags[ns] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !slices.ContainsFunc(rec.Keys, func(have string) bool { return strings.EqualFold(have, k) }) {
				return errorf(http.StatusBadRequest, "RelatedResourceNotAuthorizedOrNotFound", "%sTagDefinition %s in TagNamespace %s does not exists.", msgTagsNotFound, k, ns)
			}
		}
	}
	return nil
}

// putTagNamespace writes ns unless a namespace of that name exists, and
// reports whether it did.
func putTagNamespace(tx emulator.Tx, ns tagNamespaceRecord) (bool, error) {
	var have tagNamespaceRecord
	found, err := tx.Get(bucketTagNamespaces, strings.ToLower(ns.Name), &have)
	if err != nil || found {
		return false, err
	}
	return true, tx.Put(bucketTagNamespaces, strings.ToLower(ns.Name), ns)
}

// systemTagsOfNew are the system tags OCI puts on a resource created in
// the emulated tenancy, an Always Free one: orcl-cloud.free-tier-retained.
func systemTagsOfNew() map[string]map[string]any {
	return map[string]map[string]any{"orcl-cloud": {"free-tier-retained": "true"}}
}
