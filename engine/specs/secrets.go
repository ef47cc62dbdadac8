package specs

import (
	"sort"

	"github.com/reconcile-dev/reconcile/engine/value"
)

// SecretTexts returns the clear text of the secrets the specs hold
// statically: the values in force of config entries marked secret, and the
// literal text under fn::secret (whole values, and every string inside
// them). Outputs can redact them as a last line of defence, for instance
// from a cloud API's error message that echoes an input. Secrets computed
// from other values are not known until apply and are not listed.
func SecretTexts(s *Spec) []string {
	seen := map[string]bool{}
	var out []string
	add := func(v any) {
		for _, text := range value.LeafTexts(v) {
			if len(text) >= value.MinSecretLen && !seen[text] {
				seen[text] = true
				out = append(out, text)
			}
		}
	}
	for name, d := range s.Config {
		if d.Secret {
			add(s.Values[name])
		}
	}
	var visit func(e Expr, secret bool)
	visit = func(e Expr, secret bool) {
		switch x := e.(type) {
		case *Lit:
			if secret {
				add(x.Value)
			}
		case *Template:
			for _, p := range x.Parts {
				if secret && p.Ref == nil {
					add(p.Text)
				}
			}
		case *List:
			for _, it := range x.Items {
				visit(it, secret)
			}
		case *Object:
			if x == nil {
				return
			}
			for _, en := range x.Entries {
				visit(en.Value, secret)
			}
		case *Call:
			visit(x.Arg, secret || x.Name == "secret")
		case *Invoke:
			if x.Args != nil {
				visit(x.Args, secret)
			}
		}
	}
	for _, v := range s.Variables {
		visit(v.Expr, false)
	}
	for _, r := range s.Resources {
		if in := r.Inputs(); in != nil {
			visit(in, false)
		}
		if r.Get != nil {
			visit(r.Get.ID, false)
			if r.Get.State != nil {
				visit(r.Get.State, false)
			}
		}
	}
	for _, o := range s.Outputs {
		visit(o.Expr, false)
	}
	// Longest first, so that a secret containing another is replaced whole.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) || len(out[i]) == len(out[j]) && out[i] < out[j] })
	return out
}
