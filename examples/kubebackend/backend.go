package kubebackend

import (
	"context"
	"sync"

	"k8s.io/client-go/kubernetes"
)

// Backend is a Provider in front of a backend cluster whose only node is a
// simulated Kubelet: what the conformance runs and the examples use. Stop
// stops the provider, then the Kubelet, and returns once both have.
type Backend struct {
	*Provider
	Kubelet *Kubelet

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// NewBackend starts a Kubelet for node opts.NodeName in opts.Namespace on
// client (the provider's Options.NodeName, Namespace and Client; kopts sets
// the rest: clock, back-off, ...) and returns a Provider bound to that node.
// The Kubelet runs until Stop or until ctx is done.
func NewBackend(ctx context.Context, client kubernetes.Interface, opts Options, kopts KubeletOptions) (*Backend, error) {
	opts.Client = client
	p, err := New(opts)
	if err != nil {
		return nil, err
	}
	kopts.Namespace, kopts.NodeName = opts.Namespace, opts.NodeName
	k, err := NewKubelet(client, kopts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	b := &Backend{Provider: p, Kubelet: k, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		if err := k.Run(ctx); err != nil {
			kopts.Logf("kubebackend: simulated kubelet: %v", err)
		}
	}()
	return b, nil
}

// Stop stops the provider, then the Kubelet, and returns once both have
// stopped. Later calls are no-ops.
func (b *Backend) Stop() {
	b.Provider.Stop()
	b.once.Do(b.cancel)
	<-b.done
}
