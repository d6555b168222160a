package conformance

import (
	"context"
)

// The ping specs (KRI-NODE-005, 006, 015): Ping, the node controller's
// health check of the backend.
var nodePingSpecs = []*specDef{
	{id: "KRI-NODE-005", level: Must, kind: kindNode, groups: []string{"ping"}, node: nodePingRepeatedly,
		text: "Ping of a healthy provider succeeds repeatedly, each within the call timeout"},
	{id: "KRI-NODE-006", level: Must, kind: kindNode, groups: []string{"ping", "context"}, node: nodePingCancelled,
		note: "The requirement's words now name what the spec accepts: the context's error, possibly wrapped, or the gRPC status (code Canceled or DeadlineExceeded) a remote call reports for it.",
		text: "Ping with a cancelled context returns promptly with the context's error, possibly wrapped, or the gRPC status a remote call reports for it"},
	{id: "KRI-NODE-015", level: Must, kind: kindNode, groups: []string{"ping"}, caps: []Capability{CapBackendFailures}, node: nodePingUnhealthy,
		text: "Ping reports an unhealthy backend: after MakeBackendUnhealthy it returns an error"},
}

// ping calls Ping with the call's context, or with ctx when it is not nil.
func (e *nodeEnv) ping(ctx context.Context) error {
	var err error
	e.do("Ping", func(callCtx context.Context) {
		use := callCtx
		if ctx != nil {
			use = ctx
		}
		err = e.p.Ping(use)
	})
	return err
}

// pingRounds is how often the Ping spec calls Ping.
const pingRounds = 5

func nodePingRepeatedly(e *nodeEnv) {
	e.step("pinging the healthy provider several times")
	for i := range pingRounds {
		if err := e.ping(nil); err != nil {
			e.skipIfNotSupported("Ping", err)
			e.failf("Ping %d of %d of a healthy provider returned %v", i+1, pingRounds, err)
		}
	}
}

func nodePingCancelled(e *nodeEnv) {
	e.step("pinging with a cancelled context")
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if err := e.ping(ctx); !errorsIsCanceled(err) {
		e.skipIfNotSupported("Ping", err)
		e.failf("Ping with a cancelled context returned %v, want the context's error (context.Canceled, possibly wrapped) or a gRPC status with code Canceled", err)
	}
}

func errorsIsCanceled(err error) bool { return err != nil && ctxErrOK(err) }

func nodePingUnhealthy(e *nodeEnv) {
	e.step("making the backend unhealthy (Config.MakeBackendUnhealthy), then pinging")
	var err error
	e.do("MakeBackendUnhealthy", func(ctx context.Context) { err = e.st.cfg.MakeBackendUnhealthy(ctx, e.p) })
	e.noError("MakeBackendUnhealthy", err)
	if err := e.ping(nil); err == nil {
		e.fail("Ping returned nil after MakeBackendUnhealthy made the backend unhealthy, want an error")
	}
}
