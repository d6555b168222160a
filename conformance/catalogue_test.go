package conformance_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kri-kit/testkit/conformance"
)

// catalogueFile is the kit's list of every spec.
var catalogueFile = filepath.Join("..", "testdata", "conformance.yaml")

// updateEnv, when set to 1, makes TestCatalogue rewrite catalogueFile from
// the registered specs instead of comparing.
const updateEnv = "KRI_UPDATE_CATALOGUE"

type catalogue struct {
	Specs []catalogueEntry `json:"specs"`
}

type catalogueEntry struct {
	ID          string   `json:"id"`
	Level       string   `json:"level"`
	Requirement string   `json:"requirement"`
	Labels      []string `json:"labels"`
	Note        string   `json:"note,omitempty"`
}

const catalogueHeader = `# The KRI conformance catalogue: every spec of package conformance, with its
# one-line requirement, its Ginkgo labels and its level. MUST specs decide the
# verdict; SHOULD specs are reported as warnings; the benchmark specs measure
# and run only with -ginkgo.label-filter=benchmark. IDs are never renumbered;
# a note says how a spec's requirement changed between releases.
#
# TestCatalogue fails when this file and the registered specs drift apart.
# After changing a spec, regenerate it with:
#   KRI_UPDATE_CATALOGUE=1 go test ./conformance -run TestCatalogue
`

// retiredIDs are the spec IDs below the highest that no spec has and none
// will: numbers handed out to specs that were never merged. IDs are never
// reused: a new spec takes the next unused ID of its kind (TestSpecIDs
// says which), a number given up is listed here, and TestSpecIDs fails on
// any other gap.
var retiredIDs = []string{
	"KRI-POD-078", "KRI-POD-079", "KRI-POD-083", "KRI-POD-099",
	"KRI-POD-102", "KRI-POD-103", "KRI-POD-104",
}

// renderCatalogue writes the catalogue in the file's layout: one block per
// spec, labels in flow style.
func renderCatalogue(es []catalogueEntry) []byte {
	var b bytes.Buffer
	b.WriteString(catalogueHeader)
	fmt.Fprintf(&b, "#\n# Retired IDs, which no spec has and none will: %s.\n", strings.Join(retiredIDs, ", "))
	b.WriteString("specs:\n")
	for _, e := range es {
		fmt.Fprintf(&b, "  - id: %s\n    level: %s\n    requirement: %s\n    labels: [%s]\n",
			e.ID, e.Level, strconv.Quote(e.Requirement), strings.Join(e.Labels, ", "))
		if e.Note != "" {
			fmt.Fprintf(&b, "    note: %s\n", strconv.Quote(e.Note))
		}
	}
	return b.Bytes()
}

func entries() []catalogueEntry {
	var out []catalogueEntry
	for _, s := range conformance.Catalogue() {
		out = append(out, catalogueEntry{ID: s.ID, Level: string(s.Level), Requirement: s.Requirement, Labels: s.Labels, Note: s.Note})
	}
	return out
}

var specIDPattern = regexp.MustCompile(`^\[(KRI-[A-Z]+-\d{3})\] `)

// specID returns the ID at the start of a spec's text, or the text itself.
func specID(text string) string {
	if m := specIDPattern.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return text
}

// sortIDs sorts spec IDs in catalogue order (unknown ones last).
func sortIDs(ids []string) []string {
	order := map[string]int{}
	for i, s := range conformance.Catalogue() {
		order[s.ID] = i
	}
	rank := func(id string) int {
		if r, ok := order[id]; ok {
			return r
		}
		return len(order)
	}
	slices.SortStableFunc(ids, func(a, b string) int { return rank(a) - rank(b) })
	return ids
}

// TestCatalogue compares testdata/conformance.yaml with the specs the package
// defines.
func TestCatalogue(t *testing.T) {
	want := entries()
	if os.Getenv(updateEnv) == "1" {
		if err := os.WriteFile(catalogueFile, renderCatalogue(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", catalogueFile)
		return
	}
	data, err := os.ReadFile(catalogueFile)
	if err != nil {
		t.Fatal(err)
	}
	var got catalogue
	if err := yaml.UnmarshalStrict(data, &got); err != nil {
		t.Fatalf("%s: %v", catalogueFile, err)
	}
	seen := map[string]bool{}
	for _, e := range got.Specs {
		if seen[e.ID] {
			t.Errorf("%s lists %s twice", catalogueFile, e.ID)
		}
		seen[e.ID] = true
	}
	byID := func(es []catalogueEntry) map[string]catalogueEntry {
		m := map[string]catalogueEntry{}
		for _, e := range es {
			m[e.ID] = e
		}
		return m
	}
	gotBy, wantBy := byID(got.Specs), byID(want)
	for _, w := range want {
		g, ok := gotBy[w.ID]
		switch {
		case !ok:
			t.Errorf("spec %s is registered but missing from %s", w.ID, catalogueFile)
		case g.Level != w.Level || g.Requirement != w.Requirement || !slices.Equal(g.Labels, w.Labels) || g.Note != w.Note:
			t.Errorf("%s drifted from the registered spec:\n  file: %s %q %v note %q\n  spec: %s %q %v note %q", w.ID, g.Level, g.Requirement, g.Labels, g.Note, w.Level, w.Requirement, w.Labels, w.Note)
		}
	}
	for _, g := range got.Specs {
		if _, ok := wantBy[g.ID]; !ok {
			t.Errorf("%s lists %s, which no spec has", catalogueFile, g.ID)
		}
	}
	if !t.Failed() && !bytes.Equal(data, renderCatalogue(want)) {
		t.Errorf("%s lists the registered specs, but its header or layout (the retired IDs among them) is not what the test writes", catalogueFile)
	}
	if t.Failed() {
		t.Logf("regenerate the file with %s=1 go test ./conformance -run TestCatalogue", updateEnv)
	}

	// Every spec is MUST or SHOULD and labelled so (TestSpecIDs checks
	// the numbering).
	for _, s := range conformance.Catalogue() {
		if s.Level != conformance.Must && s.Level != conformance.Should {
			t.Errorf("%s has level %q", s.ID, s.Level)
		}
		if !slices.Contains(s.Labels, strings.ToLower(string(s.Level))) {
			t.Errorf("%s lacks the label %q", s.ID, strings.ToLower(string(s.Level)))
		}
	}
}

// TestSpecIDs checks that the spec IDs of each kind (KRI-POD, KRI-NODE,
// KRI-BENCH) are numbered from 001 without gaps but the retired ones
// (retiredIDs), each used once, and says the next unused ID of each kind:
// 'go test ./conformance -run TestSpecIDs -v' prints them.
func TestSpecIDs(t *testing.T) {
	skipInHelper(t)
	var specIDs []string
	for _, s := range conformance.Catalogue() {
		specIDs = append(specIDs, s.ID)
	}
	next := nextUnusedIDs(specIDs, retiredIDs)
	for i, id := range specIDs {
		if slices.Contains(specIDs[:i], id) {
			t.Errorf("two specs have the ID %s: IDs are never reused, the next unused one is %s", id, next[idKind(id)])
		}
		if slices.Contains(retiredIDs, id) {
			t.Errorf("%s is retired (retiredIDs) but a spec has it: IDs are never reused, the next unused one is %s", id, next[idKind(id)])
		}
	}
	for i, id := range retiredIDs {
		if slices.Contains(retiredIDs[:i], id) {
			t.Errorf("retiredIDs lists %s twice", id)
		}
	}
	for kind, nextID := range next {
		for n := 1; n < idNumber(nextID); n++ {
			if id := fmt.Sprintf("%s-%03d", kind, n); !slices.Contains(specIDs, id) && !slices.Contains(retiredIDs, id) {
				t.Errorf("no spec has %s, below the highest %s ID: give it to the next spec of that kind, or list it in retiredIDs (catalogue_test.go) if it was given up", id, kind)
			}
		}
	}
	var line []string
	for _, kind := range slices.Sorted(maps.Keys(next)) {
		line = append(line, next[kind])
	}
	t.Logf("next unused spec IDs: %s (retired: %s)", strings.Join(line, ", "), strings.Join(retiredIDs, ", "))
}

// nextUnusedIDs returns, by kind ("KRI-POD"), the ID after the highest
// that a spec has or that retired lists.
func nextUnusedIDs(specIDs, retired []string) map[string]string {
	high := map[string]int{}
	for _, id := range slices.Concat(specIDs, retired) {
		high[idKind(id)] = max(high[idKind(id)], idNumber(id))
	}
	next := map[string]string{}
	for kind, n := range high {
		next[kind] = fmt.Sprintf("%s-%03d", kind, n+1)
	}
	return next
}

// idKind returns the kind of a spec ID: "KRI-POD" of "KRI-POD-001".
func idKind(id string) string { return id[:strings.LastIndex(id, "-")] }

// idNumber returns the number of a spec ID: 1 of "KRI-POD-001".
func idNumber(id string) int {
	n, err := strconv.Atoi(id[strings.LastIndex(id, "-")+1:])
	if err != nil {
		panic(fmt.Sprintf("spec ID %q does not end in a number", id))
	}
	return n
}

// TestRegisteredSpecsMatchCatalogue previews the suite as Ginkgo builds it
// (a dry run in a helper process) and checks that Ginkgo registers exactly
// the catalogued specs, with their texts and labels.
func TestRegisteredSpecsMatchCatalogue(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("helper process")
	}
	r := runHelper(t, helperPreview, time.Minute, "-ginkgo.dry-run", "-ginkgo.label-filter=benchmark || !benchmark")
	if r.report == nil {
		t.Fatalf("no report from the dry run; output:\n%s", tail(r.output))
	}
	want := map[string]catalogueEntry{}
	for _, e := range entries() {
		want[e.ID] = e
	}
	seen := map[string]bool{}
	for _, sr := range r.report.SpecReports {
		if sr.LeafNodeType.String() != "It" {
			continue
		}
		id := specID(sr.LeafNodeText)
		e, ok := want[id]
		if !ok {
			t.Errorf("Ginkgo registered %q, which is not in the catalogue", sr.LeafNodeText)
			continue
		}
		if seen[id] {
			t.Errorf("Ginkgo registered %s twice", id)
		}
		seen[id] = true
		if text := "[" + e.ID + "] " + e.Requirement; sr.LeafNodeText != text {
			t.Errorf("%s: Ginkgo text %q, catalogue %q", id, sr.LeafNodeText, text)
		}
		// Ginkgo adds the label "Serial" to Serial specs (Config.Parallel).
		labels := slices.DeleteFunc(sr.Labels(), func(l string) bool { return l == "Serial" })
		if !sameSet(labels, e.Labels) {
			t.Errorf("%s: Ginkgo labels %v, catalogue %v", id, labels, e.Labels)
		}
		if !sr.IsSerial {
			t.Errorf("%s is not Serial although Config.Parallel is false", id)
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("%s is in the catalogue but Ginkgo did not register it", id)
		}
	}
	if !bytes.Contains([]byte(r.summary), []byte("KRI conformance summary")) {
		t.Errorf("the dry run wrote no summary; output:\n%s", tail(r.output))
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
