package aimodel

import (
	"encoding/json"
	"errors"
	"fmt"

	oci "github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage"
)

// Attribute names of a model's own fields.
const (
	attrProjectID         = "projectId"
	attrModelDetails      = "modelDetails"
	attrTrainingDataset   = "trainingDataset"
	attrTestStrategy      = "testStrategy"
	attrVersion           = "version"
	attrEvaluationResults = "evaluationResults"
)

// fillDefaults fills, in place, what the service fills when it is not
// given: modelDetails.languageCode "en", and the MULTI_CLASS
// classificationMode of a text classifier.
func fillDefaults(a resources.Attrs) {
	md, ok := a[attrModelDetails].(map[string]any)
	if !ok {
		return
	}
	md = copyMap(md)
	if v, ok := md["languageCode"]; !ok || v == nil {
		md["languageCode"] = "en"
	}
	if md["modelType"] == "TEXT_CLASSIFICATION" {
		if v, ok := md["classificationMode"]; !ok || v == nil {
			md["classificationMode"] = map[string]any{"classificationMode": "MULTI_CLASS"}
		}
	}
	a[attrModelDetails] = md
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// toAPINames maps the provider's names of a dataset location's fields to
// the API's, and fromAPINames back.
var (
	toAPINames   = map[string]string{"namespace": "namespaceName", "bucket": "bucketName"}
	fromAPINames = map[string]string{"namespaceName": "namespace", "bucketName": "bucket"}
)

// datasetToAPI turns a dataset input into the API's DatasetDetails JSON.
func datasetToAPI(v any) any { return renameLocation(v, toAPINames) }

// datasetFromAPI is the inverse of datasetToAPI.
func datasetFromAPI(v any) any { return renameLocation(v, fromAPINames) }

// renameLocation returns a copy of the dataset v whose locationDetails'
// fields are renamed by names; v itself if it is not an object.
func renameLocation(v any, names map[string]string) any {
	d, ok := v.(map[string]any)
	if !ok {
		return v
	}
	d = copyMap(d)
	if loc, ok := d["locationDetails"].(map[string]any); ok {
		out := map[string]any{}
		for k, v := range loc {
			if to, ok := names[k]; ok {
				k = to
			}
			out[k] = v
		}
		d["locationDetails"] = out
	}
	return d
}

// strategyMap applies conv to the datasets of a testStrategy.
func strategyMap(v any, conv func(any) any) any {
	t, ok := v.(map[string]any)
	if !ok {
		return v
	}
	t = copyMap(t)
	for _, k := range []string{"testingDataset", "validationDataset"} {
		if d, ok := t[k]; ok && d != nil {
			t[k] = conv(d)
		}
	}
	return t
}

// createDetails builds the CreateModelDetails of normalized inputs: the
// API's JSON, decoded by the SDK into its polymorphic types.
func createDetails(want resources.Attrs) (oci.CreateModelDetails, error) {
	var d oci.CreateModelDetails
	comp, u, err := ailanguage.CreateCommon(want)
	errs := []error{err}
	project, err := ailanguage.StringAttr(want, attrProjectID, true)
	errs = append(errs, err)
	body := map[string]any{}
	for _, k := range []string{attrModelDetails, attrTrainingDataset} {
		v, ok := want[k].(map[string]any)
		if !ok {
			errs = append(errs, &resources.AttrError{Path: []string{k}, Err: errors.New("required: an object")})
			continue
		}
		body[k] = v
	}
	if err := errors.Join(errs...); err != nil {
		return d, err
	}
	body[attrTrainingDataset] = datasetToAPI(body[attrTrainingDataset])
	if t, ok := want[attrTestStrategy].(map[string]any); ok {
		body[attrTestStrategy] = strategyMap(t, datasetToAPI)
	}
	raw, err := json.Marshal(body)
	if err == nil {
		err = json.Unmarshal(raw, &d)
	}
	if err != nil {
		return d, &resources.AttrError{Path: []string{attrModelDetails}, Err: fmt.Errorf("not a model the API takes: %v", err)}
	}
	d.CompartmentId, d.ProjectId = comp, project
	d.DisplayName, d.Description, d.FreeformTags, d.DefinedTags = u.DisplayName, u.Description, u.FreeformTags, u.DefinedTags
	return d, nil
}

// toAttrs turns a model into attributes: every input plus the outputs, in
// the provider's shapes.
func toAttrs(m oci.Model) resources.Attrs {
	a := ailanguage.Common{
		ID: m.Id, CompartmentID: m.CompartmentId, DisplayName: m.DisplayName,
		Description: m.Description, LifecycleDetails: m.LifecycleDetails, State: string(m.LifecycleState),
		TimeCreated: m.TimeCreated, TimeUpdated: m.TimeUpdated,
		FreeformTags: m.FreeformTags, DefinedTags: m.DefinedTags, SystemTags: m.SystemTags,
	}.Attrs()
	a[attrProjectID] = ailanguage.Deref(m.ProjectId)
	if m.Version != nil {
		a[attrVersion] = *m.Version
	}
	// The SDK's polymorphic values marshal with their discriminators: the
	// API's JSON, which is the provider's shape but where converted.
	asJSON := func(v any) any {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		var out any
		if json.Unmarshal(raw, &out) != nil {
			return nil
		}
		return dropNulls(resources.Canon(out))
	}
	if m.ModelDetails != nil {
		a[attrModelDetails] = asJSON(m.ModelDetails)
	}
	if m.TrainingDataset != nil {
		a[attrTrainingDataset] = datasetFromAPI(asJSON(m.TrainingDataset))
	}
	if m.TestStrategy != nil {
		a[attrTestStrategy] = strategyMap(asJSON(m.TestStrategy), datasetFromAPI)
	}
	if m.EvaluationResults != nil {
		if r, ok := asJSON(m.EvaluationResults).(map[string]any); ok {
			a[attrEvaluationResults] = []any{evaluationResults(r)}
		}
	}
	return a
}

// evaluationResults turns the API's EvaluationResults into the provider's
// shape: metrics a list of one, the confusion matrix JSON text.
func evaluationResults(r map[string]any) map[string]any {
	out := copyMap(r)
	if m, ok := r["metrics"].(map[string]any); ok {
		out["metrics"] = []any{m}
	}
	if cm, ok := r["confusionMatrix"]; ok {
		raw, _ := json.Marshal(cm)
		out["confusionMatrix"] = string(raw)
	}
	return out
}

// dropNulls removes the null members of objects, at every depth: the SDK
// marshals an absent optional field as null, the API leaves it out.
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil {
				out[k] = dropNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dropNulls(e)
		}
		return out
	}
	return v
}
