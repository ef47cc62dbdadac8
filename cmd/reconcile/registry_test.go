package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/internal/conntest"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/aiendpoint"
	"github.com/reconcile-dev/reconcile/resources/emulator/server"
	"github.com/reconcile-dev/reconcile/resources/endpointsiam"
	"github.com/reconcile-dev/reconcile/resources/restrictionpolicy"
	"github.com/reconcile-dev/reconcile/schemas"
)

// realRegistry returns the registry the binary builds, pointed at the real
// clouds: no driver connects before its first call.
func realRegistry(t *testing.T) resources.Registry {
	t.Helper()
	reg, cleanup, err := (&cli{}).registry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	return reg
}

// TestRegistryServesEverySchema checks that the registry the binary builds
// and the embedded schemas name the same types: a driver or lookup without
// a schema, or a schema that nothing serves, fails here. A driver must
// serve a resource type and a lookup a function type.
func TestRegistryServesEverySchema(t *testing.T) {
	t.Parallel()
	reg := realRegistry(t)
	served := map[string]schemas.Kind{}
	for tok := range reg.Drivers {
		served[tok] = schemas.Resource
	}
	for tok := range reg.Functions {
		if _, dup := served[tok]; dup {
			t.Errorf("%s is served both by a driver and by a lookup", tok)
		}
		served[tok] = schemas.Function
	}
	for tok, k := range served {
		s, ok := schemas.Lookup(tok)
		switch {
		case !ok:
			t.Errorf("the registry serves %s (a %s), which has no schema", tok, k)
		case s.Token != tok:
			t.Errorf("the registry serves %s under an alias; want the canonical token %s", tok, s.Token)
		case s.Kind != k:
			t.Errorf("the registry serves %s as a %s, but its schema is of a %s", tok, k, s.Kind)
		}
	}
	for _, tok := range schemas.Tokens() {
		if _, ok := served[tok]; !ok {
			t.Errorf("schema %s has no driver or lookup in the registry", tok)
		}
	}
	if len(served) == 0 || len(served) != len(schemas.Tokens()) {
		t.Errorf("the registry serves %v, the schemas list %v", slices.Sorted(maps.Keys(served)), schemas.Tokens())
	}
}

// capabilities are the interfaces of package resources that a driver or a
// lookup may implement, by name. TestCapabilitiesAsserted checks that it
// names every interface the package declares.
var capabilities = map[string]reflect.Type{
	"Driver":          reflect.TypeFor[resources.Driver](),
	"Function":        reflect.TypeFor[resources.Function](),
	"Normalizer":      reflect.TypeFor[resources.Normalizer](),
	"VendorKeys":      reflect.TypeFor[resources.VendorKeys](),
	"Recoverer":       reflect.TypeFor[resources.Recoverer](),
	"BulkReader":      reflect.TypeFor[resources.BulkReader](),
	"ResultComparer":  reflect.TypeFor[resources.ResultComparer](),
	"NaturalID":       reflect.TypeFor[resources.NaturalID](),
	"AccessReviewer":  reflect.TypeFor[resources.AccessReviewer](),
	"AccessDescriber": reflect.TypeFor[resources.AccessDescriber](),
	"InputChecker":    reflect.TypeFor[resources.InputChecker](),
	"PlanChecker":     reflect.TypeFor[resources.PlanChecker](),
}

// TestCapabilitiesAsserted checks that every driver and lookup of the
// registry the binary builds asserts at compile time, in its package's
// code, each interface of package resources it implements (optional ones
// included): `var _ resources.Recoverer = (*Driver)(nil)`.
func TestCapabilitiesAsserted(t *testing.T) {
	t.Parallel()
	declared := parsePackage(t, "github.com/reconcile-dev/reconcile/resources")
	for name := range declared.interfaces {
		if capabilities[name] == nil {
			t.Errorf("package resources declares the interface %s; add it to capabilities", name)
		}
	}
	for name := range capabilities {
		if !declared.interfaces[name] {
			t.Errorf("capabilities names %s, which package resources does not declare", name)
		}
	}
	reg := realRegistry(t)
	var impls []any
	for _, d := range reg.Drivers {
		impls = append(impls, d)
	}
	for _, f := range reg.Functions {
		impls = append(impls, f)
	}
	for _, impl := range impls {
		typ := reflect.TypeOf(impl)
		if typ.Kind() != reflect.Pointer || typ.Elem().Name() == "" {
			t.Errorf("%v: want a pointer to a named type", typ)
			continue
		}
		pkg := parsePackage(t, typ.Elem().PkgPath())
		for name, iface := range capabilities {
			want := fmt.Sprintf("resources.%s = (*%s)(nil)", name, typ.Elem().Name())
			if typ.Implements(iface) && !pkg.assertions[want] {
				t.Errorf("%v implements resources.%s but %s does not assert it: var _ %s", typ, name, typ.Elem().PkgPath(), want)
			}
		}
	}
}

// parsedPackage is what parsePackage found in a package's code.
type parsedPackage struct {
	interfaces map[string]bool // exported interface types
	assertions map[string]bool // "resources.I = (*T)(nil)" of each `var _ resources.I = (*T)(nil)`
}

// parsePackage parses the non-test Go files of the package of this module
// with the import path importPath.
func parsePackage(t *testing.T, importPath string) parsedPackage {
	t.Helper()
	rel, ok := strings.CutPrefix(importPath, "github.com/reconcile-dev/reconcile/")
	if !ok {
		t.Fatalf("%s is not a package of this module", importPath)
	}
	dir := filepath.Join("..", "..", filepath.FromSlash(rel))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	out := parsedPackage{interfaces: map[string]bool{}, assertions: map[string]bool{}}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if _, isIface := s.Type.(*ast.InterfaceType); isIface && s.Name.IsExported() {
						out.interfaces[s.Name.Name] = true
					}
				case *ast.ValueSpec:
					if len(s.Names) == 1 && s.Names[0].Name == "_" && s.Type != nil && len(s.Values) == 1 {
						out.assertions[types.ExprString(s.Type)+" = "+types.ExprString(s.Values[0])] = true
					}
				}
			}
		}
	}
	return out
}

// TestRegistryReusesConnections makes many calls through each vendor's
// driver or lookup of the registry the binary builds, --parallelism calls
// at once, against an emulator, and counts the TCP connections it
// accepted: each vendor's transport keeps as many idle connections as
// calls run at once, so that each call reuses one where an earlier call
// ended, and the count stays within a small bound however many calls are
// made. The parallelism is above httpretry.DefaultConnsPerHost, so a
// transport that ignored it would open connections all along.
func TestRegistryReusesConnections(t *testing.T) {
	t.Parallel()
	srv, err := server.Start(server.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	const parallelism = 25
	c := &cli{g: globals{emulator: srv.URL, parallelism: parallelism}}
	reg, cleanup, err := c.registry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	ctx := t.Context()
	ep := reg.Drivers[aiendpoint.Token]
	epID, _, err := ep.Create(ctx, resources.Attrs{"compartmentId": server.Tenancy, "modelId": "ocid1.ailanguagemodel.oc1.iad.emulatoractivemodel", "displayName": "conns"})
	if err != nil {
		t.Fatal(err)
	}
	me, err := reg.Functions[restrictionpolicy.CurrentUserToken].Invoke(ctx, resources.Attrs{})
	if err != nil {
		t.Fatal(err)
	}
	dd := reg.Drivers[restrictionpolicy.Token]
	ddID, _, err := dd.Create(ctx, resources.Attrs{"resourceId": "dashboard:conns", "bindings": []any{
		map[string]any{"relation": "editor", "principals": []any{"org:" + me["orgId"].(string)}},
		map[string]any{"relation": "viewer", "principals": []any{"role:00000000-0000-0000-0000-000000000001"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"oci endpoint Read", func() error { _, err := ep.Read(ctx, epID); return err }},
		{"datadog restriction policy Read", func() error { _, err := dd.Read(ctx, ddID); return err }},
		{"datadog current user", func() error {
			_, err := reg.Functions[restrictionpolicy.CurrentUserToken].Invoke(ctx, resources.Attrs{})
			return err
		}},
		{"gcp service IAM policy", func() error {
			_, err := reg.Functions[endpointsiam.ServiceIamPolicyToken].Invoke(ctx, resources.Attrs{"serviceName": "orders.endpoints.acme-prod.cloud.goog"})
			return err
		}},
	} {
		total := 0
		for _, n := range []int{100, 300} {
			before := srv.Stats().Connections
			if err := conntest.Run(n, parallelism, tc.call); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			opened := srv.Stats().Connections - before
			total += opened
			t.Logf("%s: %d calls, %d at once: %d new connections", tc.name, n, parallelism, opened)
		}
		// A call may start just before the connection of the call that
		// ended is back in the pool and dial one more: hence twice the
		// parallelism.
		if total > 2*parallelism {
			t.Errorf("%s: 400 calls, %d at once, opened %d connections; want at most %d", tc.name, parallelism, total, 2*parallelism)
		}
	}
}
