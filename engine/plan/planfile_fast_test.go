package plan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
)

// fastTestFile is a plan file with every field WriteFile writes.
func fastTestFile(t testing.TB) []byte {
	pl := &Plan{Lineage: "4b7c1c1e-0000-4000-8000-000000000000", Serial: 7, SpecHash: "sha256:abc", Targets: []string{"ep"}, AllowSelfLockout: true, Changes: []Change{
		{Addr: "ep", Type: "oci:AiLanguage:Endpoint", Kind: kind.Resource, Action: Replace, Reason: ReasonCannotUpdate, ReasonDetail: "d", ReasonFields: []string{"modelId"},
			ID: "ocid1.x", Before: map[string]any{"displayName": "a", "n": int64(1), "f": 1.5, "tags": map[string]any{"k": "v"}, "l": []any{nil, true, false}},
			After:        map[string]any{"displayName": "b", "id": value.Unknown{}, "description": value.Secret{Value: "s3cret"}, "é": "ünïcode"},
			ReplacePaths: []string{"modelId"}, DeleteBeforeReplace: true, Deposed: []string{"ocid1.old"},
			Options: []OptionChange{{Name: "protect", Before: false, After: true}}, Pos: diag.Pos{File: "main.yaml", Line: 3, Col: 5},
			Drift: []FieldDrift{{Path: "displayName", Applied: "a", Live: "z"}}, DriftDetails: []string{"x"},
			DriftAccess: []AccessChange{{Resource: "services/s", Role: "roles/viewer", Member: "user:m@x", Added: true}},
			Access:      []AccessChange{{Resource: "services/s", Role: "roles/viewer", Condition: "t", Member: "user:a@x"}},
			Lockouts:    []Lockout{{Resource: "services/s", Role: "roles/owner", Caller: "c@x", Member: "user:c@x"}}},
		{Addr: "imp", Type: "datadog:RestrictionPolicy", Kind: kind.Resource, Action: Import, ImportID: "dashboard:i", After: map[string]any{"resourceId": "dashboard:i"}},
		{Addr: "gone", Type: "datadog:RestrictionPolicy", Kind: kind.Resource, Action: Refresh, ID: "dashboard:g", Before: map[string]any{"resourceId": "dashboard:g"}},
		{Addr: "me", Type: "datadog:getCurrentUser", Kind: kind.Lookup, Action: Read, Deferred: true},
		{Addr: "same", Type: "datadog:RestrictionPolicy", Kind: kind.Resource, Action: NoOp, ID: "dashboard:y", Idle: true,
			Before: map[string]any{"resourceId": "dashboard:y"}, After: map[string]any{"resourceId": "dashboard:y"}},
		{Addr: "ran", Type: "datadog:RestrictionPolicy", Kind: kind.Resource, Action: NoOp, ID: "dashboard:r",
			Before: map[string]any{"resourceId": "dashboard:r"}, After: map[string]any{"resourceId": "dashboard:r", "x": "y"}},
	}, Outputs: map[string]any{"o": "v", "u": value.Unknown{}}}
	var buf bytes.Buffer
	err := WriteFile(&buf, File{Plan: pl, SpecPath: "/specs", Backend: "/state.db", Stack: "dev", Config: map[string]string{"proj:k": "v"}, Schemas: "sha256:s",
		Runs: []string{"ep", "imp", "ran"}, Cuts: []FileCuts{{Name: "main.yaml", Digest: "d", Lines: [][2]int{{3, 9}}}}}, "test", []byte("key"))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readSlow reads data as ReadFile does when readFast declines it.
func readSlow(data []byte) (env planEnvelope, in planFileIn, err error) {
	if err = json.Unmarshal(data, &env); err == nil {
		err = json.Unmarshal(env.Plan, &in)
	}
	return env, in, err
}

// TestReadFast checks that readFast reads what WriteFile writes, every
// field, to what encoding/json makes of it.
func TestReadFast(t *testing.T) {
	data := fastTestFile(t)
	env, in, ok := readFast(data, false)
	if !ok {
		t.Fatalf("readFast declined a plan file WriteFile wrote:\n%s", data)
	}
	wantEnv, wantIn, err := readSlow(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(env, wantEnv) || !reflect.DeepEqual(in, wantIn) {
		t.Fatalf("readFast read\n%+v\n%+v\nencoding/json\n%+v\n%+v", env, in, wantEnv, wantIn)
	}
	if len(in.Changes) != 6 || in.Runs == nil || in.Cuts == nil || in.Changes[0].Options == nil || in.Changes[0].Drift == nil || in.Config == nil ||
		!in.AllowSelfLockout || in.Changes[0].Access == nil || in.Changes[0].Lockouts == nil || in.Changes[0].DriftAccess == nil {
		t.Fatalf("fields missing: %+v", in)
	}
	// Files written before the signature moved after the plan read too.
	i, j := bytes.Index(data, []byte(`,
 "mac": `)), bytes.Index(data, []byte(`
 "plan": `))
	if i < 0 || j < 0 {
		t.Fatalf("unexpected layout:\n%s", data)
	}
	mac := bytes.TrimSuffix(data[i+1:], []byte("\n}\n"))
	older := slices.Concat(data[:j], mac, []byte(","), data[j:i], []byte("\n}\n"))
	if env, in, ok := readFast(older, false); !ok || !reflect.DeepEqual(env, wantEnv) || !reflect.DeepEqual(in, wantIn) {
		t.Fatalf("readFast does not read the older layout the same (ok %v):\n%s", ok, older)
	}
	// What it declines, encoding/json reads.
	for _, s := range []string{
		string(bytes.Replace(data, []byte(`"addr"`), []byte(`"Addr"`), 1)),                    // keys match without case in encoding/json
		string(bytes.Replace(data, []byte(`"ünïcode"`), []byte(`"\u00fc"`), 1)),               // an escape
		string(bytes.Replace(data, []byte(`"deferred":true`), []byte(`"deferred": true`), 1)), // white space in the plan
		string(bytes.Replace(data, []byte(`"serial":7`), []byte(`"serial":7.0`), 1)),
		`{"version":2,"specHash":"x","changes":[]}`,
	} {
		if _, _, ok := readFast([]byte(s), false); ok {
			t.Errorf("readFast read %.80q…, which it should leave to encoding/json", s)
		}
	}
}

// FuzzReadFast checks readFast against encoding/json: whatever it reads,
// encoding/json reads the same.
//
//	go test ./engine/plan -run '^$' -fuzz FuzzReadFast -fuzztime 10m
func FuzzReadFast(f *testing.F) {
	f.Add(fastTestFile(f))
	f.Add([]byte(`{"format":"reconcile plan","version":5,"plan":{"version":5,"specHash":"h","changes":[{"addr":"a","pos":{"File":"f","Line":1,"Col":2}}]},"mac":"m"}`))
	f.Add([]byte(`{"plan":{"changes":[{"before":{"a":[1,{"b":null}]}}],"changes":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, in, ok := readFast(data, false)
		if !ok {
			return
		}
		wantEnv, wantIn, err := readSlow(data)
		if err != nil {
			t.Fatalf("readFast read what encoding/json refuses (%v):\n%q", err, data)
		}
		if !reflect.DeepEqual(env, wantEnv) || !reflect.DeepEqual(in, wantIn) {
			t.Fatalf("readFast read\n%+v\n%+v\nencoding/json\n%+v\n%+v\nfrom %q", env, in, wantEnv, wantIn, data)
		}
	})
}

// ReadFileToApply reads what ReadFile reads but the values of the no-op
// changes of nodes the apply does not run.
func TestReadFileToApply(t *testing.T) {
	data := fastTestFile(t)
	all, err := ReadFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	some, err := ReadFileToApply(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := some.Verify([]byte("key")); err != nil {
		t.Fatal(err)
	}
	for i, c := range all.Plan.Changes {
		got := some.Plan.Changes[i]
		if c.Addr == "same" {
			if got.Before != nil || got.After != nil || c.Before == nil {
				t.Errorf("same: values %v, %v read for apply, %v in all", got.Before, got.After, c.Before)
			}
			c.Before, c.After = nil, nil
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("change %s read for apply\n%+v\nread whole\n%+v", c.Addr, got, c)
		}
	}
	if !reflect.DeepEqual(some.Runs, all.Runs) || !reflect.DeepEqual(some.Cuts, all.Cuts) || len(all.Cuts) != 1 {
		t.Errorf("runs and cuts read for apply %v %v, whole %v %v", some.Runs, some.Cuts, all.Runs, all.Cuts)
	}
}
