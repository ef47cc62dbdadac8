package specs

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// aliasSpecs use anchors and aliases wherever they may stand: a section,
// an entry of a section, the properties and options of a resource, a
// value deep inside one, the document's root.
var aliasSpecs = []string{
	`config:
  c: &cfg {type: string, default: x}
  d: *cfg
variables:
  v: &val {a: [1, 2, {b: "${c}"}]}
  w: *val
resources:
  a: &res
    type: oci:AiLanguage:Endpoint
    properties: &props
      compartmentId: ${c}
      modelId: m
      freeformTags: &tags {t: "${d}"}
    options: &opts
      customTimeouts: {create: 5m}
      ignoreChanges: [displayName]
  b:
    type: oci:AiLanguage:Endpoint
    properties: *props
    options: *opts
  e: *res
outputs:
  o: *tags
  p: *val
`,
	`resources: &all
  a:
    type: oci:AiLanguage:Endpoint
    properties: {compartmentId: c, modelId: m}
outputs: *all
`,
	`--- &root
resources:
  a:
    type: oci:AiLanguage:Endpoint
    properties: {compartmentId: c, modelId: m}
`,
	`variables:
  v: {k: *late}
  late: &late 3
`,
	`variables: &v
  x: 1
  y: {z: 2}
resources: *v
`,
}

// TestReleaseYAML checks that freeing the YAML tree while loading changes
// nothing of what Load returns, on specs with aliases and on every spec of
// testdata. It changes releaseYAML, so it does not run in parallel.
func TestReleaseYAML(t *testing.T) {
	srcs := append([]string(nil), aliasSpecs...)
	for _, dir := range []string{"../../testdata/errors", "../../testdata/examples"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				srcs = append(srcs, string(data))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	for _, src := range srcs {
		load := func(release bool) (*Spec, string) {
			releaseYAML = release
			defer func() { releaseYAML = true }()
			spec, diags := Load(dir, []Source{{Name: "spec.yaml", Data: []byte(src)}}, nil)
			var out []string
			for _, d := range diags {
				out = append(out, d.String())
			}
			return spec, strings.Join(out, "\n")
		}
		freed, freedDiags := load(true)
		kept, keptDiags := load(false)
		if freedDiags != keptDiags || !reflect.DeepEqual(freed, kept) {
			t.Errorf("%s\nfreeing the YAML tree: %s\n%#v\nkeeping it: %s\n%#v", src, freedDiags, freed, keptDiags, kept)
		}
	}
}
