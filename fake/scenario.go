package fake

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	pkgcontainer "k8s.io/kubernetes/pkg/kubelet/container"
	sigsyaml "sigs.k8s.io/yaml"
)

// Reasons of failed container starts that the kubelet's image manager and
// container runtime report, for scripting start failures
// (ContainerScript.FailStarts) and for naming them in scenario files. Their
// texts are the kubelet's, so a status shows the reason a real node would.
// The runtime's own reasons are the sentinels of
// k8s.io/kubernetes/pkg/kubelet/container, e.g. pkgcontainer.ErrRunContainer.
var (
	ErrImagePull             = errors.New("ErrImagePull")
	ErrImagePullBackOff      = errors.New("ImagePullBackOff")
	ErrInvalidImageName      = errors.New("InvalidImageName")
	ErrImageNeverPull        = errors.New("ErrImageNeverPull")
	ErrImageInspect          = errors.New("ImageInspectError")
	ErrCreateContainerConfig = errors.New("CreateContainerConfigError")
	ErrCreateContainer       = errors.New("CreateContainerError")
	ErrPreStartHook          = errors.New("PreStartHookError")
	ErrPostStartHook         = errors.New("PostStartHookError")
)

// scenarioStartErrors maps the names a scenario's failStarts.error may use
// to the errors they stand for: each name is the error's text, the reason a
// kubelet shows.
var scenarioStartErrors = func() map[string]error {
	m := map[string]error{}
	for _, err := range []error{
		pkgcontainer.ErrRunContainer,
		pkgcontainer.ErrCreatePodSandbox,
		pkgcontainer.ErrConfigPodSandbox,
		pkgcontainer.ErrCrashLoopBackOff,
		ErrImagePull, ErrImagePullBackOff, ErrInvalidImageName, ErrImageNeverPull, ErrImageInspect,
		ErrCreateContainerConfig, ErrCreateContainer, ErrPreStartHook, ErrPostStartHook,
	} {
		m[err.Error()] = err
	}
	return m
}()

// maxScenarioSize bounds the size of a scenario file.
const maxScenarioSize = 4 << 20

// maxScenarioNodes bounds the YAML nodes ParseScenario visits, aliases
// expanded, so that a small file full of aliases cannot make it work for
// long.
const maxScenarioNodes = 100000

// Scenario is a parsed scenario file: pods and the scripted behaviour of
// their containers and of the provider's methods. Apply installs the scripts
// on a PodProvider; Pods hands out the pods to sync. A Scenario never
// changes once parsed and is safe for concurrent use.
type Scenario struct {
	// Name and Description are the file's name and description fields.
	Name        string
	Description string

	pods    []*v1.Pod
	scripts []scenarioScript
}

// scenarioScript is one validated entry of a scenario's scripts.
type scenarioScript struct {
	index int    // position in the file, for Apply's errors
	pod   string // "namespace/name"; empty for a provider-wide fault

	container     string // empty for a method fault
	failStarts    *startFault
	exitAfter     *scriptedExit
	startLatency  *time.Duration
	ignoreSIGTERM bool

	method    Method
	times     int
	methodErr error
}

// Pods returns deep copies of the scenario's pods, in file order, with the
// namespace defaulted to "default".
func (s *Scenario) Pods() []*v1.Pod {
	out := make([]*v1.Pod, len(s.pods))
	for i, pod := range s.pods {
		out[i] = pod.DeepCopy()
	}
	return out
}

// Pod returns a deep copy of the scenario's pod with the given key
// ("namespace/name", or just the name for namespace "default").
func (s *Scenario) Pod(key string) (*v1.Pod, bool) {
	if !strings.Contains(key, "/") {
		key = "default/" + key
	}
	for _, pod := range s.pods {
		if podKey(pod.Namespace, pod.Name) == key {
			return pod.DeepCopy(), true
		}
	}
	return nil, false
}

// Apply installs the scenario's scripts on p through its public scripting
// API (PodProvider.Container, PodProvider.Pod and PodProvider.Fail), in file
// order. It does not sync the pods: hand Pods to SyncPod for that. Applying a
// scenario twice installs its scripts twice, so counted faults add up.
func (s *Scenario) Apply(p *PodProvider) error {
	if p == nil {
		return fmt.Errorf("fake: scenario %q: Apply: provider is nil", s.Name)
	}
	for _, sc := range s.scripts {
		if sc.container != "" {
			cs := p.Container(sc.pod, sc.container)
			if f := sc.failStarts; f != nil {
				cs.FailStarts(f.remaining, f.err, f.message)
			}
			if e := sc.exitAfter; e != nil {
				cs.ExitAfter(e.after, e.code)
			}
			if sc.startLatency != nil {
				cs.StartLatency(*sc.startLatency)
			}
			if sc.ignoreSIGTERM {
				cs.IgnoreSIGTERM()
			}
			continue
		}
		var err error
		if sc.pod == "" {
			err = p.Fail(sc.method, sc.times, sc.methodErr)
		} else {
			err = p.Pod(sc.pod).Fail(sc.method, sc.times, sc.methodErr)
		}
		if err != nil {
			return fmt.Errorf("fake: scenario %q: scripts[%d]: %w", s.Name, sc.index, err)
		}
	}
	return nil
}

// ScenarioError is the error LoadScenario and ParseScenario return for a
// scenario file that is not valid. Its text is "file:line: field: problem",
// e.g.
//
//	x.yaml:14: scripts[0].container.exitAfter.after: invalid duration "5x" (want a Go duration such as 500ms, 5s or 1m30s)
//
// Line is 0 when no line could be found, and the text is then
// "file: field: problem"; Field is empty for a problem of the whole file.
type ScenarioError struct {
	File  string // the name given to ParseScenario, the path given to LoadScenario
	Line  int    // 1-based
	Field string // e.g. pods[0].metadata.uid
	Msg   string
	Err   error // the underlying error, if any
}

func (e *ScenarioError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *ScenarioError) Unwrap() error { return e.Err }

// LoadScenario reads and parses the scenario file at path; see ParseScenario.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fake: load scenario: %w", err)
	}
	return ParseScenario(path, data)
}

// ParseScenario parses a scenario; name is the file name its errors give.
//
// A scenario is one YAML document:
//
//	name: image-pull-recovery          # required
//	description: ...                   # optional
//	pods:                              # required, at least one
//	- apiVersion: v1                   # optional; if set, v1 and Pod
//	  kind: Pod
//	  metadata: {name: web, uid: web-uid}   # name and uid required; namespace defaults to "default"
//	  spec: {...}                      # a v1.PodSpec with at least one container
//	scripts:                           # optional, applied in order
//	- pod: default/web                 # namespace/name, or name for namespace default
//	  container:
//	    name: app                      # required: a container or init container of the pod
//	    failStarts: {times: 2, error: ErrImagePull, message: "..."}
//	    exitAfter: {after: 5s, code: 3}
//	    startLatency: 2s
//	    ignoreSIGTERM: true
//	- pod: default/web                 # omit pod to script the method for every pod
//	  fail: {method: KillPod, times: 1, message: "..."}
//
// A script entry has either container (with at least one behaviour) or
// fail. Durations are Go durations (500ms, 5s, 1m30s), not negative. times
// is a count of at least 1, or -1 or "always" for every call (Always); it
// defaults to 1. failStarts.error names the reason of the failure and
// defaults to RunContainerError; the names are the texts of the kubelet's
// errors: RunContainerError, CreatePodSandboxError, ConfigPodSandboxError,
// CrashLoopBackOff (the pkgcontainer sentinels), ErrImagePull,
// ImagePullBackOff, InvalidImageName, ErrImageNeverPull, ImageInspectError,
// CreateContainerConfigError, CreateContainerError, PreStartHookError and
// PostStartHookError (this package's ErrImagePull ... ErrPostStartHook).
// exitAfter.code is 0 to 255 and defaults to 0. fail.method is one of
// SyncPod, KillPod, DeletePod, GetPodStatus (per pod or for every pod) and
// CleanupPods, GetPods (for every pod only); fail.message is the text of the
// error the call fails with (absent: the fake's own "injected ... error").
//
// Values are read as sigs.k8s.io/yaml reads them, by YAML 1.1 rules (yes is
// true, 0x50 is 80, a number given for a string is that string). Anchors,
// aliases and merges (<<) may be used, but a merged field may not be set
// again, as the strict decoder wants. A file holds at most 4 MiB and, aliases
// expanded, 100,000 YAML nodes.
//
// Decoding is strict: an unknown field (field names are case-sensitive), a
// duplicate field, a value of the wrong type, a bad value or a script naming
// a pod or container the file does not hold is a *ScenarioError naming the
// file, the line and the field path. Lines come from a parse of the same
// bytes into a YAML node tree, walked along the field path; for a problem
// whose field is absent from the file (a missing required field) the line is
// that of the nearest enclosing field that is present. Should the decoder
// (sigs.k8s.io/yaml) reject something the walk let through, its error is
// returned with the line it names, if any, and otherwise with no line
// ("file: problem"). Only the first problem found is reported.
// ParseScenario never panics.
func ParseScenario(name string, data []byte) (*Scenario, error) {
	if name == "" {
		name = "scenario"
	}
	if len(data) > maxScenarioSize {
		return nil, &ScenarioError{File: name, Msg: fmt.Sprintf("file too large (%d bytes; the limit is %d)", len(data), maxScenarioSize)}
	}
	root, err := scnParseTree(name, data)
	if err != nil {
		return nil, err
	}
	w := &scnWalker{file: name, budget: maxScenarioNodes}
	if err := w.walk(root, scnDocType, true, nil, root.Line); err != nil {
		return nil, err
	}
	var doc scenarioDoc
	v := &scnValidator{file: name, root: root, budget: maxScenarioNodes}
	if err := scnSafely(func() error { return sigsyaml.UnmarshalStrict(data, &doc) }); err != nil {
		return nil, v.decodeError(err)
	}
	return v.scenario(&doc)
}

// The schema of a scenario file, decoded by sigs.k8s.io/yaml.
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

var scnDocType = reflect.TypeFor[scenarioDoc]()

// scnSafely runs a third-party decoder, turning a panic into an error.
func scnSafely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal decoder error: %v", r)
		}
	}()
	return f()
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
	msg = strings.ReplaceAll(msg, "yaml: ", "")
	return line, msg
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

// scnParseTree parses data into a YAML node tree and returns the root
// mapping. It rejects an empty file and a file of more than one document.
func scnParseTree(file string, data []byte) (*yamlv3.Node, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var doc yamlv3.Node
	err := scnSafely(func() error { return dec.Decode(&doc) })
	if errors.Is(err, io.EOF) {
		return nil, &ScenarioError{File: file, Msg: "empty scenario: want a mapping with name, description, pods and scripts"}
	}
	if err != nil {
		return nil, scnSyntaxError(file, data, err)
	}
	var next yamlv3.Node
	switch err := scnSafely(func() error { return dec.Decode(&next) }); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, scnSyntaxError(file, data, err)
	default:
		return nil, &ScenarioError{File: file, Line: next.Line, Msg: "more than one YAML document: a scenario file holds one"}
	}
	root := &doc
	if root.Kind == yamlv3.DocumentNode {
		if len(root.Content) != 1 {
			return nil, &ScenarioError{File: file, Line: root.Line, Msg: "empty scenario: want a mapping with name, description, pods and scripts"}
		}
		root = root.Content[0]
	}
	if root.Kind == yamlv3.AliasNode && root.Alias != nil {
		root = root.Alias
	}
	if root.Kind != yamlv3.MappingNode {
		if scnIsNull(root) {
			return nil, &ScenarioError{File: file, Line: root.Line, Msg: "empty scenario: want a mapping with name, description, pods and scripts"}
		}
		return nil, &ScenarioError{File: file, Line: root.Line, Msg: "a scenario is a mapping with name, description, pods and scripts, not " + scnDescribeNode(root)}
	}
	return root, nil
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

// scnWalker checks a node tree against the Go type it decodes into, field by
// field, so that a problem is reported with its path and line. It follows
// encoding/json's rules for field names (tags, embedded structs) but matches
// them case-sensitively, and it checks every leaf by decoding it on its own
// with sigs.k8s.io/yaml, unless the value is plainly fine (a string, a
// decimal integer in range, true or false).
type scnWalker struct {
	file   string
	budget int
	// done remembers the anchored nodes already checked, and how many nodes
	// they hold, so that an alias is charged to the budget but not walked
	// again; leaves remembers the leaves already checked.
	done   map[scnMemoKey]int
	leaves map[scnMemoKey]error
}

type scnMemoKey struct {
	n      *yamlv3.Node
	t      reflect.Type
	coerce bool
}

func (w *scnWalker) fail(line int, path scnPath, format string, args ...any) error {
	return &ScenarioError{File: w.file, Line: line, Field: path.String(), Msg: fmt.Sprintf(format, args...)}
}

// deref follows an alias, counting the visit.
func (w *scnWalker) deref(n *yamlv3.Node) (*yamlv3.Node, error) {
	alias := n
	for i := 0; n.Kind == yamlv3.AliasNode; i++ {
		if n.Alias == nil || i > 100 {
			return nil, &ScenarioError{File: w.file, Line: n.Line, Msg: "bad alias"}
		}
		n = n.Alias
	}
	w.budget--
	if w.budget < 0 {
		return nil, w.tooComplex(alias)
	}
	return n, nil
}

var (
	scnJSONUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	scnTextUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func scnIsUnmarshaler(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(scnJSONUnmarshaler) || pt.Implements(scnJSONUnmarshaler) ||
		t.Implements(scnTextUnmarshaler) || pt.Implements(scnTextUnmarshaler)
}

// walk checks node n, reported at line, that decodes into a value of type t.
func (w *scnWalker) walk(n *yamlv3.Node, t reflect.Type, coerce bool, path scnPath, line int) error {
	alias := n
	n, err := w.deref(n)
	if err != nil {
		return err
	}
	if n.Anchor == "" {
		return w.walkNode(n, t, coerce, path, line)
	}
	key := scnMemoKey{n, t, coerce}
	if size, ok := w.done[key]; ok {
		if w.budget -= size; w.budget < 0 {
			return w.tooComplex(alias)
		}
		return nil
	}
	before := w.budget
	if err := w.walkNode(n, t, coerce, path, line); err != nil {
		return err
	}
	if w.done == nil {
		w.done = map[scnMemoKey]int{}
	}
	w.done[key] = before - w.budget
	return nil
}

// tooComplex reports the budget exhausted at node n (an alias, mostly).
func (w *scnWalker) tooComplex(n *yamlv3.Node) error {
	return &ScenarioError{File: w.file, Line: n.Line, Msg: fmt.Sprintf("too complex: more than %d YAML nodes once aliases are expanded", maxScenarioNodes)}
}

// walkNode is walk of a node that is not an alias.
func (w *scnWalker) walkNode(n *yamlv3.Node, t reflect.Type, coerce bool, path scnPath, line int) error {
	if scnIsNull(n) {
		return nil // null decodes to the zero value of anything
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if scnIsUnmarshaler(t) {
		return w.leaf(n, t, coerce, path, line)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yamlv3.MappingNode {
			return w.fail(line, path, "expected a mapping, got %s", scnDescribeNode(n))
		}
		fields := scnFields(t)
		return w.mapping(n, path, func(key *yamlv3.Node, value *yamlv3.Node) error {
			f, ok := fields[key.Value]
			if !ok {
				return w.fail(key.Line, path.key(key.Value), "unknown field %q%s", key.Value, scnFieldHint(key.Value, fields))
			}
			// sigs.k8s.io/yaml turns a number or boolean given for a string
			// into that string, except beneath a field promoted from an
			// embedded struct: it loses track of the target type there.
			return w.walk(value, f.typ, coerce && !f.promoted, path.key(key.Value), key.Line)
		})
	case reflect.Map:
		if n.Kind != yamlv3.MappingNode {
			return w.fail(line, path, "expected a mapping, got %s", scnDescribeNode(n))
		}
		// Keys are strings once converted to JSON; only values are checked.
		return w.mapping(n, path, func(key *yamlv3.Node, value *yamlv3.Node) error {
			return w.walk(value, t.Elem(), coerce, path.key(key.Value), key.Line)
		})
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return w.leaf(n, t, coerce, path, line) // []byte: base64
		}
		if n.Kind != yamlv3.SequenceNode {
			return w.fail(line, path, "expected a list, got %s", scnDescribeNode(n))
		}
		for i, item := range n.Content {
			if err := w.walk(item, t.Elem(), coerce, path.idx(i), item.Line); err != nil {
				return err
			}
		}
		return nil
	case reflect.Interface:
		return nil
	default:
		return w.leaf(n, t, coerce, path, line)
	}
}

// mapping calls f for each key and value of mapping n, merges (<<)
// included, rejecting keys that are not scalars and keys set twice: as in
// the strict decoder, a merged key may not be set again.
func (w *scnWalker) mapping(n *yamlv3.Node, path scnPath, f func(key, value *yamlv3.Node) error) error {
	return w.mappingInto(n, path, f, map[string]int{}, 0)
}

func (w *scnWalker) mappingInto(n *yamlv3.Node, path scnPath, f func(key, value *yamlv3.Node) error, seen map[string]int, depth int) error {
	if depth > 10 {
		return w.fail(n.Line, path, "merges (<<) nested too deep")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, err := w.deref(n.Content[i])
		if err != nil {
			return err
		}
		value := n.Content[i+1]
		if key.Kind != yamlv3.ScalarNode {
			return w.fail(key.Line, path, "a key must be a scalar, not %s", scnDescribeNode(key))
		}
		if scnIsNull(key) {
			return w.fail(key.Line, path, "a key must not be null")
		}
		if key.Tag == "!!merge" {
			if err := w.merge(value, path, f, seen, depth); err != nil {
				return err
			}
			continue
		}
		if first, dup := seen[key.Value]; dup {
			return w.fail(key.Line, path.key(key.Value), "duplicate field %q (first at line %d)", key.Value, first)
		}
		seen[key.Value] = key.Line
		if err := f(key, value); err != nil {
			return err
		}
	}
	return nil
}

// merge walks the mappings merged into a mapping by a "<<" key.
func (w *scnWalker) merge(n *yamlv3.Node, path scnPath, f func(key, value *yamlv3.Node) error, seen map[string]int, depth int) error {
	n, err := w.deref(n)
	if err != nil {
		return err
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		return w.mappingInto(n, path, f, seen, depth+1)
	case yamlv3.SequenceNode:
		for _, item := range n.Content {
			item, err := w.deref(item)
			if err != nil {
				return err
			}
			if item.Kind != yamlv3.MappingNode {
				return w.fail(item.Line, path, "a merge (<<) takes a mapping or a list of mappings, not a list holding %s", scnDescribeNode(item))
			}
			if err := w.mappingInto(item, path, f, seen, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return w.fail(n.Line, path, "a merge (<<) takes a mapping or a list of mappings, not %s", scnDescribeNode(n))
}

// leaf checks a node that decodes into t by decoding it on its own, as
// sigs.k8s.io/yaml decodes the whole file.
func (w *scnWalker) leaf(n *yamlv3.Node, t reflect.Type, coerce bool, path scnPath, line int) error {
	key := scnMemoKey{n, t, coerce}
	if err, ok := w.leaves[key]; ok {
		return err
	}
	err := w.checkLeaf(n, t, coerce, path, line)
	if w.leaves == nil {
		w.leaves = map[scnMemoKey]error{}
	}
	w.leaves[key] = err
	return err
}

func (w *scnWalker) checkLeaf(n *yamlv3.Node, t reflect.Type, coerce bool, path scnPath, line int) error {
	if !scnIsUnmarshaler(t) {
		if n.Kind != yamlv3.ScalarNode {
			return w.fail(line, path, "%s", scnExpected(t, n))
		}
		// Fast paths for what the decoder surely accepts: any scalar for a
		// string where it turns numbers and booleans into strings, plain
		// decimal integers in range, plain true and false.
		switch t.Kind() {
		case reflect.String:
			if coerce {
				return nil
			}
		case reflect.Bool:
			if n.Style == 0 && (n.Value == "true" || n.Value == "false") {
				return nil
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if _, err := strconv.ParseInt(n.Value, 10, t.Bits()); err == nil && n.Style == 0 && n.Value[0] != '+' {
				return nil
			}
		}
	}
	var src []byte
	if n.Kind == yamlv3.ScalarNode && n.Style == 0 && !strings.ContainsAny(n.Value, "\r\n") {
		// A plain scalar: give the YAML 1.1 decoder the text as written,
		// so that it resolves it as in the whole file (yes, on, 0x1f...).
		src = []byte("v: " + n.Value + "\n")
	} else {
		if w.hasAlias(n, 0) {
			return nil // left to the decoding of the whole file
		}
		wrapper := &yamlv3.Node{Kind: yamlv3.MappingNode, Content: []*yamlv3.Node{
			{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: "v"}, n,
		}}
		var b []byte
		err := scnSafely(func() error {
			var err error
			b, err = yamlv3.Marshal(wrapper)
			return err
		})
		if err != nil {
			return nil // left to the decoding of the whole file
		}
		src = b
	}
	holder := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: t, Tag: `json:"v"`}}))
	err := scnSafely(func() error {
		if coerce {
			return sigsyaml.UnmarshalStrict(src, holder.Interface())
		}
		// As sigs.k8s.io/yaml does beneath a promoted field: convert to
		// JSON without a target type, then decode.
		j, err := sigsyaml.YAMLToJSONStrict(src)
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.DisallowUnknownFields()
		return dec.Decode(holder.Interface())
	})
	if err == nil {
		return nil
	}
	if _, isTypeErr := errors.AsType[*json.UnmarshalTypeError](err); isTypeErr {
		return w.fail(line, path, "%s", scnExpected(t, n))
	}
	cause := err
	for errors.Unwrap(cause) != nil {
		cause = errors.Unwrap(cause)
	}
	return &ScenarioError{File: w.file, Line: line, Field: path.String(),
		Msg: fmt.Sprintf("invalid value %s: %v", scnDescribeNode(n), strings.TrimPrefix(cause.Error(), "json: ")), Err: err}
}

func (w *scnWalker) hasAlias(n *yamlv3.Node, depth int) bool {
	if n.Kind == yamlv3.AliasNode || depth > 1000 {
		return true
	}
	for _, c := range n.Content {
		w.budget--
		if w.budget < 0 || w.hasAlias(c, depth+1) {
			return true
		}
	}
	return false
}

var (
	scnQuantityType    = reflect.TypeFor[interface{ AsApproximateFloat64() float64 }]()
	scnIntOrStringType = reflect.TypeFor[intstr.IntOrString]()
)

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
		return "base64 data"
	}
	return "a value of type " + t.String()
}

var scnFieldCache sync.Map // reflect.Type → map[string]scnField

// scnField is a field of a struct as encoding/json sees it.
type scnField struct {
	typ      reflect.Type
	promoted bool // a field of an embedded struct
}

// scnFields returns the JSON fields of struct type t by name, embedded
// structs flattened as encoding/json does.
func scnFields(t reflect.Type) map[string]scnField {
	if v, ok := scnFieldCache.Load(t); ok {
		return v.(map[string]scnField)
	}
	out := map[string]scnField{}
	depthOf := map[string]int{}
	var visit func(t reflect.Type, depth int)
	visit = func(t reflect.Type, depth int) {
		if depth > 10 {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if name == "" && et.Kind() == reflect.Struct {
					visit(et, depth+1)
					continue
				}
				if !f.IsExported() {
					continue
				}
			} else if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if d, ok := depthOf[name]; ok && d <= depth {
				continue
			}
			out[name], depthOf[name] = scnField{typ: ft, promoted: depth > 0}, depth
		}
	}
	visit(t, 0)
	scnFieldCache.Store(t, out)
	return out
}

// scnFieldHint suggests the field meant by an unknown one.
func scnFieldHint(unknown string, fields map[string]scnField) string {
	for name := range fields {
		if strings.EqualFold(name, unknown) {
			return fmt.Sprintf(" (did you mean %q?)", name)
		}
	}
	if len(fields) <= 8 {
		names := make([]string, 0, len(fields))
		for name := range fields {
			names = append(names, name)
		}
		slices.Sort(names)
		return " (want one of " + strings.Join(names, ", ") + ")"
	}
	return ""
}

// scnValidator checks the decoded scenario and builds the Scenario; it finds
// the line of a problem by walking the node tree along its field path.
type scnValidator struct {
	file   string
	root   *yamlv3.Node
	budget int
}

func (v *scnValidator) fail(path scnPath, err error, format string, args ...any) error {
	return &ScenarioError{File: v.file, Line: v.line(path), Field: path.String(), Msg: fmt.Sprintf(format, args...), Err: err}
}

// line returns the line of the field at path: the line of its key in a
// mapping, of the item in a list. If the field is absent, it is the line of
// the nearest enclosing field that is present.
func (v *scnValidator) line(path scnPath) int {
	n, line := v.root, v.root.Line
	for _, e := range path {
		if n = v.deref(n); n == nil {
			return line
		}
		switch {
		case e.isIdx:
			if n.Kind != yamlv3.SequenceNode || e.index >= len(n.Content) {
				return line
			}
			n = n.Content[e.index]
			line = n.Line
		default:
			key, value := v.lookup(n, e.key, 0)
			if key == nil {
				return line
			}
			n, line = value, key.Line
		}
	}
	return line
}

func (v *scnValidator) deref(n *yamlv3.Node) *yamlv3.Node {
	for i := 0; n != nil && n.Kind == yamlv3.AliasNode; i++ {
		if i > 100 {
			return nil
		}
		n = n.Alias
	}
	v.budget--
	if v.budget < 0 {
		return nil
	}
	return n
}

// lookup finds key k of mapping n, explicit keys before merged ones.
func (v *scnValidator) lookup(n *yamlv3.Node, k string, depth int) (key, value *yamlv3.Node) {
	if n == nil || n.Kind != yamlv3.MappingNode || depth > 10 {
		return nil, nil
	}
	var merges []*yamlv3.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := v.deref(n.Content[i])
		if kn == nil {
			return nil, nil
		}
		if kn.Tag == "!!merge" {
			merges = append(merges, n.Content[i+1])
			continue
		}
		if kn.Kind == yamlv3.ScalarNode && kn.Value == k {
			return kn, n.Content[i+1]
		}
	}
	for _, m := range merges {
		m = v.deref(m)
		if m == nil {
			continue
		}
		candidates := []*yamlv3.Node{m}
		if m.Kind == yamlv3.SequenceNode {
			candidates = m.Content
		}
		for _, c := range candidates {
			if key, value := v.lookup(v.deref(c), k, depth+1); key != nil {
				return key, value
			}
		}
	}
	return nil, nil
}

// decodeError reports an error of the decoder of the whole file, which the
// walk did not foresee. The decoder names the field of a value of the wrong
// type by its dotted path without list indices (and with the names of
// embedded structs): the first field of the file on that path gives the
// line. Otherwise the line is the one the error names, if any.
func (v *scnValidator) decodeError(err error) error {
	if typeErr, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && typeErr.Field != "" && typeErr.Type != nil {
		if key, value, path := v.search(v.root, strings.Split(typeErr.Field, "."), nil, 0); key != nil {
			return &ScenarioError{File: v.file, Line: key.Line, Field: path.String(),
				Msg: scnExpected(typeErr.Type, value), Err: err}
		}
	}
	line, msg := scnSplitLine(err.Error())
	return &ScenarioError{File: v.file, Line: line, Msg: msg, Err: err}
}

// search finds, in file order, the first field at the dotted path fields
// beneath n, trying every item of a list and skipping a path element that
// names no key (an embedded struct).
func (v *scnValidator) search(n *yamlv3.Node, fields []string, path scnPath, depth int) (key, value *yamlv3.Node, at scnPath) {
	if n = v.deref(n); n == nil || len(fields) == 0 || depth > 100 {
		return nil, nil, nil
	}
	switch n.Kind {
	case yamlv3.SequenceNode:
		for i, item := range n.Content {
			if key, value, at := v.search(item, fields, path.idx(i), depth+1); key != nil {
				return key, value, at
			}
		}
	case yamlv3.MappingNode:
		if key, value := v.lookup(n, fields[0], 0); key != nil {
			if len(fields) == 1 {
				return key, v.deref(value), path.key(fields[0])
			}
			if key, value, at := v.search(value, fields[1:], path.key(fields[0]), depth+1); key != nil {
				return key, value, at
			}
		}
		return v.search(n, fields[1:], path, depth+1)
	}
	return nil, nil, nil
}

func (v *scnValidator) scenario(doc *scenarioDoc) (*Scenario, error) {
	s := &Scenario{Name: doc.Name, Description: doc.Description}
	if strings.TrimSpace(doc.Name) == "" {
		return nil, v.fail(scnPath{}.key("name"), nil, "required")
	}
	if len(doc.Pods) == 0 {
		return nil, v.fail(scnPath{}.key("pods"), nil, "required: at least one pod")
	}
	byKey := map[string]int{}
	byUID := map[string]int{}
	for i := range doc.Pods {
		pod := &doc.Pods[i]
		if err := v.pod(pod, scnPath{}.key("pods").idx(i), byKey, byUID, i); err != nil {
			return nil, err
		}
		s.pods = append(s.pods, pod.DeepCopy())
	}
	for i := range doc.Scripts {
		sc, err := v.script(&doc.Scripts[i], scnPath{}.key("scripts").idx(i), s)
		if err != nil {
			return nil, err
		}
		sc.index = i
		s.scripts = append(s.scripts, sc)
	}
	return s, nil
}

func (v *scnValidator) pod(pod *v1.Pod, path scnPath, byKey, byUID map[string]int, i int) error {
	if pod.APIVersion != "" && pod.APIVersion != "v1" {
		return v.fail(path.key("apiVersion"), nil, "must be v1, not %q", pod.APIVersion)
	}
	if pod.Kind != "" && pod.Kind != "Pod" {
		return v.fail(path.key("kind"), nil, "must be Pod, not %q", pod.Kind)
	}
	meta := path.key("metadata")
	if pod.Name == "" {
		return v.fail(meta.key("name"), nil, "required")
	}
	if pod.UID == "" {
		return v.fail(meta.key("uid"), nil, "required")
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	key := podKey(pod.Namespace, pod.Name)
	if first, dup := byKey[key]; dup {
		return v.fail(meta.key("name"), nil, "duplicate pod %q (pods[%d] has the same namespace and name)", key, first)
	}
	byKey[key] = i
	if first, dup := byUID[string(pod.UID)]; dup {
		return v.fail(meta.key("uid"), nil, "duplicate uid %q (pods[%d] has the same uid)", pod.UID, first)
	}
	byUID[string(pod.UID)] = i
	spec := path.key("spec")
	switch pod.Spec.RestartPolicy {
	case "", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever:
	default:
		return v.fail(spec.key("restartPolicy"), nil, "unknown restart policy %q (want Always, OnFailure or Never)", pod.Spec.RestartPolicy)
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		return v.fail(spec.key("terminationGracePeriodSeconds"), nil, "must not be negative, not %d", *g)
	}
	if len(pod.Spec.Containers) == 0 {
		return v.fail(spec.key("containers"), nil, "required: at least one container")
	}
	seen := map[string]bool{}
	for _, list := range []struct {
		field      string
		containers []v1.Container
	}{{"initContainers", pod.Spec.InitContainers}, {"containers", pod.Spec.Containers}} {
		for j, c := range list.containers {
			name := spec.key(list.field).idx(j).key("name")
			if c.Name == "" {
				return v.fail(name, nil, "required")
			}
			if seen[c.Name] {
				return v.fail(name, nil, "duplicate container name %q", c.Name)
			}
			seen[c.Name] = true
		}
	}
	return nil
}

func (v *scnValidator) script(d *scriptDoc, path scnPath, s *Scenario) (scenarioScript, error) {
	var sc scenarioScript
	var pod *v1.Pod
	if d.Pod != "" {
		ns, name, ok := strings.Cut(d.Pod, "/")
		if !ok {
			ns, name = "default", d.Pod
		}
		if ns == "" || name == "" || strings.Contains(name, "/") {
			return sc, v.fail(path.key("pod"), nil, "invalid pod %q (want namespace/name)", d.Pod)
		}
		sc.pod = podKey(ns, name)
		for _, p := range s.pods {
			if podKey(p.Namespace, p.Name) == sc.pod {
				pod = p
			}
		}
		if pod == nil {
			return sc, v.fail(path.key("pod"), nil, "no pod %q in pods", sc.pod)
		}
	}
	switch {
	case d.Container != nil && d.Fail != nil:
		return sc, v.fail(path.key("fail"), nil, "a script has either container or fail, not both")
	case d.Container != nil:
		if pod == nil {
			return sc, v.fail(path.key("pod"), nil, "required for a container script")
		}
		return sc, v.container(d.Container, path.key("container"), pod, &sc)
	case d.Fail != nil:
		return sc, v.methodFault(d.Fail, path.key("fail"), &sc)
	}
	return sc, v.fail(path, nil, "a script needs container or fail")
}

func (v *scnValidator) container(d *containerDoc, path scnPath, pod *v1.Pod, sc *scenarioScript) error {
	if d.Name == "" {
		return v.fail(path.key("name"), nil, "required")
	}
	found := false
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		found = found || c.Name == d.Name
	}
	if !found {
		return v.fail(path.key("name"), nil, "pod %q has no container %q", podKey(pod.Namespace, pod.Name), d.Name)
	}
	sc.container = d.Name
	if d.FailStarts == nil && d.ExitAfter == nil && d.StartLatency == nil && d.IgnoreSIGTERM == nil {
		return v.fail(path, nil, "nothing scripted: want failStarts, exitAfter, startLatency or ignoreSIGTERM")
	}
	if f := d.FailStarts; f != nil {
		p := path.key("failStarts")
		times, err := v.count(f.Times, p.key("times"))
		if err != nil {
			return err
		}
		reason := pkgcontainer.ErrRunContainer
		if f.Error != "" {
			var ok bool
			if reason, ok = scenarioStartErrors[f.Error]; !ok {
				names := make([]string, 0, len(scenarioStartErrors))
				for name := range scenarioStartErrors {
					names = append(names, name)
				}
				slices.Sort(names)
				return v.fail(p.key("error"), nil, "unknown error %q (want one of %s)", f.Error, strings.Join(names, ", "))
			}
		}
		sc.failStarts = &startFault{remaining: times, err: reason, message: f.Message}
	}
	if e := d.ExitAfter; e != nil {
		p := path.key("exitAfter")
		if e.After == "" {
			return v.fail(p.key("after"), nil, "required")
		}
		after, err := v.duration(e.After, p.key("after"))
		if err != nil {
			return err
		}
		code := 0
		if e.Code != nil {
			code = *e.Code
		}
		if code < 0 || code > 255 {
			return v.fail(p.key("code"), nil, "exit code %d out of range 0 to 255", code)
		}
		sc.exitAfter = &scriptedExit{after: after, code: code}
	}
	if d.StartLatency != nil {
		latency, err := v.duration(*d.StartLatency, path.key("startLatency"))
		if err != nil {
			return err
		}
		sc.startLatency = &latency
	}
	sc.ignoreSIGTERM = d.IgnoreSIGTERM != nil && *d.IgnoreSIGTERM
	return nil
}

// scenarioPodMethods are the methods a script may make fail for one pod;
// scenarioAnyPodMethods those it may make fail only for every pod.
var (
	scenarioPodMethods    = []Method{MethodSyncPod, MethodKillPod, MethodDeletePod, MethodGetPodStatus}
	scenarioAnyPodMethods = []Method{MethodCleanupPods, MethodGetPods}
)

func (v *scnValidator) methodFault(d *failDoc, path scnPath, sc *scenarioScript) error {
	m := Method(d.Method)
	switch {
	case d.Method == "":
		return v.fail(path.key("method"), nil, "required")
	case slices.Contains(scenarioPodMethods, m):
	case slices.Contains(scenarioAnyPodMethods, m):
		if sc.pod != "" {
			return v.fail(path.key("method"), nil, "%s is not called for one pod: leave out pod to make it fail", m)
		}
	default:
		return v.fail(path.key("method"), nil, "unknown method %q (want one of SyncPod, KillPod, DeletePod, GetPodStatus, CleanupPods, GetPods)", d.Method)
	}
	times, err := v.count(d.Times, path.key("times"))
	if err != nil {
		return err
	}
	sc.method, sc.times = m, times
	if d.Message != "" {
		sc.methodErr = errors.New(d.Message)
	}
	return nil
}

// count reads a times field: at least 1, or -1 or "always" for Always;
// absent means 1.
func (v *scnValidator) count(c *intstr.IntOrString, path scnPath) (int, error) {
	switch {
	case c == nil:
		return 1, nil
	case c.Type == intstr.String && (c.StrVal == "always" || c.StrVal == "Always"):
		return Always, nil
	case c.Type == intstr.String:
		return 0, v.fail(path, nil, "invalid count %q (want a number of at least 1, or -1 or always for every call)", c.StrVal)
	case c.IntVal == -1:
		return Always, nil
	case c.IntVal < 1:
		return 0, v.fail(path, nil, "invalid count %d (want a number of at least 1, or -1 or always for every call)", c.IntVal)
	}
	return int(c.IntVal), nil
}

func (v *scnValidator) duration(s string, path scnPath) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, v.fail(path, err, "invalid duration %q (want a Go duration such as 500ms, 5s or 1m30s)", s)
	}
	if d < 0 {
		return 0, v.fail(path, nil, "invalid duration %q: must not be negative", s)
	}
	return d, nil
}
