package vk

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var catalogueFile = filepath.Join("testdata", "catalogue.yaml")

// catalogueYAML renders Catalogue as testdata/catalogue.yaml.
func catalogueYAML() string {
	var b strings.Builder
	b.WriteString(`# The catalogue of the virtual-kubelet provider suite (package vk): every
# spec, its level and the code of github.com/virtual-kubelet/virtual-kubelet
# v1.13.0 it rests on. MUST specs decide the verdict; SHOULD specs are
# reported (and fail the run under -vk.strict). IDs are never renumbered.
#
# TestCatalogueFile fails when this file and the specs drift apart.
# Regenerate it with:
#   KRI_UPDATE_CATALOGUE=1 go test . -run TestCatalogueFile   (in vk/)
specs:
`)
	for _, s := range Catalogue() {
		fmt.Fprintf(&b, "  - id: %s\n    level: %s\n    requirement: %q\n    vk: %q\n", s.ID, s.Level, s.Title, s.VK)
		if len(s.Capabilities) > 0 {
			fmt.Fprintf(&b, "    capabilities: %v\n", s.Capabilities)
		}
		if s.AsyncOnly {
			b.WriteString("    async-only: true\n")
		}
	}
	return b.String()
}

func TestCatalogueFile(t *testing.T) {
	want := catalogueYAML()
	if os.Getenv("KRI_UPDATE_CATALOGUE") != "" {
		if err := os.WriteFile(catalogueFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(catalogueFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not the catalogue of the registered specs; regenerate it with KRI_UPDATE_CATALOGUE=1 go test . -run TestCatalogueFile", catalogueFile)
	}
}
