package eval_test

import (
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/eval"
)

// Offline evaluates every variable, used or not, every output, and the
// inputs of every resource and the id of every get, with what the cloud
// gives Unknown: it reports each error the specs alone make, at its
// expression, and nothing about what depends on a failed node or on the
// cloud.
func TestOffline(t *testing.T) {
	t.Parallel()
	s := load(t, `config:
  zones:
    type: List<String>
    default: [a, b]
variables:
  pick:
    fn::select: [5, "${zones}"]
  afterPick: ${pick}-x
  file:
    fn::readFile: missing.txt
  note:
    fn::readFile: note.txt
  lookup:
    fn::invoke:
      function: datadog:getCurrentUser
  fromLookup:
    fn::fromBase64: ${lookup.orgId}
  fromResource:
    fn::fromBase64: ${ep.id}
  urn:
    fn::fromBase64: ${ep.urn}
  big: "${note}"
resources:
  ep:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ocid1.compartment.oc1..x
      modelId: ocid1.ailanguagemodel.oc1..m1
      displayName:
        fn::select: [7, "${zones}"]
  legacy:
    type: oci:AiLanguage:Endpoint
    get:
      id:
        fn::select: [9, "${zones}"]
outputs:
  one:
    fn::singleOrNone: ${zones}
  fine: ${afterPick}
`, map[string]string{"note.txt": "a note"})
	var got []string
	for _, d := range eval.Offline(s, nil) {
		got = append(got, d.String())
	}
	want := []string{
		"main.yaml:7:5: error: fn::select index 5 out of range (length 2)",
		`main.yaml:10:5: error: fn::readFile "missing.txt": no such file or directory`,
		"main.yaml:21:5: error: fn::fromBase64: illegal base64 data at input byte 3",
		"main.yaml:30:9: error: fn::select index 7 out of range (length 2)",
		"main.yaml:35:9: error: fn::select index 9 out of range (length 2)",
		"main.yaml:38:5: error: fn::singleOrNone takes a list of 0 or 1 items, got 2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Offline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if ds := eval.Offline(load(t, "variables:\n  v: {fn::select: [1, [a, b]]}\noutputs:\n  o: ${v}\n", nil), nil); len(ds) != 0 {
		t.Errorf("Offline of valid specs: %v, want nothing", ds)
	}
}
