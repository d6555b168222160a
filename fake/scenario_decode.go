package fake

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"
)

// Decoding a scenario file, in the order ParseScenario goes:
//
//  1. scnParseFile parses the bytes into a yaml.v3 node tree (syntax
//     errors, one document, a mapping) and walks it without types: keys are
//     scalars, not null and not set twice (merges included), merges are
//     well formed, and aliases expand to at most maxScenarioNodes nodes.
//  2. decode converts the YAML to JSON as sigs.k8s.io/yaml does for a
//     scenarioDoc and decodes that with sigs.k8s.io/json, strictly and
//     case-sensitively, as the Kubernetes API machinery decodes objects.
//  3. A value that does not decode is found by decoding parts of the
//     document on their own (locate); an unknown field comes with its path.
//  4. scenario (scenario_validate.go) checks what the types cannot say.
//
// The node tree gives every reported field its line (scnFile.find).

// The schema of a scenario file.
type scenarioDoc struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Pods        []v1.Pod    `json:"pods"`
	Scripts     []scriptDoc `json:"scripts,omitempty"`
}

type scriptDoc struct {
	Pod       string        `json:"pod,omitempty"`
	Container *containerDoc `json:"container,omitempty"`
	Fail      *failDoc      `json:"fail,omitempty"`
}

type containerDoc struct {
	Name          string         `json:"name"`
	FailStarts    *failStartsDoc `json:"failStarts,omitempty"`
	ExitAfter     *exitAfterDoc  `json:"exitAfter,omitempty"`
	StartLatency  *string        `json:"startLatency,omitempty"`
	IgnoreSIGTERM *bool          `json:"ignoreSIGTERM,omitempty"`
}

type failStartsDoc struct {
	Times   *intstr.IntOrString `json:"times,omitempty"`
	Error   string              `json:"error,omitempty"`
	Message string              `json:"message,omitempty"`
}

type exitAfterDoc struct {
	After string `json:"after"`
	Code  *int   `json:"code,omitempty"`
}

type failDoc struct {
	Method  string              `json:"method"`
	Times   *intstr.IntOrString `json:"times,omitempty"`
	Message string              `json:"message,omitempty"`
}

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
// present. The walk of the tree has bounded the work an alias can make.
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
			key, value := scnLookup(n, e.key, false, 0)
			if key == nil {
				key, value = scnLookup(n, e.key, true, 0)
			}
			if key == nil {
				return line, nil
			}
			n, line = value, key.Line
		}
	}
	return line, scnDeref(n)
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

// scnLookup finds key k of mapping n, explicit keys before merged ones; if
// converted, a key matches k also if it stands for k in JSON.
func scnLookup(n *yamlv3.Node, k string, converted bool, depth int) (key, value *yamlv3.Node) {
	if n == nil || n.Kind != yamlv3.MappingNode || depth > 10 {
		return nil, nil
	}
	var merged []*yamlv3.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch kn := scnDeref(n.Content[i]); {
		case kn == nil:
		case kn.Tag == "!!merge":
			if m := scnDeref(n.Content[i+1]); m != nil && m.Kind == yamlv3.SequenceNode {
				merged = append(merged, m.Content...)
			} else {
				merged = append(merged, m)
			}
		case kn.Kind == yamlv3.ScalarNode && (kn.Value == k || converted && scnJSONKey(kn) == k):
			return kn, n.Content[i+1]
		}
	}
	for _, m := range merged {
		if key, value := scnLookup(scnDeref(m), k, converted, depth+1); key != nil {
			return key, value
		}
	}
	return nil, nil
}

// scnJSONKey returns the JSON key that sigs.k8s.io/yaml makes of key node
// kn, a plain scalar read by YAML 1.1 rules (yes is "true", 0x10 is "16").
func scnJSONKey(kn *yamlv3.Node) string {
	var m map[string]any
	if kn.Style != 0 || scnSafely(func() error { return sigsyaml.Unmarshal([]byte(kn.Value+": 0\n"), &m) }) != nil {
		return kn.Value
	}
	for k := range m {
		return k
	}
	return kn.Value
}

// scnToJSON converts a scenario to JSON as sigs.k8s.io/yaml does to decode it
// into a scenarioDoc: YAML 1.1 values (yes, 0x50), a number or boolean given
// for a string field made a string. sigs.k8s.io/yaml offers that conversion
// only inside Unmarshal, so a JSON option takes the converted document from
// the decoder Unmarshal made for it and hands Unmarshal an empty one to
// decode instead.
func scnToJSON(data []byte) ([]byte, error) {
	var out []byte
	take := func(d *json.Decoder) *json.Decoder {
		var raw json.RawMessage
		if d.Decode(&raw) == nil {
			out = raw
		}
		return json.NewDecoder(strings.NewReader("null"))
	}
	err := scnSafely(func() error { return sigsyaml.UnmarshalStrict(data, new(scenarioDoc), take) })
	if err == nil && out == nil {
		err = errors.New("no JSON from the YAML decoder")
	}
	return out, err
}

// decode decodes the scenario in data into doc (steps 2 and 3 above).
func (f *scnFile) decode(data []byte, doc *scenarioDoc) error {
	j, err := scnToJSON(data)
	if err != nil {
		line, msg := scnSplitLine(err.Error())
		return &ScenarioError{File: f.name, Line: line, Msg: msg, Err: err}
	}
	var unknown []error
	err = scnSafely(func() error {
		var err error
		unknown, err = sigsjson.UnmarshalStrict(j, doc, sigsjson.DisallowUnknownFields)
		return err
	})
	if err == nil && len(unknown) == 0 {
		return nil
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber() // so that numbers encode again as they were
	if treeErr := dec.Decode(&tree); treeErr != nil {
		return &ScenarioError{File: f.name, Msg: "internal decoder error: " + treeErr.Error(), Err: treeErr}
	}
	if err != nil {
		if path, valueErr := f.locate(tree, nil); valueErr != nil {
			return f.valueError(path, valueErr)
		}
		return &ScenarioError{File: f.name, Msg: strings.TrimPrefix(err.Error(), "json: "), Err: err}
	}
	return f.unknownField(tree, unknown)
}

// scnDecodeAt decodes a document that holds only value v, at path, into a
// scenarioDoc, as decode does.
func scnDecodeAt(path scnPath, v any) error {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].isIdx {
			v = []any{v} // the index does not matter to the decoder
		} else {
			v = map[string]any{path[i].key: v}
		}
	}
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return scnSafely(func() error { return sigsjson.UnmarshalCaseSensitivePreserveInts(j, new(scenarioDoc)) })
}

// locate finds the value at fault in v, at path, which does not decode on
// its own: the value itself if it does not decode even emptied, else the
// first of its items in file order that does not decode on its own,
// searched in turn. It returns that value's path and error, or a nil error
// if v decodes.
func (f *scnFile) locate(v any, path scnPath) (scnPath, error) {
	switch v := v.(type) {
	case map[string]any:
		if err := scnDecodeAt(path, map[string]any{}); err != nil {
			return path, err
		}
		keys := slices.Sorted(maps.Keys(v))
		slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(f.line(path.key(a)), f.line(path.key(b))) })
		for _, k := range keys {
			if scnDecodeAt(path.key(k), v[k]) != nil {
				return f.locate(v[k], path.key(k))
			}
		}
	case []any:
		if err := scnDecodeAt(path, []any{}); err != nil {
			return path, err
		}
		for i, item := range v {
			if scnDecodeAt(path.idx(i), item) != nil {
				return f.locate(item, path.idx(i))
			}
		}
	}
	return path, scnDecodeAt(path, v)
}

// valueError reports the value at path that failed to decode with err.
func (f *scnFile) valueError(path scnPath, err error) error {
	line, n := f.find(path)
	t := scnTypeAt(path)
	var typeErr *json.UnmarshalTypeError // from inside an Unmarshaler
	var base64Err base64.CorruptInputError
	if t != nil && (errors.As(err, &typeErr) || !scnIsUnmarshaler(t) && !errors.As(err, &base64Err)) {
		return f.failAt(line, path, err, "%s", scnExpected(t, n))
	}
	cause := err
	for errors.Unwrap(cause) != nil {
		cause = errors.Unwrap(cause)
	}
	return f.failAt(line, path, err, "invalid value %s: %s", scnDescribeNode(n), strings.TrimPrefix(cause.Error(), "json: "))
}

// unknownField reports the first, in file order, of the unknown fields the
// decoder found in the document tree.
func (f *scnFile) unknownField(tree any, unknown []error) error {
	var first *ScenarioError
	for _, err := range unknown {
		var fe sigsjson.FieldError
		if !errors.As(err, &fe) {
			continue
		}
		se := &ScenarioError{File: f.name, Msg: err.Error(), Err: err}
		if path, ok := scnResolve(tree, "."+fe.FieldPath(), nil); ok && len(path) > 0 {
			k := path[len(path)-1].key
			if _, parent := f.find(path[:len(path)-1]); parent != nil {
				if kn, _ := scnLookup(parent, k, true, 0); kn != nil {
					k, path[len(path)-1].key = kn.Value, kn.Value // as the file writes it
				}
			}
			se = f.fail(path, err, "unknown field %q%s", k, scnFieldHint(k, scnTypeAt(path[:len(path)-1])))
		}
		if first == nil || se.Line > 0 && (first.Line == 0 || se.Line < first.Line) {
			first = se
		}
	}
	if first == nil {
		return &ScenarioError{File: f.name, Msg: errors.Join(unknown...).Error(), Err: errors.Join(unknown...)}
	}
	return first
}

// scnResolve turns a path as sigs.k8s.io/json writes it (".a.b[0].c", keys
// not quoted) into the path of a value of the document tree v.
func scnResolve(v any, s string, path scnPath) (scnPath, bool) {
	if s == "" {
		return path, true
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			rest, ok := strings.CutPrefix(s, "."+k)
			if ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
				if p, ok := scnResolve(v[k], rest, path.key(k)); ok {
					return p, true
				}
			}
		}
	case []any:
		if i, rest, ok := strings.Cut(strings.TrimPrefix(s, "["), "]"); ok && s[0] == '[' {
			if n, err := strconv.Atoi(i); err == nil && n >= 0 && n < len(v) {
				return scnResolve(v[n], rest, path.idx(n))
			}
		}
	}
	return nil, false
}

// scnTypeAt returns the Go type, pointers removed, that the value at path
// decodes into; nil if there is none.
func scnTypeAt(path scnPath) reflect.Type {
	t := reflect.TypeFor[scenarioDoc]()
	for _, e := range path {
		switch k := t.Kind(); {
		case k == reflect.Struct && !e.isIdx:
			if t = scnFields(t)[e.key]; t == nil {
				return nil
			}
		case k == reflect.Map && !e.isIdx, k == reflect.Slice && e.isIdx:
			t = t.Elem()
		default:
			return nil
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	return t
}

// scnFields returns the JSON fields of struct type t by name, the fields of
// embedded structs without a name flattened beneath t's own, as
// encoding/json sees them (the types of a scenario have no conflicting
// names, so the finer rules do not matter).
func scnFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var embedded []reflect.Type
	for i := range t.NumField() {
		field := t.Field(i)
		name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		ft := field.Type
		if ft.Kind() == reflect.Pointer && field.Anonymous {
			ft = ft.Elem()
		}
		switch {
		case name == "-":
		case field.Anonymous && name == "" && ft.Kind() == reflect.Struct:
			embedded = append(embedded, ft)
		case field.IsExported():
			out[cmp.Or(name, field.Name)] = field.Type
		}
	}
	for _, et := range embedded {
		for name, ft := range scnFields(et) {
			if _, ok := out[name]; !ok {
				out[name] = ft
			}
		}
	}
	return out
}

// scnFieldHint suggests the field meant by an unknown one of struct type t.
func scnFieldHint(unknown string, t reflect.Type) string {
	if t == nil || t.Kind() != reflect.Struct {
		return ""
	}
	fields := scnFields(t)
	for name := range fields {
		if strings.EqualFold(name, unknown) {
			return fmt.Sprintf(" (did you mean %q?)", name)
		}
	}
	if len(fields) <= 8 {
		return " (want one of " + strings.Join(slices.Sorted(maps.Keys(fields)), ", ") + ")"
	}
	return ""
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

var (
	scnJSONUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	scnTextUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	scnQuantityType    = reflect.TypeFor[interface{ AsApproximateFloat64() float64 }]()
	scnIntOrStringType = reflect.TypeFor[intstr.IntOrString]()
)

func scnIsUnmarshaler(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(scnJSONUnmarshaler) || pt.Implements(scnJSONUnmarshaler) ||
		t.Implements(scnTextUnmarshaler) || pt.Implements(scnTextUnmarshaler)
}

// scnExpected says that a value of type t was wanted instead of node n.
func scnExpected(t reflect.Type, n *yamlv3.Node) string {
	msg := fmt.Sprintf("expected %s, got %s", scnDescribeType(t), scnDescribeNode(n))
	if t.Kind() == reflect.String && n != nil && n.Kind == yamlv3.ScalarNode && n.Style == 0 && n.Value != "" {
		msg += " (quote it to make it a string)"
	}
	return msg
}

// scnDescribeType names what a value of type t is written as, for messages.
func scnDescribeType(t reflect.Type) string {
	switch {
	case t == scnIntOrStringType:
		return "an integer or a string"
	case t.Implements(scnQuantityType) || reflect.PointerTo(t).Implements(scnQuantityType):
		return "a quantity such as 100m or 1Gi"
	case scnIsUnmarshaler(t):
		return "a value of type " + t.String()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "base64 data"
		}
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	}
	return "a value of type " + t.String()
}
