package fake

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	v1 "k8s.io/api/core/v1"
)

// leafFields returns the index paths of t's fields, a struct field's own
// fields in its place (a resource.Quantity whole): the fields
// sameStoredContainer compares one by one or a run at a time.
func leafFields(t reflect.Type, prefix []int) [][]int {
	var out [][]int
	for i := range t.NumField() {
		path := append(prefix[:len(prefix):len(prefix)], i)
		if f := t.Field(i).Type; f.Kind() == reflect.Struct && f != quantityType {
			out = append(out, leafFields(f, path)...)
		} else {
			out = append(out, path)
		}
	}
	return out
}

// TestSameStoredContainerIsDeepEqual checks that sameStoredContainer, which
// compares the steady fields of the stored container (strings, bools,
// integers, what is zero) a run at a time, answers
// as reflect.DeepEqual: for a fully populated stored container against
// every mutation of TestSameContainerIsDeepEqual, and for stored containers
// zero but in one field (or in all) against a copy with any one field set
// from the populated one, set to zero, or, for a string, set to an empty
// string that does not share the stored one's bytes.
func TestSameStoredContainerIsDeepEqual(t *testing.T) {
	var full v1.Container
	(&filler{t: t}).fill(reflect.ValueOf(&full).Elem(), "Container")
	n := 0
	check := func(name string, stored, y *v1.Container) {
		t.Helper()
		n++
		want := reflect.DeepEqual(stored, y)
		if got := sameStoredContainer(stored, y, steadyFields(stored)); got != want {
			t.Errorf("%s: sameStoredContainer = %v, reflect.DeepEqual = %v", name, got, want)
		}
	}
	for _, m := range mutations(reflect.ValueOf(&full).Elem(), "Container", nil) {
		x := full.DeepCopy()
		m.change(at(reflect.ValueOf(x).Elem(), m.path))
		check(m.name, &full, x)
	}
	leaves := leafFields(reflect.TypeFor[v1.Container](), nil)
	stored := map[string]*v1.Container{"zero": {}}
	for _, path := range leaves {
		c := &v1.Container{}
		reflect.ValueOf(c).Elem().FieldByIndex(path).Set(reflect.ValueOf(full.DeepCopy()).Elem().FieldByIndex(path))
		stored[fmt.Sprint("only ", path)] = c
	}
	for sname, s := range stored {
		check(sname+": its DeepCopy", s, s.DeepCopy())
		if steadyFields(s) == 0 {
			t.Fatalf("%s: no steady field", sname)
		}
		for _, path := range leaves {
			name := fmt.Sprintf("%s: field %v", sname, path)
			y := s.DeepCopy()
			f := reflect.ValueOf(y).Elem().FieldByIndex(path)
			f.Set(reflect.ValueOf(full.DeepCopy()).Elem().FieldByIndex(path))
			check(name+" set", s, y)
			f.Set(reflect.Zero(f.Type()))
			check(name+" zeroed", s, y)
			if f.Kind() == reflect.String {
				f.SetString(strings.Repeat("x", 3)[:0]) // "" with a data pointer
				if f.Len() != 0 || f.Interface() == reflect.Zero(f.Type()).Interface() && unsafe.StringData(f.String()) == nil {
					t.Fatal("not an empty string with its own bytes")
				}
				check(name+" empty, own bytes", s, y)
			}
		}
	}
	if len(leaves) < 20 || n < 1000 {
		t.Fatalf("only %d leaves, %d comparisons: the walk missed fields", len(leaves), n)
	}
	t.Logf("%d leaves, %d comparisons", len(leaves), n)
}
