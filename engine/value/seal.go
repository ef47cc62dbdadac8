package value

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
)

// SealWhere returns old with every value sealed at the places where
// template, a record's sealed inputs, holds a sealed value.
func SealWhere(old, template any, sl Sealer) any {
	return rewriteAlong(old, template, markedAt(IsSealed), func(v, _ any) any {
		if v == nil || ContainsSealed(v) {
			return v
		}
		return sl.Sealed(v, nil)
	})
}

// sealKey marks a sealed secret in state and plan files: the value is
// replaced by a digest, so that it can be compared but not read.
const sealKey = "$secret"

// Sealer makes the digests that stand for secret values in state and plan
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
type Sealer struct {
	// Key is the state's key (state.SecretKey); Name is the node, used
	// only to compare with the salted digests of format 1 states.
	Key  []byte
	Name string
}

// digestPrefix and legacyPrefix start the two kinds of digest.
const (
	digestPrefix = "hmac-sha256:"
	legacyPrefix = "sha256:"
)

// Sealed is the sealed form of the plain value v: keyed, unless like is a
// sealed value of the old, salted kind, to compare with which v is sealed
// that way.
func (sl Sealer) Sealed(v any, like any) map[string]any {
	text := CanonicalJSON(v)
	if isLegacySealed(like) {
		sum := sha256.Sum256([]byte("reconcile\x00" + sl.Name + "\x00" + text))
		return map[string]any{sealKey: legacyPrefix + hex.EncodeToString(sum[:])}
	}
	m := hmac.New(sha256.New, sl.Key)
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

// SealLike returns a copy of live, an object as the cloud returns it, with
// the values sealed where desired holds a Secret, so that a secret input
// the cloud echoes in clear compares with the desired value without being
// kept in clear. Where desired holds none, the result is live itself.
func SealLike(live, desired any, sl Sealer) any {
	if !contains(desired, IsSecret) {
		return live
	}
	return rewriteAlong(live, desired, markedAt(IsSecret), func(v, _ any) any {
		if v == nil || IsSealed(v) {
			return v
		}
		return sl.Sealed(v, nil)
	})
}

// Seal replaces every Secret in v by its digest.
func Seal(v any, sl Sealer) any {
	return Rewrite(v, func(v any) (any, bool) {
		s, ok := v.(Secret)
		if !ok {
			return nil, false
		}
		plain, _ := Reveal(s.Value)
		return sl.Sealed(plain, nil), true
	})
}

// SealTo is Seal, but each Secret of desired is sealed the way the value at
// its place in prior (from state) is, where that is sealed: so that a
// secret compares equal with its digest in a state of format 1 too.
func SealTo(desired, prior any, sl Sealer) any {
	return rewriteAlong(desired, prior, func(v, _ any) bool { return IsSecret(v) }, func(v, t any) any {
		plain, _ := Reveal(v.(Secret).Value)
		return sl.Sealed(plain, t)
	})
}

// Rewrite returns v with every value for which fn reports true replaced
// by what fn returns; fn is tried on a value before its elements. The
// lists and maps that hold a replaced value are copied; the rest of v is
// shared with the result, which callers must therefore not modify.
func Rewrite(v any, fn func(any) (any, bool)) any {
	if m, ok := v.(map[string]any); ok && m == nil {
		v = map[string]any{} // as a copy was: records encode {} and not null
	}
	out, _ := rewrite(v, fn)
	return out
}

// rewrite is Rewrite, and reports whether anything was replaced.
func rewrite(v any, fn func(any) (any, bool)) (any, bool) {
	if r, ok := fn(v); ok {
		return r, true
	}
	switch x := v.(type) {
	case []any:
		var out []any
		for i, e := range x {
			r, changed := rewrite(e, fn)
			if !changed {
				continue
			}
			if out == nil {
				out = slices.Clone(x)
			}
			out[i] = r
		}
		if out != nil {
			return out, true
		}
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			r, changed := rewrite(e, fn)
			if !changed {
				continue
			}
			if out == nil {
				out = maps.Clone(x)
			}
			out[k] = r
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// IsSealed reports whether v is a sealed secret.
func IsSealed(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	_, ok = m[sealKey]
	return ok
}

// UnsealForDisplay turns sealed secrets back into Secret markers (without
// their value) so that renderers show them as sensitive.
func UnsealForDisplay(v any) any {
	return Rewrite(v, func(v any) (any, bool) {
		if IsSealed(v) {
			return Secret{Value: nil}, true
		}
		return nil, false
	})
}

// SealedAsSecret turns sealed secrets into Secret marks that hold the
// digest in place of the value, for renderers of what was read back
// sealed (a saved plan): each shows as sensitive, and two are Same exactly
// when the values sealed under one key were, as the Secrets they were
// sealed from are.
func SealedAsSecret(v any) any {
	return Rewrite(v, func(v any) (any, bool) {
		if IsSealed(v) {
			return Secret{Value: v.(map[string]any)[sealKey]}, true
		}
		return nil, false
	})
}

// ContainsSealed reports whether v holds a sealed secret.
func ContainsSealed(v any) bool {
	return contains(v, IsSealed)
}

// SealAs returns live with the values sealed where applied, a value from
// state, holds a sealed secret, so that the two compare without the live
// secret being kept in clear. Lists are matched by index; a list whose
// length differs is sealed whole when applied holds a secret in it. Where
// applied holds none, the result is live itself.
func SealAs(live, applied any, sl Sealer) any {
	if !ContainsSealed(applied) {
		return live
	}
	return rewriteAlong(live, applied, markedAt(IsSealed), func(v, t any) any {
		if v == nil || IsSealed(v) {
			return v
		}
		return sl.Sealed(v, t)
	})
}

// SecretAs returns live with the values wrapped as Secret where applied, a
// value from state, holds a sealed secret. Lists are matched by index; a
// list whose length differs is wrapped whole when applied holds a secret
// in it.
func SecretAs(live, applied any) any {
	return rewriteAlong(live, applied, markedAt(IsSealed), func(v, _ any) any {
		if v == nil {
			return nil
		}
		return Secret{Value: v}
	})
}
