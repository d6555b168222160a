package suite

import "errors"

// ErrNotSupported is the error a provider returns (wrapped or not) from an
// optional operation it does not implement. A suite turns a spec that hits
// it into a skip naming the operation. A skipped spec never counts as
// passed: a MUST spec skipped this way still makes the verdict "not
// conformant", and so fails the run.
var ErrNotSupported = errors.New("operation not supported by the provider")

// IsNotSupported reports whether err is ErrNotSupported or wraps it:
// through Unwrap (fmt.Errorf's %w, errors.Join), as errors.Is follows it,
// and through Cause, as github.com/pkg/errors and virtual-kubelet's errdefs
// wrap (errdefs.AsInvalidInput and errdefs.AsNotFound have Cause and no
// Unwrap, so errors.Is alone stops at them).
func IsNotSupported(err error) bool {
	switch {
	case err == nil:
		return false
	case err == ErrNotSupported:
		return true
	}
	if x, ok := err.(interface{ Is(error) bool }); ok && x.Is(ErrNotSupported) {
		return true
	}
	switch x := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range x.Unwrap() {
			if IsNotSupported(e) {
				return true
			}
		}
		return false
	case interface{ Unwrap() error }:
		return IsNotSupported(x.Unwrap())
	case interface{ Cause() error }:
		return IsNotSupported(x.Cause())
	}
	return false
}
