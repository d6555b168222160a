package conformance_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kri-kit/testkit/conformance"
)

// readmeFile is the kit's README, whose "Capabilities" section has a row
// per capability.
var readmeFile = filepath.Join("..", "README.md")

// capabilityRow is one row of the README's capability table.
type capabilityRow struct {
	line int
	// specs are the spec IDs its "specs" cell lists (KRI-POD-010, 011:
	// a bare number takes the kind of the ID before it).
	specs []string
	// text is the row as written, which may say that a spec also needs
	// another capability (`termination-message`).
	text string
}

// readmeCapabilityTable returns the rows of the table under the README's
// "## Capabilities" heading, by capability.
func readmeCapabilityTable(t *testing.T) map[conformance.Capability]capabilityRow {
	t.Helper()
	data, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	number := regexp.MustCompile(`(KRI-[A-Z]+-)?\d{3}\b`)
	rows := map[conformance.Capability]capabilityRow{}
	in := false
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Capabilities"
			continue
		case !in || !strings.HasPrefix(line, "| `"):
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Fatalf("%s:%d: a capability row without a specs cell: %s", readmeFile, i+1, line)
		}
		name := conformance.Capability(strings.Trim(strings.TrimSpace(cells[1]), "`"))
		if _, dup := rows[name]; dup {
			t.Errorf("%s:%d: a second row of %s", readmeFile, i+1, name)
		}
		row := capabilityRow{line: i + 1, text: line}
		kind := ""
		for _, m := range number.FindAllStringSubmatch(cells[3], -1) {
			if m[1] != "" {
				kind = m[1]
			}
			id := m[0]
			if m[1] == "" {
				id = kind + m[0]
			}
			if kind == "" {
				t.Errorf("%s:%d: %s's specs cell has a number before any spec ID: %q", readmeFile, i+1, name, cells[3])
				continue
			}
			if !slices.Contains(row.specs, id) {
				row.specs = append(row.specs, id)
			}
		}
		rows[name] = row
	}
	return rows
}

// TestReadmeCapabilityTable checks the README's capability table against
// the package: a row for every capability and none other, each row listing
// the specs that need its capability and no more. A spec that needs two
// capabilities is in the row of each, or in one that names the other (KRI-POD-091 in sidecars', "which also needs `probes`").
func TestReadmeCapabilityTable(t *testing.T) {
	skipInHelper(t)
	rows := readmeCapabilityTable(t)
	needs := map[conformance.Capability][]string{}
	for _, s := range conformance.Catalogue() {
		for _, c := range s.Capabilities {
			needs[c] = append(needs[c], s.ID)
		}
	}
	for _, c := range conformance.AllCapabilities() {
		row, ok := rows[c]
		if !ok {
			t.Errorf("%s has no row of capability %s in its table under \"## Capabilities\" (specs %v)", readmeFile, c, needs[c])
			continue
		}
		for _, id := range row.specs {
			if !slices.Contains(needs[c], id) {
				t.Errorf("%s:%d: the row of %s lists %s, which does not need it", readmeFile, row.line, c, id)
			}
		}
		for _, id := range needs[c] {
			if !slices.Contains(row.specs, id) && !listedWithMention(rows, id, c) {
				t.Errorf("%s:%d: the row of %s does not list %s, which needs it (nor does a row that says so)", readmeFile, row.line, c, id)
			}
		}
	}
	for c, row := range rows {
		if !slices.Contains(conformance.AllCapabilities(), c) {
			t.Errorf("%s:%d: a row of %q, which is no capability of the suite", readmeFile, row.line, c)
		}
	}
}

// listedWithMention reports whether a row lists spec id and names
// capability c.
func listedWithMention(rows map[conformance.Capability]capabilityRow, id string, c conformance.Capability) bool {
	for _, row := range rows {
		if slices.Contains(row.specs, id) && strings.Contains(row.text, "`"+string(c)+"`") {
			return true
		}
	}
	return false
}
