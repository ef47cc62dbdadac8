package engine

import (
	"sort"
	"strings"

	"reconcile/engine/specs"
	"reconcile/engine/value"
	"reconcile/schemas"
)

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
func diffInputs(s *schemas.Schema, prior, desired map[string]any, ignore []specs.PathOpt, sl value.Sealer) []string {
	for _, po := range ignore {
		applyIgnore(po, prior, desired)
	}
	var changed []string
	for _, k := range s.Inputs() {
		pr := s.Root.Properties[k]
		if !value.Equal(pr, desired[k], prior[k], sl) {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	return changed
}

// applyIgnore copies the prior value at an ignoreChanges path into desired.
// Paths are a top-level field, optionally followed by one map key
// (tags["env"] or tags.env); anything deeper ignores the whole field.
func applyIgnore(po specs.PathOpt, prior, desired map[string]any) {
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
