package kubeletruntime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
	internalapi "k8s.io/cri-api/pkg/apis"
	remote "k8s.io/cri-client/pkg"
)

// DefaultCRITimeout is the timeout DialCRI uses when given 0: the kubelet's
// default --runtime-request-timeout (pkg/kubelet/apis/config/v1beta1,
// SetDefaults_KubeletConfiguration).
const DefaultCRITimeout = 2 * time.Minute

// DialCRI connects to the runtime and image services of a real CRI runtime
// at endpoint ("unix:///run/containerd/containerd.sock"), as the kubelet's
// PreInitRuntimeService does (pkg/kubelet/kubelet.go): k8s.io/cri-client's
// remote services on one endpoint for both, timeout as the time to connect
// and the deadline of each call (0: DefaultCRITimeout; the client doubles
// it for RunPodSandbox), trace context propagated over a no-op tracer,
// unary list calls. It returns once the runtime has answered a Version call,
// or an error naming the endpoint.
//
// Hand the services to New in Options.RuntimeService and
// Options.ImageService. The caller owns them: close both (Close) once the
// provider is no longer used; the provider never does.
func DialCRI(ctx context.Context, endpoint string, timeout time.Duration) (internalapi.RuntimeService, internalapi.ImageManagerService, error) {
	if endpoint == "" {
		return nil, nil, errors.New("kubeletruntime: DialCRI: the CRI endpoint is empty")
	}
	if timeout < 0 {
		return nil, nil, fmt.Errorf("kubeletruntime: DialCRI: timeout %s is negative", timeout)
	}
	timeout = cmp(timeout, DefaultCRITimeout)
	tp := noop.NewTracerProvider()
	rs, err := remote.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(endpoint).
		WithConnectionTimeout(timeout).
		WithTracerProvider(tp).
		Build(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeletruntime: CRI runtime service at %q: %w", endpoint, err)
	}
	is, err := remote.NewRemoteImageServiceBuilder().
		WithEndpoint(endpoint).
		WithConnectionTimeout(timeout).
		WithTracerProvider(tp).
		Build(ctx)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("kubeletruntime: CRI image service at %q: %w", endpoint, err), rs.Close(ctx))
	}
	return rs, is, nil
}
