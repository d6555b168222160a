package fake

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// The YAML side of a scenario file: its node tree, checked without types
// (step 1 of scenario_decode.go), and the lines and nodes of field paths.

// scnFile is a scenario file being parsed: its name, its node tree and the
// state of the walk of the tree.
type scnFile struct {
	name   string
	root   *yamlv3.Node // the root mapping
	budget int          // nodes the walk may still visit
	// done remembers the anchored nodes already walked and how many nodes
	// they hold, so that an alias is charged to the budget but not walked
	// again.
	done map[*yamlv3.Node]int
}

// scnSafely runs a third-party decoder, turning a panic into an error.
func scnSafely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal decoder error: %v", r)
		}
	}()
	return f()
}

func (f *scnFile) fail(path scnPath, err error, format string, args ...any) *ScenarioError {
	return f.failAt(f.line(path), path, err, format, args...)
}

func (f *scnFile) failAt(line int, path scnPath, err error, format string, args ...any) *ScenarioError {
	return &ScenarioError{File: f.name, Line: line, Field: path.String(), Msg: fmt.Sprintf(format, args...), Err: err}
}

var scnLineRE = regexp.MustCompile(`line (\d+): `)

// scnSplitLine finds the first "line N: " in a YAML library's error text and
// returns N and the text without it and without the "yaml: " prefixes.
func scnSplitLine(msg string) (int, string) {
	line := 0
	if m := scnLineRE.FindStringSubmatchIndex(msg); m != nil {
		if n, err := strconv.Atoi(msg[m[2]:m[3]]); err == nil && n > 0 {
			line = n
			msg = msg[:m[0]] + msg[m[1]:]
		}
	}
	return line, strings.ReplaceAll(msg, "yaml: ", "")
}

var scnUnknownAnchorRE = regexp.MustCompile(`unknown anchor '(.*)' referenced`)

// scnSyntaxError reports an error of the YAML parser. The parser gives no
// line for a problem on the first line (its lines count from 0 there, and
// 0 means none) nor for an alias of an unknown anchor: the first is line 1,
// the second the line of the first "*name" in the file.
func scnSyntaxError(file string, data []byte, err error) error {
	line, msg := scnSplitLine(err.Error())
	if line == 0 {
		line = 1
		if m := scnUnknownAnchorRE.FindStringSubmatch(msg); m != nil {
			line = scnAliasLine(data, m[1])
		}
	}
	return &ScenarioError{File: file, Line: line, Msg: "invalid YAML: " + msg, Err: err}
}

// scnAliasLine returns the line of the first alias *name in data, 0 if there
// is none.
func scnAliasLine(data []byte, name string) int {
	alias := []byte("*" + name)
	for off := 0; ; {
		i := bytes.Index(data[off:], alias)
		if i < 0 {
			return 0
		}
		end := off + i + len(alias)
		if end == len(data) || bytes.IndexByte([]byte(" \t\r\n,]}"), data[end]) >= 0 {
			return 1 + bytes.Count(data[:off+i], []byte("\n"))
		}
		off = end
	}
}

const scnEmpty = "empty scenario: want a mapping with name, description, pods and scripts"

// scnParseFile parses data into a node tree and walks it (step 1 above). It
// rejects an empty file and a file of more than one document.
func scnParseFile(name string, data []byte) (*scnFile, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var doc, next yamlv3.Node
	err := scnSafely(func() error { return dec.Decode(&doc) })
	if errors.Is(err, io.EOF) {
		return nil, &ScenarioError{File: name, Msg: scnEmpty}
	}
	if err != nil {
		return nil, scnSyntaxError(name, data, err)
	}
	switch err := scnSafely(func() error { return dec.Decode(&next) }); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, scnSyntaxError(name, data, err)
	default:
		return nil, &ScenarioError{File: name, Line: next.Line, Msg: "more than one YAML document: a scenario file holds one"}
	}
	root := &doc
	if root.Kind == yamlv3.DocumentNode {
		if len(root.Content) != 1 {
			return nil, &ScenarioError{File: name, Line: root.Line, Msg: scnEmpty}
		}
		root = root.Content[0]
	}
	if root.Kind == yamlv3.AliasNode && root.Alias != nil {
		root = root.Alias
	}
	if root.Kind != yamlv3.MappingNode {
		if scnIsNull(root) {
			return nil, &ScenarioError{File: name, Line: root.Line, Msg: scnEmpty}
		}
		return nil, &ScenarioError{File: name, Line: root.Line, Msg: "a scenario is a mapping with name, description, pods and scripts, not " + scnDescribeNode(root)}
	}
	f := &scnFile{name: name, root: root, budget: maxScenarioNodes, done: map[*yamlv3.Node]int{}}
	if err := f.walk(root, nil); err != nil {
		return nil, err
	}
	return f, nil
}

// deref follows an alias, charging the visit to the budget.
func (f *scnFile) deref(n *yamlv3.Node) (*yamlv3.Node, error) {
	alias := n
	for i := 0; n.Kind == yamlv3.AliasNode; i++ {
		if n.Alias == nil || i > 100 {
			return nil, &ScenarioError{File: f.name, Line: n.Line, Msg: "bad alias"}
		}
		n = n.Alias
	}
	if f.budget--; f.budget < 0 {
		return nil, f.tooComplex(alias)
	}
	return n, nil
}

// tooComplex reports the budget exhausted at node n (an alias, mostly).
func (f *scnFile) tooComplex(n *yamlv3.Node) error {
	return &ScenarioError{File: f.name, Line: n.Line, Msg: fmt.Sprintf("too complex: more than %d YAML nodes once aliases are expanded", maxScenarioNodes)}
}

// cycle reports an alias met while the anchored node it names is still
// being walked: the node holds an alias of itself.
func (f *scnFile) cycle(alias *yamlv3.Node, path scnPath) error {
	return f.failAt(alias.Line, path, nil, "alias *%s stands for a node that holds it: its expansion has no end", alias.Value)
}

// walk checks node n, at path, and what it holds. The walk grows path in
// place (path.key would copy it at every level) and reads it only to report
// a problem, which ends the walk.
func (f *scnFile) walk(n *yamlv3.Node, path scnPath) error {
	alias := n
	n, err := f.deref(n)
	if err != nil {
		return err
	}
	if size, ok := f.done[n]; ok {
		if size < 0 {
			return f.cycle(alias, path)
		}
		if f.budget -= size; f.budget < 0 {
			return f.tooComplex(alias)
		}
		return nil
	}
	before := f.budget
	if n.Anchor != "" {
		f.done[n] = -1
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		err = f.mapping(n, path, map[string]int{}, 0)
	case yamlv3.SequenceNode:
		for i, item := range n.Content {
			if err = f.walk(item, append(path, scnPathElem{index: i, isIdx: true})); err != nil {
				break
			}
		}
	}
	if err == nil && n.Anchor != "" {
		f.done[n] = before - f.budget
	}
	return err
}

// mapping walks the keys and values of mapping n, merges (<<) included,
// rejecting keys that are not scalars and keys set twice: a merged key may
// not be set again. seen maps the keys met to their lines.
func (f *scnFile) mapping(n *yamlv3.Node, path scnPath, seen map[string]int, depth int) error {
	if depth > 10 {
		return f.failAt(n.Line, path, nil, "merges (<<) nested too deep")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, err := f.deref(n.Content[i])
		if err != nil {
			return err
		}
		first, dup := seen[key.Value]
		switch {
		case key.Kind != yamlv3.ScalarNode:
			return f.failAt(key.Line, path, nil, "a key must be a scalar, not %s", scnDescribeNode(key))
		case scnIsNull(key):
			return f.failAt(key.Line, path, nil, "a key must not be null")
		case key.Tag == "!!merge":
			err = f.merge(n.Content[i+1], path, seen, depth)
		case dup:
			return f.failAt(key.Line, path.key(key.Value), nil, "duplicate field %q (first at line %d)", key.Value, first)
		default:
			seen[key.Value] = key.Line
			err = f.walk(n.Content[i+1], append(path, scnPathElem{key: key.Value}))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// merge walks the mappings merged into a mapping by a "<<" key.
func (f *scnFile) merge(n *yamlv3.Node, path scnPath, seen map[string]int, depth int) error {
	items, list := []*yamlv3.Node{n}, false
	if m := scnDeref(n); m != nil && m.Kind == yamlv3.SequenceNode {
		if _, err := f.deref(n); err != nil {
			return err
		}
		items, list = m.Content, true
	}
	for _, item := range items {
		alias := item
		item, err := f.deref(item)
		switch {
		case err != nil:
			return err
		case f.done[item] < 0:
			return f.cycle(alias, path)
		case item.Kind != yamlv3.MappingNode && list:
			return f.failAt(item.Line, path, nil, "a merge (<<) takes a mapping or a list of mappings, not a list holding %s", scnDescribeNode(item))
		case item.Kind != yamlv3.MappingNode:
			return f.failAt(item.Line, path, nil, "a merge (<<) takes a mapping or a list of mappings, not %s", scnDescribeNode(item))
		}
		if err := f.mapping(item, path, seen, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// line returns the line of the field at path; see find.
func (f *scnFile) line(path scnPath) int {
	line, _ := f.find(path)
	return line
}

// find returns the node of the field at path and its line: the line of its
// key in a mapping, of the item in a list. If the field is absent, the node
// is nil and the line is that of the nearest enclosing field that is
// present. A key of the path matches the key of the file it stands for in
// JSON (see scnJSONKey). The walk of the tree has bounded the work an alias
// can make.
func (f *scnFile) find(path scnPath) (int, *yamlv3.Node) {
	n, line := f.root, f.root.Line
	for _, e := range path {
		switch n = scnDeref(n); {
		case n == nil:
			return line, nil
		case e.isIdx:
			if n.Kind != yamlv3.SequenceNode || e.index >= len(n.Content) {
				return line, nil
			}
			n = n.Content[e.index]
			line = n.Line
		default:
			key, value := scnLookup(n, e.key)
			if key == nil {
				return line, nil
			}
			n, line = value, key.Line
		}
	}
	return line, scnDeref(n)
}

// keyLines returns the lines of the keys of the mapping at path by the
// names they have in JSON.
func (f *scnFile) keyLines(path scnPath) map[string]int {
	lines := map[string]int{}
	_, n := f.find(path)
	for kn := range scnKeys(n, 0) {
		if k := scnJSONKey(kn); lines[k] == 0 {
			lines[k] = kn.Line
		}
	}
	return lines
}

// scnDeref follows an alias; nil if it leads nowhere.
func scnDeref(n *yamlv3.Node) *yamlv3.Node {
	for i := 0; n != nil && n.Kind == yamlv3.AliasNode; i++ {
		if i > 100 {
			return nil
		}
		n = n.Alias
	}
	return n
}

// scnLookup finds key k of mapping n: a key written k, else one that stands
// for k in JSON.
func scnLookup(n *yamlv3.Node, k string) (key, value *yamlv3.Node) {
	for kn, v := range scnKeys(n, 0) {
		if kn.Value == k {
			return kn, v
		}
	}
	for kn, v := range scnKeys(n, 0) {
		if scnJSONKey(kn) == k {
			return kn, v
		}
	}
	return nil, nil
}

// scnKeys yields the scalar keys of mapping n and their values, its own keys
// before merged ones.
func scnKeys(n *yamlv3.Node, depth int) iter.Seq2[*yamlv3.Node, *yamlv3.Node] {
	return func(yield func(key, value *yamlv3.Node) bool) {
		if n == nil || n.Kind != yamlv3.MappingNode || depth > 10 {
			return
		}
		var merged []*yamlv3.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch kn := scnDeref(n.Content[i]); {
			case kn == nil || kn.Kind != yamlv3.ScalarNode:
			case kn.Tag == "!!merge":
				if m := scnDeref(n.Content[i+1]); m != nil && m.Kind == yamlv3.SequenceNode {
					merged = append(merged, m.Content...)
				} else {
					merged = append(merged, m)
				}
			case !yield(kn, n.Content[i+1]):
				return
			}
		}
		for _, m := range merged {
			for kn, v := range scnKeys(scnDeref(m), depth+1) {
				if !yield(kn, v) {
					return
				}
			}
		}
	}
}

// scnMaybeNotString matches the plain keys that YAML 1.1 may read as
// something else than a string: numbers, booleans, null.
var scnMaybeNotString = regexp.MustCompile(`^([-+.0-9~]|(?i:y|yes|n|no|on|off|true|false|null)$)`)

// scnJSONKey returns the JSON key that sigs.k8s.io/yaml makes of key node
// kn: its text, unless YAML 1.1 reads it as something else (yes is "true",
// 0x10 is "16").
func scnJSONKey(kn *yamlv3.Node) string {
	var m map[string]any
	if kn.Style != 0 || !scnMaybeNotString.MatchString(kn.Value) ||
		scnSafely(func() error { return sigsyaml.Unmarshal([]byte(kn.Value+": 0\n"), &m) }) != nil {
		return kn.Value
	}
	for k := range m {
		return k
	}
	return kn.Value
}

// scnPath is a field path: keys and list indices.
type scnPath []scnPathElem

type scnPathElem struct {
	key   string // a mapping key, unless isIdx
	index int    // a list index, if isIdx
	isIdx bool
}

var scnPlainKeyRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func (p scnPath) String() string {
	var b strings.Builder
	for _, e := range p {
		switch {
		case e.isIdx:
			b.WriteString("[" + strconv.Itoa(e.index) + "]")
		case scnPlainKeyRE.MatchString(e.key):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.key)
		default:
			b.WriteString("[" + strconv.Quote(e.key) + "]")
		}
	}
	return b.String()
}

// key returns a copy of p extended by a key; p itself is never changed.
func (p scnPath) key(k string) scnPath {
	return append(slices.Clip(p), scnPathElem{key: k})
}

func (p scnPath) idx(i int) scnPath {
	return append(slices.Clip(p), scnPathElem{index: i, isIdx: true})
}

func scnIsNull(n *yamlv3.Node) bool {
	return n.Kind == yamlv3.ScalarNode && n.Tag == "!!null"
}

// scnDescribeNode names what a node is, for messages.
func scnDescribeNode(n *yamlv3.Node) string {
	if n == nil {
		return "a value"
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		return "a mapping"
	case yamlv3.SequenceNode:
		return "a list"
	case yamlv3.ScalarNode:
		v := []rune(n.Value)
		if len(v) > 40 {
			return strconv.Quote(string(v[:40]) + "...")
		}
		return strconv.Quote(n.Value)
	}
	return "an alias"
}
