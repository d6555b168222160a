package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

var published = map[string]string{
	"github.com/kri-kit/testkit":       ".",
	"github.com/kri-kit/testkit/suite": "suite",
	"github.com/kri-kit/testkit/sim":   "sim",
	"github.com/kri-kit/testkit/vk":    "vk",
}

const vkGoMod = `module github.com/kri-kit/testkit/vk

go 1.26.0

require (
	github.com/kri-kit/testkit/suite v0.1.0
	github.com/onsi/ginkgo/v2 v2.27.2
)

require github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2 // indirect

// The checkout's suite.
replace github.com/kri-kit/testkit/suite => ../suite
`

func TestBumpSetsTheSiblingsAndKeepsTheRest(t *testing.T) {
	out, changed, err := bumpGoMod("vk/go.mod", []byte(vkGoMod), published, "v0.2.0")
	if err != nil || !changed {
		t.Fatalf("bumpGoMod = changed %v, %v", changed, err)
	}
	want := strings.Replace(vkGoMod, "suite v0.1.0", "suite v0.2.0", 1)
	if string(out) != want {
		t.Errorf("bumped:\n%s\nwant:\n%s", out, want)
	}
	if p, _ := unserved("vk/go.mod", out, published, "v0.2.0"); len(p) > 0 {
		t.Errorf("after the bump: %q", p)
	}
	if p, _ := unserved("vk/go.mod", []byte(vkGoMod), published, "v0.2.0"); len(p) != 1 || !strings.Contains(p[0], "requires github.com/kri-kit/testkit/suite v0.1.0, which this proxy cannot serve") {
		t.Errorf("without the bump, unserved = %q, want the suite requirement", p)
	}
}

func TestBumpRefusesAPlaceholder(t *testing.T) {
	placeholder := strings.Replace(vkGoMod, "suite v0.1.0", "suite v0.0.0-00010101000000-000000000000", 1)
	if _, _, err := bumpGoMod("vk/go.mod", []byte(placeholder), published, "v0.2.0"); err == nil || !strings.Contains(err.Error(), "a version no release publishes") {
		t.Errorf("bumpGoMod of a placeholder requirement: %v, want a refusal", err)
	}
}

func TestUnservedNamesAKitModuleNotPublished(t *testing.T) {
	gomod := strings.Replace(vkGoMod, "github.com/kri-kit/testkit/suite v0.1.0", "github.com/kri-kit/testkit/suite v0.2.0\n\tgithub.com/kri-kit/testkit/extra v0.2.0", 1)
	p, err := unserved("vk/go.mod", []byte(gomod), published, "v0.2.0")
	if err != nil || len(p) != 1 || !strings.Contains(p[0], "testkit/extra v0.2.0") {
		t.Errorf("unserved = %q, %v; want the unpublished module", p, err)
	}
}

// Published is in tag order: every module of the checkout comes after each
// published module its go.mod requires, and sim, which the kit requires, is
// published.
func TestPublishedComesAfterWhatItRequires(t *testing.T) {
	root := filepath.Join("..", "..")
	paths, err := publishedPaths(root, Published)
	if err != nil {
		t.Fatal(err)
	}
	if paths["github.com/kri-kit/testkit/sim"] != "sim" {
		t.Errorf("Published = %q: no sim", Published)
	}
	for i, dir := range Published {
		data, err := os.ReadFile(filepath.Join(root, dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.ParseLax(dir+"/go.mod", data, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Require {
			d, ok := paths[r.Mod.Path]
			if ok && slices.Index(Published, d) > i {
				t.Errorf("Published = %q: %s comes before %s, which it requires", Published, dir, d)
			}
		}
	}
}
