package aiendpoint

import (
	"errors"
	"fmt"

	oci "github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage"
)

// Attribute names (lowerCamelCase, as in the schema).
const (
	attrCompartmentID  = ailanguage.AttrCompartmentID
	attrModelID        = "modelId"
	attrInferenceUnits = "inferenceUnits"
	attrProjectID      = "projectId"
	attrTimeUpdated    = ailanguage.AttrTimeUpdated
)

var (
	deref             = ailanguage.Deref
	flattenTags       = ailanguage.FlattenTags
	nestTags          = ailanguage.NestTags
	withoutVendorTags = ailanguage.WithoutVendorTags
)

// Normalize fills the server-side default of inferenceUnits (1), drops empty
// tag maps and an empty description (the API treats empty and absent alike)
// and puts values in their canonical JSON shape, so that desired and
// observed attributes compare equal when nothing really differs.
func (d *Driver) Normalize(want resources.Attrs) resources.Attrs {
	out := resources.CanonAttrs(want)
	if out == nil {
		out = resources.Attrs{}
	}
	if v, ok := out[attrInferenceUnits]; !ok || v == nil {
		out[attrInferenceUnits] = int64(1)
	}
	ailanguage.NormalizeCommon(out)
	return out
}

// VendorTagNamespace is the defined-tag namespace OCI's tag defaults fill
// on every resource (ailanguage.VendorTagNamespace).
const VendorTagNamespace = ailanguage.VendorTagNamespace

// VendorKey reports whether key of field is a tag OCI adds by itself: a
// defined tag of the Oracle-Tags namespace. The engine never counts one as
// a difference unless the specs set that key (resources.VendorKeys).
func (d *Driver) VendorKey(field, key string) bool {
	return ailanguage.IsVendorTag(field, key)
}

// toAttrs turns an endpoint into attributes: every input plus the outputs.
// Absent optional fields, an empty description and empty tag maps are left
// out, as Normalize leaves them out of desired inputs.
func toAttrs(ep oci.Endpoint) resources.Attrs {
	a := ailanguage.Common{
		ID: ep.Id, CompartmentID: ep.CompartmentId, DisplayName: ep.DisplayName,
		Description: ep.Description, LifecycleDetails: ep.LifecycleDetails, State: string(ep.LifecycleState),
		TimeCreated: ep.TimeCreated, TimeUpdated: ep.TimeUpdated,
		FreeformTags: ep.FreeformTags, DefinedTags: ep.DefinedTags, SystemTags: ep.SystemTags,
	}.Attrs()
	a[attrModelID] = deref(ep.ModelId)
	a[attrProjectID] = deref(ep.ProjectId)
	a[attrInferenceUnits] = int64(1)
	if ep.InferenceUnits != nil {
		a[attrInferenceUnits] = int64(*ep.InferenceUnits)
	}
	return a
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

// createDetails builds the create request body from normalized inputs.
func createDetails(want resources.Attrs) (oci.CreateEndpointDetails, error) {
	comp, u, err := ailanguage.CreateCommon(want)
	errs := []error{err}
	d := oci.CreateEndpointDetails{
		CompartmentId: comp, DisplayName: u.DisplayName, Description: u.Description,
		FreeformTags: u.FreeformTags, DefinedTags: u.DefinedTags,
	}
	if d.ModelId, err = ailanguage.StringAttr(want, attrModelID, true); err != nil {
		errs = append(errs, err)
	}
	if d.InferenceUnits, err = intAttr(want, attrInferenceUnits); err != nil {
		errs = append(errs, err)
	}
	return d, errors.Join(errs...)
}

// updateDetails builds a partial update body with the fields for which
// changed reports true (see ailanguage.UpdateCommon), plus modelId and
// inferenceUnits. It reports whether anything is to be sent.
func updateDetails(want resources.Attrs, changed func(string) bool) (oci.UpdateEndpointDetails, bool, error) {
	u, some, err := ailanguage.UpdateCommon(want, changed)
	errs := []error{err}
	d := oci.UpdateEndpointDetails{DisplayName: u.DisplayName, Description: u.Description, FreeformTags: u.FreeformTags, DefinedTags: u.DefinedTags}
	if changed(attrModelID) {
		s, err := ailanguage.StringAttr(want, attrModelID, true)
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
	return d, some, errors.Join(errs...)
}
