package aiendpoint

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"reconcile/resources"
)

// Attribute names (lowerCamelCase, as in the schema).
const (
	attrCompartmentID    = "compartmentId"
	attrModelID          = "modelId"
	attrDefinedTags      = "definedTags"
	attrDescription      = "description"
	attrDisplayName      = "displayName"
	attrFreeformTags     = "freeformTags"
	attrInferenceUnits   = "inferenceUnits"
	attrID               = "id"
	attrLifecycleDetails = "lifecycleDetails"
	attrProjectID        = "projectId"
	attrState            = "state"
	attrSystemTags       = "systemTags"
	attrTimeCreated      = "timeCreated"
	attrTimeUpdated      = "timeUpdated"
)

// Normalize fills the server-side default of inferenceUnits (1), drops empty
// tag maps and an empty description (the API treats empty and absent alike)
// and puts values in
// their canonical JSON shape, so that desired and observed attributes
// compare equal when nothing really differs.
func (d *Driver) Normalize(want resources.Attrs) resources.Attrs {
	out := resources.CanonAttrs(want)
	if out == nil {
		out = resources.Attrs{}
	}
	if v, ok := out[attrInferenceUnits]; !ok || v == nil {
		out[attrInferenceUnits] = int64(1)
	}
	if s, ok := out[attrDescription].(string); ok && s == "" {
		delete(out, attrDescription)
	}
	for _, k := range []string{attrFreeformTags, attrDefinedTags, attrSystemTags} {
		if v, ok := out[k]; ok {
			if m, isMap := v.(map[string]any); v == nil || (isMap && len(m) == 0) {
				delete(out, k)
			}
		}
	}
	return out
}

// VendorTagNamespace is the defined-tag namespace OCI's tag defaults fill
// on every resource created in a tenancy that has them (all tenancies made
// since 2019 do): Oracle-Tags.CreatedBy (who created it) and
// Oracle-Tags.CreatedOn (when). They are the cloud's, not the user's.
const VendorTagNamespace = "Oracle-Tags"

// VendorKey reports whether key of field is a tag OCI adds by itself: a
// defined tag of the Oracle-Tags namespace. The engine never counts one as
// a difference unless the specs set that key (resources.VendorKeys).
func (d *Driver) VendorKey(field, key string) bool {
	return isVendorTag(field, key)
}

func isVendorTag(field, key string) bool {
	return field == attrDefinedTags && strings.HasPrefix(key, VendorTagNamespace+".")
}

// withoutVendorTags returns live with the defined tags of the Oracle-Tags
// namespace that want does not set removed, so that the update of an
// endpoint whose specs never mention them does not send definedTags.
func withoutVendorTags(live, want resources.Attrs) resources.Attrs {
	tags, ok := live[attrDefinedTags].(map[string]any)
	if !ok {
		return live
	}
	wanted, _ := want[attrDefinedTags].(map[string]any)
	kept := map[string]any{}
	for k, v := range tags {
		if _, set := wanted[k]; set || !isVendorTag(attrDefinedTags, k) {
			kept[k] = v
		}
	}
	out := make(resources.Attrs, len(live))
	for k, v := range live {
		out[k] = v
	}
	if len(kept) == 0 {
		delete(out, attrDefinedTags)
	} else {
		out[attrDefinedTags] = kept
	}
	return out
}

// toAttrs turns an endpoint into attributes: every input plus the outputs.
// Absent optional fields, an empty description and empty tag maps are left
// out, as Normalize leaves them out of desired inputs.
func toAttrs(ep ailanguage.Endpoint) resources.Attrs {
	a := resources.Attrs{
		attrID:             deref(ep.Id),
		attrCompartmentID:  deref(ep.CompartmentId),
		attrModelID:        deref(ep.ModelId),
		attrProjectID:      deref(ep.ProjectId),
		attrDisplayName:    deref(ep.DisplayName),
		attrState:          string(ep.LifecycleState),
		attrInferenceUnits: int64(1),
	}
	if ep.InferenceUnits != nil {
		a[attrInferenceUnits] = int64(*ep.InferenceUnits)
	}
	if ep.Description != nil && *ep.Description != "" {
		a[attrDescription] = *ep.Description
	}
	if ep.LifecycleDetails != nil && *ep.LifecycleDetails != "" {
		a[attrLifecycleDetails] = *ep.LifecycleDetails
	}
	if t := rfc3339(ep.TimeCreated); t != "" {
		a[attrTimeCreated] = t
	}
	if t := rfc3339(ep.TimeUpdated); t != "" {
		a[attrTimeUpdated] = t
	}
	if len(ep.FreeformTags) > 0 {
		m := make(map[string]any, len(ep.FreeformTags))
		for k, v := range ep.FreeformTags {
			m[k] = v
		}
		a[attrFreeformTags] = m
	}
	if m := flattenTags(ep.DefinedTags); len(m) > 0 {
		a[attrDefinedTags] = m
	}
	if m := flattenTags(ep.SystemTags); len(m) > 0 {
		a[attrSystemTags] = m
	}
	return a
}

func rfc3339(t *common.SDKTime) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// flattenTags turns OCI's namespace → key → value nesting into
// "namespace.key" → value strings, as Terraform and Pulumi show defined and
// system tags.
func flattenTags(nested map[string]map[string]any) map[string]any {
	out := map[string]any{}
	for ns, kv := range nested {
		for k, v := range kv {
			s, ok := v.(string)
			if !ok {
				s = fmt.Sprint(v)
			}
			out[ns+"."+k] = s
		}
	}
	return out
}

// nestTags is the inverse of flattenTags; the namespace ends at the first
// dot. attr names the attribute for errors.
func nestTags(attr string, flat map[string]any) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ns, key, ok := strings.Cut(k, ".")
		if !ok || ns == "" || key == "" {
			return nil, &resources.AttrError{Path: []string{attr, k}, Err: errors.New(`a defined tag key must have the form "namespace.key"`)}
		}
		s, isString := flat[k].(string)
		if !isString {
			return nil, &resources.AttrError{Path: []string{attr, k}, Err: fmt.Errorf("want a string, got %T", flat[k])}
		}
		if out[ns] == nil {
			out[ns] = map[string]any{}
		}
		out[ns][key] = s
	}
	return out, nil
}

func stringAttr(a resources.Attrs, name string, required bool) (*string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		if required {
			return nil, &resources.AttrError{Path: []string{name}, Err: errors.New("required")}
		}
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, &resources.AttrError{Path: []string{name}, Err: fmt.Errorf("want a string, got %T", v)}
	}
	if required && s == "" {
		return nil, &resources.AttrError{Path: []string{name}, Err: errors.New("must not be empty")}
	}
	return &s, nil
}

func intAttr(a resources.Attrs, name string) (*int, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return nil, nil
	}
	n, ok := resources.Canon(v).(int64)
	if !ok {
		return nil, &resources.AttrError{Path: []string{name}, Err: fmt.Errorf("want an integer, got %T", v)}
	}
	if n < 1 {
		return nil, &resources.AttrError{Path: []string{name}, Err: fmt.Errorf("must be at least 1, got %d", n)}
	}
	i := int(n)
	return &i, nil
}

func mapAttr(a resources.Attrs, name string) (map[string]any, bool, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return nil, false, nil
	}
	m, ok := resources.Canon(v).(map[string]any)
	if !ok {
		return nil, false, &resources.AttrError{Path: []string{name}, Err: fmt.Errorf("want a map of strings, got %T", v)}
	}
	return m, true, nil
}

func freeformTags(a resources.Attrs) (map[string]string, bool, error) {
	m, ok, err := mapAttr(a, attrFreeformTags)
	if !ok || err != nil {
		return nil, ok, err
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, isString := v.(string)
		if !isString {
			return nil, false, &resources.AttrError{Path: []string{attrFreeformTags, k}, Err: fmt.Errorf("want a string, got %T", v)}
		}
		out[k] = s
	}
	return out, true, nil
}

func definedTags(a resources.Attrs) (map[string]map[string]any, bool, error) {
	m, ok, err := mapAttr(a, attrDefinedTags)
	if !ok || err != nil {
		return nil, ok, err
	}
	nested, err := nestTags(attrDefinedTags, m)
	return nested, err == nil, err
}

// createDetails builds the create request body from normalized inputs.
func createDetails(want resources.Attrs) (ailanguage.CreateEndpointDetails, error) {
	var d ailanguage.CreateEndpointDetails
	var errs []error
	var err error
	if d.CompartmentId, err = stringAttr(want, attrCompartmentID, true); err != nil {
		errs = append(errs, err)
	}
	if d.ModelId, err = stringAttr(want, attrModelID, true); err != nil {
		errs = append(errs, err)
	}
	if d.DisplayName, err = stringAttr(want, attrDisplayName, false); err != nil {
		errs = append(errs, err)
	}
	if d.Description, err = stringAttr(want, attrDescription, false); err != nil {
		errs = append(errs, err)
	}
	if d.InferenceUnits, err = intAttr(want, attrInferenceUnits); err != nil {
		errs = append(errs, err)
	}
	if d.FreeformTags, _, err = freeformTags(want); err != nil {
		errs = append(errs, err)
	}
	if d.DefinedTags, _, err = definedTags(want); err != nil {
		errs = append(errs, err)
	}
	return d, errors.Join(errs...)
}

// updateDetails builds a partial update body with the fields for which
// changed reports true. A removed description is sent as "", removed tag
// maps as empty maps; a removed displayName is left as it is (the service
// requires one). It reports whether anything is to be sent.
func updateDetails(want resources.Attrs, changed func(string) bool) (ailanguage.UpdateEndpointDetails, bool, error) {
	var d ailanguage.UpdateEndpointDetails
	var errs []error
	some := false
	if changed(attrDisplayName) {
		s, err := stringAttr(want, attrDisplayName, false)
		if err != nil {
			errs = append(errs, err)
		} else if s != nil {
			d.DisplayName, some = s, true
		}
	}
	if changed(attrDescription) {
		s, err := stringAttr(want, attrDescription, false)
		if err != nil {
			errs = append(errs, err)
		} else {
			if s == nil {
				s = common.String("")
			}
			d.Description, some = s, true
		}
	}
	if changed(attrModelID) {
		s, err := stringAttr(want, attrModelID, true)
		if err != nil {
			errs = append(errs, err)
		} else {
			d.ModelId, some = s, true
		}
	}
	if changed(attrInferenceUnits) {
		n, err := intAttr(want, attrInferenceUnits)
		if err != nil {
			errs = append(errs, err)
		} else {
			if n == nil {
				n = common.Int(1)
			}
			d.InferenceUnits, some = n, true
		}
	}
	if changed(attrFreeformTags) {
		m, _, err := freeformTags(want)
		if err != nil {
			errs = append(errs, err)
		} else {
			if m == nil {
				m = map[string]string{}
			}
			d.FreeformTags, some = m, true
		}
	}
	if changed(attrDefinedTags) {
		m, _, err := definedTags(want)
		if err != nil {
			errs = append(errs, err)
		} else {
			if m == nil {
				m = map[string]map[string]any{}
			}
			d.DefinedTags, some = m, true
		}
	}
	return d, some, errors.Join(errs...)
}
