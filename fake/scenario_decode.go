package fake

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"
)

// Decoding a scenario file, in the order ParseScenario goes:
//
//  1. scnParseFile (scenario_yaml.go) parses the bytes into a yaml.v3 node
//     tree (syntax errors, one document, a mapping) and walks it without
//     types: keys are scalars, not null and not set twice (merges
//     included), merges are well formed, and aliases expand to at most
//     maxScenarioNodes nodes.
//  2. decode converts the YAML to JSON as sigs.k8s.io/yaml does for a
//     scenarioDoc and decodes that with sigs.k8s.io/json, strictly and
//     case-sensitively, as the Kubernetes API machinery decodes objects.
//  3. If that fails, locate finds the first value in file order that is of
//     the wrong type, bad or under an unknown key, by decoding parts of the
//     document on their own.
//  4. scenario (scenario_validate.go) checks what the types cannot say.
//
// The node tree gives every reported field its line (scnFile.find).

// The schema of a scenario file.
type scenarioDoc struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// CrashLoopBackOff turns the provider's crash-loop back-off on.
	CrashLoopBackOff bool `json:"crashLoopBackOff,omitempty"`
	// KubeletSemantics asks for a provider made WithKubeletSemantics.
	KubeletSemantics bool        `json:"kubeletSemantics,omitempty"`
	Pods             []v1.Pod    `json:"pods"`
	Scripts          []scriptDoc `json:"scripts,omitempty"`
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
	ExitRuns      []exitRunDoc   `json:"exitRuns,omitempty"`
	StartLatency  *string        `json:"startLatency,omitempty"`
	IgnoreSIGTERM *bool          `json:"ignoreSIGTERM,omitempty"`
	PostStartHook *exitAfterDoc  `json:"postStartHook,omitempty"`
	PreStopHook   *string        `json:"preStopHook,omitempty"`
	// Probes scripts probe results by kind: pass or fail (ContainerScript.FailProbe).
	Probes map[string]string `json:"probes,omitempty"`
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

type exitRunDoc struct {
	Times *intstr.IntOrString `json:"times,omitempty"`
	After string              `json:"after"`
	Code  *int                `json:"code,omitempty"`
}

type failDoc struct {
	Method  string              `json:"method"`
	Times   *intstr.IntOrString `json:"times,omitempty"`
	Message string              `json:"message,omitempty"`
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
	if _, err = scnDecode(j, doc); err == nil {
		return nil
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber() // so that numbers encode again as they were
	if treeErr := dec.Decode(&tree); treeErr != nil {
		return &ScenarioError{File: f.name, Msg: "internal decoder error: " + treeErr.Error(), Err: treeErr}
	}
	switch path, unknown, fault := f.locate(tree, nil); {
	case fault == nil || unknown && len(path) == 0:
		return &ScenarioError{File: f.name, Msg: strings.TrimPrefix(err.Error(), "json: "), Err: err}
	case unknown:
		return f.unknownField(path, fault)
	default:
		return f.valueError(path, fault)
	}
}

// scnDecode decodes JSON document j into doc with sigs.k8s.io/json, strictly
// and case-sensitively; unknown tells a document that decodes but holds an
// unknown field.
func scnDecode(j []byte, doc *scenarioDoc) (unknown bool, err error) {
	err = scnSafely(func() error {
		fields, err := sigsjson.UnmarshalStrict(j, doc, sigsjson.DisallowUnknownFields)
		if err == nil && len(fields) > 0 {
			unknown, err = true, errors.Join(fields...)
		}
		return err
	})
	return unknown, err
}

// scnDecodeAt decodes, as decode does, a document that holds only value v,
// at path.
func scnDecodeAt(path scnPath, v any) (unknown bool, err error) {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].isIdx {
			v = []any{v} // the index does not matter to the decoder
		} else {
			v = map[string]any{path[i].key: v}
		}
	}
	j, err := json.Marshal(v)
	if err != nil {
		return false, err
	}
	return scnDecode(j, new(scenarioDoc))
}

// locate finds the first value, in file order, that is at fault in v (at
// path), a value that does not decode on its own: v itself if it does not
// decode even emptied (v is of the wrong type, or its key is unknown), else
// the first of its items that does not decode on its own, searched in turn.
// It returns that value's path and its error, nil if v decodes.
func (f *scnFile) locate(v any, path scnPath) (scnPath, bool, error) {
	var items []scnPath
	var empty any = v
	switch v := v.(type) {
	case map[string]any:
		lines := f.keyLines(path)
		keys := slices.Sorted(maps.Keys(v))
		slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(lines[a], lines[b]) })
		for _, k := range keys {
			items = append(items, path.key(k))
		}
		empty = map[string]any{}
	case []any:
		for i := range v {
			items = append(items, path.idx(i))
		}
		empty = []any{}
	}
	if unknown, err := scnDecodeAt(path, empty); err != nil {
		return path, unknown, err
	}
	for _, item := range items {
		value := scnValueAt(v, item[len(item)-1])
		if _, err := scnDecodeAt(item, value); err != nil {
			return f.locate(value, item)
		}
	}
	unknown, err := scnDecodeAt(path, v)
	return path, unknown, err
}

// scnValueAt returns the item of v at e.
func scnValueAt(v any, e scnPathElem) any {
	if e.isIdx {
		return v.([]any)[e.index]
	}
	return v.(map[string]any)[e.key]
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

// unknownField reports the unknown field at path, named as the file writes
// it.
func (f *scnFile) unknownField(path scnPath, err error) error {
	parent, k := path[:len(path)-1], path[len(path)-1].key
	if _, n := f.find(parent); n != nil {
		if kn, _ := scnLookup(n, k); kn != nil {
			k, path = kn.Value, parent.key(kn.Value)
		}
	}
	return f.fail(path, err, "unknown field %q%s", k, scnFieldHint(k, scnTypeAt(parent)))
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

var (
	scnJSONUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	scnTextUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
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
