package render

import (
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

// DeclarationYAML returns the spec text that declares the resource name of
// type typ with inputs, so that the next plan shows no changes for an
// object imported with them. The inputs come from the cloud: a string of
// several lines is written double-quoted, its newlines escaped, rather than
// as a block whose lines would begin with the cloud's text, and so is a
// key that is not a plain name (untrusted.Name).
func DeclarationYAML(name, typ string, inputs map[string]any) (string, error) {
	props := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range slices.Sorted(maps.Keys(inputs)) {
		v := &yaml.Node{}
		if err := v.Encode(inputs[k]); err != nil {
			return "", err
		}
		props.Content = append(props.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
	}
	quoteForeign(props)
	res := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "type"}, {Kind: yaml.ScalarNode, Value: typ},
		{Kind: yaml.ScalarNode, Value: "properties"}, props,
	}}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "resources"},
		{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: name, Style: keyStyle(name)}, res}},
	}}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	return b.String(), enc.Close()
}

// quoteForeign sets the style of the string scalars below n whose plain or
// block form could begin a line with foreign text: keys that are not plain
// names, and strings of several lines.
func quoteForeign(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode {
				k.Style |= keyStyle(k.Value)
			}
			quoteForeign(n.Content[i+1])
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			quoteForeign(c)
		}
	case yaml.ScalarNode:
		if strings.ContainsAny(n.Value, "\n\r") {
			n.Style = yaml.DoubleQuotedStyle
		}
	}
}

// keyStyle is the style of a mapping key: double-quoted unless it is a
// plain name.
func keyStyle(k string) yaml.Style {
	if untrusted.Name(k) != k {
		return yaml.DoubleQuotedStyle
	}
	return 0
}
