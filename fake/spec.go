package fake

import (
	"math/bits"
	"reflect"
	"slices"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// This file keeps a private copy of a pod's spec (specCopy) and compares
// one handed in with it (sameStoredSpec), containers whole, without
// allocating, on every Kubernetes release the kit supports.
//
// Contract: sameStoredContainer(x, y, steady) == reflect.DeepEqual(x, y)
// for any two containers, whatever steady says. Every field of v1.Container is compared, recursively, with
// reflect.DeepEqual's rules: a nil slice or map differs from an empty one,
// pointers are compared by what they point to. No field is skipped, for
// the fake hands its stored containers whole to code that reads what it
// likes (workload.OfEnv, OfHandler and OfProbe, HashContainer, the probe
// state's copy, the resize and status code), so a list of the fields it
// reads would silently go stale.
//
// The comparison is built once, by reflection over the v1.Container type
// of the k8s.io/api release compiled in, into a tree of functions, one per
// field: a field only newer releases have (RestartPolicyRules, say) is
// compared where it exists, and a release that adds one needs no change
// here. Walking the tree reads fields through unsafe.Pointer at the offsets
// reflect gives, which neither allocates nor builds a reflect.Value per
// field. Two types are compared by their meaning's own rules, as
// reflect.DeepEqual would compare them but without boxing them:
// resource.Quantity (unexported fields) with == first, and only when that
// fails, which is when it changed or holds an *inf.Dec (copied by
// DeepCopy), with reflect.DeepEqual; v1.ResourceList (a map of them) key by
// key. Any other map, interface or func falls back to reflect.DeepEqual
// (v1.Container has none). TestSameContainerIsDeepEqual changes every leaf
// of a fully populated container in turn (found by reflection) and checks
// the answer against reflect.DeepEqual.

// specCopy returns a private copy of what the fake uses of pod: its
// identity, restart policy, grace period, process-namespace sharing and
// host networking, and every container whole (what the pod spec asks of
// the runtime: env, hooks, probes, termination message, pull policy,
// restart policy of an init container, resources). It keeps no memory of
// pod.
func specCopy(pod *v1.Pod) *v1.Pod {
	out := &v1.Pod{}
	out.Namespace, out.Name, out.UID = pod.Namespace, pod.Name, pod.UID
	out.Spec.RestartPolicy = pod.Spec.RestartPolicy
	out.Spec.HostNetwork = pod.Spec.HostNetwork
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		out.Spec.TerminationGracePeriodSeconds = new(*g)
	}
	if s := pod.Spec.ShareProcessNamespace; s != nil {
		out.Spec.ShareProcessNamespace = new(*s)
	}
	copyContainers := func(in []v1.Container) []v1.Container {
		if len(in) == 0 {
			return nil
		}
		cs := make([]v1.Container, len(in))
		for i := range in {
			in[i].DeepCopyInto(&cs[i])
		}
		return cs
	}
	out.Spec.InitContainers = copyContainers(pod.Spec.InitContainers)
	out.Spec.Containers = copyContainers(pod.Spec.Containers)
	return out
}

// samePodFields is sameStoredSpec on the pod's own fields, containers left
// out.
func samePodFields(stored, pod *v1.Pod) bool {
	if stored.Namespace != pod.Namespace || stored.Name != pod.Name || stored.UID != pod.UID ||
		stored.Spec.RestartPolicy != pod.Spec.RestartPolicy || stored.Spec.HostNetwork != pod.Spec.HostNetwork {
		return false
	}
	return samePtr(stored.Spec.TerminationGracePeriodSeconds, pod.Spec.TerminationGracePeriodSeconds) &&
		samePtr(stored.Spec.ShareProcessNamespace, pod.Spec.ShareProcessNamespace)
}

// sameStoredSpec reports whether specCopy(pod) would equal stored (as
// reflect.DeepEqual sees them), for a stored copy whose containers' steady
// fields are steady (steadyFieldsOf(stored)), without reflection and
// without allocating: a sync with an unchanged pod copies nothing. podFor
// calls it at every SyncPod. It reads all of pod that specCopy keeps, on
// every call: a caller may edit the *v1.Pod it hands SyncPod in place
// between two calls without changing its ResourceVersion or Generation, so
// nothing cheaper (the pointer, a version, a hash kept from the last call)
// can tell that the spec is unchanged. A resource quantity whose cached
// string differs makes containers unequal, which only costs a copy. The fields a caller's unchanged pod
// shares the bytes of with the stored copy (in a container, most: the
// strings, and the many fields a pod leaves unset) are compared a run at a
// time (sameStoredContainer).
func sameStoredSpec(stored *v1.Pod, steady []uint64, pod *v1.Pod) bool {
	init, app := stored.Spec.InitContainers, stored.Spec.Containers
	if !samePodFields(stored, pod) || len(init) != len(pod.Spec.InitContainers) || len(app) != len(pod.Spec.Containers) {
		return false
	}
	for i := range init {
		if !sameStoredContainer(&init[i], &pod.Spec.InitContainers[i], steady[i]) {
			return false
		}
	}
	for i := range app {
		if !sameStoredContainer(&app[i], &pod.Spec.Containers[i], steady[len(init)+i]) {
			return false
		}
	}
	return true
}

// containerOps are the ops of v1.Container's fields (structOps, without
// blocks); containerRun[i] is the end of the run of adjacent bytewise ops
// from op i (i for an op that is not bytewise).
var containerOps, containerRun = containerPlan()

func containerPlan() ([]fieldOp, []int) {
	ops := structOps(reflect.TypeFor[v1.Container](), 0, map[reflect.Type]*equalFunc{}, nil)
	run := make([]int, len(ops))
	for i := len(ops) - 1; i >= 0; i-- {
		switch {
		case !ops[i].bytewise:
			run[i] = i
		case i+1 < len(ops) && ops[i+1].bytewise && ops[i].offset+ops[i].width == ops[i+1].offset:
			run[i] = run[i+1]
		default:
			run[i] = i + 1
		}
	}
	return ops, run
}

// steadyFieldsOf returns steadyFields of stored's containers, init
// containers first.
func steadyFieldsOf(stored *v1.Pod) []uint64 {
	init, app := stored.Spec.InitContainers, stored.Spec.Containers
	out := make([]uint64, len(init)+len(app))
	for i := range init {
		out[i] = steadyFields(&init[i])
	}
	for i := range app {
		out[len(init)+i] = steadyFields(&app[i])
	}
	return out
}

// steadyFields returns the set of c's bytewise fields (containerOps, the
// first 64; bit i for op i) whose bytes are the same in the container c
// was copied from (specCopy's DeepCopy) while that is unchanged: strings
// (DeepCopy copies a string's header, not its bytes), bools and integers,
// and every field that is zero (nil). A set pointer, slice or map has
// memory of its own in the copy.
func steadyFields(c *v1.Container) uint64 {
	var steady uint64
	for i, op := range containerOps[:min(len(containerOps), 64)] {
		if !op.bytewise {
			continue
		}
		b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(c), op.offset)), op.width)
		if op.kind == opString || op.kind == opMemory || !slices.ContainsFunc(b, func(x byte) bool { return x != 0 }) {
			steady |= 1 << i
		}
	}
	return steady
}

// sameStoredContainer reports sameContainer(x, y) for a stored container x
// whose steady fields are steady (steadyFields(x)): each run of them
// adjacent in memory is compared in one memory comparison, equal when y
// has the same bytes there (bytewise fields: see withBlocks); a run whose
// bytes differ, and the other fields, op by op. steady only decides what
// is compared in one go: a wrong one costs time, never a wrong answer.
func sameStoredContainer(x, y *v1.Container, steady uint64) bool {
	px, py := unsafe.Pointer(x), unsafe.Pointer(y)
	ops := containerOps
	for i := 0; i < len(ops); {
		j := len(ops)
		switch {
		case i >= 64:
		case steady>>i&1 != 0:
			// Op i and the steady ops after it, as far as they are
			// adjacent.
			j = min(i+bits.TrailingZeros64(^(steady>>i)), containerRun[i])
		default:
			// Op i and the other ops after it, compared op by op.
			j = min(i+bits.TrailingZeros64(steady>>i), len(ops))
		}
		if j-i >= 2 && steady>>i&1 != 0 {
			from, to := ops[i].offset, ops[j-1].offset+ops[j-1].width
			if unsafe.String((*byte)(unsafe.Add(px, from)), to-from) == unsafe.String((*byte)(unsafe.Add(py, from)), to-from) {
				i = j
				continue
			}
		}
		if !equalOps(ops[i:j], px, py) {
			return false
		}
		i = j
	}
	return true
}

// samePtr reports whether a and b are both nil or point to equal values.
// T must have no pointers, slices or maps inside, for == to agree with
// reflect.DeepEqual.
func samePtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// equalFunc reports reflect.DeepEqual of the two values of one type that x
// and y point to.
type equalFunc func(x, y unsafe.Pointer) bool

var (
	quantityType     = reflect.TypeFor[resource.Quantity]()
	resourceListType = reflect.TypeFor[v1.ResourceList]()
)

// equalFor builds the equalFunc of t; built holds those of the types being
// built, so that a recursive type refers to its own function.
func equalFor(t reflect.Type, built map[reflect.Type]*equalFunc) equalFunc {
	if f, ok := built[t]; ok {
		return func(x, y unsafe.Pointer) bool { return (*f)(x, y) }
	}
	f := new(equalFunc)
	built[t] = f
	*f = buildEqual(t, built)
	return *f
}

// buildEqual reads the values through unsafe.Pointer at the offsets and
// sizes reflect gives for t, so that the walk neither allocates nor pays
// for a reflect.Value per field.
func buildEqual(t reflect.Type, built map[reflect.Type]*equalFunc) equalFunc {
	switch t {
	case quantityType:
		return func(x, y unsafe.Pointer) bool {
			return sameQuantity(*(*resource.Quantity)(x), *(*resource.Quantity)(y))
		}
	case resourceListType:
		return func(x, y unsafe.Pointer) bool {
			return sameResourceList(*(*v1.ResourceList)(x), *(*v1.ResourceList)(y))
		}
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Uint8:
		return func(x, y unsafe.Pointer) bool { return *(*uint8)(x) == *(*uint8)(y) }
	case reflect.Int16, reflect.Uint16:
		return func(x, y unsafe.Pointer) bool { return *(*uint16)(x) == *(*uint16)(y) }
	case reflect.Int32, reflect.Uint32:
		return func(x, y unsafe.Pointer) bool { return *(*uint32)(x) == *(*uint32)(y) }
	case reflect.Int, reflect.Uint, reflect.Uintptr, reflect.Int64, reflect.Uint64:
		if t.Size() == 4 {
			return func(x, y unsafe.Pointer) bool { return *(*uint32)(x) == *(*uint32)(y) }
		}
		return func(x, y unsafe.Pointer) bool { return *(*uint64)(x) == *(*uint64)(y) }
	case reflect.Float32:
		return func(x, y unsafe.Pointer) bool { return *(*float32)(x) == *(*float32)(y) }
	case reflect.Float64:
		return func(x, y unsafe.Pointer) bool { return *(*float64)(x) == *(*float64)(y) }
	case reflect.String:
		return func(x, y unsafe.Pointer) bool { return *(*string)(x) == *(*string)(y) }
	case reflect.Pointer:
		elem := equalFor(t.Elem(), built)
		return func(x, y unsafe.Pointer) bool {
			px, py := *(*unsafe.Pointer)(x), *(*unsafe.Pointer)(y)
			if px == nil || py == nil || px == py {
				return px == py
			}
			return elem(px, py)
		}
	case reflect.Slice:
		op := &fieldOp{kind: opSlice, size: t.Elem().Size(), equal: equalFor(t.Elem(), built)}
		return func(x, y unsafe.Pointer) bool {
			return equalSlice(op, (*sliceHeader)(x), (*sliceHeader)(y))
		}
	case reflect.Array:
		elem, size := equalFor(t.Elem(), built), t.Elem().Size()
		return func(x, y unsafe.Pointer) bool {
			for i := range uintptr(t.Len()) {
				if !elem(unsafe.Add(x, i*size), unsafe.Add(y, i*size)) {
					return false
				}
			}
			return true
		}
	case reflect.Struct:
		ops := withBlocks(structOps(t, 0, built, nil))
		return func(x, y unsafe.Pointer) bool { return equalOps(ops, x, y) }
	default: // maps, interfaces, funcs, channels, complex numbers
		return func(x, y unsafe.Pointer) bool {
			return reflect.DeepEqual(reflect.NewAt(t, x).Elem().Interface(), reflect.NewAt(t, y).Elem().Interface())
		}
	}
}

// fieldOp compares one field of a struct, or a run of adjacent fields that
// compare as plain memory. The common kinds (strings, memory, pointers,
// slices) are compared in equalOps's loop itself; a nested struct's fields
// are the enclosing struct's ops at their offsets: a field of a container
// costs an indirect call only for what a non-nil pointer or slice holds.
type fieldOp struct {
	kind   opKind
	offset uintptr
	// size is the length of an opMemory run or an opBlock, the element
	// size of an opSlice.
	size uintptr
	// equal compares what an opPointer points to, an opSlice's elements
	// (unless strings), an opFunc field.
	equal   equalFunc
	strings bool // an opSlice of strings: its elements are compared in place
	// width is how many bytes the field takes; bytewise is set when two
	// values with the same bytes are equal (see withBlocks).
	width    uintptr
	bytewise bool
	// skip is how many ops after an opBlock it covers.
	skip int
}

type opKind uint8

const (
	opString opKind = iota
	opMemory        // bools and integers: equal when their bytes are
	opPointer
	opSlice
	opFunc
	// opBlock: when the bytes of the next skip fields (adjacent, each
	// bytewise) are the same in x and y, they are equal and skipped.
	opBlock
)

// blockOps is how many fields an opBlock covers at most: few enough that
// one field that differs in its bytes (a set slice: the stored copy has
// its own array) leaves the others of a container skipped by blocks.
const blockOps = 4

// withBlocks puts an opBlock before each run of up to blockOps adjacent
// bytewise fields of ops: what is nil in both, or shares its memory
// (strings copied by DeepCopy keep their bytes), is then compared in one
// memory comparison. Two values with the same bytes are equal as
// reflect.DeepEqual sees them for strings, bools and integers, pointers
// and slices (the same target, length and array), maps (the same map),
// and a resource.Quantity (==); not for floats (NaN), interfaces or
// funcs, which are not bytewise.
func withBlocks(ops []fieldOp) []fieldOp {
	var out []fieldOp
	for i := 0; i < len(ops); {
		j := i
		for j < len(ops) && j-i < blockOps && ops[j].bytewise && (j == i || ops[j-1].offset+ops[j-1].width == ops[j].offset) {
			j++
		}
		if j-i >= 2 {
			out = append(out, fieldOp{kind: opBlock, offset: ops[i].offset, size: ops[j-1].offset + ops[j-1].width - ops[i].offset, skip: j - i})
		} else {
			j = i + 1
		}
		out = append(out, ops[i:j]...)
		i = j
	}
	return out
}

// structOps returns the ops of struct type t's fields, at base within the
// value compared, appended to ops.
func structOps(t reflect.Type, base uintptr, built map[reflect.Type]*equalFunc, ops []fieldOp) []fieldOp {
	for i := range t.NumField() {
		f := t.Field(i)
		ft, off := f.Type, base+f.Offset
		switch {
		case ft == quantityType || ft == resourceListType:
			ops = append(ops, fieldOp{kind: opFunc, offset: off, equal: equalFor(ft, built), width: ft.Size(), bytewise: true})
		case ft.Kind() == reflect.Struct:
			ops = structOps(ft, off, built, ops)
		case ft.Kind() == reflect.String:
			ops = append(ops, fieldOp{kind: opString, offset: off, width: ft.Size(), bytewise: true})
		case plainMemory(ft.Kind()):
			// Adjacent to the previous run (no padding between): one
			// comparison of both.
			if n := len(ops); n > 0 && ops[n-1].kind == opMemory && ops[n-1].offset+ops[n-1].size == off {
				ops[n-1].size += ft.Size()
				ops[n-1].width = ops[n-1].size
				continue
			}
			ops = append(ops, fieldOp{kind: opMemory, offset: off, size: ft.Size(), width: ft.Size(), bytewise: true})
		case ft.Kind() == reflect.Pointer:
			ops = append(ops, fieldOp{kind: opPointer, offset: off, equal: equalFor(ft.Elem(), built), width: ft.Size(), bytewise: true})
		case ft.Kind() == reflect.Slice:
			op := fieldOp{kind: opSlice, offset: off, size: ft.Elem().Size(), strings: ft.Elem().Kind() == reflect.String, width: ft.Size(), bytewise: true}
			if !op.strings {
				op.equal = equalFor(ft.Elem(), built)
			}
			ops = append(ops, op)
		default:
			// A map is the same map when its bytes are; anything else
			// (floats, interfaces, funcs) is compared on its own.
			ops = append(ops, fieldOp{kind: opFunc, offset: off, equal: equalFor(ft, built), width: ft.Size(), bytewise: ft.Kind() == reflect.Map})
		}
	}
	return ops
}

// plainMemory reports whether values of kind k are equal, as
// reflect.DeepEqual sees them, exactly when their bytes are: booleans and
// integers (not floats: NaN, -0).
func plainMemory(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// equalOps reports whether the structs x and y point to are equal field by
// field, as ops say.
func equalOps(ops []fieldOp, x, y unsafe.Pointer) bool {
	for i := 0; i < len(ops); i++ {
		op := &ops[i]
		fx, fy := unsafe.Add(x, op.offset), unsafe.Add(y, op.offset)
		switch op.kind {
		case opBlock:
			if unsafe.String((*byte)(fx), op.size) == unsafe.String((*byte)(fy), op.size) {
				i += op.skip
			}
		case opString:
			if *(*string)(fx) != *(*string)(fy) {
				return false
			}
		case opMemory:
			if unsafe.String((*byte)(fx), op.size) != unsafe.String((*byte)(fy), op.size) {
				return false
			}
		case opPointer:
			px, py := *(*unsafe.Pointer)(fx), *(*unsafe.Pointer)(fy)
			if px != py && (px == nil || py == nil || !op.equal(px, py)) {
				return false
			}
		case opSlice:
			if !equalSlice(op, (*sliceHeader)(fx), (*sliceHeader)(fy)) {
				return false
			}
		default:
			if !op.equal(fx, fy) {
				return false
			}
		}
	}
	return true
}

// equalSlice compares two slices as reflect.DeepEqual does: a nil slice
// differs from an empty one.
func equalSlice(op *fieldOp, sx, sy *sliceHeader) bool {
	if sx.data == nil || sy.data == nil {
		return sx.data == sy.data
	}
	if sx.len != sy.len {
		return false
	}
	if sx.data == sy.data {
		return true
	}
	if op.strings {
		xs, ys := unsafe.Slice((*string)(sx.data), sx.len), unsafe.Slice((*string)(sy.data), sy.len)
		for i := range xs {
			if xs[i] != ys[i] {
				return false
			}
		}
		return true
	}
	for i := range uintptr(sx.len) {
		if !op.equal(unsafe.Add(sx.data, i*op.size), unsafe.Add(sy.data, i*op.size)) {
			return false
		}
	}
	return true
}

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func sameResourceList(x, y v1.ResourceList) bool {
	if len(x) != len(y) || (x == nil) != (y == nil) {
		return false
	}
	if len(x) == 0 {
		return true // no iterator started over an empty map
	}
	for name, q := range x {
		r, ok := y[name]
		if !ok || !sameQuantity(q, r) {
			return false
		}
	}
	return true
}

// sameQuantity reports whether reflect.DeepEqual(x, y). Only the slow path
// (a changed quantity, or one held in an *inf.Dec) allocates.
func sameQuantity(x, y resource.Quantity) bool {
	return x == y || reflect.DeepEqual(x, y)
}
