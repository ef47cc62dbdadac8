package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/resources/emulator"
	"github.com/reconcile-dev/reconcile/resources/emulator/datadog"
	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
	"github.com/reconcile-dev/reconcile/resources/emulator/oci"
)

// maxSeedFile bounds the size of a seed file.
const maxSeedFile = 16 << 20

// SeedFile is the JSON document of Options.SeedFile (reconcile emulate
// --seed): objects to create besides the built-in seed data, by vendor.
// Every section is optional; unknown keys are an error.
type SeedFile struct {
	OCI     *oci.SeedData     `json:"oci,omitempty"`
	GCP     *gcp.SeedData     `json:"gcp,omitempty"`
	Datadog *datadog.SeedData `json:"datadog,omitempty"`
}

// SeedReport says what Start did with a seed file.
type SeedReport struct {
	Added int // objects created
	Kept  int // objects of the file that already existed, left as they are
}

// ReadSeedFile reads and decodes a seed file. Unknown keys and values of
// the wrong JSON type are errors naming their place in the file, such as
// `oci.models[0]: unknown key "stat"`. Values are checked by Start.
func ReadSeedFile(path string) (SeedFile, error) {
	var sf SeedFile
	f, err := os.Open(path)
	if err != nil {
		return sf, fmt.Errorf("seed file: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxSeedFile+1))
	if err != nil {
		return sf, fmt.Errorf("seed file %s: %w", path, err)
	}
	if len(raw) > maxSeedFile {
		return sf, fmt.Errorf("seed file %s: larger than %d bytes", path, maxSeedFile)
	}
	// First as plain JSON, to check keys and types with their paths.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return sf, fmt.Errorf("seed file %s: not valid JSON: %v", path, syntaxError(raw, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return sf, fmt.Errorf("seed file %s: more than one JSON value", path)
	}
	if _, ok := doc.(map[string]any); !ok {
		return sf, fmt.Errorf("seed file %s: want a JSON object with the keys oci, gcp and datadog", path)
	}
	if err := checkShape(doc, reflect.TypeFor[SeedFile](), ""); err != nil {
		return sf, fmt.Errorf("seed file %s: %w", path, err)
	}
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sf); err != nil {
		return sf, fmt.Errorf("seed file %s: %w", path, err)
	}
	return sf, nil
}

// syntaxError adds the line and column to a JSON syntax error.
func syntaxError(raw []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	// Offset counts the bytes up to and including the offending one.
	before := raw[:max(min(int(se.Offset)-1, len(raw)), 0)]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// checkShape checks that the decoded JSON v fits the Go type t: only the
// keys of t's JSON fields (exactly spelled), and values of the right JSON
// type. null fits anything.
func checkShape(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil
	}
	where := path
	if where == "" {
		where = "the top level"
	}
	want := func(what string) error {
		return fmt.Errorf("%s: want %s, not %s", where, what, jsonKind(v))
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return want("an object")
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fields[name] = f.Type
			names = append(names, name)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				return fmt.Errorf("%s: unknown key %q (known: %s)", where, k, strings.Join(names, ", "))
			}
			if err := checkShape(obj[k], ft, join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return want("an object")
		}
		for k, e := range obj {
			if err := checkShape(e, t.Elem(), join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return want("an array")
		}
		for i, e := range arr {
			if err := checkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return want("a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return want("true or false")
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return want("an integer")
		}
		if _, err := n.Int64(); err != nil {
			return want("an integer")
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + v.String()
	case bool:
		return fmt.Sprint(v)
	}
	return "null"
}

// seedFrom checks sf and writes it in one transaction: either all of it
// is applied or, on the first problem, none.
func (s *Server) seedFrom(sf SeedFile) (SeedReport, error) {
	var rep SeedReport
	err := s.store.Update(func(tx emulator.Tx) error {
		rep = SeedReport{}
		type section struct {
			name string
			seed func() (int, int, error)
		}
		var sections []section
		if sf.OCI != nil {
			sections = append(sections, section{"oci", func() (int, int, error) { return s.oci.SeedFrom(tx, *sf.OCI) }})
		}
		if sf.GCP != nil {
			sections = append(sections, section{"gcp", func() (int, int, error) { return s.gcp.SeedFrom(tx, *sf.GCP) }})
		}
		if sf.Datadog != nil {
			sections = append(sections, section{"datadog", func() (int, int, error) { return s.dd.SeedFrom(tx, *sf.Datadog) }})
		}
		for _, sec := range sections {
			added, kept, err := sec.seed()
			if err != nil {
				return fmt.Errorf("%s.%w", sec.name, err)
			}
			rep.Added += added
			rep.Kept += kept
		}
		return nil
	})
	return rep, err
}
