package conformance_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/kri-kit/testkit/conformance"
)

// TestAllCapabilitiesListsEveryConstant checks that AllCapabilities
// returns the value of every Capability constant declared in config.go,
// once each and sorted: a capability added as a constant only would never
// be validated, listed by the CLI or checked against the README's table.
func TestAllCapabilitiesListsEveryConstant(t *testing.T) {
	declared := capabilityConstants(t, "config.go")
	if len(declared) == 0 {
		t.Fatal("config.go declares no constant of type Capability: the parser no longer finds them")
	}
	var all []string
	for _, c := range conformance.AllCapabilities() {
		all = append(all, string(c))
	}
	if !slices.IsSorted(all) {
		t.Errorf("AllCapabilities is not sorted: %v", all)
	}
	if slices.Sort(declared); !slices.Equal(all, slices.Compact(declared)) {
		t.Errorf("AllCapabilities returns %v\nwant the Capability constants of config.go: %v", all, declared)
	}
}

// capabilityConstants returns the values of the constants of type
// Capability declared in file.
func capabilityConstants(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Capability" {
				continue
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("a Capability constant of %s is not a string literal: %T", file, v)
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, s)
			}
		}
	}
	return out
}
