package plan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"reconcile/engine/diag"
	"reconcile/engine/value"
	"reconcile/kind"
)

// fastTestFile is a plan file with every field WriteFile writes.
func fastTestFile(t testing.TB) []byte {
	pl := &Plan{Lineage: "4b7c1c1e-0000-4000-8000-000000000000", Serial: 7, SpecHash: "sha256:abc", Targets: []string{"ep"}, Changes: []Change{
		{Addr: "ep", Type: "oci:AiLanguage:Endpoint", Kind: kind.Resource, Action: Replace, Reason: ReasonCannotUpdate, ReasonDetail: "d", ReasonFields: []string{"modelId"},
			ID: "ocid1.x", Before: map[string]any{"displayName": "a", "n": int64(1), "f": 1.5, "tags": map[string]any{"k": "v"}, "l": []any{nil, true, false}},
			After:        map[string]any{"displayName": "b", "id": value.Unknown{}, "description": value.Secret{Value: "s3cret"}, "é": "ünïcode"},
			ReplacePaths: []string{"modelId"}, DeleteBeforeReplace: true, Deposed: []string{"ocid1.old"},
			Options: []OptionChange{{Name: "protect", Before: false, After: true}}, Pos: diag.Pos{File: "main.yaml", Line: 3, Col: 5},
			Drift: []FieldDrift{{Path: "displayName", Applied: "a", Live: "z"}}, DriftDetails: []string{"x"}},
		{Addr: "imp", Type: "datadog:RestrictionPolicy", Kind: kind.Resource, Action: Import, ImportID: "dashboard:i", After: map[string]any{"resourceId": "dashboard:i"}},
		{Addr: "gone", Type: "datadog:RestrictionPolicy", Kind: kind.Resource, Action: Refresh, ID: "dashboard:g", Before: map[string]any{"resourceId": "dashboard:g"}},
		{Addr: "me", Type: "datadog:getCurrentUser", Kind: kind.Lookup, Action: Read, Deferred: true},
		{Addr: "same", Type: "datadog:RestrictionPolicy", Kind: kind.Resource, Action: NoOp, ID: "dashboard:y", Idle: true,
			Before: map[string]any{"resourceId": "dashboard:y"}, After: map[string]any{"resourceId": "dashboard:y"}},
	}, Outputs: map[string]any{"o": "v", "u": value.Unknown{}}}
	var buf bytes.Buffer
	err := WriteFile(&buf, File{Plan: pl, SpecPath: "/specs", Backend: "/state.db", Stack: "dev", Config: map[string]string{"proj:k": "v"}, Schemas: "sha256:s"}, "test", []byte("key"))
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
	env, in, ok := readFast(data)
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
	if len(in.Changes) != 5 || in.Changes[0].Options == nil || in.Changes[0].Drift == nil || in.Config == nil {
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
	if env, in, ok := readFast(older); !ok || !reflect.DeepEqual(env, wantEnv) || !reflect.DeepEqual(in, wantIn) {
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
		if _, _, ok := readFast([]byte(s)); ok {
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
	f.Add([]byte(`{"format":"reconcile plan","version":4,"plan":{"version":4,"specHash":"h","changes":[{"addr":"a","pos":{"File":"f","Line":1,"Col":2}}]},"mac":"m"}`))
	f.Add([]byte(`{"plan":{"changes":[{"before":{"a":[1,{"b":null}]}}],"changes":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, in, ok := readFast(data)
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
