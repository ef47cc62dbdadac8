package eval_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
)

// secretTok is the secret config value of the tests below: longer than the
// 40 bytes a message quotes of a string, so that a message quoting it cut
// short is caught too.
const secretTok = "tok-5ecret-0123456789-abcdefghij-klmnopqrstuvwxyz"

// chunks returns the pieces of s, of n bytes each, that a leak of s shows
// some of, whole or cut short.
func chunks(s string, n int) []string {
	var out []string
	for i := 0; i+n <= len(s); i += n {
		out = append(out, s[i:i+n])
	}
	return out
}

// Secrecy flows from any argument to every result: every built-in
// function, interpolation, and fn::invoke, given an argument that holds a
// secret anywhere in it, gives a secret; and its error about such an
// argument never quotes it, whole or cut short.
func TestSecretFlowsFromAnyArgument(t *testing.T) {
	t.Parallel()
	s := load(t, `
config:
  tok:
    type: string
    secret: true
    default: `+secretTok+`
  path:
    type: string
    secret: true
    default: data.txt
variables:
  interpolated: "x-${tok}"
  joined:
    fn::join: ["-", [a, "${tok}"]]
  joinedBy:
    fn::join: ["${tok}", [a, b]]
  split:
    fn::split: ["-", "${tok}"]
  selected:
    fn::select: [0, [plain, "${tok}"]]
  toJSON:
    fn::toJSON: {k: plain, s: "${tok}"}
  toBase64:
    fn::toBase64: ${tok}
  fromBase64:
    fn::fromBase64: ${toBase64}
  sha1:
    fn::sha1: ${tok}
  length:
    fn::length: [a, "${tok}"]
  single:
    fn::singleOrNone: ["${tok}"]
  readFile:
    fn::readFile: ${path}
  filebase64:
    fn::filebase64: ${path}
  filebase64sha256:
    fn::filebase64sha256: ${path}
  invoked:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: ${tok}
  invokedField:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: "svc-${tok}"
      return: etag
  invokedNested:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: ${invoked.etag}
  badJoin:
    fn::join: ["${tok}", not-a-list]
  badSelect:
    fn::select: ["${tok}", [a]]
  badBase64:
    fn::toBase64: ["${tok}"]
  badInvoke:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: refuse-${tok}
  badInvokePart:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: services/${tok}
`, map[string]string{"data.txt": "file text"})
	e := newEnv(s, nil)
	// The lookup answers with fields made from its argument, and one that
	// is not, and refuses a name, echoing it as a cloud API would.
	e.ev.Invoke = func(inv *specs.Invoke, args map[string]any) (map[string]any, error) {
		name, _ := args["serviceName"].(string)
		if strings.HasPrefix(name, "refuse-") {
			return nil, errors.New(`400: service "` + name + `" is not a managed service`)
		}
		if strings.HasPrefix(name, "services/") {
			// GCP quotes a part of the name: not the whole secret.
			return nil, fmt.Errorf("get IAM policy: %w", &resources.APIError{Service: "gcp", Status: 403, Code: "PERMISSION_DENIED",
				Message: "Service '" + name[len("services/")+4:] + "' not found or permission denied."})
		}
		return map[string]any{"id": "services/" + name, "etag": "etag-" + name, "policyData": "{}"}, nil
	}
	for _, name := range []string{"interpolated", "joined", "joinedBy", "split", "selected", "toJSON", "toBase64", "fromBase64",
		"sha1", "length", "single", "readFile", "filebase64", "filebase64sha256", "invoked", "invokedField", "invokedNested"} {
		got, err := e.variable(t, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !value.IsSecret(got) {
			t.Errorf("%s = %#v, want a secret: one of its arguments is", name, got)
		}
	}
	for _, name := range []string{"badJoin", "badSelect", "badBase64", "badInvoke", "badInvokePart"} {
		_, err := e.variable(t, name)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		var api *resources.APIError
		if name == "badInvokePart" && (!errors.As(err, &api) || !strings.Contains(err.Error(), "403 PERMISSION_DENIED")) {
			t.Errorf("%s: %v, want the API's status and code kept, and the error it wraps", name, err)
		}
		for _, c := range chunks(secretTok[4:], 12) {
			if strings.Contains(err.Error(), c) {
				t.Errorf("%s: the error shows the secret (%q): %v", name, c, err)
				break
			}
		}
	}
}

// A property reached by index or field is secret when the object reached
// through is secret as a whole, as in Pulumi's l1-proxy-index, whose five
// outputs (l[0], m.key, c.property, o.property, a.property, each of an
// object or list marked with fn::secret whole) are all secret. Through an
// object that holds secrets only in some of its properties, a property
// that is not secret stays so. The results of a lookup called with a
// secret argument are secret as a whole: each of its fields is secret,
// whatever it was made from.
func TestIndexIntoSecrets(t *testing.T) {
	t.Parallel()
	s := load(t, `
config:
  anObject:
    type: object
    default: {property: config}
  tok:
    type: string
    secret: true
    default: `+secretTok+`
variables:
  l:
    fn::secret: [1]
  m:
    fn::secret: {key: true}
  c:
    fn::secret: ${anObject}
  o:
    fn::secret: {property: value}
  partial:
    plain: visible
    s: ${tok}
    list: [visible-item, "${tok}"]
    nested:
      fn::secret: {k: v}
    open: {k: visible-nested}
  lk:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: ${tok}
  lWhole: ${l[0]}
  mKey: ${m.key}
  mIndex: ${m["key"]}
  cProperty: ${c.property}
  oProperty: ${o.property}
  pPlain: ${partial.plain}
  pIndex: ${partial["plain"]}
  pListPlain: ${partial.list[0]}
  pOpen: ${partial.open.k}
  pOpenIndex: ${partial["open"]["k"]}
  pSecret: ${partial.s}
  pListSecret: ${partial.list[1]}
  pNested: ${partial.nested.k}
  lkPlainField: ${lk.policyData}
  lkIndex: ${lk["etag"]}
  missing: ${o.nothing}
`, nil)
	e := newEnv(s, nil)
	e.ev.Invoke = func(inv *specs.Invoke, args map[string]any) (map[string]any, error) {
		return map[string]any{"id": "services/x", "etag": "etag-1", "policyData": "{}"}, nil
	}
	if _, err := e.variable(t, "l", "m", "c", "o", "partial", "lk"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]any{
		"lWhole": value.Secret{Value: int64(1)}, "mKey": value.Secret{Value: true}, "mIndex": value.Secret{Value: true},
		"cProperty": value.Secret{Value: "config"}, "oProperty": value.Secret{Value: "value"},
		"pPlain": "visible", "pIndex": "visible", "pListPlain": "visible-item", "pOpen": "visible-nested", "pOpenIndex": "visible-nested",
		"pSecret": value.Secret{Value: secretTok}, "pListSecret": value.Secret{Value: secretTok}, "pNested": value.Secret{Value: "v"},
		"lkPlainField": value.Secret{Value: "{}"}, "lkIndex": value.Secret{Value: "etag-1"},
	} {
		got, err := e.variable(t, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !value.Same(got, want) || value.IsSecret(got) != value.IsSecret(want) {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
	// The keys of a secret object are not listed either.
	_, err := e.variable(t, "missing")
	var ee *eval.Error
	if !errors.As(err, &ee) || !strings.Contains(ee.Msg, `no key "nothing"`) || strings.Contains(ee.Msg, "property") {
		t.Errorf("missing: %v, want an error naming the key asked for and no key of the secret object", err)
	}
}
