package oci

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// SeedIDs returns the ids made by Seed: the root compartment (the tenancy),
// a second compartment, a project, an ACTIVE trained model and a FAILED
// model. They are empty when the store was never seeded for this tenancy.
func (e *Emulator) SeedIDs() (compartment, otherCompartment, project, activeModel, failedModel string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.seed
	return s.Compartment, s.OtherCompartment, s.Project, s.ActiveModel, s.FailedModel
}

func seedKey(c emulator.Credentials) string { return "seed/" + c.OCITenancy }

// Seed creates, unless an earlier run did, the data a fresh tenancy needs:
// the tenancy as root compartment, a second compartment, one project holding
// an ACTIVE trained text-classification model and a model whose training
// FAILED. It is idempotent.
func (e *Emulator) Seed() error {
	now := e.now().UTC()
	var ids seedIDs
	err := e.store.Update(func(tx emulator.Tx) error {
		found, err := tx.Get(bucketMeta, seedKey(e.creds), &ids)
		if err != nil {
			return err
		}
		if !found {
			region := regionKey(e.creds.OCIRegion)
			ids = seedIDs{
				Compartment: e.creds.OCITenancy,
				// Fixed ids, so that specs written for the emulator work
				// on every machine and after every reset.
				OtherCompartment: "ocid1.compartment.oc1..aaaaaaaaemulatorother",
				Project:          "ocid1.ailanguageproject.oc1." + region + ".emulatorproject",
				ActiveModel:      "ocid1.ailanguagemodel.oc1." + region + ".emulatoractivemodel",
				FailedModel:      "ocid1.ailanguagemodel.oc1." + region + ".emulatorfailedmodel",
			}
			if err := tx.Put(bucketMeta, seedKey(e.creds), ids); err != nil {
				return err
			}
		}
		return e.seedRecords(tx, ids, now)
	})
	if err != nil {
		return fmt.Errorf("seed OCI AI Language emulator: %w", err)
	}
	e.mu.Lock()
	e.seed = ids
	e.mu.Unlock()
	return nil
}

// seedRecords writes every seeded object that is missing.
func (e *Emulator) seedRecords(tx emulator.Tx, ids seedIDs, now time.Time) error {
	created := fmtTime(now)
	emptyTags := func() (map[string]string, map[string]map[string]any) {
		return map[string]string{}, map[string]map[string]any{}
	}
	putIfAbsent := func(bucket, key string, v any) error {
		var raw json.RawMessage
		found, err := tx.Get(bucket, key, &raw)
		if err != nil || found {
			return err
		}
		return tx.Put(bucket, key, v)
	}
	for _, ns := range builtinTagNamespaces {
		if _, err := putTagNamespace(tx, ns); err != nil {
			return err
		}
	}
	if err := putIfAbsent(bucketCompartments, ids.Compartment, compartmentRecord{ID: ids.Compartment, Name: "root", Root: true}); err != nil {
		return err
	}
	if err := putIfAbsent(bucketCompartments, ids.OtherCompartment, compartmentRecord{ID: ids.OtherCompartment, Name: "reconcile-other", Parent: ids.Compartment}); err != nil {
		return err
	}
	ff, dt := emptyTags()
	if err := putIfAbsent(bucketProjects, ids.Project, projectView{
		ID: ids.Project, DisplayName: "reconcile-project", CompartmentID: ids.Compartment,
		TimeCreated: created, TimeUpdated: created, LifecycleState: "ACTIVE",
		Description:  strPtr("Project seeded by the reconcile emulator"),
		FreeformTags: ff, DefinedTags: dt, SystemTags: map[string]map[string]any{},
	}); err != nil {
		return err
	}
	ff, dt = emptyTags()
	if err := putIfAbsent(bucketModels, ids.ActiveModel, modelView{
		ID: ids.ActiveModel, DisplayName: "sentiment-classifier", CompartmentID: ids.Compartment,
		ProjectID: ids.Project, TimeCreated: created, TimeUpdated: created, LifecycleState: "ACTIVE",
		ModelDetails: map[string]any{
			"modelType":          "TEXT_CLASSIFICATION",
			"languageCode":       "en",
			"classificationMode": map[string]any{"classificationMode": "MULTI_CLASS"},
		},
		Description:  strPtr("Trained text classification model"),
		Version:      strPtr("1.0"),
		FreeformTags: ff, DefinedTags: dt, SystemTags: map[string]map[string]any{},
	}); err != nil {
		return err
	}
	ff, dt = emptyTags()
	return putIfAbsent(bucketModels, ids.FailedModel, modelView{
		ID: ids.FailedModel, DisplayName: "broken-ner-model", CompartmentID: ids.Compartment,
		ProjectID: ids.Project, TimeCreated: created, TimeUpdated: created, LifecycleState: "FAILED",
		LifecycleDetails: strPtr("Training failed: the training dataset contains no labelled records"),
		ModelDetails:     map[string]any{"modelType": "NAMED_ENTITY_RECOGNITION", "languageCode": "en"},
		Version:          strPtr("1.0"),
		FreeformTags:     ff, DefinedTags: dt, SystemTags: map[string]map[string]any{},
	})
}

// SeedData is the "oci" section of an emulator seed file: objects to create
// besides those of Seed. Every list is optional.
type SeedData struct {
	Compartments []CompartmentSeed `json:"compartments,omitempty"`
	Projects     []ProjectSeed     `json:"projects,omitempty"`
	Models       []ModelSeed       `json:"models,omitempty"`
}

// CompartmentSeed is a compartment of a seed file.
type CompartmentSeed struct {
	ID       string `json:"id"`                 // ocid1.compartment.<realm>.<region>.<unique>
	Name     string `json:"name"`               // required
	ParentID string `json:"parentId,omitempty"` // an existing or earlier compartment; default the tenancy
}

// ProjectSeed is an AI Language project of a seed file.
type ProjectSeed struct {
	ID            string            `json:"id"`                      // ocid1.ailanguageproject.<realm>.<region>.<unique>
	DisplayName   string            `json:"displayName"`             // required
	CompartmentID string            `json:"compartmentId,omitempty"` // default the tenancy
	Description   string            `json:"description,omitempty"`
	State         string            `json:"state,omitempty"` // lifecycleState; default ACTIVE
	FreeformTags  map[string]string `json:"freeformTags,omitempty"`
}

// ModelSeed is a trained AI Language model of a seed file.
type ModelSeed struct {
	ID               string            `json:"id"`                      // ocid1.ailanguagemodel.<realm>.<region>.<unique>
	DisplayName      string            `json:"displayName"`             // required
	CompartmentID    string            `json:"compartmentId,omitempty"` // default the project's
	ProjectID        string            `json:"projectId"`               // required: a project of the file or the data
	State            string            `json:"state,omitempty"`         // lifecycleState; default ACTIVE
	LifecycleDetails string            `json:"lifecycleDetails,omitempty"`
	ModelType        string            `json:"modelType,omitempty"` // TEXT_CLASSIFICATION (default) or NAMED_ENTITY_RECOGNITION
	LanguageCode     string            `json:"languageCode,omitempty"`
	Description      string            `json:"description,omitempty"`
	Version          string            `json:"version,omitempty"`
	FreeformTags     map[string]string `json:"freeformTags,omitempty"`
}

// seedStates are the lifecycle states of models and projects (the SDK's
// ModelLifecycleStateEnum and ProjectLifecycleStateEnum).
var seedStates = []string{stateCreating, stateActive, stateUpdating, stateDeleting, stateDeleted, stateFailed}

// seedModelTypes are the model types a custom (trained) model can have.
var seedModelTypes = []string{"TEXT_CLASSIFICATION", "NAMED_ENTITY_RECOGNITION"}

// ocidRE matches an OCID of one resource type: ocid1.TYPE.REALM.[REGION].UNIQUE.
func ocidRE(typ string) *regexp.Regexp {
	return regexp.MustCompile(`^ocid1\.` + typ + `\.[a-z0-9]+\.[a-z0-9-]*\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
}

var (
	compartmentOCID = ocidRE("compartment")
	projectOCID     = ocidRE("ailanguageproject")
	modelOCID       = ocidRE("ailanguagemodel")
)

// SeedFrom checks d and creates, inside the caller's transaction tx, each of
// its objects whose id does not exist yet; an existing object is left as it
// is, so seeding again with the same data changes nothing. It reports how
// many objects it added and how many it left. Compartments come first (a
// parent must exist or be listed earlier), then projects, then models; a
// reference may name an object of d or one already in the data, such as
// the tenancy or Seed's project. The first problem is returned naming the
// entry, as in `models[2] "ocid1...": ...`, and nothing should then be
// committed.
func (e *Emulator) SeedFrom(tx emulator.Tx, d SeedData) (added, kept int, err error) {
	s := &seeder{tx: tx, tenancy: e.creds.OCITenancy, created: fmtTime(e.now()), seen: map[string]string{}}
	for i, c := range d.Compartments {
		if err := s.addCompartment(i, c); err != nil {
			return 0, 0, err
		}
	}
	for i, p := range d.Projects {
		if err := s.addProject(i, p); err != nil {
			return 0, 0, err
		}
	}
	for i, m := range d.Models {
		if err := s.addModel(i, m); err != nil {
			return 0, 0, err
		}
	}
	return s.added, s.kept, nil
}

// seeder writes the entries of one SeedFrom call into its transaction,
// remembering the ids met so far and counting the objects it adds and
// the ones it finds already there.
type seeder struct {
	tx          emulator.Tx
	tenancy     string            // the default compartment
	created     string            // timeCreated and timeUpdated of new objects
	seen        map[string]string // id → the entry that gave it, as "models[2]"
	added, kept int
}

// addCompartment checks entry i of the compartments and writes it unless
// its id exists. Its parent, by default the tenancy, must exist already.
func (s *seeder) addCompartment(i int, c CompartmentSeed) error {
	at, err := s.entry("compartments", i, c.ID, compartmentOCID, "compartment")
	if err != nil {
		return err
	}
	if c.Name == "" {
		return at(errors.New("name is required"))
	}
	if c.ParentID == "" {
		c.ParentID = s.tenancy
	}
	if err := s.checkCompartment("parentId", c.ParentID); err != nil {
		return at(fmt.Errorf("%w (a parent must be listed before its children)", err))
	}
	if err := s.put(bucketCompartments, c.ID, compartmentRecord{ID: c.ID, Name: c.Name, Parent: c.ParentID}); err != nil {
		return at(err)
	}
	return nil
}

// addProject checks entry i of the projects and writes it unless its id
// exists.
func (s *seeder) addProject(i int, p ProjectSeed) error {
	at, err := s.entry("projects", i, p.ID, projectOCID, "ailanguageproject")
	if err != nil {
		return err
	}
	v, err := s.newProject(p)
	if err != nil {
		return at(err)
	}
	if err := s.put(bucketProjects, p.ID, v); err != nil {
		return at(err)
	}
	return nil
}

// addModel checks entry i of the models and writes it unless its id
// exists.
func (s *seeder) addModel(i int, m ModelSeed) error {
	at, err := s.entry("models", i, m.ID, modelOCID, "ailanguagemodel")
	if err != nil {
		return err
	}
	v, err := s.newModel(m)
	if err != nil {
		return at(err)
	}
	if err := s.put(bucketModels, m.ID, v); err != nil {
		return at(err)
	}
	return nil
}

// entry checks the id of entry i of list (an OCID of kind, matching re,
// not given by an earlier entry) and records it. It returns the function
// that names the entry in an error, as in `list[i] "id": ...`; an error it
// returns is already so named.
func (s *seeder) entry(list string, i int, id string, re *regexp.Regexp, kind string) (func(error) error, error) {
	at := func(err error) error { return fmt.Errorf("%s[%d] %q: %w", list, i, id, err) }
	if !re.MatchString(id) {
		return at, at(fmt.Errorf("id must be an OCID of the form ocid1.%s.REALM.[REGION].UNIQUE", kind))
	}
	if prev, dup := s.seen[id]; dup {
		return at, at(fmt.Errorf("the same id as %s", prev))
	}
	s.seen[id] = fmt.Sprintf("%s[%d]", list, i)
	return at, nil
}

// newProject checks p and returns the project it describes, with the
// defaults filled in: state ACTIVE, the tenancy as compartment.
func (s *seeder) newProject(p ProjectSeed) (projectView, error) {
	if p.DisplayName == "" {
		return projectView{}, errors.New("displayName is required")
	}
	state, err := seedState(p.State)
	if err != nil {
		return projectView{}, err
	}
	if p.CompartmentID == "" {
		p.CompartmentID = s.tenancy
	}
	if err := s.checkCompartment("compartmentId", p.CompartmentID); err != nil {
		return projectView{}, err
	}
	return projectView{
		ID: p.ID, DisplayName: p.DisplayName, CompartmentID: p.CompartmentID,
		TimeCreated: s.created, TimeUpdated: s.created, LifecycleState: state,
		Description:  optional(p.Description),
		FreeformTags: tagsOrEmpty(p.FreeformTags), DefinedTags: map[string]map[string]any{}, SystemTags: map[string]map[string]any{},
	}, nil
}

// newModel checks m and returns the model it describes, with the defaults
// filled in: state ACTIVE, type TEXT_CLASSIFICATION, language en, the
// compartment of its project.
func (s *seeder) newModel(m ModelSeed) (modelView, error) {
	if m.DisplayName == "" {
		return modelView{}, errors.New("displayName is required")
	}
	state, err := seedState(m.State)
	if err != nil {
		return modelView{}, err
	}
	typ, err := seedModelType(m.ModelType)
	if err != nil {
		return modelView{}, err
	}
	if m.ProjectID == "" {
		return modelView{}, errors.New("projectId is required")
	}
	project, err := s.projectOf(m.ProjectID)
	if err != nil {
		return modelView{}, err
	}
	if m.CompartmentID == "" {
		m.CompartmentID = project.CompartmentID
	}
	if err := s.checkCompartment("compartmentId", m.CompartmentID); err != nil {
		return modelView{}, err
	}
	return modelView{
		ID: m.ID, DisplayName: m.DisplayName, CompartmentID: m.CompartmentID, ProjectID: m.ProjectID,
		ModelDetails: modelDetails(typ, m.LanguageCode), TimeCreated: s.created, TimeUpdated: s.created, LifecycleState: state,
		Description: optional(m.Description), Version: optional(m.Version), LifecycleDetails: optional(m.LifecycleDetails),
		FreeformTags: tagsOrEmpty(m.FreeformTags), DefinedTags: map[string]map[string]any{}, SystemTags: map[string]map[string]any{},
	}, nil
}

// put writes v under bucket/id, counting it as added, unless something is
// there already, which it counts as kept.
func (s *seeder) put(bucket, id string, v any) error {
	found, err := s.exists(bucket, id)
	if err != nil {
		return err
	}
	if found {
		s.kept++
		return nil
	}
	s.added++
	return s.tx.Put(bucket, id, v)
}

// exists reports whether bucket holds a document under id.
func (s *seeder) exists(bucket, id string) (bool, error) {
	var raw json.RawMessage
	return s.tx.Get(bucket, id, &raw)
}

// checkCompartment checks that id, given in field, names a compartment of
// the seed file (written already) or of the data.
func (s *seeder) checkCompartment(field, id string) error {
	found, err := s.exists(bucketCompartments, id)
	if err == nil && !found {
		err = fmt.Errorf("%s %q is no compartment of the seed file or of the emulator's data", field, id)
	}
	return err
}

// projectOf returns the project a model names in projectId: one of the
// seed file (written already) or of the data.
func (s *seeder) projectOf(id string) (projectView, error) {
	var project projectView
	found, err := s.tx.Get(bucketProjects, id, &project)
	if err == nil && !found {
		err = fmt.Errorf("projectId %q is no project of the seed file or of the emulator's data", id)
	}
	return project, err
}

// seedState checks a lifecycle state of a seed file; "" means ACTIVE.
func seedState(state string) (string, error) {
	if state == "" {
		return stateActive, nil
	}
	if !slices.Contains(seedStates, state) {
		return "", fmt.Errorf("state %q is not one of %s", state, strings.Join(seedStates, ", "))
	}
	return state, nil
}

// seedModelType checks a model type of a seed file; "" means
// TEXT_CLASSIFICATION.
func seedModelType(typ string) (string, error) {
	if typ == "" {
		typ = "TEXT_CLASSIFICATION"
	}
	if !slices.Contains(seedModelTypes, typ) {
		return "", fmt.Errorf("modelType %q is not one of %s", typ, strings.Join(seedModelTypes, ", "))
	}
	return typ, nil
}

// modelDetails returns the modelDetails of a trained model of type typ in
// language lang ("" means en); a text classifier is multi-class.
func modelDetails(typ, lang string) map[string]any {
	if lang == "" {
		lang = "en"
	}
	details := map[string]any{"modelType": typ, "languageCode": lang}
	if typ == "TEXT_CLASSIFICATION" {
		details["classificationMode"] = map[string]any{"classificationMode": "MULTI_CLASS"}
	}
	return details
}

// optional returns a pointer to s, or nil when s is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return strPtr(s)
}

// tagsOrEmpty returns m, or an empty map for nil, so that tags are never
// null.
func tagsOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
