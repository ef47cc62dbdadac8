package engine

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"sort"
	"strings"

	"reconcile/resources"
	"reconcile/schemas"
)

// sealKey marks a sealed secret in state and plan files: the value is
// replaced by a digest, so that it can be compared but not read.
const sealKey = "$secret"

// sealer makes the digests that stand for secret values in state and plan
// files: HMAC-SHA256 under the state's own random key (state.SecretKey),
// which is never printed nor put in a plan file, so that a digest can be
// compared with a value but neither read nor found by trying values (a PIN
// hashed with a public salt was recovered offline in seconds). The digest
// does not depend on the node, so that 'state mv' keeps secrets comparing
// equal.
//
// States of format 1 hold digests salted with the node's name instead
// ("sha256:..."); name is kept only to compare with those, until the next
// apply writes the node again.
type sealer struct {
	key  []byte
	name string
}

// digestPrefix and legacyPrefix start the two kinds of digest.
const (
	digestPrefix = "hmac-sha256:"
	legacyPrefix = "sha256:"
)

// sealed is the sealed form of the plain value v: keyed, unless like is a
// sealed value of the old, salted kind, to compare with which v is sealed
// that way.
func (sl sealer) sealed(v any, like any) map[string]any {
	text := canonicalJSON(v)
	if isLegacySealed(like) {
		sum := sha256.Sum256([]byte("reconcile\x00" + sl.name + "\x00" + text))
		return map[string]any{sealKey: legacyPrefix + hex.EncodeToString(sum[:])}
	}
	m := hmac.New(sha256.New, sl.key)
	m.Write([]byte(text))
	return map[string]any{sealKey: digestPrefix + hex.EncodeToString(m.Sum(nil))}
}

// isLegacySealed reports whether v is a sealed value of format 1 states.
func isLegacySealed(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	d, _ := m[sealKey].(string)
	return strings.HasPrefix(d, legacyPrefix)
}

// rewriteAlong returns a copy of v in which each value for which marked
// reports true, given the value t at the same place in along, is replaced
// by replace(v, t). Maps are followed key by key and lists index by index;
// where along has nothing at a place, t is nil there. It is the one walk
// that seals, or wraps as secret, the parts of a value that another value
// of the same shape says are secret.
func rewriteAlong(v, along any, marked func(v, t any) bool, replace func(v, t any) any) any {
	if marked(v, along) {
		return replace(v, along)
	}
	switch x := v.(type) {
	case map[string]any:
		a, _ := along.(map[string]any)
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = rewriteAlong(e, a[k], marked, replace)
		}
		return out
	case []any:
		a, _ := along.([]any)
		out := make([]any, len(x))
		for i, e := range x {
			var t any
			if i < len(a) {
				t = a[i]
			}
			out[i] = rewriteAlong(e, t, marked, replace)
		}
		return out
	}
	return v
}

// markedAt is the test rewriteAlong needs to follow a template: v is at a
// marked place of the template (is reports true of t), or v and t no longer
// have the same shape (a list of another length, a value of another kind)
// while t holds a mark: v must then be taken whole, or a part of it that t
// marks would slip through.
func markedAt(is func(any) bool) func(v, t any) bool {
	var holds func(t any) bool
	holds = func(t any) bool {
		if is(t) {
			return true
		}
		switch x := t.(type) {
		case map[string]any:
			for _, e := range x {
				if holds(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if holds(e) {
					return true
				}
			}
		}
		return false
	}
	return func(v, t any) bool {
		if is(t) {
			return true
		}
		switch x := t.(type) {
		case map[string]any:
			_, same := v.(map[string]any)
			return !same && v != nil && holds(x)
		case []any:
			l, same := v.([]any)
			return (!same || len(l) != len(x)) && v != nil && holds(x)
		}
		return false
	}
}

// sealLike returns a copy of live, an object as the cloud returns it, with
// the values sealed where desired holds a Secret, so that a secret input
// the cloud echoes in clear compares with the desired value without being
// kept in clear.
func sealLike(live, desired any, sl sealer) any {
	return rewriteAlong(live, desired, markedAt(isSecretValue), func(v, _ any) any {
		if v == nil || isSealed(v) {
			return v
		}
		return sl.sealed(v, nil)
	})
}

// isSecretValue reports whether v is a Secret.
func isSecretValue(v any) bool {
	_, ok := v.(Secret)
	return ok
}

// seal replaces every Secret in v by its digest.
func seal(v any, sl sealer) any {
	return rewrite(v, func(v any) (any, bool) {
		s, ok := v.(Secret)
		if !ok {
			return nil, false
		}
		plain, _ := revealSecrets(s.Value)
		return sl.sealed(plain, nil), true
	})
}

// sealTo is seal, but each Secret of desired is sealed the way the value at
// its place in prior (from state) is, where that is sealed: so that a
// secret compares equal with its digest in a state of format 1 too.
func sealTo(desired, prior any, sl sealer) any {
	return rewriteAlong(desired, prior, func(v, _ any) bool { return isSecretValue(v) }, func(v, t any) any {
		plain, _ := revealSecrets(v.(Secret).Value)
		return sl.sealed(plain, t)
	})
}

// rewrite returns a copy of v in which every value for which fn reports
// true is replaced by what fn returns; fn is tried on a value before its
// elements, and lists and maps that fn leaves are copied element by element.
func rewrite(v any, fn func(any) (any, bool)) any {
	if r, ok := fn(v); ok {
		return r
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rewrite(e, fn)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = rewrite(e, fn)
		}
		return out
	}
	return v
}

// isSealed reports whether v is a sealed secret.
func isSealed(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	_, ok = m[sealKey]
	return ok
}

// unsealForDisplay turns sealed secrets back into Secret markers (without
// their value) so that renderers show them as sensitive.
func unsealForDisplay(v any) any {
	return rewrite(v, func(v any) (any, bool) {
		if isSealed(v) {
			return Secret{Value: nil}, true
		}
		return nil, false
	})
}

// managedInputs keeps the inputs of attrs that reconcile manages: those the
// specs set now (desired) or set at the last apply (applied). An input the
// specs never set is the cloud's to choose (OCI names an endpoint when no
// displayName is given), so it is never a difference; an input removed from
// the specs since the last apply still is, so that apply clears it.
func managedInputs(s *schemas.Schema, attrs, desired, applied map[string]any) map[string]any {
	out := inputsOf(s, attrs)
	for k := range out {
		_, want := desired[k]
		_, had := applied[k]
		if !want && !had {
			delete(out, k)
		}
	}
	return out
}

// diffInputs compares the prior inputs with the desired ones and returns the
// sorted names of the top-level inputs that differ. Fields named by
// ignoreChanges take their prior value in desired.
func diffInputs(s *schemas.Schema, prior, desired map[string]any, ignore []PathOpt, sl sealer) []string {
	for _, po := range ignore {
		applyIgnore(po, prior, desired)
	}
	var changed []string
	for _, k := range s.Inputs() {
		pr := s.Root.Properties[k]
		if !valuesEqual(pr, desired[k], prior[k], sl) {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	return changed
}

// applyIgnore copies the prior value at an ignoreChanges path into desired.
// Paths are a top-level field, optionally followed by one map key
// (tags["env"] or tags.env); anything deeper ignores the whole field.
func applyIgnore(po PathOpt, prior, desired map[string]any) {
	rest := strings.TrimPrefix(po.Path, po.Top)
	key := ""
	switch {
	case strings.HasPrefix(rest, `["`) && strings.HasSuffix(rest, `"]`) && !strings.Contains(rest[2:len(rest)-2], `"`):
		key = rest[2 : len(rest)-2]
	case strings.HasPrefix(rest, ".") && !strings.ContainsAny(rest[1:], ".[]"):
		key = rest[1:]
	}
	if key == "" {
		if v, ok := prior[po.Top]; ok {
			desired[po.Top] = v
		} else {
			delete(desired, po.Top)
		}
		return
	}
	pm, _ := prior[po.Top].(map[string]any)
	dm, ok := desired[po.Top].(map[string]any)
	if !ok {
		if pm == nil {
			return
		}
		dm = map[string]any{}
	}
	dm = mergeAttrs(dm)
	if v, ok := pm[key]; ok {
		dm[key] = v
	} else {
		delete(dm, key)
	}
	desired[po.Top] = dm
}

// valuesEqual compares a desired value with an observed or prior one under
// the field's schema: set-like lists ignore order and duplicates, and null,
// an empty list and an empty map are the same. An Unknown desired value is
// never equal. Where the prior value holds sealed secrets (it comes from
// state), the desired value is sealed alike before comparing.
func valuesEqual(pr *schemas.Prop, desired, prior any, sl sealer) bool {
	if containsUnknown(desired) {
		return false
	}
	var d any
	if containsSealed(prior) {
		d = sealTo(desired, prior, sl)
	} else {
		d, _ = revealSecrets(desired)
	}
	return reflect.DeepEqual(compareForm(pr, d), compareForm(pr, prior))
}

func containsSealed(v any) bool {
	if isSealed(v) {
		return true
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if containsSealed(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if containsSealed(e) {
				return true
			}
		}
	}
	return false
}

// compareForm is the canonical form of v for comparison under prop.
func compareForm(pr *schemas.Prop, v any) any {
	v = resources.Canon(v)
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		if len(x) == 0 {
			return nil
		}
		var items *schemas.Prop
		if pr != nil {
			items = pr.Items
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = compareForm(items, e)
		}
		if pr != nil && pr.Set {
			seen := map[string]bool{}
			uniq := out[:0]
			for _, e := range out {
				k := resources.Key(e)
				if !seen[k] {
					seen[k] = true
					uniq = append(uniq, e)
				}
			}
			sort.Slice(uniq, func(i, j int) bool { return resources.Key(uniq[i]) < resources.Key(uniq[j]) })
			out = uniq
		}
		return out
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			var sub *schemas.Prop
			if pr != nil {
				if q, ok := pr.Properties[k]; ok {
					sub = q
				} else {
					sub = pr.AdditionalProperties
				}
			}
			if f := compareForm(sub, e); f != nil {
				out[k] = f
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

// render1 renders a value on one line for messages.
func render1(v any) string {
	if _, ok := v.(Unknown); ok {
		return "(known after apply)"
	}
	if containsSecret(v) {
		return "(sensitive value)"
	}
	s := canonicalJSON(v)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func containsSecret(v any) bool {
	_, s := revealSecrets(v)
	return s || isSealed(v)
}
