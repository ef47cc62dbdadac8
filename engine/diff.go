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
	switch d := desired.(type) {
	case Secret:
		plain, _ := revealSecrets(d.Value)
		return sl.sealed(plain, prior)
	case map[string]any:
		p, _ := prior.(map[string]any)
		out := make(map[string]any, len(d))
		for k, v := range d {
			out[k] = sealTo(v, p[k], sl)
		}
		return out
	case []any:
		p, _ := prior.([]any)
		out := make([]any, len(d))
		for i, v := range d {
			var pv any
			if i < len(p) {
				pv = p[i]
			}
			out[i] = sealTo(v, pv, sl)
		}
		return out
	}
	return desired
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

// sealLike returns a copy of live, an object as the cloud returns it, with
// the values sealed where desired holds a Secret, so that a secret input
// the cloud echoes in clear compares with the desired value (sealed with
// the same salt) without being kept in clear. Lists are matched by index;
// a list whose length differs is sealed whole when desired holds a secret
// in it.
func sealLike(live, desired any, sl sealer) any {
	switch d := desired.(type) {
	case Secret:
		if live == nil || isSealed(live) {
			return live
		}
		return seal(Secret{Value: live}, sl)
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			break
		}
		out := make(map[string]any, len(l))
		for k, v := range l {
			if dv, ok := d[k]; ok {
				v = sealLike(v, dv, sl)
			}
			out[k] = v
		}
		return out
	case []any:
		l, ok := live.([]any)
		if !ok {
			break
		}
		if len(l) != len(d) {
			if containsSecret(d) {
				return seal(Secret{Value: l}, sl)
			}
			return l
		}
		out := make([]any, len(l))
		for i, v := range l {
			out[i] = sealLike(v, d[i], sl)
		}
		return out
	}
	if containsSecret(desired) && live != nil {
		return seal(Secret{Value: live}, sl)
	}
	return live
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
