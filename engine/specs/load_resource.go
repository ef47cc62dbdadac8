package specs

import (
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/schemas"
)

// Loading resources, their get blocks and their options.

func (l *loader) loadResource(k, v *yaml.Node) *Resource {
	r := &Resource{Name: k.Value, Pos: l.pos(k), LogicalName: k.Value, Options: &noOptions}
	if v.Kind != yaml.MappingNode {
		l.errorf(l.pos(v), "resource %q must be a mapping with a type, got %s", r.Name, kindName(v))
		return nil
	}
	rdoc := schemas.Document().Root.Properties["resources"].AdditionalProperties
	var propsKey, propsNode, optsNode, getKey, getNode *yaml.Node
	// incomplete: an error already reported may explain what is missing
	badType, incomplete := false, false
	l.eachKey(v, func(fk, fv *yaml.Node) {
		switch fk.Value {
		case "type":
			if fv.Kind != yaml.ScalarNode || fv.ShortTag() != "!!str" {
				l.errorf(l.pos(fv), "type of resource %q must be a string, got %s", r.Name, kindName(fv))
				badType = true
				return
			}
			r.Type, r.TypePos = l.strs.String(fv.Value), l.pos(fv)
		case "properties":
			propsKey, propsNode = fk, fv
		case "options":
			optsNode = fv
		case "get":
			getKey, getNode = fk, fv
		case "name":
			if fv.Kind != yaml.ScalarNode || fv.ShortTag() != "!!str" || fv.Value == "" {
				l.errorf(l.pos(fv), "name of resource %q must be a literal string, got %s", r.Name, kindName(fv)).Detail = "name is the resource's name in its URN; references still use the key " + strconv.Quote(r.Name)
				return
			}
			if l.printableName(fv) {
				r.LogicalName = fv.Value
			}
		case "description":
		case "defaultProvider":
			l.errorf(l.pos(fk), "defaultProvider is only for provider resources, which reconcile does not need").Detail = "credentials come from each vendor's usual places; remove this key"
		default:
			names := keysOf(rdoc.Properties)
			l.errorf(l.pos(fk), "unknown key %q in resource %q%s", fk.Value, r.Name, diag.DidYouMean(fk.Value, names)).Detail = diag.ValidList("keys", names)
			incomplete = true
		}
	})
	if r.Type == "" {
		if badType || incomplete {
			return nil // the type was given wrongly or under a misspelt key
		}
		l.errorf(r.Pos, "resource %q has no type", r.Name).Detail = "add type: with one of " + strings.Join(schemas.Tokens(), ", ")
		return nil
	}
	s, ok := schemas.Lookup(r.Type)
	if !ok {
		if strings.HasPrefix(r.Type, "pulumi:providers:") {
			l.errorf(r.TypePos, "provider resources are not needed: %q", r.Type).Detail = "credentials come from each vendor's usual places; remove this resource"
			return nil
		}
		l.errorf(r.TypePos, "unknown resource type %q%s", r.Type, diag.DidYouMean(r.Type, schemas.Names())).Detail = "known types: " + strings.Join(schemas.Tokens(), ", ")
		return nil
	}
	if s.Kind == schemas.Function {
		l.errorf(r.TypePos, "%q is a lookup function, not a resource type", r.Type).Detail = "call it from variables with fn::invoke: {function: " + s.Token + ", arguments: {...}}"
		return nil
	}
	r.Type, r.Schema = s.Token, s
	if propsNode != nil && getNode != nil && !(propsNode.Kind == yaml.ScalarNode && propsNode.Tag == "!!null") {
		l.errorf(l.pos(getKey), "resource %q has both properties and get", r.Name).Detail = "get reads an existing resource and never manages it; remove one of them"
	}
	if propsNode != nil {
		switch e := l.expr(propsNode, s.Root).(type) {
		case *Object:
			e.P = l.pos(propsKey) // a missing field is reported here
			r.Properties = e
		case *badExpr:
			incomplete = true // reported; not known to be missing either
		case *Ref, *Call, *Invoke:
			// One expression that gives the object of the inputs, as
			// Pulumi allows: checked when it is evaluated.
			r.PropertiesExpr = e
		default:
			if !(propsNode.Kind == yaml.ScalarNode && propsNode.Tag == "!!null") {
				l.errorf(l.pos(propsNode), "properties of %q must be a mapping, or an expression such as ${name} that gives one; got %s", r.Name, kindName(propsNode))
				incomplete = true
			}
		}
	}
	if r.Properties == nil && r.PropertiesExpr == nil && getNode == nil && !incomplete {
		// With a misspelt key (such as "propertes") the properties are
		// not known to be missing: they are left unchecked.
		r.Properties = &Object{P: r.Pos}
	}
	if getNode != nil {
		r.Get = l.loadGet(r, getKey, getNode)
	}
	if optsNode != nil {
		l.loadOptions(r, optsNode)
	}
	return r
}

func (l *loader) loadGet(r *Resource, key, n *yaml.Node) *GetSpec {
	g := &GetSpec{P: l.pos(key)}
	unknownKey := false
	if n.Kind != yaml.MappingNode {
		l.errorf(l.pos(n), "get of %q must be a mapping with id and optional state, got %s", r.Name, kindName(n))
		return g
	}
	l.eachKey(n, func(k, v *yaml.Node) {
		switch k.Value {
		case "id":
			g.ID = l.expr(v, nil)
		case "state":
			switch e := l.expr(v, r.Schema.Root).(type) {
			case *Object:
				e.P = l.pos(k)
				g.State = e
			case *badExpr:
			default:
				l.errorf(l.pos(v), "get.state of %q must be a mapping, got %s", r.Name, notMapping(v))
			}
		default:
			l.errorf(l.pos(k), "unknown key %q in get of %q%s", k.Value, r.Name, diag.DidYouMean(k.Value, []string{"id", "state"})).Detail = `valid keys: "id", "state"`
			unknownKey = true
		}
	})
	if g.ID == nil && !unknownKey {
		l.errorf(g.P, "get of %q has no id", r.Name).Detail = "add id: with the id of the existing resource"
	}
	return g
}

func (l *loader) loadOptions(r *Resource, n *yaml.Node) {
	o := &Options{P: l.pos(n)}
	r.Options = o
	if n.Kind != yaml.MappingNode {
		l.errorf(l.pos(n), "options of %q must be a mapping, got %s", r.Name, kindName(n))
		return
	}
	odoc := schemas.Document().Root.Properties["resources"].AdditionalProperties.Properties["options"]
	boolOpt := func(k, v *yaml.Node) Expr {
		e := l.expr(v, nil)
		switch x := e.(type) {
		case *Lit:
			if _, ok := x.Value.(bool); !ok {
				l.errorf(l.pos(v), "%s must be true or false, got %s", k.Value, kindName(v))
			}
		case *Ref, *badExpr:
		default:
			l.errorf(l.pos(v), "%s must be true, false or a ${...} reference, got %s", k.Value, kindName(v))
		}
		return e
	}
	l.eachKey(n, func(k, v *yaml.Node) {
		switch k.Value {
		case "dependsOn":
			l.listOf(k, v, func(item *yaml.Node) {
				e := l.expr(item, nil)
				if ref, ok := e.(*Ref); ok && len(ref.Path) == 0 {
					o.DependsOn = append(o.DependsOn, ref)
					return
				}
				if _, bad := e.(*badExpr); bad {
					return
				}
				l.errorf(l.pos(item), "dependsOn entries must be references to resources such as ${name}, got %s", kindName(item))
			})
		case "parent":
			e := l.expr(v, nil)
			if ref, ok := e.(*Ref); ok && len(ref.Path) == 0 {
				o.Parent = ref
				return
			}
			if _, bad := e.(*badExpr); !bad {
				l.errorf(l.pos(v), "parent must be a reference to a resource such as ${name}, got %s", kindName(v))
			}
		case "protect":
			o.Protect = boolOpt(k, v)
		case "deleteBeforeReplace":
			o.DeleteBeforeReplace = boolOpt(k, v)
		case "retainOnDelete":
			o.RetainOnDelete = boolOpt(k, v)
		case "ignoreChanges":
			o.IgnoreChanges = l.pathList(r, k, v)
		case "additionalSecretOutputs":
			l.listOf(k, v, func(it *yaml.Node) {
				if it.Kind != yaml.ScalarNode || it.ShortTag() != "!!str" || it.Value == "" || strings.Contains(it.Value, "${") {
					l.errorf(l.pos(it), "additionalSecretOutputs entries must be literal field names such as displayName, got %s", kindName(it))
					return
				}
				if it.Value == "id" {
					l.warnf(l.pos(it), "additionalSecretOutputs: the id of a resource cannot be made secret; it stays in clear in state and output")
					return
				}
				canon := snakeToCamel(it.Value)
				if _, ok := r.Schema.Root.Properties[canon]; !ok {
					l.errorf(l.pos(it), "additionalSecretOutputs: %s has no field %q%s", r.Type, it.Value, diag.DidYouMean(canon, r.Schema.Outputs())).Detail =
						diag.ValidList("fields", r.Schema.Outputs()) + "; a misspelt name would leave the value it meant in clear"
					return
				}
				o.AdditionalSecretOutputs = append(o.AdditionalSecretOutputs, canon)
			})
		case "replaceOnChanges":
			o.ReplaceOnChanges = l.pathList(r, k, v)
		case "import":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || v.Value == "" {
				l.errorf(l.pos(v), "import must be the id of the existing object as a literal string, got %s", kindName(v))
				return
			}
			if r.Get != nil {
				l.errorf(l.pos(k), "resource %q has both get and options.import", r.Name).Detail = "get reads without managing; import adopts into state; keep one"
			}
			o.Import, o.ImportPos = v.Value, l.pos(v)
		case "customTimeouts":
			o.CustomTimeouts = map[string]time.Duration{}
			l.forMap(v, "customTimeouts", func(tk, tv *yaml.Node) {
				switch tk.Value {
				case "create", "update", "delete", "read":
				default:
					l.errorf(l.pos(tk), "unknown key %q in customTimeouts%s", tk.Value, diag.DidYouMean(tk.Value, []string{"create", "update", "delete", "read"})).Detail = `valid keys: "create", "update", "delete", "read"`
					return
				}
				d, err := time.ParseDuration(tv.Value)
				if tv.Kind != yaml.ScalarNode || err != nil || d <= 0 {
					l.errorf(l.pos(tv), "customTimeouts.%s must be a positive duration such as \"20m\" or \"1h30m\", got %s", tk.Value, kindName(tv))
					return
				}
				o.CustomTimeouts[tk.Value] = d
			})
		default:
			if p, known := odoc.Properties[k.Value]; known && p.Ignored {
				l.warnf(l.pos(k), "option %q has no effect in reconcile", k.Value)
				return
			}
			names := keysOf(odoc.Properties)
			l.errorf(l.pos(k), "unknown option %q in resource %q%s", k.Value, r.Name, diag.DidYouMean(k.Value, names)).Detail = diag.ValidList("options", names)
		}
	})
}

func (l *loader) listOf(k, v *yaml.Node, fn func(*yaml.Node)) {
	if v.Kind != yaml.SequenceNode {
		l.errorf(l.pos(v), "%s must be a list, got %s", k.Value, kindName(v))
		return
	}
	for _, it := range v.Content {
		fn(deref(it))
	}
}

// pathList reads ignoreChanges or replaceOnChanges: literal property paths
// whose first segment must name an input of the type.
func (l *loader) pathList(r *Resource, k, v *yaml.Node) []PathOpt {
	var out []PathOpt
	l.listOf(k, v, func(it *yaml.Node) {
		if it.Kind != yaml.ScalarNode || it.ShortTag() != "!!str" || it.Value == "" {
			l.errorf(l.pos(it), "%s entries must be literal property paths such as displayName or freeformTags[\"env\"], got %s", k.Value, kindName(it))
			return
		}
		top := it.Value
		if i := strings.IndexAny(top, ".["); i >= 0 {
			top = top[:i]
		}
		canon := snakeToCamel(top)
		p, ok := r.Schema.Root.Properties[canon]
		if !ok || p.ReadOnly {
			l.errorf(l.pos(it), "%s: %s has no input %q%s", k.Value, r.Type, top, diag.DidYouMean(canon, r.Schema.Inputs())).Detail = diag.ValidList("inputs", r.Schema.Inputs())
			return
		}
		out = append(out, PathOpt{Path: canon + it.Value[len(top):], Top: canon, P: l.pos(it)})
	})
	return out
}
