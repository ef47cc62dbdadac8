package render_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
)

// The models of the examples in docs/state-json.md and
// docs/validate-json.md.
var (
	exampleState = render.StateInfo{Lineage: "5d0c3f6a-9b1e-4f2a-8c7d-0e1f2a3b4c5d", Serial: 7}
	exampleTime  = time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.FixedZone("CET", 3600))
	sealer       = value.Sealer{Key: []byte("example state key")}
	exampleNode  = render.StateNode{
		Name: "endpoint", Type: endpointType, Kind: kind.Resource, ID: "ocid1.aiendpoint.oc1..aaaa",
		Inputs: map[string]any{"compartmentId": "ocid1.compartment.oc1..bbbb", "displayName": "nlp", "inferenceUnits": float64(2),
			"freeformTags": map[string]any{"team": "nlp", "token": sealer.Sealed(secretValue, nil)}},
		Outputs:      map[string]any{"lifecycleState": "ACTIVE", "url": "https://nlp.example.com/"},
		Dependencies: []string{"me"}, Protect: true,
		Serial: 6, UpdatedAt: exampleTime,
	}
	exampleNodes = []render.StateNode{
		{Name: "me", Type: "datadog:getCurrentUser", Kind: kind.Lookup, ID: "3f48e83b-e9ee-4906-bca9-61bfc6a22ceb", Serial: 5},
		exampleNode,
		{Name: "dashboardPolicy", Type: policyType, Kind: kind.Resource, ID: "dashboard:abc-def-ghi", Tainted: "create failed: 500 Internal Server Error", Serial: 7},
	}
	exampleHistory = []render.HistoryEntry{
		{Serial: 6, Time: exampleTime, Command: "apply", Counts: map[string]int{"create": 1, "read": 1, "update": 0}},
		{Serial: 7, Time: exampleTime.Add(time.Hour), Command: "apply", Counts: map[string]int{"create": 1, "failed": 1}},
		{Serial: 8, Time: exampleTime.Add(2 * time.Hour), Command: "state rm other", Counts: map[string]int{"forget": 1}},
	}
	exampleMigrated = []render.MigratedStack{
		{Stack: "prod", Lineage: exampleState.Lineage, Serial: 7, Records: 3, Versions: 9, History: 3, Intents: 0, Copied: true},
	}
	exampleValidation = render.Validation{Diagnostics: diag.Diagnostics{{
		Pos: diag.Pos{File: "site.yaml", Line: 7, Col: 7}, Severity: diag.Error,
		Summary:    `unknown field "inferenceUnit" on oci:AiLanguage:Endpoint (did you mean "inferenceUnits"?)`,
		Detail:     `valid fields: "compartmentId", "definedTags", "description", "displayName", "freeformTags", "inferenceUnits", "modelId"`,
		Suggestion: "inferenceUnits",
	}}}
)

// jsonDocs are the documents of docs/state-json.md and
// docs/validate-json.md, each with the heading its example is under, the
// example's model, and an empty model.
var jsonDocs = []struct {
	file, heading  string
	example, empty func(w *bytes.Buffer) error
}{
	{"state-json.md", "## `reconcile state list`",
		func(w *bytes.Buffer) error { return render.StateListJSON(w, exampleState, exampleNodes) },
		func(w *bytes.Buffer) error { return render.StateListJSON(w, render.StateInfo{}, nil) }},
	{"state-json.md", "## `reconcile state show NAME`",
		func(w *bytes.Buffer) error { return render.RecordJSON(w, exampleNode) },
		func(w *bytes.Buffer) error { return render.RecordJSON(w, render.StateNode{}) }},
	{"state-json.md", "## `reconcile state history`",
		func(w *bytes.Buffer) error {
			return render.HistoryJSON(w, render.StateInfo{Lineage: exampleState.Lineage, Serial: 8}, exampleHistory)
		},
		func(w *bytes.Buffer) error { return render.HistoryJSON(w, render.StateInfo{}, nil) }},
	{"state-json.md", "## `reconcile stack ls`",
		func(w *bytes.Buffer) error {
			return render.StacksJSON(w, "etcd://10.0.0.5:2379/reconcile/orders", "prod", []string{"dev", "prod"})
		},
		func(w *bytes.Buffer) error { return render.StacksJSON(w, "", "", nil) }},
	{"state-json.md", "## `reconcile stack init NAME`",
		func(w *bytes.Buffer) error {
			return render.StackInitJSON(w, "etcd://10.0.0.5:2379/reconcile/orders", "staging", exampleState.Lineage)
		},
		func(w *bytes.Buffer) error { return render.StackInitJSON(w, "", "", "") }},
	{"state-json.md", "## `reconcile state migrate`",
		func(w *bytes.Buffer) error {
			return render.MigrateJSON(w, "/srv/orders/.reconcile/state.db", "etcd://10.0.0.5:2379/reconcile/orders", exampleMigrated)
		},
		func(w *bytes.Buffer) error { return render.MigrateJSON(w, "", "", nil) }},
	{"state-json.md", "## `reconcile version`",
		func(w *bytes.Buffer) error {
			return render.VersionJSON(w, render.Version{Version: "v0.1.0", Commit: "3f2a9c1e8b7d4a6f0c5e2d1b9a8c7f6e5d4c3b2a", Go: "go1.26.8", Platform: "linux/amd64"}, 5)
		},
		func(w *bytes.Buffer) error { return render.VersionJSON(w, render.Version{}, 0) }},
	{"validate-json.md", "## Example",
		func(w *bytes.Buffer) error { return render.ValidateJSON(w, exampleValidation) },
		func(w *bytes.Buffer) error { return render.ValidateJSON(w, render.Validation{}) }},
}

// TestStateJSONDocExamples keeps the examples of docs/state-json.md and
// docs/validate-json.md true: each is what its renderer writes.
func TestStateJSONDocExamples(t *testing.T) {
	for _, d := range jsonDocs {
		text, err := os.ReadFile(filepath.Join("..", "..", "docs", d.file))
		if err != nil {
			t.Fatal(err)
		}
		_, example, ok := strings.Cut(string(text), "\n"+d.heading)
		_, example, ok2 := strings.Cut(example, "```json\n")
		example, _, ok3 := strings.Cut(example, "```")
		if !ok || !ok2 || !ok3 {
			t.Errorf("docs/%s has no ```json block under %s", d.file, d.heading)
			continue
		}
		var buf bytes.Buffer
		if err := d.example(&buf); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != example {
			t.Errorf("the example under %s in docs/%s is not what the renderer writes:\n%s", d.heading, d.file, got)
		}
	}
}

// TestStateJSONStyle checks every document, of the example and of an empty
// model: an object with a format_version, snake_case keys, [] or {} for
// what is empty and never null outside a node's inputs and outputs; no
// secret, in clear or sealed.
func TestStateJSONStyle(t *testing.T) {
	for _, d := range jsonDocs {
		for _, f := range []func(*bytes.Buffer) error{d.example, d.empty} {
			var buf bytes.Buffer
			if err := f(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if strings.Contains(out, secretValue) || strings.Contains(out, "hmac-sha256:") {
				t.Errorf("%s shows a secret:\n%s", d.heading, out)
			}
			var doc map[string]any
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatalf("%s: %v\n%s", d.heading, err, out)
			}
			if v, _ := doc["format_version"].(string); v == "" {
				t.Errorf("%s: no format_version:\n%s", d.heading, out)
			}
			for k, v := range doc {
				checkStyle(t, d.heading, "/"+k, k, v, k == "inputs" || k == "outputs")
			}
		}
	}
}

func checkStyle(t *testing.T, what, ptr, key string, v any, data bool) {
	t.Helper()
	if strings.ToLower(key) != key || strings.ContainsAny(key, "- ") {
		t.Errorf("%s: key %s is not snake_case", what, ptr)
	}
	switch x := v.(type) {
	case nil:
		if !data {
			t.Errorf("%s: %s is null", what, ptr)
		}
	case map[string]any:
		for k, e := range x {
			if data {
				continue // the resource's own field names
			}
			checkStyle(t, what, ptr+"/"+k, k, e, false)
		}
	case []any:
		for _, e := range x {
			checkStyle(t, what, ptr+"/-", "", e, data)
		}
	}
}

// TestRecordJSONSecrets: a sealed input is null, and its digest is never
// written.
func TestRecordJSONSecrets(t *testing.T) {
	var buf bytes.Buffer
	if err := render.RecordJSON(&buf, exampleNode); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Inputs struct {
			FreeformTags map[string]any `json:"freeformTags"`
		} `json:"inputs"`
		UpdatedAt string `json:"updated_at"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if tok, ok := doc.Inputs.FreeformTags["token"]; !ok || tok != nil || doc.Inputs.FreeformTags["team"] != "nlp" {
		t.Errorf("inputs.freeformTags = %v, want the token null and the team as it is", doc.Inputs.FreeformTags)
	}
	if doc.UpdatedAt != "2025-03-14T08:26:53Z" {
		t.Errorf("updated_at = %q, want RFC 3339 in UTC", doc.UpdatedAt)
	}
}

// TestRenderImports keeps the renderers pure: the package must not depend
// on the state store, its backends or a network client.
func TestRenderImports(t *testing.T) {
	gocmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if runtime.GOOS == "windows" {
		gocmd += ".exe"
	}
	if _, err := os.Stat(gocmd); err != nil {
		t.Skipf("no go command at %s", gocmd)
	}
	out, err := exec.Command(gocmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		// The renderers read the models (plan, report, value and their
		// own), never the stages that make them, nor state or the network.
		stage := strings.HasPrefix(dep, "github.com/reconcile-dev/reconcile/engine/") && !slices.Contains([]string{"github.com/reconcile-dev/reconcile/engine/diag", "github.com/reconcile-dev/reconcile/engine/value", "github.com/reconcile-dev/reconcile/engine/plan", "github.com/reconcile-dev/reconcile/engine/report", "github.com/reconcile-dev/reconcile/engine/render"}, dep)
		if stage || dep == "github.com/reconcile-dev/reconcile/state" || strings.HasPrefix(dep, "github.com/reconcile-dev/reconcile/state/") || dep == "net/http" ||
			strings.Contains(dep, "bbolt") || strings.Contains(dep, "etcd") {
			t.Errorf("engine/render depends on %s", dep)
		}
	}
}
