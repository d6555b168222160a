package conformance_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/kri-kit/testkit/conformance"
)

// contractFile maps every sentence of package kri's contract docs to the
// specs that check it.
var contractFile = filepath.Join("..", "testdata", "contract.yaml")

// contractDir is the package whose doc comments are the contract.
var contractDir = filepath.Join("..", "kri")

// contractInterfaces are the interfaces whose type and method docs are the
// provider's contract. ReasonCache is implemented and unit-tested by the kit
// itself, so its docs are not part of it.
var contractInterfaces = []string{"NodeProvider", "PodLifecycleHandler", "PodProvider", "PodSyncNotifier"}

// contractPackageWhere is the `where` of the sentences of the package doc.
const contractPackageWhere = "package kri"

// contractUpdateEnv, when set to 1, makes TestContractCoverage log skeleton
// entries for the doc sentences the table lacks.
const contractUpdateEnv = "KRI_UPDATE_CONTRACT"

type contractTable struct {
	// KusciaCommit is the secretflow/kuscia commit at which hack/kusciacite
	// last found every kuscia citation's function.
	KusciaCommit string          `json:"kuscia_commit"`
	Promises     []contractEntry `json:"promises"`
}

// contractEntry is one sentence of the docs. Exactly one of Specs and About
// is set, except for a gap: a provider promise that no spec checks (Specs
// may then name the specs that check the rest of the sentence). A promise
// that a MUST spec checks names the node-agent code that depends on it.
type contractEntry struct {
	Where    string          `json:"where"`
	Sentence string          `json:"sentence"`
	Specs    []string        `json:"specs,omitempty"`
	About    string          `json:"about,omitempty"`
	Agent    []contractAgent `json:"agent,omitempty"`
	// NoKusciaCaller says why no code of kuscia's agent depends on the
	// promise, in place of a kuscia citation (contract_agent_test.go).
	NoKusciaCaller string `json:"no_kuscia_caller,omitempty"`
	Gap            bool   `json:"gap,omitempty"`
	Note           string `json:"note,omitempty"`
	// E2E are the node e2e tests of kubernetes/kubernetes the specs
	// mirror; required for the pod-spec specs (contract_e2e_test.go).
	E2E []contractE2E `json:"e2e,omitempty"`
}

// contractAgent is a function of a node agent that breaks when a provider
// breaks the promise, and how.
type contractAgent struct {
	At     string `json:"at"`
	Breaks string `json:"breaks"`
}

// contractDoc is one doc comment of the contract.
type contractDoc struct {
	where string // "package kri", "NodeProvider", "NodeProvider.Ping", ...
	text  string // CommentGroup.Text()
}

// contractDocs parses the non-test files of dir and returns the package doc
// and, for each of the interfaces, its type doc and the doc of every method.
// It fails the test when an interface is missing or a method undocumented.
func contractDocs(t *testing.T, dir string, interfaces []string) []contractDoc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	fset := token.NewFileSet()
	var pkgDoc []string
	byType := map[string][]contractDoc{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			pkgDoc = append(pkgDoc, f.Doc.Text())
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				it, ok := ts.Type.(*ast.InterfaceType)
				if !ok || !slices.Contains(interfaces, ts.Name.Name) {
					continue
				}
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				name := ts.Name.Name
				if doc == nil {
					t.Errorf("%s: interface %s has no doc comment", fset.Position(ts.Pos()), name)
				}
				docs := []contractDoc{{where: name, text: doc.Text()}}
				for _, m := range it.Methods.List {
					if len(m.Names) == 0 { // an embedded interface
						if m.Doc != nil {
							docs = append(docs, contractDoc{where: name + "." + embeddedName(m.Type), text: m.Doc.Text()})
						}
						continue
					}
					if m.Doc == nil {
						t.Errorf("%s: method %s.%s has no doc comment, so its contract is unwritten", fset.Position(m.Pos()), name, m.Names[0].Name)
						continue
					}
					for _, n := range m.Names {
						docs = append(docs, contractDoc{where: name + "." + n.Name, text: m.Doc.Text()})
					}
				}
				byType[name] = docs
			}
		}
	}
	if len(pkgDoc) == 0 {
		t.Errorf("%s has no package doc", dir)
	}
	out := []contractDoc{{where: contractPackageWhere, text: strings.Join(pkgDoc, "\n\n")}}
	for _, name := range interfaces {
		docs, ok := byType[name]
		if !ok {
			t.Errorf("%s declares no interface %s", dir, name)
		}
		out = append(out, docs...)
	}
	return out
}

// embeddedName names the type of an embedded field.
func embeddedName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return embeddedName(e.X) + "." + e.Sel.Name
	default:
		return fmt.Sprintf("%T", e)
	}
}

// splitSentences splits a doc comment's text into sentences, whitespace
// collapsed to single spaces. Go doc headings ("# ...") are dropped; a blank
// line and every list item ("- ...", "* ...", or "1. ..." when indented)
// start a new sentence; otherwise a sentence ends after '.', '?' or '!'
// (and any closing brackets or quotes right after it) when whitespace and
// then an upper-case letter, a digit, a quote or '(' follow. So "e.g. for",
// "ctx.Err()" and "pkgcontainer.ErrRunContainer" do not end a sentence; nor
// does ". pod may", a sentence starting with a lower-case identifier.
func splitSentences(text string) []string {
	var out, block []string
	flush := func() {
		s := strings.Join(strings.Fields(strings.Join(block, " ")), " ")
		block = block[:0]
		out = append(out, splitBlock(s)...)
	}
	for line := range strings.SplitSeq(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(line, "# "):
			flush()
		default:
			if item, ok := listItem(line); ok {
				flush()
				trimmed = item
			}
			block = append(block, trimmed)
		}
	}
	flush()
	return out
}

// listItem reports whether line starts a list item and returns its text
// without the marker. Bullets ("-", "*", "+", "•") count indented or not,
// numbers ("1.", "2)") only indented, as go doc lists are indented.
func listItem(line string) (string, bool) {
	trimmed := strings.TrimLeft(line, " \t")
	indented := len(trimmed) < len(line)
	for _, bullet := range []string{"- ", "* ", "+ ", "• "} {
		if strings.HasPrefix(trimmed, bullet) {
			return strings.TrimSpace(trimmed[len(bullet):]), true
		}
	}
	if !indented {
		return "", false
	}
	digits := len(trimmed) - len(strings.TrimLeft(trimmed, "0123456789"))
	if digits > 0 && digits+1 < len(trimmed) && (trimmed[digits] == '.' || trimmed[digits] == ')') && trimmed[digits+1] == ' ' {
		return strings.TrimSpace(trimmed[digits+2:]), true
	}
	return "", false
}

// splitBlock splits one paragraph or list item, whitespace already
// collapsed, at the ends of its sentences.
func splitBlock(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '.' && s[i] != '?' && s[i] != '!' {
			continue
		}
		j := i + 1
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !strings.ContainsRune(`)]"'”’`, r) {
				break
			}
			j += size
		}
		if j+1 >= len(s) || s[j] != ' ' {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(s[j+1:]); unicode.IsUpper(r) || unicode.IsDigit(r) || strings.ContainsRune("\"'`“‘(", r) {
			out = append(out, s[start:j])
			start = j + 1
			i = j
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func TestSplitSentences(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []string
	}{
		{"empty", "", nil},
		{"blank lines only", "\n\n  \n", nil},
		{"one sentence over lines", "Ping reports whether the\nbackend   is\treachable.\n",
			[]string{"Ping reports whether the backend is reachable."}},
		{"two sentences", "It blocks. It returns nil.",
			[]string{"It blocks.", "It returns nil."}},
		{"question and exclamation", "Is it? Yes! 3 more.",
			[]string{"Is it?", "Yes!", "3 more."}},
		{"abbreviation before lower case", "a provider, e.g. for tests, may do it. Next one.",
			[]string{"a provider, e.g. for tests, may do it.", "Next one."}},
		{"qualified identifiers", "It returns pkgcontainer.ErrRunContainer or ctx.Err() and ID.String(). Done.",
			[]string{"It returns pkgcontainer.ErrRunContainer or ctx.Err() and ID.String().", "Done."}},
		{"ellipsis inside brackets", "It fills (conditions, addresses, ...) and reports it. Then more.",
			[]string{"It fills (conditions, addresses, ...) and reports it.", "Then more."}},
		{"sentence starting with a lower-case identifier stays joined", "It kills at once. pod may be nil.",
			[]string{"It kills at once. pod may be nil."}},
		{"digit, quote and bracket start sentences", "First. 0 is fine. \"Completed\" is the reason. (Or not.) Last.",
			[]string{"First.", "0 is fine.", "\"Completed\" is the reason.", "(Or not.)", "Last."}},
		{"closing bracket and quote after the stop", "It sorts them (as the kubelet does.) Then it says \"done.\" Fine.",
			[]string{"It sorts them (as the kubelet does.)", "Then it says \"done.\"", "Fine."}},
		{"decimal number", "It waits 1.5 seconds. Then it stops.",
			[]string{"It waits 1.5 seconds.", "Then it stops."}},
		{"no stop at the end", "A node agent drives it:\n\nNext paragraph.",
			[]string{"A node agent drives it:", "Next paragraph."}},
		{"paragraphs split without a stop", "no stop here\n\nlower case start.",
			[]string{"no stop here", "lower case start."}},
		{"heading dropped", "Intro.\n\n# Calling model\n\nBody.",
			[]string{"Intro.", "Body."}},
		{"list items", "Runs so:\n\n  - Start is run once;\n    Stop ends it.\n  - For each pod, it syncs. SyncPod is\n    level-triggered.\n- Unindented item.\n\nAfter.",
			[]string{"Runs so:", "Start is run once; Stop ends it.", "For each pod, it syncs.", "SyncPod is level-triggered.", "Unindented item.", "After."}},
		{"numbered list only indented", "Steps:\n  1. first step\n  2) second step\n30. is not an item.",
			[]string{"Steps:", "first step", "second step 30. is not an item."}},
		{"hyphen inside a line", "It is level-triggered - mostly.", []string{"It is level-triggered - mostly."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := splitSentences(tc.text)
			if !slices.Equal(got, tc.want) {
				t.Errorf("splitSentences(%q)\n got %q\nwant %q", tc.text, got, tc.want)
			}
		})
	}
}

// contractKey identifies a sentence of the docs.
type contractKey struct{ where, sentence string }

// TestContractCoverage checks testdata/contract.yaml against the doc
// comments of package kri: every sentence of the contract docs has an entry,
// every entry's sentence is still in the docs, and every provider promise
// names specs of the catalogue that check it.
func TestContractCoverage(t *testing.T) {
	docs := contractDocs(t, contractDir, contractInterfaces)
	var order []contractKey
	inDocs := map[contractKey]bool{}
	wheres := map[string]bool{}
	for _, d := range docs {
		wheres[d.where] = true
		for _, s := range splitSentences(d.text) {
			k := contractKey{d.where, s}
			if !inDocs[k] {
				order = append(order, k)
			}
			inDocs[k] = true
		}
	}

	data, err := os.ReadFile(contractFile)
	if err != nil {
		t.Fatal(err)
	}
	var table contractTable
	if err := yaml.UnmarshalStrict(data, &table); err != nil {
		t.Fatalf("%s: %v", contractFile, err)
	}
	catalogue := map[string]conformance.SpecInfo{}
	for _, s := range conformance.Catalogue() {
		catalogue[s.ID] = s
	}

	inTable := map[contractKey]bool{}
	used := map[string]bool{}
	var covered, gaps, abouts, musts int
	var shouldCandidates []string
	agents := newAgentIndex(t)
	if err := checkKusciaCommit(table); err != nil {
		t.Errorf("%s: %v", contractFile, err)
	}
	for i, e := range table.Promises {
		at := fmt.Sprintf("%s: promise #%d (%s: %q)", contractFile, i+1, e.Where, e.Sentence)
		k := contractKey{e.Where, e.Sentence}
		if inTable[k] {
			t.Errorf("%s: duplicate entry; keep one", at)
			continue
		}
		inTable[k] = true
		switch {
		case !wheres[e.Where]:
			t.Errorf("%s: stale entry: where %q is none of the contract's docs (%s, or an interface or method of %v)", at, e.Where, contractPackageWhere, contractInterfaces)
		case !inDocs[k]:
			t.Errorf("%s: stale entry: the sentence is no longer in the doc of %s", at, e.Where)
		}
		hasSpecs, hasAbout := e.Specs != nil, e.About != ""
		switch {
		case e.Gap && hasAbout:
			t.Errorf("%s: a gap is a provider promise no spec checks; it has no about reason", at)
		case e.Gap:
			t.Errorf("%s: no spec checks this promise (gap: true): %s; add a spec that fails when a provider breaks it, list it under specs and drop gap, or reword the doc", at, e.Note)
		case hasSpecs && hasAbout:
			t.Errorf("%s: has both specs and about; a sentence is either a provider promise (specs) or not (about)", at)
		case !hasSpecs && !hasAbout:
			t.Errorf("%s: has neither specs nor about", at)
		case hasSpecs && len(e.Specs) == 0:
			t.Errorf("%s: empty specs list; name the specs that check the promise, or mark it gap: true", at)
		}
		if e.Gap && e.Note == "" {
			t.Errorf("%s: a gap needs a note saying what no spec checks", at)
		}
		must := false
		for _, id := range e.Specs {
			must = must || catalogue[id].Level == conformance.Must
		}
		if hasAbout && (len(e.Agent) > 0 || e.NoKusciaCaller != "") {
			t.Errorf("%s: promises nothing (about) but names agent code or no_kuscia_caller; an agent depends on promises only", at)
		}
		for _, err := range agents.checkEntry(e, must) {
			t.Errorf("%s: %v", at, err)
		}
		if must && e.NoKusciaCaller != "" {
			shouldCandidates = append(shouldCandidates, fmt.Sprintf("%s %v: %q", e.Where, e.Specs, e.Sentence))
		}
		checkE2E(t, at, e, catalogue, agents)
		if must {
			musts++
		}
		seen := map[string]bool{}
		for _, id := range e.Specs {
			s, ok := catalogue[id]
			switch {
			case !ok:
				t.Errorf("%s: spec %s is not in conformance.Catalogue()", at, id)
			case s.Benchmark:
				t.Errorf("%s: spec %s is a benchmark: it measures, it checks no promise", at, id)
			case seen[id]:
				t.Errorf("%s: lists spec %s twice", at, id)
			}
			seen[id] = true
			used[id] = true
		}
		switch {
		case e.Gap:
			gaps++
		case hasSpecs:
			covered++
		case hasAbout:
			abouts++
		}
	}

	var missing []contractKey
	for _, k := range order {
		if !inTable[k] {
			missing = append(missing, k)
			t.Errorf("%s: sentence of the doc of %s has no entry: %q", contractFile, k.where, k.sentence)
		}
	}

	if t.Failed() {
		t.Logf(`to fix %s: give every sentence of the kri contract docs (exactly as TestContractCoverage splits it,
whitespace collapsed) one entry {where, sentence} with either specs (the non-benchmark conformance specs that fail
when a provider breaks the promise, and for a MUST spec the agent code that depends on it) or about (why the sentence
promises nothing about the provider); a promise no spec checks is gap: true with a note until a spec is added; delete
the entries of sentences no longer in the docs.
%s=1 go test ./conformance -run TestContractCoverage logs skeleton entries for the missing sentences`, contractFile, contractUpdateEnv)
	}
	if len(missing) > 0 && os.Getenv(contractUpdateEnv) == "1" {
		var b strings.Builder
		for _, k := range missing {
			fmt.Fprintf(&b, "  - where: %s\n    sentence: %s\n    specs: [] # TODO: the specs that check it (and agent: for a MUST), or about: <why it is no provider promise>\n",
				k.where, strconv.Quote(k.sentence))
		}
		t.Logf("skeleton entries for %s:\n%s", contractFile, b.String())
	}

	var unused []string
	for _, s := range conformance.Catalogue() {
		if !s.Benchmark && !used[s.ID] {
			unused = append(unused, s.ID)
		}
	}
	t.Logf("contract: %d sentences in the docs, %d entries: %d provider promises (%d covered by specs, %d of them checked by a MUST spec, %d of those citing kuscia's agent, %d gaps), %d sentences that promise nothing; %d distinct specs used",
		len(order), len(table.Promises), covered+gaps, covered, musts, musts-len(shouldCandidates), gaps, abouts, len(used))
	if len(shouldCandidates) > 0 {
		t.Logf("%d MUST promises that no code of kuscia's agent depends on (no_kuscia_caller), candidates for SHOULD:\n  %s",
			len(shouldCandidates), strings.Join(shouldCandidates, "\n  "))
	}
	// The other direction: a spec must check something the contract says
	// (the contract in kri comes first, then the spec).
	for _, id := range unused {
		t.Errorf("%s names no spec %s: every non-benchmark spec must check a promise of the kri docs; list it under the sentence it checks, or write that sentence into kri first", contractFile, id)
	}
}
