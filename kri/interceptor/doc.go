// Package interceptor wraps any provider, method by method, so that a test
// can change what it does without writing a provider of its own: fail a
// call, delay it, alter its arguments or its result, or count it.
//
// NewPodProvider wraps a kri.PodProvider with PodFuncs, NewNodeProvider a
// kri.NodeProvider with NodeFuncs. The funcs hold one optional function per
// method; the wrapper's contract is the same for every method:
//
//   - a nil function means the wrapped provider's own method: the call and
//     its results pass through unchanged;
//   - a function that is set is called instead, with the same arguments
//     after next, the wrapped provider itself (not the wrapper), and what
//     it returns is what the caller gets. It calls next to get the real
//     behaviour, or does not.
//
// A wrapped pod provider that implements kri.PodSyncNotifier stays one: the
// wrapper implements SetPodSyncHandler exactly when the wrapped provider
// does, so the agent (and the conformance suite, which hands its handler
// only to a notifier) sees the same provider kinds with or without
// interceptors. PodFuncs.SetPodSyncHandler intercepts that method.
// Nothing else of the wrapped provider shows through: a caller that needs
// its concrete type (the fake's scripting methods, say) keeps the provider
// it wrapped.
//
// The fake providers (package fake) take the same funcs through their
// WithInterceptors and SetInterceptors, which put them between the call
// log and the fake's own behaviour; the conformance kit's self-tests build
// their mutants with them.
package interceptor
