package render

import (
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// DeclarationYAML returns the spec text that declares the resource name of
// type typ with inputs, so that the next plan shows no changes for an
// object imported with them.
func DeclarationYAML(name, typ string, inputs map[string]any) (string, error) {
	props := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range slices.Sorted(maps.Keys(inputs)) {
		v := &yaml.Node{}
		if err := v.Encode(inputs[k]); err != nil {
			return "", err
		}
		props.Content = append(props.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
	}
	res := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "type"}, {Kind: yaml.ScalarNode, Value: typ},
		{Kind: yaml.ScalarNode, Value: "properties"}, props,
	}}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "resources"},
		{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: name}, res}},
	}}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	return b.String(), enc.Close()
}
