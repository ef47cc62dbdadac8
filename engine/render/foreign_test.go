package render_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/kind"
)

// DriftText shows each node as the plan's drift section does, from one
// renderer: a list that drifted element by element, not a JSON line.
func TestDriftTextIsThePlansDrift(t *testing.T) {
	t.Parallel()
	bindings := list{obj{"relation": "editor", "principals": list{"role:1"}}}
	live := list{obj{"relation": "editor", "principals": list{"role:1"}}, obj{"relation": "viewer", "principals": list{"team:qa"}}}
	p := driftPlan()
	p.Changes = append(p.Changes, plan.Change{Addr: "listed", Type: policyType, Kind: kind.Resource, Action: plan.Update, ID: "dashboard:listed",
		Before: obj{"resourceId": "dashboard:listed", "bindings": live}, After: obj{"resourceId": "dashboard:listed", "bindings": bindings},
		Drift: []plan.FieldDrift{{Path: "bindings", Applied: bindings, Live: live}}})
	r := &report.Drift{Checked: len(p.Changes)}
	for _, c := range p.Changes {
		if !c.Drifted() {
			continue
		}
		it := report.DriftItem{Addr: c.Addr, Type: c.Type, Kind: c.Kind, ID: c.ID, Fields: c.Drift, Details: c.DriftDetails, Status: report.DriftChanged}
		switch {
		case c.DeletedOutside:
			it.Status, it.ID = report.DriftDeleted, c.DeletedID
		case c.Kind != kind.Resource:
			it.Status = report.DriftResult
		}
		r.Items = append(r.Items, it)
	}
	var pt, dt bytes.Buffer
	if err := render.PlanText(&pt, p, render.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := render.DriftText(&dt, r); err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(pt.String(), "Objects changed outside reconcile since the last apply:\n\n")
	section, _, _ = strings.Cut(section, "These are not changes")
	blocks, _, _ := strings.Cut(dt.String(), "Drift: ")
	if section == "" || blocks != section {
		t.Errorf("drift text:\n%s\nis not the plan's drift section:\n%s", blocks, section)
	}
	for _, want := range []string{"  ~ listed {\n", "      ~ bindings = [\n", `                  + "team:qa"`} {
		if !strings.Contains(dt.String(), want) {
			t.Errorf("drift text does not show the list element by element (%q):\n%s", want, dt.String())
		}
	}
}

// foreign is what a spec or a cloud may write: commands of CI systems and a
// fake verdict, each on a line of its own.
const foreign = "x\n::error::pwned\r\n##vso[task.complete]\nNo changes."

// checkLines fails when a line of out begins, after white space, with
// foreign text.
func checkLines(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimLeftFunc(line, unicode.IsSpace)
		if strings.HasPrefix(l, "::") || strings.HasPrefix(l, "##vso") || strings.TrimSpace(l) == "No changes." {
			t.Errorf("%s: a line begins with foreign text: %q\n%s", what, line, out)
		}
	}
}

// Names, ids, values and errors from the specs and the clouds cannot begin
// a line of any text renderer's output.
func TestRenderForeignText(t *testing.T) {
	t.Parallel()
	name := "::error::node"
	p := &plan.Plan{
		Changes: []plan.Change{
			{Addr: name, Type: policyType, Kind: kind.Resource, Action: plan.Update, ID: "id" + foreign,
				Reason: plan.ReasonTainted, ReasonDetail: foreign,
				Before: obj{"k": "v" + foreign, foreign: "x"}, After: obj{"k": "w", foreign: "y"},
				Drift: []plan.FieldDrift{{Path: "k", Applied: "w", Live: "v" + foreign}}, DriftDetails: []string{foreign}},
			{Addr: "gone", Type: policyType, Kind: kind.Resource, Action: plan.Create, DeletedOutside: true, DeletedID: foreign, After: obj{"a": foreign}},
		},
		Outputs: obj{"::add-mask::out": foreign, "No changes.": "v"},
		// --target NAME: a name with spaces, which the note wraps.
		Targets: []string{strings.Repeat("t", 50) + " ::error::wrapped"},
	}
	for format, r := range renderers {
		var b bytes.Buffer
		if err := r(&b, p, render.Options{}); err != nil {
			t.Fatal(err)
		}
		checkLines(t, "plan "+format, b.String())
	}

	d := &report.Drift{Checked: 2,
		Items:  []report.DriftItem{{Addr: name, Type: policyType, Kind: kind.Resource, ID: foreign, Status: report.DriftChanged, Fields: p.Changes[0].Drift, Details: []string{foreign}}},
		Errors: []report.DriftError{{Addr: name, Type: policyType, Err: errors.New(foreign)}}}
	for format, r := range map[string]func(*bytes.Buffer, *report.Drift) error{
		"text":     func(b *bytes.Buffer, d *report.Drift) error { return render.DriftText(b, d) },
		"markdown": func(b *bytes.Buffer, d *report.Drift) error { return render.DriftMarkdown(b, d) },
	} {
		var b bytes.Buffer
		if err := r(&b, d); err != nil {
			t.Fatal(err)
		}
		checkLines(t, "drift "+format, b.String())
	}

	res := &report.Apply{Counts: map[plan.Action]int{}, Failed: []report.NodeError{{Addr: name, Err: errors.New(foreign)}},
		Skipped: []string{name}, Outputs: map[string]any{"::add-mask::out": foreign}}
	var out, errs bytes.Buffer
	render.ApplyText(&out, &errs, res, render.RunApply)
	checkLines(t, "apply", out.String()+errs.String())

	var progress bytes.Buffer
	pr := render.NewProgress(&progress)
	for _, ph := range []report.Phase{report.Started, report.Running, report.Done, report.Failed, report.Skipped} {
		pr.Event(report.Event{Addr: name, Action: plan.Create, Phase: ph, ID: foreign, Message: foreign})
	}
	checkLines(t, "progress", progress.String())

	var intents, warn bytes.Buffer
	render.IntentsHeading(&intents, []string{name})
	render.IntentsText(&intents, &warn, &report.Intents{Intents: []report.ResolvedIntent{
		{Name: name, ID: foreign, Outcome: report.IntentAdopted, Tainted: foreign},
		{Name: name, Type: policyType, Outcome: report.IntentKept, Err: errors.New(foreign)},
	}})
	checkLines(t, "intents", intents.String()+warn.String())

	var outputs bytes.Buffer
	if err := render.OutputsText(&outputs, map[string]render.OutputValue{"::add-mask::out": {Value: foreign}}); err != nil {
		t.Fatal(err)
	}
	checkLines(t, "outputs", outputs.String())
}

// The declaration of an imported object holds the cloud's values: a string
// of several lines, or a key that is no plain name, is quoted, so that no
// line begins with them, and reads back as the same values.
func TestDeclarationYAMLQuotesForeignText(t *testing.T) {
	t.Parallel()
	inputs := map[string]any{"description": foreign, "freeformTags": map[string]any{"::error::key": foreign, "plain": "v"},
		"list": []any{foreign}}
	text, err := render.DeclarationYAML("::error::name", "oci:AiLanguage:Endpoint", inputs)
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, "declaration", text)
	var back struct {
		Resources map[string]struct {
			Type       string         `yaml:"type"`
			Properties map[string]any `yaml:"properties"`
		} `yaml:"resources"`
	}
	if err := yaml.Unmarshal([]byte(text), &back); err != nil {
		t.Fatalf("the declaration does not parse: %v\n%s", err, text)
	}
	got := back.Resources["::error::name"].Properties
	if got["description"] != foreign || got["freeformTags"].(map[string]any)["::error::key"] != foreign || got["list"].([]any)[0] != foreign {
		t.Errorf("the declaration does not read back as the inputs:\n%s", text)
	}
}

// Counts agree with their nouns: "1 resource", never "1 resources".
func TestCounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want string }{
		{render.Count(0, "resource", "resources"), "0 resources"},
		{render.Count(1, "history entry", "history entries"), "1 history entry"},
		{render.Count(2, "history entry", "history entries"), "2 history entries"},
		{render.DriftSummary(&report.Drift{Checked: 1}), "No drift: 1 resource or lookup matches what was last applied."},
		{render.DriftSummary(&report.Drift{Checked: 2}), "No drift: 2 resources and lookups match what was last applied."},
		{(&report.Apply{Stopped: "stopped", Interrupted: []report.NodeError{{Addr: "a"}}}).Err().Error(), "the apply was stopped: 1 operation was interrupted and 0 not started"},
		{(&report.Apply{Deposed: []report.Deposed{{Addr: "a"}}}).Err().Error(), "the replaced objects of 1 resource were not deleted"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	var b bytes.Buffer
	render.IntentsHeading(&b, []string{"a"})
	render.IntentsWarning(&b, []string{"a"}, "plan")
	for _, bad := range []string{"(s)", "1 creates"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("intents text holds %q:\n%s", bad, b.String())
		}
	}
}
