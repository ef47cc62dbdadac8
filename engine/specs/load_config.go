package specs

// Loading config declarations and resolving their values.

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/schemas"
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
		c := &ConfigDecl{Name: name, Pos: l.pos(k), Key: name}
		l.spec.Config[name] = c
		defaultPos := c.Pos
		typed := false
		if v.Kind != yaml.MappingNode {
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				return // declared, required
			}
			c.Default, c.HasDefault = l.literal(v), true
			defaultPos = l.pos(v)
			v = &yaml.Node{Kind: yaml.MappingNode} // a shorthand: nothing more declared
		}
		l.eachKey(v, func(dk, dv *yaml.Node) {
			switch dk.Value {
			case "type":
				t, items, msg := configType(dv)
				if msg != "" {
					l.errorf(l.pos(dv), "%s", msg).Detail = diag.ValidList("types", configTypes) + `; a list of one type is List<String>, List<Integer>, List<Number>, List<Boolean> or List<Object>`
					l.broken[name] = true
					return
				}
				c.Type, typed = t, true
				if items != "" {
					c.Items = items
				}
			case "items":
				// The item type of an array, as Pulumi's project config
				// writes it: items: {type: string}.
				if dv.Kind != yaml.MappingNode {
					l.errorf(l.pos(dv), "items of config %q must be a mapping such as {type: string}, got %s", name, kindName(dv))
					return
				}
				l.eachKey(dv, func(ik, iv *yaml.Node) {
					if ik.Value != "type" {
						return // nested items: the schema of the document allows them, unchecked
					}
					t, _, msg := configType(iv)
					if msg != "" || t == "array" {
						l.errorf(l.pos(iv), "unknown item type %q of config %q", iv.Value, name).Detail = `the items of a config list are of one type: "string", "integer", "number", "boolean" or "object"`
						return
					}
					c.Items = t
				})
			case "name":
				if dv.Kind != yaml.ScalarNode || dv.ShortTag() != "!!str" || dv.Value == "" {
					l.errorf(l.pos(dv), "name of config %q must be a literal string, got %s", name, kindName(dv)).Detail = "name is the setting the value is read from, in the stack's settings and --config"
					return
				}
				c.Key = dv.Value
				if i := strings.IndexByte(c.Key, ':'); i >= 0 {
					c.Key = c.Key[i+1:] // proj:key: the project prefix is stripped
				}
			case "default", "value":
				c.Default, c.HasDefault = l.literal(dv), true
				defaultPos = l.pos(dv)
			case "secret":
				b, ok := l.boolLit(dv)
				if !ok {
					l.errorf(l.pos(dv), "secret must be true or false, got %s", kindName(dv))
				}
				c.Secret = b
				if ok && !b {
					c.NotSecretPos = l.pos(dv)
				}
			default:
				if _, known := declProps[dk.Value]; known {
					return
				}
				names := keysOf(declProps)
				l.errorf(l.pos(dk), "unknown key %q in config %q%s", dk.Value, name, diag.DidYouMean(dk.Value, names)).Detail = diag.ValidList("keys", names)
				l.broken[name] = true // it may be a misspelt default: no "has no value" too
			}
		})
		if c.Items != "" && c.Type != "array" && typed {
			l.errorf(c.Pos, "config %q has items but is of type %s", name, c.Type).Detail = "items is the item type of a list: declare type: array, or type: List<...>"
			return
		}
		if !c.HasDefault || l.broken[name] {
			return
		}
		if !typed {
			// The type is inferred from the default; a list's items must be
			// of one type, as Pulumi requires.
			c.Type = value.TypeName(c.Default)
			if list, ok := c.Default.([]any); ok && c.Items == "" {
				items, msg := listItemType(list)
				if msg != "" {
					l.errorf(defaultPos, "default of config %q: %s", name, msg).Detail = "declare the type, such as type: List<String>, and give items of that type"
					return
				}
				c.Items = items
			}
		}
		if msg := checkConfigValue(c, c.Default); msg != "" {
			l.errorf(defaultPos, "default of config %q: %s", name, msg)
		}
	})
}

var configTypes = []string{"string", "integer", "number", "boolean", "array", "object"}

// configItemTypes are the item types of a config list.
var configItemTypes = map[string]string{"string": "string", "integer": "integer", "int": "integer", "number": "number",
	"boolean": "boolean", "bool": "boolean", "object": "object"}

// configType reads a config declaration's type: one of configTypes (Pulumi's
// spellings int and bool too, in any case), or List<T> for a list of items
// of type T. It returns the type, the item type of a List<T>, and a message
// when the type is not one.
func configType(n *yaml.Node) (typ, items, msg string) {
	s := n.Value
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", "", fmt.Sprintf("unknown config type %s", kindName(n))
	}
	ls := strings.ToLower(strings.TrimSpace(s))
	if inner, ok := strings.CutPrefix(ls, "list<"); ok {
		inner, closed := strings.CutSuffix(inner, ">")
		t, known := configItemTypes[strings.TrimSpace(inner)]
		switch {
		case !closed:
			return "", "", fmt.Sprintf("unknown config type %q: a list type is closed with \">\"", s)
		case strings.TrimSpace(inner) == "":
			return "", "", fmt.Sprintf("unknown config type %q: a list type names the type of its items, such as List<String>", s)
		case !known:
			return "", "", fmt.Sprintf("unknown config type %q: the items of a list are of type String, Integer, Number, Boolean or Object", s)
		}
		return "array", t, ""
	}
	if ls == "list" {
		return "", "", fmt.Sprintf("unknown config type %q: a list type names the type of its items, such as List<String>", s)
	}
	if t, ok := configItemTypes[ls]; ok {
		return t, "", ""
	}
	if ls == "array" {
		return "array", "", ""
	}
	return "", "", fmt.Sprintf("unknown config type %q%s", s, diag.DidYouMean(s, configTypes))
}

// listItemType returns the one type of the items of list, a default with
// no declared type; integers are numbers among numbers. A list mixing
// types, an empty one (whose item type cannot be inferred) and a list of
// lists are not config values.
func listItemType(list []any) (string, string) {
	if len(list) == 0 {
		return "", "the empty list gives no item type to infer"
	}
	t := ""
	for _, e := range list {
		et := value.TypeName(e)
		switch {
		case et == "" || et == "array":
			return "", fmt.Sprintf("a config list holds strings, numbers, booleans or objects, not %s", value.Describe(e))
		case t == "" || t == et:
			t = et
		case (t == "integer" || t == "number") && (et == "integer" || et == "number"):
			t = "number"
		default:
			return "", fmt.Sprintf("a config list holds items of one type; this one mixes %s and %s", t, et)
		}
	}
	return t, ""
}

// checkType returns "" when v fits the config type t.
func checkType(t string, v any) string {
	got := value.TypeName(v)
	if got == t || t == "" || (t == "number" && got == "integer") {
		return ""
	}
	return fmt.Sprintf("expected %s, got %s", t, value.Describe(v))
}

// checkConfigValue returns "" when v fits the declaration c: its type and,
// for a list, the type of its items.
func checkConfigValue(c *ConfigDecl, v any) string {
	if msg := checkType(c.Type, v); msg != "" {
		return msg
	}
	list, ok := v.([]any)
	if !ok || c.Items == "" {
		return ""
	}
	for i, e := range list {
		if msg := checkType(c.Items, e); msg != "" {
			return fmt.Sprintf("item %d: %s (the list is of %s items)", i, msg, c.Items)
		}
	}
	return ""
}

// resolveConfig fills Spec.Values from overrides and defaults.
func (l *loader) resolveConfig(overrides map[string]string) {
	l.spec.Values = map[string]any{}
	secret := map[string]bool{}
	// byKey lists the declarations reading each setting (name: renames).
	byKey := map[string][]*ConfigDecl{}
	for _, name := range keysOfConfig(l.spec.Config) {
		c := l.spec.Config[name]
		byKey[c.Key] = append(byKey[c.Key], c)
	}
	// A stack's setting of a name the specs do not declare declares it,
	// unless a declaration reads it under another name, as Pulumi YAML
	// reads any setting of the project's namespace. One that nothing reads
	// either is a typo (a setting silently lost, its default used instead):
	// an error, unless part of the specs is not loaded, which may read it.
	declared := sortedKeys(byKey)
	var used map[string]bool
	if !l.partial && !l.spec.Partial && len(l.opts.StackConfig) > 0 {
		used = l.spec.referenced()
	}
	for _, name := range sortedKeys(l.opts.StackConfig) {
		sv := l.opts.StackConfig[name]
		if _, ok := l.spec.Config[name]; ok || l.broken[name] || len(byKey[name]) > 0 {
			continue
		}
		if used != nil && !used[name] {
			l.unknownSetting(name, sv, declared)
			continue
		}
		if prev, dup := l.where[name]; dup {
			l.errorf(sv.Pos, "config %q of the stack's settings names a variable or resource, declared at %s", name, prev)
			continue
		}
		l.where[name] = sv.Pos
		c := &ConfigDecl{Name: name, Pos: sv.Pos, Key: name}
		l.spec.Config[name] = c
		byKey[name] = append(byKey[name], c)
	}
	names := keysOfConfig(l.spec.Config)
	keys := sortedKeys(byKey)
	for _, k := range sortedKeys(overrides) {
		key := k
		if i := strings.IndexByte(key, ':'); i >= 0 {
			key = key[i+1:]
		}
		decls := byKey[key]
		if len(decls) == 0 {
			d := l.errorf(diag.Pos{}, "--config %s: no config named %q is declared%s", k, key, diag.DidYouMean(key, keys))
			d.Detail = "declare it under config: in a spec file"
			if c, ok := l.spec.Config[key]; ok {
				d.Summary = fmt.Sprintf("--config %s: config %q reads the setting %q (its name:)", k, key, c.Key)
				d.Detail = fmt.Sprintf("pass --config %s=VALUE", c.Key)
			}
			continue
		}
		for _, c := range decls {
			v, err := parseConfigValue(c, overrides[k])
			if err != nil {
				l.errorf(c.Pos, "--config %s: %v", k, err)
				continue
			}
			l.spec.Values[c.Name] = v
		}
	}
	for _, name := range names {
		c := l.spec.Config[name]
		if _, set := l.spec.Values[name]; set || l.broken[name] {
			continue
		}
		if sv, ok := l.opts.StackConfig[c.Key]; ok {
			if msg := checkConfigValue(c, sv.Value); msg != "" {
				l.errorf(sv.Pos, "config %q: %s, declared %s at %s", name, msg, c.Type, c.Pos)
				continue
			}
			if sv.Secret && c.NotSecretPos != (diag.Pos{}) {
				// As Pulumi: a value given encrypted cannot be declared
				// not secret.
				l.errorf(c.NotSecretPos, "config %q is declared secret: false, but the stack's settings give it encrypted (secure:)", name).Detail =
					"a secret value cannot be made plain: remove secret: false, or set the value without --secret"
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
			l.errorf(c.Pos, "config %q has no value", name).Detail = fmt.Sprintf("set it in the stack's settings (Pulumi.<stack>.yaml), pass --config %s=VALUE, or give it a default", c.Key)
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

// unknownSetting reports the stack's setting of name, which no config
// entry reads and nothing refers to; declared are the settings the
// entries read.
func (l *loader) unknownSetting(name string, sv StackValue, declared []string) {
	key := cmp.Or(sv.Key, name)
	hint := diag.Suggest(name, declared)
	if ns, _, ok := strings.Cut(key, ":"); ok && hint != "" {
		hint = ns + ":" + hint // as the key is written
	}
	summary := fmt.Sprintf("unknown config key %q", key)
	if hint != "" {
		summary += fmt.Sprintf(" (did you mean %q?)", hint)
	}
	d := l.errorf(sv.Pos, "%s", summary)
	d.Detail = fmt.Sprintf("no config entry of the specs reads %q and nothing refers to ${%s}, so its value would be lost: fix or remove the key, or declare it under config: in a spec file", name, name)
	if len(declared) > 0 {
		d.Detail += "; " + diag.ValidList("keys", declared)
	}
	d.Detail += ". Keys of another namespace (a provider's, such as gcp:project) are left alone"
}

// parseConfigValue reads s, a --config value, as a value of the
// declaration c.
func parseConfigValue(c *ConfigDecl, s string) (any, error) {
	t := c.Type
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
	if msg := checkConfigValue(c, v); msg != "" {
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
