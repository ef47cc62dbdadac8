package ailanguage

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources"
)

// Attribute names shared by the AI Language resources (lowerCamelCase, as
// in the schemas).
const (
	AttrCompartmentID    = "compartmentId"
	AttrDefinedTags      = "definedTags"
	AttrDescription      = "description"
	AttrDisplayName      = "displayName"
	AttrFreeformTags     = "freeformTags"
	AttrID               = "id"
	AttrLifecycleDetails = "lifecycleDetails"
	AttrState            = "state"
	AttrSystemTags       = "systemTags"
	AttrTimeCreated      = "timeCreated"
	AttrTimeUpdated      = "timeUpdated"
)

// VendorTagNamespace is the defined-tag namespace OCI's tag defaults fill
// on every resource created in a tenancy that has them (all tenancies made
// since 2019 do): Oracle-Tags.CreatedBy (who created it) and
// Oracle-Tags.CreatedOn (when). They are the cloud's, not the user's.
const VendorTagNamespace = "Oracle-Tags"

// IsVendorTag reports whether key of field is a tag OCI adds by itself: a
// defined tag of the Oracle-Tags namespace.
func IsVendorTag(field, key string) bool {
	return field == AttrDefinedTags && strings.HasPrefix(key, VendorTagNamespace+".")
}

// WithoutVendorTags returns live with the defined tags of the Oracle-Tags
// namespace that want does not set removed, so that the update of an
// object whose specs never mention them does not send definedTags.
func WithoutVendorTags(live, want resources.Attrs) resources.Attrs {
	tags, ok := live[AttrDefinedTags].(map[string]any)
	if !ok {
		return live
	}
	wanted, _ := want[AttrDefinedTags].(map[string]any)
	kept := map[string]any{}
	for k, v := range tags {
		if _, set := wanted[k]; set || !IsVendorTag(AttrDefinedTags, k) {
			kept[k] = v
		}
	}
	out := make(resources.Attrs, len(live))
	for k, v := range live {
		out[k] = v
	}
	if len(kept) == 0 {
		delete(out, AttrDefinedTags)
	} else {
		out[AttrDefinedTags] = kept
	}
	return out
}

// NormalizeCommon drops empty tag maps and an empty description from out
// (the API treats empty and absent alike), in place.
func NormalizeCommon(out resources.Attrs) {
	if s, ok := out[AttrDescription].(string); ok && s == "" {
		delete(out, AttrDescription)
	}
	for _, k := range []string{AttrFreeformTags, AttrDefinedTags, AttrSystemTags} {
		if v, ok := out[k]; ok {
			if m, isMap := v.(map[string]any); v == nil || (isMap && len(m) == 0) {
				delete(out, k)
			}
		}
	}
}

// Common holds the fields every AI Language object has, as the SDK's
// models give them.
type Common struct {
	ID, CompartmentID, DisplayName *string
	Description, LifecycleDetails  *string
	State                          string
	TimeCreated, TimeUpdated       *common.SDKTime
	FreeformTags                   map[string]string
	DefinedTags, SystemTags        map[string]map[string]any
}

// Attrs turns the common fields into attributes. Absent optional fields,
// an empty description and empty tag maps are left out, as NormalizeCommon
// leaves them out of desired inputs.
func (o Common) Attrs() resources.Attrs {
	a := resources.Attrs{
		AttrID:            Deref(o.ID),
		AttrCompartmentID: Deref(o.CompartmentID),
		AttrDisplayName:   Deref(o.DisplayName),
		AttrState:         o.State,
	}
	if o.Description != nil && *o.Description != "" {
		a[AttrDescription] = *o.Description
	}
	if o.LifecycleDetails != nil && *o.LifecycleDetails != "" {
		a[AttrLifecycleDetails] = *o.LifecycleDetails
	}
	if t := RFC3339(o.TimeCreated); t != "" {
		a[AttrTimeCreated] = t
	}
	if t := RFC3339(o.TimeUpdated); t != "" {
		a[AttrTimeUpdated] = t
	}
	if len(o.FreeformTags) > 0 {
		m := make(map[string]any, len(o.FreeformTags))
		for k, v := range o.FreeformTags {
			m[k] = v
		}
		a[AttrFreeformTags] = m
	}
	if m := FlattenTags(o.DefinedTags); len(m) > 0 {
		a[AttrDefinedTags] = m
	}
	if m := FlattenTags(o.SystemTags); len(m) > 0 {
		a[AttrSystemTags] = m
	}
	return a
}

// RFC3339 formats an SDK time, or returns "" for none.
func RFC3339(t *common.SDKTime) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Deref returns *s, or "" for nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// FlattenTags turns OCI's namespace → key → value nesting into
// "namespace.key" → value strings, as Terraform and Pulumi show defined and
// system tags.
func FlattenTags(nested map[string]map[string]any) map[string]any {
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

// NestTags is the inverse of FlattenTags; the namespace ends at the first
// dot. attr names the attribute for errors.
func NestTags(attr string, flat map[string]any) (map[string]map[string]any, error) {
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

// StringAttr returns the string input name of a: nil when it is absent;
// an *resources.AttrError when it is not a string, or required and absent
// or empty.
func StringAttr(a resources.Attrs, name string, required bool) (*string, error) {
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

// MapAttr returns the map input name of a, and whether it is there.
func MapAttr(a resources.Attrs, name string) (map[string]any, bool, error) {
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

// FreeformTags returns the freeformTags input of a, and whether it is there.
func FreeformTags(a resources.Attrs) (map[string]string, bool, error) {
	m, ok, err := MapAttr(a, AttrFreeformTags)
	if !ok || err != nil {
		return nil, ok, err
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, isString := v.(string)
		if !isString {
			return nil, false, &resources.AttrError{Path: []string{AttrFreeformTags, k}, Err: fmt.Errorf("want a string, got %T", v)}
		}
		out[k] = s
	}
	return out, true, nil
}

// DefinedTags returns the definedTags input of a, nested as the API wants
// them, and whether it is there.
func DefinedTags(a resources.Attrs) (map[string]map[string]any, bool, error) {
	m, ok, err := MapAttr(a, AttrDefinedTags)
	if !ok || err != nil {
		return nil, ok, err
	}
	nested, err := NestTags(AttrDefinedTags, m)
	return nested, err == nil, err
}

// Updatable is the part of an update body every AI Language object shares
// (UpdateProjectDetails and UpdateModelDetails are exactly this).
type Updatable struct {
	DisplayName  *string
	Description  *string
	FreeformTags map[string]string
	DefinedTags  map[string]map[string]any
}

// UpdateCommon builds the common part of a partial update body with the
// fields for which changed reports true. A removed description is sent as
// "", removed tag maps as empty maps; a removed displayName is left as it
// is (the service requires one). It reports whether anything is to be
// sent.
func UpdateCommon(want resources.Attrs, changed func(string) bool) (Updatable, bool, error) {
	var d Updatable
	var errs []error
	some := false
	if changed(AttrDisplayName) {
		s, err := StringAttr(want, AttrDisplayName, false)
		if err != nil {
			errs = append(errs, err)
		} else if s != nil {
			d.DisplayName, some = s, true
		}
	}
	if changed(AttrDescription) {
		s, err := StringAttr(want, AttrDescription, false)
		if err != nil {
			errs = append(errs, err)
		} else {
			if s == nil {
				s = common.String("")
			}
			d.Description, some = s, true
		}
	}
	if changed(AttrFreeformTags) {
		m, _, err := FreeformTags(want)
		if err != nil {
			errs = append(errs, err)
		} else {
			if m == nil {
				m = map[string]string{}
			}
			d.FreeformTags, some = m, true
		}
	}
	if changed(AttrDefinedTags) {
		m, _, err := DefinedTags(want)
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

// CreateCommon reads the inputs every create body shares: compartmentId
// (required), displayName, description and the tags.
func CreateCommon(want resources.Attrs) (compartment *string, u Updatable, err error) {
	var errs []error
	if compartment, err = StringAttr(want, AttrCompartmentID, true); err != nil {
		errs = append(errs, err)
	}
	if u.DisplayName, err = StringAttr(want, AttrDisplayName, false); err != nil {
		errs = append(errs, err)
	}
	if u.Description, err = StringAttr(want, AttrDescription, false); err != nil {
		errs = append(errs, err)
	}
	if u.FreeformTags, _, err = FreeformTags(want); err != nil {
		errs = append(errs, err)
	}
	if u.DefinedTags, _, err = DefinedTags(want); err != nil {
		errs = append(errs, err)
	}
	return compartment, u, errors.Join(errs...)
}
