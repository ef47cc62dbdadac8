package specs

// Loading config declarations and resolving their values.

import (
	"fmt"
	"math"
	"reconcile/engine/diag"
	"reconcile/engine/value"
	"reconcile/schemas"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// loadConfig loads the config section n; release as for forSection.
func (l *loader) loadConfig(n *yaml.Node, release bool) {
	decl := schemas.Document().Root.Properties["config"]
	var declProps map[string]*schemas.Prop
	if decl != nil && decl.AdditionalProperties != nil {
		for _, alt := range append([]*schemas.Prop{decl.AdditionalProperties}, decl.AdditionalProperties.OneOf...) {
			if alt.Type == "object" && alt.Properties != nil {
				declProps = alt.Properties
			}
		}
	}
	l.forSection(n, "config", release, func(k, v *yaml.Node) {
		name := k.Value
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name = name[i+1:] // proj:key: the project prefix is stripped
		}
		if !l.declare(&yaml.Node{Value: name, Line: k.Line, Column: k.Column}) {
			return
		}
		c := &ConfigDecl{Name: name, Pos: l.pos(k)}
		l.spec.Config[name] = c
		defaultPos := c.Pos
		if v.Kind != yaml.MappingNode {
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				return // declared, required
			}
			c.Default, c.HasDefault = l.literal(v), true
			c.Type = value.TypeName(c.Default)
			return
		}
		l.eachKey(v, func(dk, dv *yaml.Node) {
			switch dk.Value {
			case "type":
				t, ok := configType(dv.Value)
				if !ok || dv.Kind != yaml.ScalarNode {
					l.errorf(l.pos(dv), "unknown config type %q%s", dv.Value, diag.DidYouMean(dv.Value, configTypes)).Detail = diag.ValidList("types", configTypes)
				}
				c.Type = t
			case "default", "value":
				c.Default, c.HasDefault = l.literal(dv), true
				defaultPos = l.pos(dv)
			case "secret":
				b, ok := l.boolLit(dv)
				if !ok {
					l.errorf(l.pos(dv), "secret must be true or false, got %s", kindName(dv))
				}
				c.Secret = b
			default:
				if _, known := declProps[dk.Value]; known {
					return
				}
				names := keysOf(declProps)
				l.errorf(l.pos(dk), "unknown key %q in config %q%s", dk.Value, name, diag.DidYouMean(dk.Value, names)).Detail = diag.ValidList("keys", names)
				l.broken[name] = true // it may be a misspelt default: no "has no value" too
			}
		})
		if c.HasDefault && c.Type != "" {
			if msg := checkType(c.Type, c.Default); msg != "" {
				l.errorf(defaultPos, "default of config %q: %s", name, msg)
			}
		}
	})
}

var configTypes = []string{"string", "integer", "number", "boolean", "array", "object"}

func configType(s string) (string, bool) {
	ls := strings.ToLower(s)
	switch {
	case ls == "int":
		return "integer", true
	case ls == "bool":
		return "boolean", true
	case strings.HasPrefix(ls, "list<"):
		return "array", true
	}
	for _, t := range configTypes {
		if t == ls {
			return t, true
		}
	}
	return "", false
}

// checkType returns "" when v fits the config type t.
func checkType(t string, v any) string {
	got := value.TypeName(v)
	if got == t || t == "" || (t == "number" && got == "integer") {
		return ""
	}
	return fmt.Sprintf("expected %s, got %s", t, value.Describe(v))
}

// resolveConfig fills Spec.Values from overrides and defaults.
func (l *loader) resolveConfig(overrides map[string]string) {
	l.spec.Values = map[string]any{}
	secret := map[string]bool{}
	// A stack's setting of a name the specs do not declare declares it.
	for _, name := range sortedKeys(l.opts.StackConfig) {
		sv := l.opts.StackConfig[name]
		if _, ok := l.spec.Config[name]; ok || l.broken[name] {
			continue
		}
		if prev, dup := l.where[name]; dup {
			l.errorf(sv.Pos, "config %q of the stack's settings names a variable or resource, declared at %s", name, prev)
			continue
		}
		l.where[name] = sv.Pos
		l.spec.Config[name] = &ConfigDecl{Name: name, Pos: sv.Pos}
	}
	names := keysOfConfig(l.spec.Config)
	for _, k := range sortedKeys(overrides) {
		name := k
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		c, ok := l.spec.Config[name]
		if !ok {
			l.errorf(diag.Pos{}, "--config %s: no config named %q is declared%s", k, name, diag.DidYouMean(name, names)).Detail = "declare it under config: in a spec file"
			continue
		}
		v, err := parseConfigValue(c.Type, overrides[k])
		if err != nil {
			l.errorf(c.Pos, "--config %s: %v", k, err)
			continue
		}
		l.spec.Values[name] = v
	}
	for _, name := range names {
		c := l.spec.Config[name]
		if _, set := l.spec.Values[name]; set || l.broken[name] {
			continue
		}
		if sv, ok := l.opts.StackConfig[name]; ok {
			if msg := checkType(c.Type, sv.Value); msg != "" {
				l.errorf(sv.Pos, "config %q: %s, declared %s at %s", name, msg, c.Type, c.Pos)
				continue
			}
			l.spec.Values[name] = sv.Value
			secret[name] = sv.Secret
			continue
		}
		if !c.HasDefault && l.opts.UnsetConfigUnknown {
			l.spec.Values[name] = value.Unknown{}
			continue
		}
		if !c.HasDefault {
			l.errorf(c.Pos, "config %q has no value", name).Detail = fmt.Sprintf("set it in the stack's settings (Pulumi.<stack>.yaml), pass --config %s=VALUE, or give it a default", name)
			continue
		}
		l.spec.Values[name] = c.Default
	}
	for _, name := range names {
		if v, ok := l.spec.Values[name]; ok && (l.spec.Config[name].Secret || secret[name]) {
			l.spec.Values[name] = value.Secret{Value: v}
		}
	}
}

func parseConfigValue(t, s string) (any, error) {
	switch t {
	case "", "string":
		return s, nil
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return canonNumber(f), nil
	case "boolean":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil || len(n.Content) == 0 {
		return nil, fmt.Errorf("%q is not a valid %s (write it as JSON)", s, t)
	}
	v := (&loader{}).literal(n.Content[0])
	if msg := checkType(t, v); msg != "" {
		return nil, fmt.Errorf("%s", msg)
	}
	return v, nil
}

func canonNumber(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return f
}

// literal converts a YAML node to a plain value without interpreting
// expressions.
func (l *loader) literal(n *yaml.Node) any {
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		return scalarValue(n)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = l.literal(c)
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			out[n.Content[i].Value] = l.literal(n.Content[i+1])
		}
		return out
	}
	return nil
}

func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			return canonNumber(f)
		}
	}
	return n.Value
}

func (l *loader) boolLit(n *yaml.Node) (bool, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		b, _ := scalarValue(n).(bool)
		return b, true
	}
	return false, false
}
